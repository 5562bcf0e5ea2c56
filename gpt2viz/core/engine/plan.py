"""What one forward call keeps and changes: the engine's answer to TransformerLens' ``run_with_cache``
names filter and ``run_with_hooks`` hooks, in one value."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace


@dataclass(frozen=True)
class Plan:
    """A forward call's options (:meth:`gpt2viz.core.engine.model.Model.run`).

    Attributes
    ----------
    hooks : tuple of str, optional
        Which hooks to return; None = every hook (a prefill of ``ondemand.ONDEMAND_FROM`` positions or
        more then keeps the residual stream and computes the others exactly when read). Hooks named
        explicitly are always run. ``last_logits`` is always computed.
    keep_all_logits : bool
        Keep logits of every position; by default only the last position's (``trace.last_logits``).
    interventions : tuple of gpt2viz.core.interventions.Intervention
        Changes made inside the graph for this call's positions (absolute positions). Hooks show the
        values after the intervention, on-demand ones too. Empty: the graph's own numbers.
    means : mapping, optional
        (layer, head) -> [D] mean z for mean ablations (``interventions.mean_activations``).
    chunk : int, optional
        Positions per onnxruntime call; default ``model.CHUNK``, 0 = all in one call. A call whose hooks
        are all positional ([B, P, ...]) and longer than that runs in chunks, each after the cache of the
        previous (hooks with a key axis, asked for by name, need one call).
    release : bool, optional
        Hand back the memory the call's peak took in onnxruntime's arena (a few ms more); default: for
        calls of ``model.TRIM_FROM`` positions or more.
    lm_head : bool
        False: the LM head does not run at all and the trace has no logits (``last_logits`` None) until the
        caller gives them (:meth:`~gpt2viz.core.engine.trace.Trace.with_last_logits`): a logit lens over the
        last position makes them with its other rows, from one read of the unembedding instead of two. Not
        with ``keep_all_logits`` or ``logits`` asked for.
    """

    hooks: tuple[str, ...] | None = None
    keep_all_logits: bool = False
    interventions: tuple = ()
    means: Mapping | None = None
    chunk: int | None = None
    release: bool | None = None
    lm_head: bool = True

    def __post_init__(self):
        # Any iterable of names or interventions is accepted; stored as tuples so a plan is a value.
        if self.hooks is not None and not isinstance(self.hooks, tuple):
            object.__setattr__(self, "hooks", tuple(self.hooks))
        if not isinstance(self.interventions, tuple):
            object.__setattr__(self, "interventions", tuple(self.interventions or ()))

    @classmethod
    def of(cls, plan: Plan | None = None, **options) -> Plan:
        """``plan`` with ``options`` (field names) replaced; a misspelt option is a TypeError naming it."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - names)
        if unknown:
            raise TypeError(f"unknown run option {unknown[0]!r}; a plan has {', '.join(sorted(names))}")
        plan = plan if plan is not None else cls()
        return replace(plan, **options) if options else plan
