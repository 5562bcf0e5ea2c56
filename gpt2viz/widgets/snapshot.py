"""Export what a view shows as a figure for the page: PNG (any scale, with text metadata) or SVG.

The figures are drawn from the view models (:mod:`gpt2viz.widgets.figures`), not grabbed from the widgets. Used by the app's Export actions and by `gpt2viz snapshot`, so a script gets the same pictures.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QBuffer, QCoreApplication, QIODevice
from PySide6.QtGui import QImage

from gpt2viz.app.sessions import SessionId
from gpt2viz.core.interventions import describe
from gpt2viz.core.model_folder.files import StagedFiles, WriteError, atomic_write, check_writable
from gpt2viz.widgets.view_names import PER_LAYER, TAB, VIEWS  # noqa: F401 - VIEWS is this module's API too


def facts(state, view: str) -> dict[str, str]:
    """What a picture shows: model, prompt, step, stage, layer, head, position."""
    h = state.history
    out = {"Software": "gpt2viz", "Model": state.model.name if state.model else "",
           "Prompt": state.model.tokenizer.decode(list(h.tokens[: h.prompt_len])) if h else "",
           "Step": str(len(h.generated)) if h else "0", "View": view,
           "Position": str(state.selected_position)}
    if view in PER_LAYER or view in ("pipeline", "features", "feature"):
        out["Layer"] = str(state.layer)
    if view == "head":
        out["Head"] = str(state.head)
    ivs = interventions_text(state.session(SessionId.A))
    if ivs:
        out["Interventions"] = ivs
    b = state.sessions.get(SessionId.B)
    if b is not None and b.history is not None and (view.startswith("compare") or view == "patching"):
        out["Prompt B"] = state.model.tokenizer.decode(list(b.history.tokens[: b.history.prompt_len]))
        ivb = interventions_text(b)
        if ivb:
            out["Interventions B"] = ivb
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
              "attribution": translate("Snapshot", "attribution"), "data": translate("Snapshot", "data"),
              "patching": translate("Snapshot", "activation patching"),
              "causal-trace": translate("Snapshot", "causal trace"),
              "compare-chart": translate("Snapshot", "chart, A vs B"),
              "compare-lens": translate("Snapshot", "lens, A vs B"),
              "compare-attention": translate("Snapshot", "attention, A vs B"),
              "features": translate("Snapshot", "features"), "feature": translate("Snapshot", "feature")}
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


def png_bytes(img: QImage) -> bytes:
    buf = QBuffer()
    buf.open(QIODevice.WriteOnly)
    if not img.save(buf, "PNG"):
        raise WriteError("could not encode the PNG")
    return bytes(buf.data())


def interventions_text(session) -> str:
    """The session's interventions in a few words ("" when none): ablations, patches, steering."""
    out = []
    for iv in session.interventions:
        d = describe(iv)
        k = d["kind"]
        if k == "head_ablation":
            out.append(f"{d['mode']}-ablate L{d['layer']}.H{d['head']}")
        elif k == "neuron_ablation":
            out.append(f"neuron L{d['layer']}.N{d['neuron']} = {d['value']:g}")
        elif k == "sublayer_ablation":
            out.append(f"{d['mode']}-ablate L{d['layer']} {'attention' if d['site'] == 'attn_out' else 'MLP'}")
        elif k == "patch":
            out.append(f"patch {d['site']} L{d['layer']} @{d['position']}")
        elif k == "rank_one_edit":
            out.append(f"edit L{d['layer']} MLP ({d['label']})")
        elif "clamp" in d:
            out.append(f"feature L{d['layer']}.F{d['feature']} = {d['clamp']:g} @{d['positions'][0]}")
        elif "feature" in d:
            out.append(f"feature L{d['layer']}.F{d['feature']} ×{d['scale']:g}")
        else:
            out.append(f"steer L{d['layer']} ×{d['scale']:g}")
    return ", ".join(out)


def view_options(window) -> dict:
    """What the views' own controls choose (attention mode, lens target, path target / threshold, neuron)."""
    views = window.detail.views
    o: dict = {}
    att = views.get(TAB["attention"])
    if att is not None:
        o["which"] = att.which
    lens = views.get(TAB["lens"])
    if lens is not None and lens.path is not None and not lens.path.default:
        o["lens_target"] = lens.path.target
    path = views.get(TAB["path"])
    if path is not None:
        o.update(path_target=path.target.text().strip("\n"), path_vs=path.vs.text().strip("\n"),
                 threshold=path.threshold)
    mlp = views.get(TAB["mlp"])
    if mlp is not None and mlp.neuron is not None:
        o["neuron"] = mlp.neuron
    feats = views.get(TAB["features"])
    if feats is not None and feats.page.feature is not None:
        o["feature"] = feats.page.feature
    if SessionId.B in window.state.sessions:
        o["other"] = window.state.sessions[SessionId.B]
    return o


