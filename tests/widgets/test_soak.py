"""A short soak: 150 generation steps in the real window (Play, Steps, Back, Reset, new prompts, tab switches)
leave no more threads, timers, widgets or plot items than after the warm-up. The full run, with memory, is
``bench/soak_app.py`` (numbers in its docstring's note); memory is not asserted here, nor any time.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from gpt2viz.core.locations import resolve_model

BENCH = Path(__file__).resolve().parents[2] / "bench" / "soak_app.py"


def _soak_module():
    spec = importlib.util.spec_from_file_location("soak_app", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_150_steps_leak_no_threads_timers_widgets_or_plot_items(qtbot, tmp_path):
    soak = _soak_module()
    win = soak.open_window(resolve_model(None), str(tmp_path / "soak.ini"))
    qtbot.addWidget(win)
    try:
        r = soak.soak(win, steps=150, warmup=40, seed=3, fill=False)
    finally:
        win.close()
    warm, end = r["counts"]
    assert r["steps"] >= 150
    leaks = {k: (warm[k], end[k]) for k in warm
             if k != "python objects (gc)" and end[k] > warm[k]}
    assert not leaks, f"grew between the warm-up and the end: {leaks}"
    # memory: loosely (the allocator keeps freed heap for reuse; the bench measures it properly)
    assert r["trimmed"][1] < 1.5 * r["trimmed"][0]
