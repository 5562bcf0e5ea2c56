"""Long analyses (an activation patching table, a causal trace) run on the worker, one channel per kind.

A job runs ``fn(progress, cancel)`` on the worker thread. Jobs have their own channels (:class:`Job`),
apart from session ids: a newer job of the same kind, any new request to the model, or closing cancels
the running one at its next graph call. QtCore only.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QObject, Signal

from gpt2viz.core.session.session import Session


class Job(str, enum.Enum):
    """The kinds of long analysis; the value names the summary in ``Session.analyses``."""

    PATCHING = "patching"
    CAUSAL = "causal"
    GRAPH = "graph"
    GRAPH_ABLATION = "graph-ablation"
    EDIT = "edit"
    SAVE_EDIT = "save-edit"
    FEATURE_CLAMP = "feature-clamp"
    FEATURE_TEXT = "feature-text"

    def __str__(self) -> str:
        return self.value

    __format__ = str.__format__


def prompt_ids(session: Session | None) -> list[int]:
    """The prompt's tokens of ``session``'s history (what the analyses run on); [] before a run."""
    h = None if session is None else session.history
    return [] if h is None else [int(t) for t in h.tokens[: h.prompt_len]]


def _top_token(session: Session) -> int:
    # the clean run's own top next token: what the analyses measure when no target is given
    return int(np.argmax(session.history.frames[0].logits))


def patching_job(a: Session, b: Session | None, site: str, target: int | None = None):
    """``fn(progress, cancel)`` building the patching table with A clean and B corrupted, or None when B
    is not open or either has not run."""
    from gpt2viz.core.analysis.patching import patching_table
    from gpt2viz.core.viewmodels.compare import patching_summary

    if a.history is None or b is None or b.history is None:
        return None
    clean, corrupt, model = prompt_ids(a), prompt_ids(b), a.model
    target = _top_token(a) if target is None else target

    def job(progress, cancel):
        t = patching_table(model, clean, corrupt, target, site, progress=progress, cancel=cancel)
        return patching_summary(t, clean, corrupt)
    return job


def causal_job(a: Session, subject, target: int | None = None, noise: float = 3.0, samples: int = 10,
               window: int = 1, seed: int = 0):
    """``fn(progress, cancel)`` for ROME's causal trace of A's prompt with ``subject`` positions corrupted,
    or None before A has run.

    The trace runs with A's interventions in force (after an edit: the edited model). With any in force it runs
    a second time without them, the summary's ``before`` (the ghost: the model as it was), with the same
    target, noise draws and samples; the progress bar covers both."""
    from gpt2viz.core.analysis.causal_trace import causal_trace
    from gpt2viz.core.viewmodels.compare import causal_summary

    if a.history is None:
        return None
    ids, model, weights, ivs = prompt_ids(a), a.model, a.weights, tuple(a.interventions)
    target = _top_token(a) if target is None else target

    def job(progress, cancel):
        runs = 2 if ivs else 1

        def part(i):
            return lambda done, total: progress(i * total + done, runs * total)
        kw = {"noise": noise, "samples": samples, "window": window, "seed": seed, "cancel": cancel}
        tr = causal_trace(model, weights, ids, subject, target, interventions=ivs, progress=part(0), **kw)
        before = causal_trace(model, weights, ids, subject, target, progress=part(1), **kw) if ivs else None
        return causal_summary(tr, ids, before)
    return job


def graph_job(a: Session, target: int | None = None, node_threshold: float | None = None,
              edge_threshold: float | None = None):
    """``fn(progress, cancel)`` building the transcoder attribution graph of A's prompt with the model folder's
    own transcoders (``transcoders/``), as circuit-tracer's graph JSON with the scores in ``metadata.info``;
    None before A has run. Raises ValueError when the folder ships no transcoders."""
    from gpt2viz.core.circuits.ablation import direct_logit_effects
    from gpt2viz.core.circuits.graph import build_graph
    from gpt2viz.core.circuits.graph_json import graph_json
    from gpt2viz.core.circuits.prune import EDGE_THRESHOLD, NODE_THRESHOLD, graph_scores, prune
    from gpt2viz.core.features.dashboards import coder_labels
    from gpt2viz.core.features.transcoder import read_transcoders

    if a.history is None:
        return None
    folder = a.model.folder / "transcoders"
    if not folder.is_dir():
        raise ValueError(f"{a.model.name} ships no transcoders (train a set with gpt2viz train-sae --transcoder, "
                         "one per block, into the model folder's transcoders/)")
    ids, model, weights = prompt_ids(a), a.model, a.weights
    nt = NODE_THRESHOLD if node_threshold is None else node_threshold
    et = EDGE_THRESHOLD if edge_threshold is None else edge_threshold

    def job(progress, cancel):
        tcs = read_transcoders(folder)
        g = build_graph(model, tcs, ids, target=target, weights=weights, progress=progress, cancel=cancel)
        r, c = graph_scores(g)
        text = model.tokenizer.decode(ids)
        labels = coder_labels(tcs, [(int(k[0]), int(k[2])) for k in g.active_features], model.tokenizer)
        data = graph_json(g, prune(g, nt, et), model.tokenizer, prompt=text, slug="gpt2viz", scan=str(folder),
                          node_threshold=nt, labels=labels)
        kept = [n["node_id"] for n in data["nodes"] if n["feature_type"] != "logit"]
        # what an ablation check needs (widgets/graph_panel): each kept node's direct effect on every target logit
        data["metadata"]["info"] = {"generator": "gpt2viz", "model": model.name, "replacement_score": r,
                                    "completeness_score": c, "prompt_ids": [int(t) for t in ids],
                                    "logit_tokens": [int(t) for t in g.logit_tokens],
                                    "direct_effects": direct_logit_effects(g, kept)}
        return data
    return job


def graph_ablation_job(a: Session, nodes, scale: float):
    """``fn(progress, cancel)`` scaling ``nodes`` (ids of A's circuit graph) by ``scale`` in the model (inside the
    graph, by intervention inputs) and comparing each target logit's change with the graph's prediction
    (:func:`gpt2viz.core.circuits.ablation.ablation_check`); None when there is no graph or no node."""
    from gpt2viz.core.circuits.ablation import ablation_check
    from gpt2viz.core.features.transcoder import read_transcoders

    data = a.analyses.get(Job.GRAPH.value)
    if a.model is None or data is None or not nodes:
        return None
    ids = data["metadata"].get("info", {}).get("prompt_ids")
    if ids is None:
        raise ValueError("this graph carries no direct effects on its logits: build it again")
    model, weights, folder, nodes = a.model, a.weights, a.model.folder / "transcoders", tuple(nodes)

    def job(progress, cancel):
        progress(0, 1)
        check = ablation_check(model, read_transcoders(folder), ids, data, nodes, scale, weights)
        progress(1, 1)
        return check
    return job


@dataclass(frozen=True)
class EditSummary:
    """A ROME edit made in the app: the intervention, where it was made and what it did to the prompt's answer."""

    edit: object  # RankOneEdit
    layer: int
    layer_from: str  # "given" or "causal trace"
    prompt: str
    target: str
    p_before: float  # P(target | prompt) without the edit
    p_after: float  # ... with it
    scores: object = None  # EditScores: efficacy, paraphrase, neighbourhood, fluency (as gpt2viz edit prints)
    old: str = ""  # the answer the edit replaces
    n_paraphrases: int = 0  # paraphrases measured (only prompts of the shipped fact set have them)


