"""gpt2viz: trace the life of one token through GPT-2, with the model's own numbers."""

__version__ = "0.1.0"
