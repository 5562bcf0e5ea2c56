"""The inference worker's slots called directly (no thread): what a run hands the views."""

from __future__ import annotations

from gpt2viz.app.worker import InferenceWorker
from gpt2viz.core.engine import ondemand
from gpt2viz.core.interventions import HeadAblation


def test_a_new_run_hands_over_the_newest_positions_hooks_computed(monkeypatch, exported):
    """A run long enough to leave hooks on demand computes the newest position's block on the worker: the
    views' first read (the pipeline's, on the GUI thread) runs no model call."""
    monkeypatch.setattr(ondemand, "ONDEMAND_FROM", 4)
    w = InferenceWorker()
    got = []
    w.sigResult.connect(lambda _r, _s, res: got.append(res))
    w.sigFailed.connect(lambda _r, _s, msg: got.append(msg))
    w.load_model(1, "A", str(exported["l3h4e32"]))
    model_runs = []
    for call in (lambda: w.start(2, "A", "The capital of France is a city", ()),
                 lambda: w.intervene(3, "A", (HeadAblation(1, 2),))):
        call()
        h = got[-1].history
        assert h.frames[0].trace.ondemand is not None
        model = w.gens["A"].model
        run = model.run
        model.run = lambda *a, **k: model_runs.append(a)  # a view's read must not get here
        newest = len(h.tokens) - 1
        for L in range(3):
            h.hook_at(("pattern", L), newest)
            h.hook_at(("post", L), newest)
        model.run = run
        assert model_runs == []
