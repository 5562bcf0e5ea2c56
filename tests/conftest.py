"""Shared fixtures: tiny random-init GPT-2 checkpoints made by the tests and their exports.

Every tiny model uses GPT-2's real 50,257-token vocabulary and tokenizer (committed with the
default model), so tokenization and sampling run on real ids.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

REPO = Path(__file__).resolve().parents[1]
TOKENIZER_JSON = REPO / "models" / "atlas" / "tokenizer.json"


@pytest.fixture(autouse=True)
def _release_qt_objects(request, monkeypatch):
    """After each test of the app and the widgets, free what it made: every AppState is shut down and deleted with
    its worker, every top-level window of ours is deleted, and Python's garbage is collected here, on the main (GUI)
    thread.

    Closing is not enough: lambdas connected to a window's or a state's signals are held by their C++ objects,
    a cycle Python's collector cannot see, so each test's window kept its model, worker and onnxruntime sessions
    (~60 MB a test, ~15 GB by the end of tests/widgets). Collecting here also leaves no Qt object of this test for
    an automatic collection on a later test's worker thread, which can hang (see
    gpt2viz.core.engine.memory.release_memory)."""
    if not {"app", "widgets"} & set(request.node.path.parts):
        yield
        return
    from gpt2viz.app.state import AppState

    states = []
    init = AppState.__init__

    def tracked(self, *args, **kwargs):
        init(self, *args, **kwargs)
        states.append(self)

    monkeypatch.setattr(AppState, "__init__", tracked)
    yield
    import shiboken6
    from PySide6.QtCore import QCoreApplication, QEvent
    from PySide6.QtWidgets import QApplication

    for w in QApplication.topLevelWidgets():
        # only ours: pyqtgraph owns its parentless menus and deletes them with their plots
        if type(w).__module__.startswith("gpt2viz."):
            w.close()
            w.deleteLater()
    for st in states:
        if shiboken6.isValid(st):
            st.shutdown()  # the worker thread has ended: its objects can be deleted from here
            if shiboken6.isValid(st.worker):
                shiboken6.delete(st.worker)
            st.deleteLater()
    states.clear()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()


# Configs differ in depth, heads, width, head size, MLP width, context and attention scaling.
TINY_CONFIGS = {
    "l2h2e16": dict(n_layer=2, n_head=2, n_embd=16, n_positions=32),
    "l3h4e32": dict(n_layer=3, n_head=4, n_embd=32, n_positions=48, n_inner=48),
    "l1h1e8": dict(n_layer=1, n_head=1, n_embd=8, n_positions=16, scale_attn_by_inverse_layer_idx=True),
    "l4h2e24": dict(n_layer=4, n_head=2, n_embd=24, n_positions=40, activation_function="gelu"),
    # heads of 16 (a power of four, like GPT-2's 64): the runtime scales queries instead of dividing scores
    "l2h2e32": dict(n_layer=2, n_head=2, n_embd=32, n_positions=32),
}


def make_checkpoint(folder: Path, seed: int = 0, **config) -> Path:
    """Save a random-init GPT2LMHeadModel (safetensors) plus GPT-2's tokenizer.json into ``folder``."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    # A wide init makes attention patterns and MLP activations far from uniform, so a wrong
    # hook cannot hide behind near-constant values.
    cfg = GPT2Config(**{"vocab_size": 50257, "initializer_range": 0.2, **config})
    model = GPT2LMHeadModel(cfg).eval()
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder, safe_serialization=True)
    (folder / "tokenizer.json").write_bytes(TOKENIZER_JSON.read_bytes())
    return folder


@pytest.fixture(scope="session")
def checkpoints(tmp_path_factory) -> dict[str, Path]:
    """One tiny checkpoint folder per config."""
    root = tmp_path_factory.mktemp("ckpt")
    return {name: make_checkpoint(root / name, seed=i, **cfg) for i, (name, cfg) in enumerate(TINY_CONFIGS.items())}


@pytest.fixture(scope="session")
def exported(checkpoints, tmp_path_factory) -> dict[str, Path]:
    """Each tiny checkpoint exported by gpt2viz into a model folder."""
    from gpt2viz.core.export.exporter import export_model

    root = tmp_path_factory.mktemp("models")
    return {name: export_model(str(ck), root / name, progress=lambda m: None) for name, ck in checkpoints.items()}


@pytest.fixture(scope="session")
def tiny_model_dir(exported) -> Path:
    """The smallest two-layer export, for tests that need any model."""
    return exported["l2h2e16"]


@pytest.fixture(scope="session")
def torch_models(checkpoints):
    """transformers' PyTorch models of the checkpoints, eager attention, eval mode."""
    from gpt2viz.core.export.exporter import load_checkpoint

    return {name: load_checkpoint(ck) for name, ck in checkpoints.items()}


@pytest.fixture(autouse=True)
def _english_after_each_test():
    """A test that switches the app to Chinese must not leave the translators installed for the next one."""
    yield
    import sys

    i18n = sys.modules.get("gpt2viz.app.i18n")  # only when a test used Qt: core tests never import it
    if i18n is not None and i18n.current_language() != "en":
        i18n.install("en")
