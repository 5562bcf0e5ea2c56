"""Export what a view shows: PNG (any scale, with text metadata) or SVG, with a visible caption.

Used by the app's Export actions and by `gpt2viz snapshot`, so a script gets the same pictures.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QCoreApplication, QEvent, QIODevice, QPoint, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QWidget

from gpt2viz.core.files import WriteError, atomic_write, check_writable

from gpt2viz.core.session import Stage
from gpt2viz.widgets.view_names import PER_LAYER, TAB, VIEWS  # noqa: F401 - VIEWS is this module's API too

CAPTION_H = 40  # room for two lines: narrow views wrap their caption


def view_widget(window, view: str) -> QWidget:
    """The widget that draws ``view`` in the main window, brought to the front."""
    if view == "pipeline":
        return window.pipeline
    if view == "chart":
        return window.chart
    tab = window.detail.views[TAB[view]]
    window.detail.setCurrentWidget(tab)
    return tab.big if view == "head" else tab.bars_panel if view == "attribution" else tab


def _redraw(window) -> None:
    """Bring every view drawn in a picture up to the current selection (a hidden tab may lag behind)."""
    window.pipeline.refresh()
    window.chart.redraw()
    window.detail.currentWidget().refresh()
    # New caption texts change label heights: lay out now (a picture is taken before the next event
    # loop turn would do it), else a caption that wraps to more lines is drawn clipped.
    for _ in range(3):  # nested layouts settle from the inside out
        QCoreApplication.sendPostedEvents(None, QEvent.LayoutRequest)


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


# lupdate finds calls spelled translate("Context", "text"): keep that spelling at every call.
translate = QCoreApplication.translate


def view_title(view: str) -> str:
    """The name of ``view`` as shown to the user (the English text is the command-line name itself)."""
    titles = {"pipeline": translate("Snapshot", "pipeline"), "chart": translate("Snapshot", "chart"),
              "tokens": translate("Snapshot", "tokens"), "embeddings": translate("Snapshot", "embeddings"),
              "attention": translate("Snapshot", "attention"), "head": translate("Snapshot", "head"),
              "mlp": translate("Snapshot", "mlp"), "lens": translate("Snapshot", "lens"),
              "residual": translate("Snapshot", "residual"), "path": translate("Snapshot", "path"),
              "attribution": translate("Snapshot", "attribution"), "data": translate("Snapshot", "data")}
    return titles.get(view, view)


def caption(f: dict[str, str]) -> str:
    """One line for under the picture, in the current language (the facts themselves stay English keys)."""
    prompt = f["Prompt"] if len(f["Prompt"]) <= 60 else f["Prompt"][:57] + "…"
    parts = [f"gpt2viz · {f['Model']}", translate("Snapshot", "“{prompt}”").format(prompt=prompt),
             translate("Snapshot", "step {step}").format(step=f["Step"]), view_title(f["View"])]
    words = {"Layer": translate("Snapshot", "layer {value}"), "Head": translate("Snapshot", "head {value}"),
             "Position": translate("Snapshot", "position {value}")}
    parts += [words[k].format(value=f[k]) for k in ("Layer", "Head", "Position") if k in f]
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
    _redraw(window)
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
            state.select_block(L)
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
