"""The journey report: the whole life of the next token as one document (PDF through Qt, or HTML).

A title page, one section per stage (its figure, the live numbers, the explanation), the attribution
summary and a reproducibility footer. The figures are the export figures (:mod:`gpt2viz.widgets.figures`)
at twice their size; the PDF is QTextDocument printed by QPdfWriter (no browser, no new dependency).
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QBuffer, QIODevice, QMarginsF, QUrl
from PySide6.QtGui import QImage, QPageLayout, QPageSize, QPdfWriter, QTextDocument

from gpt2viz import __version__
from gpt2viz.app import attribution_text as at
from gpt2viz.app import report_text as rt
from gpt2viz.app.sessions import SessionId
from gpt2viz.core.generation.sampling import top_k_text
from gpt2viz.core.model_folder.files import WriteError, atomic_write, check_writable
from gpt2viz.core.session.session import CHOOSE, Selection
from gpt2viz.core.viewmodels.journey import journey
from gpt2viz.widgets.figures import Theme, render_png

IMG_W = 620  # width of a figure in the document, in its pixels (about the text width of an A4 page)

def numbers(state) -> dict[str, dict]:
    """Every section's numbers: the journey's pages for session A's newest token, then the attribution's
    formatted strings (when the model can be attributed)."""
    from gpt2viz.core.analysis.path_graph import DEFAULT_THRESHOLD
    from gpt2viz.core.viewmodels.path import path_summary

    s = state.session(SessionId.A)
    out: dict[str, dict] = {page.key: page.numbers for page in journey(s)}
    try:
        path = path_summary(s, "", "", DEFAULT_THRESHOLD)
    except Exception:  # noqa: BLE001 - attribution is a bonus: a model it cannot explain still gets a report
        path = None
    if path is not None:
        out[rt.ATTRIBUTION] = {"target": "“" + path.target_text + "”", "logit": f"{path.logit:.3f}",
                               "headline": at.headline(path),
                               "parts": ", ".join(f"{at.bar_label(b)} {b.value:+.2f}" for b in path.bars[:6])}
    return out


def _figures(state) -> dict[str, tuple[str, Selection]]:
    """Section -> (view, selection) of its figure: a journey page shows the view it opens, once (a page that
    opens the same view as the page before it shows none); the attribution shows its ranked bars."""
    out, last = {}, None
    for page in journey(state.session(SessionId.A)):
        if page.view != last:
            sel = Selection(position=None, stage=page.stage, layer=page.numbers.get("layer", 0),
                            head=page.numbers.get("head", 0))
            out[page.key] = (page.view, sel)
        last = page.view
    out[rt.ATTRIBUTION] = ("attribution", Selection(position=None, stage=CHOOSE, layer=0, head=0))
    return out


def build_document(state, command: str = "", theme: Theme = Theme(), scale: float = 2.0,
                   progress: Callable[[int, int], bool] | None = None, img_w: int = IMG_W) -> tuple[str, dict[str, QImage]]:
    """The report as HTML (images referenced as ``fig-<section>.png``) and those images."""
    from gpt2viz.widgets.snapshot import figure_of, interventions_text

    s = state.session(SessionId.A)
    m, cfg, h = s.model, s.model.config, s.history
    tok = m.tokenizer
    w = rt.words()
    nums = numbers(state)
    keys = [k for k in (*rt.SECTIONS, rt.ATTRIBUTION) if k in nums]
    figures = _figures(state)
    images: dict[str, QImage] = {}
    e = html.escape
    chosen = "“" + nums["choose"]["chosen_text"] + "”"
    generated = tok.decode(list(h.tokens[h.prompt_len:])) if len(h.tokens) > h.prompt_len else ""
    date = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts = [
        "<html><head><meta charset='utf-8'><style>"
        "body{font-family:'DejaVu Sans','Noto Sans CJK SC',sans-serif;font-size:10.5pt;}"
        "h1{font-size:22pt;} h2{font-size:15pt;margin-top:6px;} .muted{color:#555;} td{padding:2px 8px;}"
        "</style></head><body>",
        f"<h1>{e(w['title'])}</h1><p class='muted'>{e(w['subtitle'])}</p>",
        "<table>",
        f"<tr><td><b>{e(w['prompt'])}</b></td><td>“{e(s.prompt)}”</td></tr>",
        f"<tr><td><b>{e(w['generated'])}</b></td><td>{e(repr(generated)) if generated else e(w['none'])}</td></tr>",
        f"<tr><td><b>{e(w['next'])}</b></td><td>{e(chosen)}</td></tr>",
        f"<tr><td><b>{e(w['model'])}</b></td><td>{e(m.name)} — " + e(w["size"].format(
            params=f"{m.n_params:,}", n_layer=cfg.n_layer, n_head=cfg.n_head, n_embd=cfg.n_embd,
            n_positions=cfg.n_positions)) + "</td></tr>",
        f"<tr><td><b>{e(w['date'])}</b></td><td>{e(date)}</td></tr></table>",
        f"<h3>{e(w['contents'])}</h3><ol>" + "".join(f"<li>{e(rt.section_title(k))}</li>" for k in keys) + "</ol>",
    ]
    for i, key in enumerate(keys):
        if progress and progress(i, len(keys)) is False:
            raise InterruptedError("cancelled")
        n = nums[key]
        parts.append(f"<h2 style='page-break-before: always'>{i + 1}. {e(rt.section_title(key))}</h2>")
        parts += [f"<p>{e(para)}</p>" for para in rt.section_text(key, n).split("\n\n")]
        if key in figures:
            view, sel = figures[key]
            images[key] = render_png(figure_of(state, view, {}, selection=sel), scale, theme)
            parts.append(f"<p align='center'><img src='fig-{key}.png' width='{img_w}'></p>")
        if key == "attention":  # the head the page is about, large
            images["head"] = render_png(figure_of(state, "head", {}, selection=figures[key][1]), scale, theme)
            parts.append(f"<p align='center'><img src='fig-head.png' width='{round(img_w * 0.8)}'></p>")
    ivs = interventions_text(s) or w["none"]
    files = m.manifest.get("files", {})
    st = s.sampling
    parts.append(f"<h2 style='page-break-before: always'>{e(w['repro'])}</h2><table>")
    parts += [f"<tr><td><b>{e(w['sha'])}</b></td><td><code>{e(k)}: {e(v)}</code></td></tr>" for k, v in files.items()]
    parts += [
        f"<tr><td><b>{e(w['settings'])}</b></td><td>" + e(w["settings_line"].format(
            temperature=f"{st.temperature:g}", top_k=top_k_text(st.top_k, w["off"]), top_p=f"{st.top_p:g}",
            seed=st.seed, steps=len(h.generated))) + "</td></tr>",
        f"<tr><td><b>{e(w['interventions'])}</b></td><td>{e(ivs)}</td></tr>",
        f"<tr><td><b>{e(w['version'])}</b></td><td>gpt2viz {e(__version__)}</td></tr>",
        f"<tr><td><b>{e(w['command'])}</b></td><td><code>{e(command)}</code></td></tr>" if command else "",
        "</table></body></html>"]
    if progress:
        progress(len(keys), len(keys))
    return "\n".join(parts), images


def _png_bytes(img: QImage) -> bytes:
    from gpt2viz.widgets.snapshot import png_bytes

    return png_bytes(img)


def write_report(state, out: Path, force: bool = False, command: str = "", dark: bool = False,
                 progress: Callable[[int, int], bool] | None = None) -> Path:
    """Write the report of ``state``'s session A to ``out`` (.pdf, or .html with images embedded)."""
    out = Path(out)
    ext = out.suffix.lower()
    if ext not in (".pdf", ".html", ".htm"):
        raise WriteError(f"{out}: the report is a .pdf or an .html file")
    check_writable(out, force)
    margins_mm = (0, 0, 0, 0)  # QTextDocument.print_ keeps 2 cm around the text itself
    img_w = IMG_W
    if ext == ".pdf":  # QTextDocument lays a printed page out at the screen's logical dpi: fit the text width
        from PySide6.QtGui import QGuiApplication

        screen = QGuiApplication.primaryScreen()
        dpi = screen.logicalDotsPerInchX() if screen is not None else 96.0
        img_w = int((210 - 40 - margins_mm[0] - margins_mm[2]) / 25.4 * dpi) - 12
    text, images = build_document(state, command, Theme(dark=dark), progress=progress, img_w=img_w)
    if ext != ".pdf":
        for key, img in images.items():
            uri = "data:image/png;base64," + base64.b64encode(_png_bytes(img)).decode()
            text = text.replace(f"src='fig-{key}.png'", f"src='{uri}'")
        return atomic_write(out, text.encode("utf-8"), force)
    doc = QTextDocument()
    for key, img in images.items():
        doc.addResource(QTextDocument.ImageResource, QUrl(f"fig-{key}.png"), img)
    doc.setHtml(text)
    # Printed into memory, then written atomically: a full disk half way leaves no partial PDF behind
    # (QPdfWriter on a file would stop silently and leave a truncated one).
    buf = QBuffer()
    buf.open(QIODevice.WriteOnly)
    writer = QPdfWriter(buf)
    writer.setPageSize(QPageSize(QPageSize.A4))
    writer.setPageMargins(QMarginsF(*margins_mm), QPageLayout.Millimeter)
    writer.setResolution(300)
    writer.setTitle(rt.words()["title"] + " — " + state.session(SessionId.A).prompt)
    writer.setCreator(f"gpt2viz {__version__}")
    doc.print_(writer)
    del writer  # ends the PDF
    buf.close()
    data = bytes(buf.data())
    if not data.startswith(b"%PDF") or b"%%EOF" not in data[-64:]:
        raise WriteError(f"{out}: Qt did not write a complete PDF")
    return atomic_write(out, data, force)
