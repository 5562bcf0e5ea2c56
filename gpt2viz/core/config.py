"""GPT-2's sizes: the one config type (the manifest's ``config``, the letters of every hook's shape)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelConfig:
    """GPT-2's shape: enough to name every tensor, give each shape letter its value and bound the context."""

    n_layer: int
    n_head: int
    n_embd: int
    n_positions: int
    vocab_size: int
    d_mlp: int

    @property
    def d_model(self) -> int:
        """TransformerLens' name for ``n_embd`` (the residual stream's width)."""
        return self.n_embd

    @property
    def d_head(self) -> int:
        """Width of one attention head."""
        return self.n_embd // self.n_head

    def kv_bytes_per_token(self) -> int:
        """Bytes of key + value cache one token costs across all layers (float32)."""
        return 2 * self.n_layer * self.n_embd * 4
