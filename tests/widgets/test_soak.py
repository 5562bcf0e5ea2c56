"""A short soak: 150 generation steps in the real window (Play, Steps, Back, Reset, new prompts, tab switches)
leave no more threads, timers, widgets or plot items than after the warm-up. The full run, with memory, is
``bench/soak_app.py`` (numbers in its docstring's note); memory is not asserted here, nor any time.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from gpt2viz.core.model_folder.locations import resolve_model

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


def test_marker_curves_keep_one_picture_per_style(qtbot, stepped_window):
    """pyqtgraph caches a marker picture per pen/brush *object*: colours given as tuples made new objects on
    every redraw, so the cache grew with every step (found by the 1000-step soak). Made once, it stays put."""
    import pyqtgraph as pg

    win = stepped_window("l3h4e32")
    st = win.state
    for name in ("Residual", "MLP", "Logit lens"):
        win.detail.setCurrentWidget(win.detail.views[name])
        for _ in range(6):
            n = len(st.history.tokens)
            st.step()
            qtbot.waitUntil(lambda: not st.busy and len(st.history.tokens) == n + 1, timeout=20000)
            qtbot.wait(30)
    # a curve's markers, or markers set alone (views.marked_line.MarkedLine)
    atlases = [(type(v).__name__, len(getattr(item, "scatter", item).fragmentAtlas))
               for v in win.detail.views.values()
               for item in v.findChildren(pg.PlotWidget) for item in item.getPlotItem().items
               if isinstance(item, pg.PlotDataItem) and item.opts.get("symbol") or isinstance(item, pg.ScatterPlotItem)]
    assert len(atlases) >= 6
    assert all(n <= 2 for _, n in atlases), atlases
