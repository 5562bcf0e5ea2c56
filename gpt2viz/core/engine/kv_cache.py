"""The keys and values a cached step reads: every layer's, for the positions seen so far."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class KVCache:
    """Keys and values of every layer for the positions seen so far: [1, H, T, D] each."""

    layers: tuple[tuple[np.ndarray, np.ndarray], ...]

    @property
    def length(self) -> int:
        """Number of cached positions."""
        return int(self.layers[0][0].shape[2]) if self.layers else 0

    def nbytes(self) -> int:
        """Memory the cache holds."""
        return sum(k.nbytes + v.nbytes for k, v in self.layers)

    def truncated(self, length: int) -> "KVCache":
        """The cache as it was after ``length`` positions (keys of earlier positions never change)."""
        if not 0 <= length <= self.length:
            raise ValueError(f"cannot truncate a cache of {self.length} positions to {length}")
        return KVCache(tuple((k[:, :, :length], v[:, :, :length]) for k, v in self.layers))

    def compacted(self, length: int) -> "KVCache":
        """:meth:`truncated`, as contiguous arrays of its own: what a call after ``length`` positions reads
        without a copy (onnxruntime copies a strided input into new memory at every call), and what keeps
        none of the longer cache's memory alive."""
        if length == self.length:
            return self
        return KVCache(tuple((np.ascontiguousarray(k), np.ascontiguousarray(v))
                             for k, v in self.truncated(length).layers))
