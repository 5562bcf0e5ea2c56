"""`gpt2viz snapshot`: the main window, offscreen, driven to a prepared state and exported.

It builds a whole window, so it sits with the command line above the widgets.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from gpt2viz.app.sessions import SessionId
from gpt2viz.core.model_folder.files import WriteError, check_writable
from gpt2viz.widgets.snapshot import export_all_layers, export_view


def run_snapshot(a) -> list[Path]:
    """`gpt2viz snapshot`: run the prompt in an offscreen window and export the asked view(s).

    Raises WriteError / ValueError / ModelFolderError with a message for the user.
    """
    import os
    import tempfile

    from gpt2viz.core.generation.sampling import SamplingSettings
    from gpt2viz.core.model_folder.locations import resolve_model

    out = Path(a.out).expanduser()
    if a.all_layers:
        if out.exists() and not out.is_dir():
            raise WriteError(f"--all-layers writes into a folder; {out} is a file")
        if not out.exists() and not out.parent.is_dir():
            raise WriteError(f"--all-layers writes into a folder; neither {out} nor its parent {out.parent} exists")
        where = out if out.is_dir() else out.parent  # a missing folder is created (its parent must exist)
        if not os.access(where, os.W_OK | os.X_OK):
            raise WriteError(f"cannot write into {where}: no permission")
    elif a.view == "data":
        if out.suffix.lower() != ".npz":
            raise WriteError(f"{out}: the data export is a .npz file (a .json is written beside it)")
        check_writable(out, a.force)
        check_writable(out.with_suffix(".json"), a.force)
    else:
        if out.suffix.lower() not in (".png", ".svg"):
            raise WriteError(f"{out}: the file name must end in .png or .svg")
        check_writable(out, a.force)
    settings = SamplingSettings(a.temperature, a.top_k, a.top_p, a.seed)
    folder = resolve_model(a.model)
    if a.scale <= 0 or a.scale > 8:
        raise ValueError(f"--scale must be in (0, 8], got {a.scale}")

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from gpt2viz.app import i18n
    from gpt2viz.app.settings import Settings
    from gpt2viz.app.state import AppState
    from gpt2viz.widgets.main_window import MainWindow

    _app = QApplication.instance() or QApplication(["gpt2viz"])  # kept alive for the widgets below
    before = i18n.current_language()  # restored at the end: a caller in the same process keeps its language
    i18n.install(getattr(a, "lang", None) or "en", _app)
    state = AppState(Settings(os.path.join(tempfile.mkdtemp(), "snapshot.ini")), device=getattr(a, "device", "cpu"))
    state.set_sampling(**asdict(settings))
    win = MainWindow(state)
    win.prompt.setText(a.prompt)
    win.resize(1500, 940)
    win.show()
    errors: list[str] = []
    state.sigError.connect(errors.append)

    def wait(cond) -> None:
        loop = QEventLoop()
        timer = QTimer()
        timer.timeout.connect(lambda: (cond() or errors) and loop.quit())
        timer.start(5)
        QTimer.singleShot(600_000, loop.quit)
        loop.exec()
        timer.stop()
        if errors:
            raise ValueError(errors[0])

    try:
        state.load_model(str(folder))
        wait(lambda: state.history is not None and not state.busy)
        for _ in range(a.steps):
            if state.session(SessionId.A).context_full():
                break
            n = len(state.history.tokens)
            state.step()
            wait(lambda n=n: len(state.history.tokens) > n and not state.busy)
        n_layer, n_head = state.model.config.n_layer, state.model.config.n_head
        if not 0 <= a.layer < n_layer:
            raise ValueError(f"--layer must be in 0..{n_layer - 1}")
        if not 0 <= a.head < n_head:
            raise ValueError(f"--head must be in 0..{n_head - 1}")
        if a.position is not None:
            if not 0 <= a.position < len(state.history.tokens):
                raise ValueError(f"--position must be in 0..{len(state.history.tokens) - 1}")
            state.select_position(a.position)
        state.select_block(a.layer)
        state.select_head(a.head)
        view = _prepare(a, state, win, wait)
        if a.view == "data":
            from gpt2viz.core.io.trace_export import export_trace

            return list(export_trace(state.history, state.model, state.sampling, out, a.force, weights=state.weights))
        if a.all_layers:
            index = export_all_layers(win, view, out, "png" if a.format == "png" else "svg", a.scale, a.force,
                                      dark=a.dark)
            return [out / e["file"] for e in index["files"]] + [out / "index.json"]
        return [export_view(win, view, out, a.scale, a.force, dark=a.dark)]
    finally:
        win.close()
        i18n.install(before, _app)


def _prepare(a, state, win, wait) -> str:
    """Interventions, prompt B, and the analyses a snapshot asks for; returns the view to export."""
    import sys

    from gpt2viz.commands.interventions import from_args
    from gpt2viz.widgets.view_names import COMPARE_VIEWS

    ivs = from_args(a, state.model) if hasattr(a, "ablate_head") else ()
    if ivs:
        state.set_interventions(ivs)
        wait(lambda: not state.busy and state.history.current.interventions == ivs)
    view = a.view
    tok = state.model.tokenizer

    def target():
        if not getattr(a, "target", None):
            return None
        ids = tok.encode(a.target)
        if not ids:
            raise ValueError("--target is empty")
        return ids[0]

    b_text = getattr(a, "corrupt", None) if a.view == "patching" else getattr(a, "compare", None)
    if a.view == "patching" and not b_text:
        b_text = getattr(a, "compare", None)
        if not b_text:
            raise ValueError("--view patching needs --corrupt TEXT (the corrupted prompt; the --prompt is the clean one)")
    if b_text:
        win.open_compare(b_text)
        wait(lambda: state.session(SessionId.B).history is not None and not state.busy)
    if a.view == "patching":
        why = win.analysis.patching.check()
        if why:
            raise ValueError(why)
        state.run_patching(a.site, target())
        wait(lambda: not state.jobs)
    elif a.view == "causal-trace":
        from gpt2viz.core.analysis.causal_trace import default_subject, find_subject

        ids = state.prompt_ids(SessionId.A)
        if getattr(a, "subject", None):
            subject = find_subject(tok, ids, a.subject)
        else:
            subject = default_subject(tok, ids)
            print("subject (the longest capitalised word token before the last; choose with --subject): "
                  + repr("".join(tok.token_text(ids[p]) for p in subject)), file=sys.stderr)
        state.run_causal_trace(subject, target(), a.noise, a.samples, a.window, a.seed)
        wait(lambda: not state.jobs)
    elif a.view in ("features", "feature"):
        from gpt2viz.core.features.shipped import feature_set

        fs = feature_set(state.model, state.layer)  # SAEError (one line) when the block has no SAE
        if a.view == "feature":
            if getattr(a, "feature", None) is None:
                raise ValueError("--view feature needs --feature F (a feature of block --layer's SAE)")
            if not 0 <= a.feature < fs.sae.cfg.d_sae:
                raise ValueError(f"--feature {a.feature} is out of range 0..{fs.sae.cfg.d_sae - 1}")
            if fs.dashboards is None:
                raise ValueError(f"block {state.layer}'s SAE has no dashboards: build them with gpt2viz sae-dashboards")
            win.detail.views["Features"].open_feature(state.layer, a.feature)
    elif getattr(a, "compare", None):
        if a.view not in COMPARE_VIEWS:
            raise ValueError(f"--compare draws {', '.join(COMPARE_VIEWS)}, not {a.view}")
        view = COMPARE_VIEWS[a.view]
    return view


def run_report(a, command: str = "") -> Path:
    """`gpt2viz report`: run the prompt (and --steps) offscreen, then write the journey report to --out.

    Raises WriteError / ValueError / ModelFolderError with a message for the user.
    """
    import os
    import tempfile

    from gpt2viz.core.generation.sampling import SamplingSettings
    from gpt2viz.core.model_folder.locations import resolve_model

    out = Path(a.out).expanduser()
    if out.suffix.lower() not in (".pdf", ".html", ".htm"):
        raise WriteError(f"{out}: the report is a .pdf or an .html file")
    check_writable(out, a.force)
    settings = SamplingSettings(a.temperature, a.top_k, a.top_p, a.seed)
    folder = resolve_model(a.model)

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from gpt2viz.app import i18n
    from gpt2viz.app.settings import Settings
    from gpt2viz.app.state import AppState

    _app = QApplication.instance() or QApplication(["gpt2viz"])  # kept alive: fonts and images need it
    before = i18n.current_language()  # restored at the end: a caller in the same process keeps its language
    lang = install_language(getattr(a, "lang", None))
    if getattr(a, "lang", None) not in (None, "en") and lang == "en":
        import sys

        print(f"note: no {a.lang} translation is installed; the report is in English", file=sys.stderr)
    state = AppState(Settings(os.path.join(tempfile.mkdtemp(), "report.ini")), device=getattr(a, "device", "cpu"))
    state.set_sampling(**asdict(settings))
    errors: list[str] = []
    state.sigError.connect(errors.append)

    def wait(cond) -> None:
        loop = QEventLoop()
        timer = QTimer()
        timer.timeout.connect(lambda: (cond() or errors) and loop.quit())
        timer.start(5)
        QTimer.singleShot(600_000, loop.quit)
        loop.exec()
        timer.stop()
        if errors:
            raise ValueError(errors[0])

    try:
        state.load_model(str(folder))
        wait(lambda: state.model is not None and not state.busy)
        state.run_prompt(a.prompt)
        wait(lambda: state.history is not None and not state.busy)
        for _ in range(a.steps):
            if state.session(SessionId.A).context_full():
                break
            n = len(state.history.tokens)
            state.step()
            wait(lambda n=n: len(state.history.tokens) > n and not state.busy)
        from gpt2viz.widgets.report import write_report

        return write_report(state, out, a.force, command=command, dark=a.dark)
    finally:
        state.shutdown()
        i18n.install(before)


def install_language(lang: str | None) -> str:
    """Install the translations of ``lang`` (None: English), replacing any installed before; returns the
    language installed (English when its catalogue is missing)."""
    from gpt2viz.app import i18n

    return i18n.install(lang or "en")
