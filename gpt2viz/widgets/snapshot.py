"""Export what a view shows: PNG (any scale, with text metadata) or SVG, with a visible caption.

Used by the app's Export actions and by `gpt2viz snapshot`, so a script gets the same pictures.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPoint, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QWidget

from gpt2viz.core.files import WriteError, atomic_write, check_writable

VIEWS = ("pipeline", "chart", "tokens", "embeddings", "attention", "head", "mlp", "lens", "residual", "path",
         "attribution")
PER_LAYER = ("attention", "head", "mlp")
_TAB = {"tokens": "Tokens", "embeddings": "Embeddings", "attention": "Attention", "head": "Attention",
        "mlp": "MLP", "lens": "Logit lens", "residual": "Residual", "path": "Path", "attribution": "Path"}
CAPTION_H = 40  # room for two lines: narrow views wrap their caption


def view_widget(window, view: str) -> QWidget:
    """The widget that draws ``view`` in the main window, brought to the front."""
    if view == "pipeline":
        return window.pipeline
    if view == "chart":
        return window.chart
    tab = window.detail.views[_TAB[view]]
    window.detail.setCurrentWidget(tab)
    return tab.big if view == "head" else tab.bars_panel if view == "attribution" else tab


def facts(state, view: str) -> dict[str, str]:
    """What a picture shows: model, prompt, step, stage, layer, head, position."""
    h = state.history
    out = {"Software": "gpt2viz", "Model": state.model.name if state.model else "",
           "Prompt": state.model.tokenizer.decode(list(h.tokens[: h.prompt_len])) if h else "",
           "Step": str(len(h.generated)) if h else "0", "View": view,
           "Position": str(state.selected_position)}
    if view in PER_LAYER or view == "pipeline":
        out["Layer"] = str(state.layer)
    if view == "head":
        out["Head"] = str(state.head)
    if state.model:
        out["Model-SHA256"] = next(iter(state.model.manifest.get("files", {}).values()), "")
    return out


def caption(f: dict[str, str]) -> str:
    """One line for under the picture."""
    prompt = f["Prompt"] if len(f["Prompt"]) <= 60 else f["Prompt"][:57] + "…"
    parts = [f"gpt2viz · {f['Model']}", f"“{prompt}”", f"step {f['Step']}", f["View"]]
    parts += [f"{k.lower()} {f[k]}" for k in ("Layer", "Head", "Position") if k in f]
    return " · ".join(parts)


def default_name(f: dict[str, str], ext: str) -> str:
    """A file name that says the model, prompt (shortened), step, view, layer and head."""
    slug = re.sub(r"[^A-Za-z0-9]+", "-", f["Prompt"]).strip("-")[:32] or "empty"
    bits = [f["Model"], slug, f"step{f['Step']}", f["View"]]
    bits += [f"L{f['Layer']}"] if "Layer" in f else []
    bits += [f"H{f['Head']}"] if "Head" in f else []
    return re.sub(r"[^A-Za-z0-9._-]", "_", "_".join(bits)) + f".{ext}"


def _paint(p: QPainter, widget: QWidget, text: str, w: int, h: int) -> None:
    pal = widget.palette()
    p.fillRect(QRect(0, 0, w, h + CAPTION_H), pal.window())
    QWidget.render(widget, p, QPoint(0, 0))  # the widget method: QGraphicsView overrides render()
    p.fillRect(QRect(0, h, w, CAPTION_H), QColor(pal.window().color()).darker(108))
    p.setPen(pal.windowText().color())
    f = QFont(widget.font())
    f.setPointSizeF(8.0)
    p.setFont(f)
    p.drawText(QRect(6, h, w - 12, CAPTION_H), Qt.AlignVCenter | Qt.AlignLeft | Qt.TextWordWrap, text)


def render_png(widget: QWidget, f: dict[str, str], scale: float = 1.0) -> QImage:
    """The widget drawn at ``scale`` (vector-sharp text) with the caption band and metadata."""
    w, h = widget.width(), widget.height()
    img = QImage(QSize(round(w * scale), round((h + CAPTION_H) * scale)), QImage.Format_ARGB32)
    img.fill(Qt.white)
    p = QPainter(img)
    p.setRenderHint(QPainter.Antialiasing)
    p.setRenderHint(QPainter.TextAntialiasing)
    p.scale(scale, scale)
    try:
        _paint(p, widget, caption(f), w, h)
    finally:
        p.end()
    for k, v in {**f, "Title": caption(f)}.items():
        img.setText(k, v)
    return img


def png_bytes(img: QImage) -> bytes:
    buf = QBuffer()
    buf.open(QIODevice.WriteOnly)
    if not img.save(buf, "PNG"):
        raise WriteError("could not encode the PNG")
    return bytes(buf.data())


def svg_bytes(widget: QWidget, f: dict[str, str]) -> bytes:
    """The widget as SVG (text stays text), with the caption band; facts in the SVG's description."""
    w, h = widget.width(), widget.height()
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.WriteOnly)
    gen = QSvgGenerator()
    gen.setOutputDevice(buf)
    gen.setSize(QSize(w, h + CAPTION_H))
    gen.setViewBox(QRect(0, 0, w, h + CAPTION_H))
    gen.setTitle(caption(f))
    gen.setDescription(json.dumps(f, ensure_ascii=False))
    p = QPainter(gen)
    try:
        _paint(p, widget, caption(f), w, h)
    finally:
        p.end()
    buf.close()
    return bytes(data)