def edit_job(a: Session, prompt: str, subject: str, target: str, layer: int | None = None, seed: int = 0):
    """``fn(progress, cancel)`` computing ROME's edit of ``prompt``'s ``subject`` to continue with ``target`` at
    block ``layer`` (None: the causal trace's peak MLP at the subject's last token, as ``gpt2viz edit`` does),
    with the key statistics from the text gpt2viz ships; None before a model is open."""
    import importlib.util

    from gpt2viz.core.analysis.causal_trace import causal_trace
    from gpt2viz.core.editing.evaluation import measure_edit, stats_text
    from gpt2viz.core.editing.rome import EditRequest, compute_edit, subject_last_index

    if a.model is None:
        return None
    if importlib.util.find_spec("torch") is None:  # v* is optimised with torch (the export extra)
        raise ValueError("editing a fact needs torch: pip install 'gpt2viz[export]'")
    model, weights = a.model, a.weights
    tok = model.tokenizer
    last = subject_last_index(tok, "", prompt, subject)  # raises EditError (a ValueError) when it is not there
    if not tok.encode(target):
        raise ValueError("the new target is empty")

    def job(progress, cancel):
        chosen, source = layer, "given"
        if chosen is None:
            ids = tok.encode(prompt)
            start = len(tok.encode(prompt[: prompt.rfind(subject)]))
            tr = causal_trace(model, weights, ids, tuple(range(min(start, last), last + 1)), kinds=("mlp",),
                              window=1, seed=seed, cancel=cancel)
            chosen, source = int(np.argmax(tr.prob["mlp"][:, last])), "causal trace"
        result = compute_edit(model, EditRequest(prompt, subject, target), chosen, stats_texts=stats_text(),
                              seed=seed, progress=progress, cancel=cancel)
        scores, fact, _n = measure_edit(model, result.edit, prompt, subject, target, seed=seed)
        return EditSummary(result.edit, chosen, source, prompt, target, scores.p_new_before, scores.p_new_after,
                           scores, fact["true"], len(fact["paraphrases"]))
    return job


