"""Tokens per second: auto-stepping in the visible window vs the CLI's headless loop, in one run.

The app keeps every hook of every step and redraws the token strip, pipeline, stage detail and chart a few
times a second while playing; the CLI keeps logits only. A third line runs the app's worker alone (its step slot
called directly, every hook kept and what the shown tab reads of each new position's lens made, as while playing):
what the model side of the app costs before any window. Rounds alternate so machine noise hits all three alike.

    python bench/bench_app.py [--model atlas] [--tokens 60] [--rounds 3]
(under a display, or QT_QPA_PLATFORM=offscreen)
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

PROMPT = "My favourite city is"


def cli_tokens_per_s(folder, n: int) -> float:
    """The loop `gpt2viz run` runs: Generator with logits only, sampling at temperature 1."""
    from gpt2viz.core.engine.model import Model
    from gpt2viz.core.generation.sampling import SamplingSettings
    from gpt2viz.core.generation.stepper import Generator

    model = Model(folder, verify=False)
    gen = Generator(model, hooks=[])
    gen.start(model.tokenizer.encode(PROMPT))
    s = SamplingSettings(temperature=1.0, seed=0)
    t0 = time.perf_counter()
    for _ in range(n):
        gen.step(s)
    return n / (time.perf_counter() - t0)


def worker_tokens_per_s(folder, n: int, grid: bool = True) -> float:
    """The app's own worker without a window or thread: its step slot called directly, as while playing (every
    hook kept; with the Logit lens tab shown, ``grid``, the new position's whole lens: its grid's column and its
    target path at the followed newest token), each timed until its result signal."""
    from gpt2viz.app.worker import InferenceWorker
    from gpt2viz.core.generation.sampling import SamplingSettings

    w = InferenceWorker()
    got: list[object] = []
    w.sigResult.connect(lambda _r, _s, res: got.append(res))
    w.sigFailed.connect(lambda _r, _s, msg: (_ for _ in ()).throw(RuntimeError(msg)))
    w.load_model(1, "A", str(folder))
    w.start(2, "A", PROMPT, ())
    s = SamplingSettings(temperature=1.0, seed=0)
    t0 = time.perf_counter()
    for i in range(n):
        w.step(3 + i, "A", s, None, (), grid, grid)  # as AppState._newest_lens asks while playing
    assert len(got) == n + 1
    return n / (time.perf_counter() - t0)


def app_tokens_per_s(app, folder, n: int, ini: str, tab: str | None = None) -> float:
    """Play with pace 0 in the shown main window until ``n`` tokens were generated (``tab``: the detail tab shown,
    default the window's own, the logit lens)."""
    from PySide6.QtCore import QEventLoop, QTimer

    from gpt2viz.app.settings import Settings
    from gpt2viz.app.state import AppState
    from gpt2viz.launch import show_main_window
    from gpt2viz.widgets.main_window import MainWindow

    state = AppState(Settings(ini))
    win = MainWindow(state)
    win.prompt.setText(PROMPT)
    show_main_window(win)  # as gpt2viz.launch.run_app shows it
    if tab:
        win.detail.setCurrentWidget(win.detail.views[tab])
    loop = QEventLoop()
    marks = {}

    def on_history():
        h = state.history
        if h is not None and "t0" not in marks and not state.busy:
            marks["t0"], marks["n0"] = time.perf_counter(), len(h.tokens)
            win.controls.pace.setValue(0)
            state.play()

    # The end is the n-th token's result, not the redraw that shows it: while playing the views redraw a few times
    # a second (app/player.py), and ending at a redraw added up to its interval to a ~2 s round.
    after_result = state.player.after_result

    def counted():
        after_result()
        h = state.sessions["A"].history
        if "t0" in marks and "t1" not in marks and len(h.tokens) - marks["n0"] >= n:
            marks["t1"] = time.perf_counter()
            state.pause()
            loop.quit()

    state.player.after_result = counted
    state.sigHistory.connect(on_history)
    state.load_model(str(folder))
    QTimer.singleShot(300_000, loop.quit)
    loop.exec()
    win.close()
    return n / (marks["t1"] - marks["t0"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None)
    ap.add_argument("--tokens", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tab", default=None, help="detail tab to show while playing (e.g. Attention; default the "
                    "window's: Logit lens, whose grid needs every new position's lens column)")
    a = ap.parse_args()
    if not os.environ.get("DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import tempfile

    from PySide6.QtWidgets import QApplication

    from gpt2viz.core.model_folder.locations import resolve_model
    from gpt2viz.launch import prepare_application

    folder = resolve_model(a.model)
    app = QApplication.instance() or QApplication([])
    prepare_application(app)  # as gpt2viz.launch.run_app sets it
    ini = os.path.join(tempfile.mkdtemp(), "bench.ini")
    cli, gui, work = [], [], []
    for _ in range(a.rounds):
        cli.append(cli_tokens_per_s(folder, a.tokens))
        gui.append(app_tokens_per_s(app, folder, a.tokens, ini, a.tab))
        work.append(worker_tokens_per_s(folder, a.tokens, grid=a.tab in (None, "Logit lens")))
    c, g, wk = statistics.median(cli), statistics.median(gui), statistics.median(work)
    print(f"model {folder.name}; {a.tokens} tokens per round, median of {a.rounds} alternating rounds; "
          f"platform {app.platformName()}; tab {a.tab or 'default'}")
    print(f"CLI headless (logits only):            {c:7.1f} tokens/s")
    print(f"app auto-stepping, window shown:       {g:7.1f} tokens/s")
    print(f"app's worker alone (no window):        {wk:7.1f} tokens/s  (every hook + what the tab's views need)")
    print(f"ratio app / CLI: {g / c:.2f}; worker alone / CLI: {wk / c:.2f}")


if __name__ == "__main__":
    main()
