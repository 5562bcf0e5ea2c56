"""Peak memory of one long prompt, measured in a fresh process (run it under `/usr/bin/time -v`, or read
the VmHWM it prints: the process's own peak, not a parent's inherited figure).

    python bench/bench_memory.py engine FOLDER N   Model.run of N tokens, then every on-demand hook read
    python bench/bench_memory.py app FOLDER N [--data]   the app (offscreen) with an N-token prompt, every view
                                                    at every layer shown, views exported (--data: and every hook)
    python bench/bench_memory.py medium [--work build/bench] [--n 1024]
        a gpt2-medium-sized random model (24 layers, 16 heads, 1024 wide) exported by the tests' helper,
        opened in the app with an N-token prompt; prints its peak RSS (target <= 3 GB)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]


def stage(what: str) -> None:
    """Peak and current RSS so far, on stderr: where the memory goes."""
    st = open("/proc/self/status").read()
    hwm, rss = (int(st.split(k + ":")[1].split()[0]) / 1024**2 for k in ("VmHWM", "VmRSS"))
    print(f"  {what:<40} peak {hwm:5.2f} GB  now {rss:5.2f} GB", file=sys.stderr, flush=True)


def vm_hwm_gb() -> float:
    """This process's peak resident set (VmHWM), GB."""
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024**2
    raise RuntimeError("no VmHWM in /proc/self/status")


def engine(folder: str, n: int) -> None:
    from bench_engine import long_prompt
    from gpt2viz.core.engine.model import Model
    from gpt2viz.core.generation.stepper import Generator

    model = Model(folder, verify=False)
    _, ids = long_prompt(model.tokenizer, n)
    gen = Generator(model)
    t0 = time.perf_counter()
    gen.start(ids)
    hist = gen.history()
    for L in range(model.config.n_layer):  # what the views read: one position's slice of each
        for h in ("pattern", "attn_scores", "pre", "post", "resid_post"):
            hist.hook_at((h, L), n - 1)
    print(f"engine: {n} tokens, prefill + every layer read in {time.perf_counter() - t0:.1f} s; "
          f"trace {hist.frames[0].trace.nbytes() / 2**20:.0f} MiB; VmHWM {vm_hwm_gb():.2f} GB")


