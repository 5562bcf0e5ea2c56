"""The engine: numpy, onnx, onnxruntime and tokenizers only. Never import Qt here."""
