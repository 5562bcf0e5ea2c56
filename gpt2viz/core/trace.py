"""One immutable record of a forward call: every hook as numpy, batch dimension dropped."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np

from gpt2viz.core.hooks import resolve


@dataclass(frozen=True)
class Trace(Mapping):
    """Every hook of one forward call, addressable as ``trace["pattern", 3]`` or by full name.

    Attributes
    ----------
    tokens : tuple[int, ...]
        Ids of the positions this call computed.
    start : int
        Absolute position of the first of them (0 for a prefill, the past length for a step).
    hooks : Mapping[str, np.ndarray]
        Hook name -> read-only array without the batch dimension.
    last_logits : np.ndarray
        [V] logits at the last position (kept even when ``logits`` for all positions is dropped).
    """

    tokens: tuple[int, ...]
    start: int
    hooks: Mapping[str, np.ndarray] = field(repr=False)
    last_logits: np.ndarray = field(repr=False)

    @classmethod
    def from_outputs(cls, tokens, start: int, outputs: dict[str, np.ndarray], keep_all_logits: bool) -> "Trace":
        """Build a trace from a session's outputs (batch of one), freezing every array."""
        hooks = {}
        for name, arr in outputs.items():
            a = arr[0]
            if name == "logits":
                last = np.array(a[-1], dtype=np.float32)
                if not keep_all_logits:
                    continue  # [P, V] is 196 MiB at 1024 tokens for GPT-2: keep only what views need
            a.flags.writeable = False
            hooks[name] = a
        last.flags.writeable = False
        return cls(tuple(int(t) for t in tokens), int(start), hooks, last)

    def __getitem__(self, key) -> np.ndarray:
        name = resolve(key)
        try:
            return self.hooks[name]
        except KeyError:
            raise KeyError(f"no hook {name!r} in this trace") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.hooks)

    def __len__(self) -> int:
        return len(self.hooks)

    @property
    def positions(self) -> int:
        """Number of positions computed in this call."""
        return len(self.tokens)

    def nbytes(self) -> int:
        """Memory held by the arrays of this trace."""
        return sum(a.nbytes for a in self.hooks.values()) + self.last_logits.nbytes
