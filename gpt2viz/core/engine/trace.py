"""One immutable record of a forward call: every hook as numpy, batch dimension dropped."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace

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
    last_logits : np.ndarray or None
        [V] logits at the last position (kept even when ``logits`` for all positions is dropped); None from a call
        that ran no LM head (``Plan.lm_head``) until :meth:`with_last_logits` gives them.
    ondemand : gpt2viz.core.engine.ondemand.OnDemand, optional
        Hooks a long prefill did not keep (scores, patterns, MLP activations), computed exactly from
        the stored ones when read, a few kept. ``trace[name]``, ``in``, iteration and ``len`` count
        them as present; ``hooks`` holds only the stored ones.
    """

    tokens: tuple[int, ...]
    start: int
    hooks: Mapping[str, np.ndarray] = field(repr=False)
    last_logits: np.ndarray | None = field(repr=False)
    ondemand: object = field(default=None, repr=False, compare=False)

    @classmethod
    def from_outputs(cls, tokens, start: int, outputs: dict[str, np.ndarray], keep_all_logits: bool,
                     ondemand=None) -> "Trace":
        """Build a trace from a session's outputs (batch of one), freezing every array."""
        hooks, last, seen = {}, None, {}
        for name, arr in outputs.items():
            a = seen.setdefault(id(arr), arr[0])  # one array under two names stays one
            if name == "last_logits":
                last = np.array(a[-1], dtype=np.float32)
                continue
            if name == "logits":
                last = np.array(a[-1], dtype=np.float32)
                if not keep_all_logits:
                    continue  # [P, V] is 196 MiB at 1024 tokens for GPT-2: keep only what views need
            a.flags.writeable = False
            hooks[name] = a
        if last is not None:
            last.flags.writeable = False
        return cls(tuple(int(t) for t in tokens), int(start), hooks, last, ondemand)

    def with_last_logits(self, logits: np.ndarray) -> "Trace":
        """This trace with its last position's [V] ``logits``, made elsewhere from this call's residual (a trace of a
        call that ran no LM head: ``Plan.lm_head``)."""
        last = np.array(logits, dtype=np.float32).reshape(-1)
        last.flags.writeable = False
        return replace(self, last_logits=last)

    def __getitem__(self, key) -> np.ndarray:
        name = resolve(key)
        a = self.hooks.get(name)
        if a is not None:
            return a
        if self.ondemand is not None and name in self.ondemand.names:
            return self.ondemand.get(name, self)
        raise KeyError(f"no hook {name!r} in this trace")

    def __contains__(self, key) -> bool:
        name = resolve(key)  # without computing an on-demand hook
        return name in self.hooks or (self.ondemand is not None and name in self.ondemand.names)

    def __iter__(self) -> Iterator[str]:
        yield from self.hooks
        if self.ondemand is not None:
            yield from sorted(self.ondemand.names - set(self.hooks))

    def __len__(self) -> int:
        extra = len(self.ondemand.names - set(self.hooks)) if self.ondemand is not None else 0
        return len(self.hooks) + extra

    @property
    def positions(self) -> int:
        """Number of positions computed in this call."""
        return len(self.tokens)

    def nbytes(self) -> int:
        """Memory held by the arrays of this trace (stored hooks, and on-demand ones kept for now)."""
        kept = self.ondemand.nbytes() if self.ondemand is not None else 0
        # a long prefill's residual after block L is block L + 1's input: one array under both names
        last = self.last_logits.nbytes if self.last_logits is not None else 0
        return sum({id(a): a.nbytes for a in self.hooks.values()}.values()) + last + kept
