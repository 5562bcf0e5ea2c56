"""Turning a GPT-2 checkpoint into a gpt2viz model folder.

`surgery` is pure onnx. `exporter` and `reference` need the [export] extra (torch, transformers,
optimum) and are imported only by the `gpt2viz export` command and the tests.
"""