def app(folder: str, n: int, data: bool = False) -> None:
    """The main window (offscreen) on an ``n``-token prompt with every view drawn: each detail tab, the
    attention and MLP views at every layer, the lens, then exports of the attention, MLP and lens views;
    with ``data`` also Export -> data (every hook over the whole text: at 1000 tokens on GPT-2 small the
    patterns and scores alone are 1.2 GB, so this one is measured apart)."""
    import os
    import tempfile

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from bench_engine import long_prompt
    from gpt2viz.app.settings import Settings
    from gpt2viz.app.state import AppState
    from gpt2viz.core.session.session import Stage
    from gpt2viz.launch import prepare_application, show_main_window
    from gpt2viz.widgets.main_window import MainWindow
    from gpt2viz.widgets.snapshot import export_view

    qapp = QApplication.instance() or QApplication([])
    prepare_application(qapp)  # as gpt2viz.launch.run_app sets it
    tmp = Path(tempfile.mkdtemp())
    # only the tokenizer: a throwaway Model would leave its freed weights in the process's heap

    from gpt2viz.core.model_folder.tokenizer import GPT2Tokenizer

    text, ids = long_prompt(GPT2Tokenizer.from_file(Path(folder) / "tokenizer.json"), n)
    import gc

    gc.collect()
    state = AppState(Settings(str(tmp / "s.ini")))
    win = MainWindow(state)
    win.prompt.setText(text)
    win.resize(1500, 940)
    show_main_window(win)  # as gpt2viz.launch.run_app shows it
    t0 = time.perf_counter()
    state.load_model(folder)  # runs the prompt once loaded

    def wait(cond, timeout=900.0):
        end = time.perf_counter() + timeout
        while not cond():
            qapp.processEvents()
            time.sleep(0.005)
            if time.perf_counter() > end:
                raise RuntimeError("timed out")

    wait(lambda: state.model is not None)
    stage("model and weights loaded")
    wait(lambda: state.history is not None and not state.busy)
    assert len(state.history.tokens) == n, len(state.history.tokens)
    stage("prompt read, views drawn")
    t_prompt = time.perf_counter() - t0
    if n < state.model.config.n_positions:  # and one cached step, when the context has room
        state.step()
        wait(lambda: len(state.history.tokens) == n + 1 and not state.busy)
    n_layer = state.model.config.n_layer
    for name, view in win.detail.views.items():
        win.detail.setCurrentWidget(view)
        qapp.processEvents()
        if name in ("Attention", "MLP"):
            for L in range(n_layer):
                state.select_block(L)
                win.detail.setCurrentWidget(view)
                qapp.processEvents()
        stage(f"{name} tab")
    state.select_position(n // 2)  # an earlier position: its lens, its attention row
    qapp.processEvents()
    for view in ("attention", "mlp", "lens"):
        export_view(win, view, tmp / f"{view}.png", 2.0, force=True)
    stage("views exported")
    if data:
        from gpt2viz.core.io.trace_export import export_trace

        export_trace(state.history, state.model, state.sampling, tmp / "data.npz", force=True, weights=state.weights)
    win.close()
    print(f"app: {n} tokens, prompt shown after {t_prompt:.1f} s; every view at every layer drawn, views "
          f"{'and the data ' if data else ''}exported; VmHWM {vm_hwm_gb():.2f} GB")


def medium(work: Path, n: int) -> None:
    """A gpt2-medium-sized random model exported by the tests' helper, then the app on an n-token prompt."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from bench_engine import peak_rss_of
    from conftest import make_checkpoint

    ck, out = work / "ckpt-l24h16e1024", work / "model-l24h16e1024"
    if not (ck / "config.json").exists():
        # GPT-2's own init: the tests' wide one (0.2) makes 24 random layers numerically chaotic (block 23's
        # patterns then differ from transformers by 1e-3 in float32) and the export's validation refuses it
        make_checkpoint(ck, seed=0, n_layer=24, n_head=16, n_embd=1024, n_positions=1024, initializer_range=0.02)
    if not (out / "gpt2viz.json").exists():
        t0 = time.perf_counter()
        # a child process: the export's own peak (torch, two copies of the graph) is not the app's
        peak = peak_rss_of([sys.executable, "-m", "gpt2viz", "export", str(ck), "--out", str(out)])
        print(f"export took {time.perf_counter() - t0:.0f} s, peak RSS {peak:.2f} GB")
    size = sum(f.stat().st_size for f in out.iterdir()) / 2**30
    gb, said = measured([sys.executable, __file__, "app", str(out), str(n)])
    print(said.strip())
    print(f"gpt2-medium-sized (24 layers, 16 heads, 1024 wide; files {size:.2f} GiB): the app with a {n}-token "
          f"prompt, every view at every layer: peak RSS {gb:.2f} GB (target <= 3)")


def measured(argv: list[str]) -> tuple[float, str]:
    """Peak RSS (GB, /usr/bin/time -v: the child's own) and stdout of a fresh process."""
    import os
    import re
    import subprocess

    r = subprocess.run(["/usr/bin/time", "-v", *argv], capture_output=True, text=True,
                       env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    if r.returncode or not m:
        raise RuntimeError(f"{argv[:4]} failed: {r.stderr[-2000:]}")
    return int(m.group(1)) / 1024**2, r.stdout


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "engine":
        engine(sys.argv[2], int(sys.argv[3]))
    elif mode == "app":
        app(sys.argv[2], int(sys.argv[3]), "--data" in sys.argv[4:])
    elif mode == "medium":
        import argparse

        ap = argparse.ArgumentParser()
        ap.add_argument("--work", type=Path, default=Path("build/bench"))
        ap.add_argument("--n", type=int, default=1024)
        a = ap.parse_args(sys.argv[2:])
        medium(a.work, a.n)
    else:
        raise SystemExit(f"unknown mode {mode!r}")