def export_view(window, view: str, path: Path, scale: float = 1.0, force: bool = False) -> Path:
    """Write the picture of ``view`` to ``path`` (.png or .svg), atomically."""
    path = Path(path)
    ext = path.suffix.lower()
    if ext not in (".png", ".svg"):
        raise WriteError(f"{path}: the file name must end in .png or .svg")
    check_writable(path, force)
    widget = view_widget(window, view)
    window.state.sigSelection.emit()  # views redraw for the current selection before the grab
    f = facts(window.state, view)
    data = svg_bytes(widget, f) if ext == ".svg" else png_bytes(render_png(widget, f, scale))
    return atomic_write(path, data, force)


def export_all_layers(window, view: str, folder: Path, ext: str = "png", scale: float = 1.0, force: bool = False,
                      progress: Callable[[int, int], bool] | None = None) -> dict:
    """One picture per layer, a contact sheet of them all, and ``index.json`` describing every file.

    ``progress(done, total)`` returning False cancels (files already written stay, and are indexed).
    """
    if view not in PER_LAYER:
        raise ValueError(f"'{view}' is not a per-layer view; choose one of {', '.join(PER_LAYER)}")
    folder = Path(folder)
    if not folder.is_dir():
        raise WriteError(f"cannot write into {folder}: the folder does not exist")
    state = window.state
    n = state.model.config.n_layer
    keep = state.stage
    entries, images = [], []
    try:
        for L in range(n):
            if progress and progress(L, n) is False:
                break
            state.select_stage(f"block.{L}")
            f = facts(state, view)
            path = folder / default_name(f, ext)
            export_view(window, view, path, scale, force)
            if ext == "png":
                images.append(QImage(str(path)))
            entries.append({**{k.lower(): v for k, v in f.items()}, "file": path.name, "layer": L})
    finally:
        state.select_stage(keep)
    index = {"view": view, "model": state.model.name, "files": entries}
    if images:
        sheet = contact_sheet(images)
        f = {k: v for k, v in facts(state, view).items() if k not in ("Layer", "Head")}
        name = default_name({**f, "View": f"{view}-all-layers"}, "png")
        atomic_write(folder / name, png_bytes(sheet), force)
        index["contact_sheet"] = name
    atomic_write(folder / "index.json", json.dumps(index, indent=1, ensure_ascii=False).encode(), force)
    if progress:
        progress(len(entries), n)
    return index


def contact_sheet(images: list[QImage], cols: int | None = None) -> QImage:
    """All images in one grid (each keeps its own caption band)."""
    cols = cols or max(1, round(len(images) ** 0.5 + 0.49))
    rows = (len(images) + cols - 1) // cols
    w, h = max(i.width() for i in images), max(i.height() for i in images)
    sheet = QImage(QSize(cols * w, rows * h), QImage.Format_ARGB32)
    sheet.fill(Qt.white)
    p = QPainter(sheet)
    for k, img in enumerate(images):
        p.drawImage((k % cols) * w, (k // cols) * h, img)
    p.end()
    return sheet


def run_snapshot(a) -> list[Path]:
    """`gpt2viz snapshot`: run the prompt in an offscreen window and export the asked view(s).

    Raises WriteError / ValueError / ModelFolderError with a message for the user.
    """
    import os
    import tempfile

    from gpt2viz.core.locations import resolve_model
    from gpt2viz.core.sampling import SamplingSettings

    out = Path(a.out).expanduser()
    if a.all_layers:
        if not out.is_dir():
            raise WriteError(f"--all-layers writes into a folder; {out} is not an existing folder")
        if not os.access(out, os.W_OK | os.X_OK):
            raise WriteError(f"cannot write into {out}: no permission")
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

    from gpt2viz.app.settings import Settings
    from gpt2viz.app.state import AppState
    from gpt2viz.widgets.main_window import MainWindow

    _app = QApplication.instance() or QApplication(["gpt2viz"])  # kept alive for the widgets below
    state = AppState(Settings(os.path.join(tempfile.mkdtemp(), "snapshot.ini")))
    state.sampling = settings
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
            if len(state.history.tokens) >= state.model.config.n_positions:
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
        state.select_stage(f"block.{a.layer}")
        state.select_head(a.head)
        if a.view == "data":
            from gpt2viz.core.trace_export import export_trace

            return list(export_trace(state.history, state.model, state.sampling, out, a.force))
        if a.all_layers:
            index = export_all_layers(win, a.view, out, "png" if a.format == "png" else "svg", a.scale, a.force)
            return [out / e["file"] for e in index["files"]] + [out / "index.json"]
        return [export_view(win, a.view, out, a.scale, a.force)]
    finally:
        win.close()
