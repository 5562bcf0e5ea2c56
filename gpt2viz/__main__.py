"""`python -m gpt2viz` runs the same command line as the `gpt2viz` script."""

from gpt2viz.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