def figure_of(state, view: str, options: dict | None = None, selection=None, shared=None, session: SessionId = SessionId.A):
    """The page figure of ``view`` for ``state``'s session (at ``selection``, default the session's)."""
    from gpt2viz.widgets.figures import Ctx, build

    s = state.session(session)
    sel = selection or s.selection
    f = facts(state, view)
    if selection is not None:
        if "Layer" in f:
            f["Layer"] = str(sel.layer)
        if "Head" in f:
            f["Head"] = str(sel.head)
    return build(view, Ctx(s, sel, caption=full_caption(f), facts=f, options=options or {}, shared=shared))


def full_caption(f: dict[str, str]) -> str:
    """The caption line plus the interventions, if any."""
    text = caption(f)
    if f.get("Prompt B"):
        text += " · " + translate("Snapshot", "B: “{prompt}”").format(prompt=f["Prompt B"])
    if f.get("Interventions"):
        text += " · " + translate("Snapshot", "interventions: {list}").format(list=f["Interventions"])
    if f.get("Interventions B"):
        text += " · " + translate("Snapshot", "interventions in B: {list}").format(list=f["Interventions B"])
    return text


def theme_for(window, dark: bool | None):
    from gpt2viz.widgets.figures import Theme

    if dark is None:
        dark = bool(getattr(window, "export_dark", False))
    return Theme(dark=dark)


def _encode(fig, ext: str, scale: float, theme) -> bytes:
    from gpt2viz.widgets.figures import render_png, svg_bytes

    return svg_bytes(fig, theme) if ext == ".svg" else png_bytes(render_png(fig, scale, theme))


def export_view(window, view: str, path: Path, scale: float = 1.0, force: bool = False,
                dark: bool | None = None) -> Path:
    """Write the figure of ``view`` to ``path`` (.png or .svg), atomically, drawn from the view models."""
    path = Path(path)
    ext = path.suffix.lower()
    if ext not in (".png", ".svg"):
        raise WriteError(f"{path}: the file name must end in .png or .svg")
    check_writable(path, force)
    fig = figure_of(window.state, view, view_options(window))
    return atomic_write(path, _encode(fig, ext, scale, theme_for(window, dark)), force)


def export_all_layers(window, view: str, folder: Path, ext: str = "png", scale: float = 1.0, force: bool = False,
                      progress: Callable[[int, int], bool] | None = None, dark: bool | None = None) -> dict:
    """One figure per layer, a contact sheet of them all, and ``index.json`` describing every file.

    Every file and the sheet share one colour scale (or, for the MLP, one activation range). ``folder`` is
    created when its parent exists. ``progress(done, total)`` returning False cancels (the layers already
    drawn are written, and indexed). The files appear together when the export ends; an error half way (a
    full disk) leaves none of them, and files that were there before are untouched.
    """
    from gpt2viz.widgets.figures import Ctx, contact_sheet, shared_range, with_layer

    if view not in PER_LAYER:
        raise ValueError(f"'{view}' is not a per-layer view; choose one of {', '.join(PER_LAYER)}")
    folder = ensure_folder(Path(folder))
    state = window.state
    session = state.session(SessionId.A)
    n = state.model.config.n_layer
    options = view_options(window)
    theme = theme_for(window, dark)
    shared = shared_range(view, Ctx(session, session.selection, options=options), n)
    entries = []
    # Staged: a failure half way (a full disk) leaves none of this export's files; a cancel keeps, and
    # indexes, the layers already drawn.
    with StagedFiles(folder, force) as staged:
        for L in range(n):
            if progress and progress(L, n) is False:
                break
            sel = with_layer(session.selection, L)
            fig = figure_of(state, view, options, selection=sel, shared=shared)
            f = fig.facts
            name = default_name(f, ext)
            staged.write(name, _encode(fig, "." + ext, scale, theme))
            entries.append({**{k.lower(): v for k, v in f.items()}, "file": name, "layer": L})
        index = {"view": view, "model": state.model.name, "files": entries}
        if entries:
            f = {k: v for k, v in facts(state, view).items() if k not in ("Layer", "Head")}
            sheet_facts = {**f, "View": f"{view}-all-layers"}
            name = default_name(sheet_facts, ext)
            title = translate("Snapshot", "{view}: every layer of {model}").format(
                view=view_title(view), model=state.model.name)
            fig = contact_sheet(view, Ctx(session, session.selection, caption=full_caption(f), facts=sheet_facts,
                                          options=options), n, title, shared)
            staged.write(name, _encode(fig, "." + ext, scale, theme))
            index["contact_sheet"] = name
            if shared is not None:
                index["shared_scale"] = list(shared)
        staged.write("index.json", json.dumps(index, indent=1, ensure_ascii=False).encode())
    if progress:
        progress(len(entries), n)
    return index


def ensure_folder(folder: Path) -> Path:
    """``folder``, created if its parent exists (WriteError otherwise, or when it is a file)."""
    if folder.is_dir():
        return folder
    if folder.exists():
        raise WriteError(f"cannot write into {folder}: it is a file, not a folder")
    if not folder.parent.is_dir():
        raise WriteError(f"cannot write into {folder}: the folder {folder.parent} does not exist")
    try:
        folder.mkdir()
    except OSError as e:
        raise WriteError(f"cannot create {folder}: {e.strerror or e}") from None
    return folder
