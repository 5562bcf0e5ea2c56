"""Words for the attribution (Path view, its figures, the report): part names and the largest source.

:mod:`gpt2viz.core.analysis.path_graph` gives kinds, layers, heads, positions and token texts; this module words
them. QtCore only: every string goes through ``translate("Attribution", ...)`` with named placeholders.
(``gpt2viz attribute`` prints :attr:`gpt2viz.core.analysis.attribution.Component.label`: the command line is English.)
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

# lupdate finds calls spelled translate("Context", "text"): keep that spelling at every call.
translate = QCoreApplication.translate


def part_label(kind: str, layer: int | None = None, head: int | None = None) -> str:
    """Short name of one part of the model: token embed, pos embed, L1.H2, L1 b_O, MLP 3."""
    if kind == "embed":
        return translate("Attribution", "token embed")
    if kind == "pos_embed":
        return translate("Attribution", "pos embed")
    if kind == "head":
        return translate("Attribution", "L{layer}.H{head}").format(layer=layer, head=head)
    if kind == "attn_bias":
        return translate("Attribution", "L{layer} b_O").format(layer=layer)
    if kind == "mlp":
        return translate("Attribution", "MLP {layer}").format(layer=layer)
    raise ValueError(f"no part of kind {kind!r}")


def bar_label(bar) -> str:
    """A ranked bar's name (:class:`gpt2viz.core.analysis.path_graph.Bar`): a head's also says which token it carried most."""
    part = part_label(bar.kind, bar.layer, bar.head)
    if bar.kind == "head" and bar.source is not None:
        return translate("Attribution", "{part} ← {token}").format(part=part, token=bar.source_text)
    return part


def _what(s) -> str:
    """The attributed token of a :class:`gpt2viz.core.analysis.path_graph.PathSummary` (``A − B`` for a difference)."""
    return s.target_text + (f" − {s.vs_text}" if s.vs_text else "")


def headline(s) -> str:
    """The largest single source-token contribution of a :class:`~gpt2viz.core.analysis.path_graph.PathSummary`, as a phrase."""
    t = s.top_source
    if t.value >= 0:
        text = translate("Attribution", "{token} (position {position}), carried by head {layer}.{head}, added "
                         "{value:+.3f} to {target}")
    else:
        text = translate("Attribution", "{token} (position {position}), carried by head {layer}.{head}, took "
                         "{value:+.3f} from {target}")
    return text.format(token=t.token_text, position=t.position, layer=t.layer, head=t.head, value=t.value,
                       target=_what(s))
