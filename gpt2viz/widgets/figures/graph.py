"""The attribution graph as a figure: embeddings at the bottom, a row per block, the answer's logits on top.

It draws a :class:`~gpt2viz.core.viewmodels.graph_layout.GraphLayout` (laid out from the graph's JSON), so the
PNG / SVG and the JSON that ``gpt2viz graph`` writes show the same nodes and links.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen

from gpt2viz.core.viewmodels.graph_layout import GraphLayout
from gpt2viz.widgets.figures.base import MARGIN, SMALL_PX, WIDTH, Figure, Theme, draw_text, fit, font, legend
from gpt2viz.widgets.figures.views import translate

ROW_H = 52.0
LEFT = 64.0  # room for the row names
FOOT = 4.0
NODE_R = 5.0
LEGEND = 22.0  # the legend's row above the grid


def _centres(layout: GraphLayout, r: QRectF) -> list[QPointF]:
    """Each node's centre: cells split among their slots; the logits share the top row's whole width."""
    rows = layout.n_layer + 2
    grid = QRectF(r.left() + LEFT, r.top(), r.width() - LEFT, r.height() - FOOT)
    colw = grid.width() / max(1, layout.n_pos)
    top = [i for i, n in enumerate(layout.nodes) if n.kind == "logit"]
    out = []
    for i, n in enumerate(layout.nodes):
        y = grid.bottom() - (n.row + 0.5) * grid.height() / rows
        if n.kind == "logit":
            k = top.index(i)
            x = grid.left() + (k + 0.5) * grid.width() / len(top)
        else:
            x = grid.left() + n.column * colw + (n.slot + 0.5) * colw / (layout.slots if n.kind != "embedding" else 1)
        out.append(QPointF(x, y))
    return out


def centres_in_figure(layout: GraphLayout, fig: Figure) -> list[QPointF]:
    """Each node's centre in ``fig``'s logical coordinates (what a view hit-tests the mouse against)."""
    th, _ch, _total = fig.layout()
    body = QRectF(MARGIN, MARGIN + th + 12, fig.width - 2 * MARGIN, fig.body_h)
    return _centres(layout, body.adjusted(0, LEGEND, 0, 0))


def graph_figure(layout: GraphLayout, *, title: str, width: float = WIDTH, pinned: frozenset[int] = frozenset()
                 ) -> Figure:
    """A figure of ``layout`` headed ``title``; the caption says how to read it and what was left out.

    ``pinned`` (node indices) keeps those nodes' links strong and fades the others: the subgraph a reader picked.
    """
    rows = layout.n_layer + 2
    body_h = LEGEND + rows * ROW_H + FOOT

    def body(p: QPainter, r: QRectF, th: Theme, _cbs) -> None:
        legend(p, r.left() + LEFT, r.top(), [
            (th.accent2, translate("Figures", "transcoder feature")), (th.grid, translate("Figures", "MLP error")),
            (th.push, translate("Figures", "raises")), (th.pull, translate("Figures", "lowers"))], th)
        r = r.adjusted(0, LEGEND, 0, 0)
        centres = _centres(layout, r)
        grid_h = r.height() - FOOT
        small = font(SMALL_PX)
        # row bands and names
        for row in range(rows):
            y = r.top() + grid_h - (row + 1) * grid_h / rows
            if row % 2:
                p.fillRect(QRectF(r.left() + LEFT, y, r.width() - LEFT, grid_h / rows), th.panel)
            name = (translate("Figures", "tokens") if row == 0 else translate("Figures", "logits")
                    if row == rows - 1 else translate("Figures", "block {L}").format(L=row - 1))
            draw_text(p, QRectF(r.left(), y, LEFT - 6, grid_h / rows), name, small, th.muted,
                      Qt.AlignRight | Qt.AlignVCenter)
        colw = (r.width() - LEFT) / max(1, layout.n_pos)
        # links under the nodes, weakest first so the strong ones stay visible
        for e in sorted(layout.edges, key=lambda e: abs(e.weight)):
            share = abs(e.weight) / (layout.max_weight or 1.0)
            c = QColor(th.push if e.weight > 0 else th.pull)
            faded = bool(pinned) and e.source not in pinned and e.target not in pinned
            c.setAlphaF(0.06 if faded else 0.25 + 0.6 * share)
            p.setPen(QPen(c, 0.4 + 3.2 * share))
            p.drawLine(centres[e.source], centres[e.target])
        # supernodes: one box around each group's members, its name above it (qParams.supernodes)
        for name, members in layout.supernodes:
            pts = [centres[i] for i in members]
            box = QRectF(min(q.x() for q in pts) - 3 * NODE_R, min(q.y() for q in pts) - 3 * NODE_R,
                         max(q.x() for q in pts) - min(q.x() for q in pts) + 6 * NODE_R,
                         max(q.y() for q in pts) - min(q.y() for q in pts) + 6 * NODE_R)
            fill = QColor(th.accent)
            fill.setAlphaF(0.18)
            p.setPen(QPen(th.accent, 1.4))
            p.setBrush(fill)
            p.drawRoundedRect(box, 6, 6)
            draw_text(p, QRectF(box.left() - 40, box.top() - SMALL_PX - 4, box.width() + 80, SMALL_PX + 2), name,
                      small, th.accent, Qt.AlignHCenter | Qt.AlignBottom)
        # nodes
        laid_index = {id(n): i for i, n in enumerate(layout.nodes)}
        for n, at in zip(layout.nodes, centres):
            if n.kind in ("embedding", "logit"):
                tok = layout.prompt_tokens[n.column] if n.column < layout.n_pos else n.label
                text = fit(n.label if n.kind == "logit" else tok.replace("\n", "⏎"), small,
                           (r.width() - LEFT) / max(1, sum(m.kind == n.kind for m in layout.nodes)) - 4)
                w = min(colw - 4, 10 + 7 * len(text)) if n.kind == "embedding" else \
                    (r.width() - LEFT) / max(1, sum(m.kind == "logit" for m in layout.nodes)) - 6
                box = QRectF(at.x() - w / 2, at.y() - 9, w, 18)
                p.setPen(QPen(th.fg, 0.8))
                p.setBrush(th.bg)
                p.drawRoundedRect(box, 3, 3)
                draw_text(p, box, text, small, th.fg, Qt.AlignCenter)
            elif n.kind == "error":
                p.setPen(QPen(th.muted, 0.8))
                p.setBrush(th.grid)
                p.drawRect(QRectF(at.x() - NODE_R, at.y() - NODE_R, 2 * NODE_R, 2 * NODE_R))
            else:
                p.setPen(QPen(th.fg, 2.0 if laid_index[id(n)] in pinned else 0.6))
                p.setBrush(th.accent2)
                p.drawEllipse(at, NODE_R + 1, NODE_R + 1)
                cell_w = colw / layout.slots
                if cell_w >= 34:  # room for the feature's name under it
                    draw_text(p, QRectF(at.x() - cell_w / 2, at.y() + NODE_R + 2, cell_w, SMALL_PX + 2),
                              fit(n.label, font(SMALL_PX - 2), cell_w), font(SMALL_PX - 2), th.muted,
                              Qt.AlignHCenter | Qt.AlignTop)

    shown_nodes, shown_edges = len(layout.nodes), len(layout.edges)
    caption = translate("Figures", "Each circle is a transcoder feature active at that block and position, each square "
                        "the part of the MLP's output the transcoder misses; lines are direct effects through the "
                        "frozen attention and residual stream, blue raising and red lowering, wider for larger. "
                        "Shown: {n} nodes ({hn} more in the file) and the {e} strongest links ({he} more).").format(
        n=shown_nodes, hn=layout.hidden_nodes, e=shown_edges, he=layout.hidden_edges)
    if layout.scores:
        caption += " " + translate("Figures", "Replacement score {r:.3f}, completeness score {c:.3f}.").format(
            r=layout.scores.get("replacement_score", float("nan")),
            c=layout.scores.get("completeness_score", float("nan")))
    facts = {"nodes": str(shown_nodes), "links": str(shown_edges), **{k: f"{v:.4f}" for k, v in layout.scores.items()}}
    return Figure(title, caption, body, body_h, width=width, facts=facts)