def save_edit_job(a: Session, out: str):
    """``fn(progress, cancel)`` writing A's model with A's ROME edits applied to its weights into the new folder
    ``out`` (checked hook by hook against the edit in force), returning the folder's path; None when A has no
    edit in force."""
    from gpt2viz.core.editing.save import save_edited
    from gpt2viz.core.interventions import RankOneEdit

    edits = tuple(iv for iv in a.interventions if isinstance(iv, RankOneEdit))
    if a.model is None or not edits:
        return None
    model = a.model

    def job(progress, cancel):
        progress(0, 1)
        folder = save_edited(model, edits, out, request={"edits": [e.label for e in edits]})
        progress(1, 1)
        return str(folder)
    return job


class JobRunner(QObject):
    """Sends jobs to the worker and turns its answers into progress and done signals.

    Parameters
    ----------
    worker : InferenceWorker
        Runs the jobs (its ``job`` slot is reached through a queued signal).
    number : callable
        Returns a fresh request number (shared with the session requests, so numbers never repeat).
    store : callable
        ``store(job, summary)``: keep a finished job's summary (on session A).
    """

    sigJobProgress = Signal(str, int, int)  # job, done, total
    sigJobDone = Signal(str, object)  # job, its summary (None: cancelled or failed)
    sigFailed = Signal(str)  # a job failed: the message for the user
    _toJob = Signal(int, str, object)

    def __init__(self, worker, number: Callable[[], int], store: Callable[[Job, object], None], parent=None):
        super().__init__(parent)
        self._worker, self._number, self._store = worker, number, store
        self.active: dict[Job, int] = {}  # job -> its newest request
        self._toJob.connect(worker.job)
        worker.sigJob.connect(self._on_done)
        worker.sigJobProgress.connect(self._on_progress)
        worker.sigJobFailed.connect(self._on_failed)

    def run(self, job: Job | str, fn) -> None:
        """Run ``fn(progress, cancel)`` on the worker thread as ``job``; every running job is cancelled first."""
        job = Job(job)
        self.cancel()
        req = self.active[job] = self._number()
        self._worker.supersede_job(job.value, req)
        self._toJob.emit(req, job.value, fn)

    def cancel(self, job: Job | str | None = None) -> None:
        """Cancel the running or queued ``job`` (default every job)."""
        for j in [Job(job)] if job else list(self.active):
            if j in self.active:
                self._worker.supersede_job(j.value, self.active[j] + 1)

    def _current(self, req: int, channel: str) -> Job | None:
        job = Job(channel)
        return job if self.active.get(job) == req else None

    def _on_progress(self, req: int, channel: str, done: int, total: int) -> None:
        if self._current(req, channel) is not None:
            self.sigJobProgress.emit(channel, done, total)

    def _on_done(self, req: int, channel: str, result) -> None:
        job = self._current(req, channel)
        if job is None:
            return  # a cancelled job that finished anyway: a newer one of its kind owns the channel
        del self.active[job]
        if result is not None:
            self._store(job, result)
        self.sigJobDone.emit(job.value, result)

    def _on_failed(self, req: int, channel: str, message: str) -> None:
        if self._current(req, channel) is not None:
            self._on_done(req, channel, None)
            self.sigFailed.emit(message)


@dataclass(frozen=True)
class FeatureText:
    """"Test your own text" on a feature page: the feature's activation on each token of ``text``."""

    layer: int
    feature: int
    text: str
    pieces: tuple  # ((token text, activation), ...)
    kind: str = "sae"


def feature_text_job(a: Session, layer: int, feature: int, text: str, kind: str = "sae"):
    """``fn(progress, cancel)`` reading feature ``feature`` of block ``layer``'s SAE (or transcoder, ``kind``) on
    every token of ``text``; None before a model is open."""
    from gpt2viz.core.viewmodels.features import feature_on_text

    if a.model is None:
        return None
    if not text.strip():
        raise ValueError("type a text to read the feature on")
    model = a.model

    def job(progress, cancel):
        progress(0, 1)
        out = FeatureText(layer, feature, text, feature_on_text(model, layer, feature, text, kind), kind)
        progress(1, 1)
        return out
    return job


def feature_clamp_job(a: Session, layer: int, feature: int, value: float = 0.0, positions=None):
    """``fn(progress, cancel)`` returning the Steer interventions that set feature ``feature`` of block ``layer``
    to ``value`` (0: ablation) at ``positions`` (None: every position of A's text) under A's interventions in
    force (the clamp reads the feature's activation from a run with them); None before A has run."""
    from gpt2viz.core.features.shipped import feature_set
    from gpt2viz.core.features.steering import FeatureClamp, to_interventions

    if a.history is None:
        return None
    model, base = a.model, tuple(a.interventions)
    ids = [int(t) for t in a.history.tokens]
    sae = feature_set(model, layer).sae  # SAEError (a ValueError) when the block has none

    def job(progress, cancel):
        progress(0, 1)
        out = to_interventions(model, {layer: sae}, [FeatureClamp(layer, feature, value, positions)], ids, base)
        progress(1, 1)
        return out
    return job
