"""Bodies of `gpt2viz` subcommands that live outside the parser module (one module per command)."""
