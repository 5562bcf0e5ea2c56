"""Hook values from the engine for SAEs: an SAE's input and features at a prompt, and training data from a text.

Every value here comes from onnxruntime running the model folder's graph (``Model.run``), the numbers the app
shows; nothing recomputes GPT-2.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from gpt2viz.core.engine.errors import Cancelled
from gpt2viz.core.features.sae import SAE, SAEError, check_fits, hook_width, sae_input
from gpt2viz.core.model_folder.locations import resources_dir

SHIPPED_CORPUS = "atlas"  # resources/corpus/atlas.txt: the text the project ships (atlas's own corpus, drawn)
MIN_WINDOW = 2  # a text's last window shorter than this is dropped


def sae_activations(model, sae: SAE, prompt: str | Sequence[int], interventions=()) -> tuple[np.ndarray, np.ndarray]:
    """The SAE's input and its features at every position of ``prompt``.

    Parameters
    ----------
    model : gpt2viz.core.engine.model.Model
    sae : SAE
        Checked against the model first (SAEError, one line, when it does not fit).
    prompt : str or sequence of int
    interventions : tuple, optional
        Applied in the run (the hook then shows its value after any intervention at it).

    Returns
    -------
    x : np.ndarray
        [P, d_in], the hook's value as the SAE reads it.
    f : np.ndarray
        [P, d_sae], the feature activations (SAELens' encode).
    """
    check_fits(sae, model.config)
    _, trace = model.run_with_cache(prompt, names=[sae.cfg.hook_name], interventions=tuple(interventions))
    x = sae_input(trace[sae.cfg.hook_name], sae.cfg.hook_head_index)
    return x, sae.encode(x)


def shipped_texts(name: str = SHIPPED_CORPUS) -> list[str]:
    """The texts of ``resources/corpus/NAME.txt`` (one per non-empty line)."""
    path = resources_dir() / "corpus" / f"{name}.txt"
    if not path.is_file():
        raise SAEError(f"the shipped text {path} is missing; give a text file (--text FILE)")
    return read_texts(path)


def read_texts(path: str | Path) -> list[str]:
    """A text file's non-empty lines, each a text of its own (a text starts at position 0 of the model)."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise SAEError(f"cannot read the text {path}: {e}") from None
    texts = [line for line in lines if line.strip()]
    if not texts:
        raise SAEError(f"{path} has no text")
    return texts


def windows(model, texts: Sequence[str], context: int) -> list[list[int]]:
    """Each text's tokens cut into windows of ``context`` tokens, each run from position 0 (a last window
    shorter than ``MIN_WINDOW`` is dropped)."""
    context = max(MIN_WINDOW, min(int(context), model.config.n_positions))
    out = []
    for t in texts:
        ids = model.to_tokens(t)
        out += [ids[s:s + context] for s in range(0, len(ids), context) if len(ids[s:s + context]) >= MIN_WINDOW]
    return out


def gather(model, hook_name: str, head_index: int | None, runs: Sequence[Sequence[int]], *,
           progress: Callable[[int, int], None] | None = None,
           cancel: Callable[[], bool] | None = None) -> np.ndarray:
    """The hook's value (as an SAE reads it) at every position of every window in ``runs``.

    Parameters
    ----------
    model : Model
    hook_name : str
    head_index : int or None
        For ``attn.hook_z``: one head, or None for all heads flattened.
    runs : sequence of token-id windows
        Each is one prefill (see :func:`windows`).
    progress : callable, optional
        ``progress(done, total)`` after each window.
    cancel : callable, optional
        Polled before each window; True raises :class:`~gpt2viz.core.engine.errors.Cancelled`.

    Returns
    -------
    np.ndarray
        [sum of window lengths, d_in] float32.
    """
    width = hook_width(hook_name, head_index, model.config)
    out = np.empty((sum(len(r) for r in runs), width), np.float32)
    row = 0
    for i, ids in enumerate(runs):
        if cancel is not None and cancel():
            raise Cancelled("cancelled")
        trace, _ = model.run(list(ids), hooks=[hook_name])
        x = sae_input(trace[hook_name], head_index)
        out[row:row + len(x)] = x
        row += len(x)
        if progress is not None:
            progress(i + 1, len(runs))
    return out
