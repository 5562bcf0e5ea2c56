"""Each detail view shows the model's numbers: its data equals numpy computed on the trace."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from gpt2viz.core.engine.model import Model
from gpt2viz.core.session.session import Stage


@pytest.fixture
def win(stepped_window):
    return stepped_window("l3h4e32")


def count_paints(watched: dict):
    """A Counter of the paints of each widget in ``watched`` (widget -> name), and the event filter counting them
    (keep it referenced while counting)."""
    from collections import Counter

    from PySide6.QtCore import QEvent, QObject

    painted = Counter()

    class Painted(QObject):
        def eventFilter(self, obj, e):
            if e.type() == QEvent.Paint and obj in watched:
                painted[watched[obj]] += 1
            return False

    spy = Painted()
    for w in watched:
        w.installEventFilter(spy)
    return painted, spy


def test_attention_bars_equal_the_pattern_row(win):
    st, view = win.state, win.detail.views["Attention"]
    st.select_block(2)
    st.select_head(3)
    st.select_position(3)
    # the view draws its summary: the bar item holds the pattern row, the big image the head's matrix
    np.testing.assert_allclose(view.bar_item.opts["height"], st.history.hook_at(("pattern", 2), 3)[3])
    assert len(view.bar_item.opts["height"]) == 4  # keys 0..3 only: the future is not a bar
    assert len(view.cells) == 4 and view.summary.head == 3
    assert view.big_img.image.shape[:2] == (6, 6)
    view.mode.setCurrentIndex(1)  # scores before softmax
    np.testing.assert_allclose(view.bar_item.opts["height"], st.history.hook_at(("attn_scores", 2), 3)[3])
    assert f"{view.summary.entropies[0]:.2f} nats" in view.head_labels[0].text


def test_attention_maps_are_ranged_to_their_shape_after_a_step_and_back(win, qtbot):
    """The head maps' and the large map's ranges follow the text's length (set when the shape changes, as
    auto-ranging would: the whole map in view), not auto-ranged at every paint."""
    from PySide6.QtWidgets import QApplication

    st, view = win.state, win.detail.views["Attention"]
    win.detail.setCurrentWidget(view)

    def check(n):
        QApplication.processEvents()
        assert view.big_img.image.shape[:2] == (n, n)
        for img in view.cells:
            vb = img.getViewBox()
            (x0, x1), (y0, y1) = vb.viewRange()
            assert not any(vb.state["autoRange"]) and x0 <= 0 and y0 <= 0 and x1 >= n and y1 >= n
            assert min(x1 - x0, y1 - y0) < 1.25 * n  # the map fills its view along one side (aspect locked)
        (x0, x1), (y0, y1) = view.big.getPlotItem().vb.viewRange()
        assert x0 <= -0.5 and y0 <= -0.5 and x1 >= n - 0.5 and y1 >= n - 0.5 and x1 - x0 < 1.25 * n

    check(6)
    st.step()
    qtbot.waitUntil(lambda: not st.busy and len(st.history.tokens) == 7, timeout=20000)
    check(7)
    st.back()
    qtbot.waitUntil(lambda: not st.busy and len(st.history.tokens) == 6, timeout=20000)
    check(6)


def test_mlp_view_projects_the_neuron_through_the_unembedding(win):
    st, view = win.state, win.detail.views["MLP"]
    st.select_block(1)
    win.detail.setCurrentWidget(view)  # hidden views wait to be shown before they redraw
    post = st.history.hook_at(("post", 1), st.selected_position)
    W_out = st.weights.W_out(1)
    score = post * np.linalg.norm(W_out, axis=1)
    assert int(view.table.item(0, 0).text()) == int(np.argmax(np.abs(score)))
    np.testing.assert_array_equal(view.curve.yData, post)
    view.select_neuron(5)
    logits = W_out[5] @ st.weights.W_U.T
    best = st.model.tokenizer.token_display(int(np.argmax(logits)))
    assert "Neuron 5" in view.neuron_info.text() and f"promotes: {best} " in view.neuron_info.text()


def test_rich_text_views_show_tokens_as_text(win, monkeypatch):
    """The Embeddings view's nearest tokens and the MLP view's projections are rich text (bold, line breaks):
    a token is escaped there, else GPT-2's "␣<!--" (id 37922) began an HTML comment that hid what followed."""
    from PySide6.QtGui import QTextDocument

    st = win.state
    monkeypatch.setattr(st.model.tokenizer, "token_display", lambda i: f"␣<!--{int(i)}")

    def rendered(label) -> str:
        doc = QTextDocument()
        doc.setHtml(label.text())
        return doc.toPlainText()

    emb, mlp = win.detail.views["Embeddings"], win.detail.views["MLP"]
    st.select_position(3)
    win.detail.setCurrentWidget(emb)
    emb.refresh()
    first, cos = emb.summary.nearest[-1]
    assert f"␣<!--{first}" in rendered(emb.neighbours) and f"{cos:.3f}" in rendered(emb.neighbours)
    st.select_block(1)
    win.detail.setCurrentWidget(mlp)
    mlp.select_neuron(5)
    assert rendered(mlp.whole).count("␣<!--") == len(mlp.summary.promotes) + len(mlp.summary.suppresses)
    assert "suppresses: ␣<!--" in rendered(mlp.neuron_info)


def test_mlp_view_gives_the_neurons_text_the_room_beside_its_table(win):
    """The table is as wide as its three columns; the neuron's and the whole MLP's tokens get the rest (they were
    squeezed into ~80 px beside an empty half of the table)."""
    from PySide6.QtWidgets import QApplication

    view = win.detail.views["MLP"]
    win.detail.setCurrentWidget(view)
    QApplication.processEvents()
    table, info = view.table.parentWidget().sizes()  # the splitter below the plot
    header = view.table.horizontalHeader()
    assert info > table >= sum(header.sectionSizeHint(i) for i in range(3))
    assert view.neuron_info.width() >= 300


def test_lens_view_last_row_is_the_models_output(win):
    st, view = win.state, win.detail.views["Logit lens"]
    win.detail.setCurrentWidget(view)
    model = Model(st.model.folder)
    full, _ = model.run(list(st.history.tokens), keep_all_logits=True)
    tok = st.model.tokenizer
    cells = view.table.model()
    last = cells.rowCount() - 1
    assert [cells.index(last, c).data().split("\n")[0] for c in range(cells.columnCount())] == [
        tok.token_display(int(t)) for t in full["logits"].argmax(-1)]
    st.select_position(2)
    # target defaults to the token that followed position 2; its final rank is the model's own
    target = st.history.tokens[3]
    rank = int((full["logits"][2] > full["logits"][2][target]).sum())
    assert view.rank_label.text().split(": ")[1].split(", ")[-1] == str(rank)


def test_lens_grid_cells_show_the_lens_and_a_click_selects_the_column(win, qtbot):
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    st, view = win.state, win.detail.views["Logit lens"]
    win.detail.setCurrentWidget(view)
    cells, g = view.table.model(), view.grid
    tok = st.model.tokenizer
    assert (cells.rowCount(), cells.columnCount()) == g.tops.shape
    r, c = 2, 1
    text = cells.index(r, c).data()
    assert text == f"{tok.token_display(int(g.tops[r, c]))}\n{float(g.probs[r, c]):.0%}"
    assert f"position {g.positions[c]} predicts" in cells.index(r, c).data(Qt.ToolTipRole)
    assert cells.headerData(c, Qt.Horizontal) == f"{g.positions[c]} {tok.token_display(g.tokens[c])}"
    # every column is wide enough for its widest token: nothing is cut off
    fm = view.table.fontMetrics()
    assert all(view.table.columnWidth(k) > max(fm.horizontalAdvance(cells.index(i, k).data().split("\n")[0])
                                               for i in range(cells.rowCount())) for k in range(cells.columnCount()))
    rect = view.table.visualRect(cells.index(r, c))
    QTest.mouseClick(view.table.viewport(), Qt.LeftButton, Qt.NoModifier, rect.center())
    qtbot.waitUntil(lambda: st.selected_position == g.positions[c], timeout=3000)


def test_lens_grid_paints_each_cell_in_its_probabilitys_colour_and_the_selected_one_highlighted(win):
    """LensTable paints the cells itself: each cell's inside is its probability's colour over the table's base
    (the model's colour, alpha-blended), the selected cell the highlight, and Qt's grid line lies between."""
    from PySide6.QtCore import QItemSelectionModel
    from PySide6.QtGui import QPalette

    view = win.detail.views["Logit lens"]
    win.detail.setCurrentWidget(view)
    table, cells = view.table, view.cells
    sel = (1, cells.columnCount() - 1)
    table.selectionModel().select(cells.index(*sel), QItemSelectionModel.ClearAndSelect)
    image = table.viewport().grab().toImage()
    pal = table.palette()
    base = pal.color(QPalette.Base)
    checked = 0
    for r in range(cells.rowCount()):
        for c in range(cells.columnCount()):
            rect = table.visualRect(cells.index(r, c))
            if not table.viewport().rect().contains(rect):
                continue
            got = image.pixelColor(rect.left() + 1, rect.top() + 1)
            if (r, c) == sel:
                want = pal.color(QPalette.Highlight).getRgb()[:3]
            else:
                colour = cells.colour(r, c)
                a = colour.alpha() / 255
                want = [v * a + b * (1 - a) for v, b in zip(colour.getRgb()[:3], base.getRgb()[:3])]
            assert np.abs(np.array(got.getRgb()[:3]) - np.array(want)).max() <= 1, (r, c)
            checked += 1
            # the grid line under the cell is not the cell's colour
            assert image.pixelColor(rect.left() + 1, rect.bottom() + 1) != got or (r, c) == sel
    assert checked >= 6


def test_lens_table_sets_its_scroll_bar_as_qt_does_when_only_widths_change(qtbot, tmp_path, exported):
    """When a Step only changes the columns' widths the table sets its horizontal bar itself, without drawing the
    bars again; the range and page are what QTableView's own layout gives for every mix of widths."""
    from PySide6.QtWidgets import QTableView

    from tests.widgets.conftest import run_window

    win = run_window(qtbot, tmp_path, exported["l3h4e32"],
                     "The capital of France is Paris, the capital of Italy is Rome and the capital of Spain is")
    st, view = win.state, win.detail.views["Logit lens"]
    win.detail.setCurrentWidget(view)
    qtbot.wait(50)
    table = view.table
    bars = {table.horizontalScrollBar(): "h", table.verticalScrollBar(): "v"}
    painted, _spy = count_paints(bars)
    st.step()
    qtbot.waitUntil(lambda: not st.busy and view.grid.positions[-1] == len(st.history.tokens) - 1, timeout=20000)
    qtbot.wait(100)
    assert painted["v"] == 0
    head, bar = table.horizontalHeader(), table.horizontalScrollBar()
    for widths in ([40] * 16, [40] * 15 + [400], [300] + [30] * 15, [90, 20] * 8, [1000] * 16):
        for c, w in enumerate(widths):
            head.resizeSection(c, w)
        table.updateGeometries()  # ours
        ours = (bar.minimum(), bar.maximum(), bar.pageStep())
        QTableView.updateGeometries(table)  # Qt's
        assert ours == (bar.minimum(), bar.maximum(), bar.pageStep()), widths


def test_lens_headers_size_hints_are_qts_with_each_title_measured_once(qtbot, win):
    """The grid's headers give QHeaderView's own size hint after a Step and in a larger font, and a Step measures
    only the titles not measured before (Qt's hint measures every section again after each resize)."""
    from PySide6.QtWidgets import QHeaderView

    from gpt2viz.widgets.views.lens_grid_model import MeasuredHeader

    st, view = win.state, win.detail.views["Logit lens"]
    win.detail.setCurrentWidget(view)
    heads = (view.table.horizontalHeader(), view.table.verticalHeader())
    assert all(isinstance(head, MeasuredHeader) for head in heads)
    measured: list[int] = []
    for head in heads:
        qt_measure = head.sectionSizeFromContents
        head.sectionSizeFromContents = lambda i, qt_measure=qt_measure: measured.append(i) or qt_measure(i)
        assert head.sizeHint() == QHeaderView.sizeHint(head)
    n = len(st.history.tokens)
    st.step()
    qtbot.waitUntil(lambda: not st.busy and view.grid.positions[-1] == n, timeout=20000)
    for head in heads:  # as the view sizes its cells at a Step: Qt's own hint is forgotten
        head.resizeSection(0, head.sectionSize(0) + 1)
    measured.clear()
    ours = [head.sizeHint() for head in heads]
    assert len(measured) <= 1, "only the newest position's title is new"
    assert ours == [QHeaderView.sizeHint(head) for head in heads]
    font = view.table.font()
    font.setPointSizeF(font.pointSizeF() * 2)
    view.table.setFont(font)
    for head in heads:
        head.setFont(font)
        assert head.sizeHint() == QHeaderView.sizeHint(head)
    assert heads[1].sizeHint().height() > 0 and heads[0].sizeHint().height() >= view.table.fontMetrics().height()


def test_lens_grid_columns_are_measured_again_in_a_new_font(win):
    """Column widths come from each text's width, measured once per text and font: a larger font makes every
    column wide enough again (a width kept from the old font would cut the tokens off)."""
    st, view = win.state, win.detail.views["Logit lens"]
    win.detail.setCurrentWidget(view)
    cells = view.table.model()
    view._size_cells()  # every text measured in the font it has now
    font = view.table.font()
    font.setPointSizeF(font.pointSizeF() * 2)
    view.table.setFont(font)
    view._size_cells()
    fm = view.table.fontMetrics()
    assert all(view.table.columnWidth(k) > max(fm.horizontalAdvance(cells.index(i, k).data().split("\n")[0])
                                               for i in range(cells.rowCount())) for k in range(cells.columnCount()))


def test_the_lens_grid_tells_the_state_when_it_is_on_screen(win):
    """Auto-steps bring lens columns only while a grid is shown: the view reports its showing and hiding."""
    st, view = win.state, win.detail.views["Logit lens"]
    win.detail.setCurrentWidget(view)
    assert st._grids_shown["A"] == {id(view)}
    win.detail.setCurrentWidget(win.detail.views["Tokens"])
    assert st._grids_shown["A"] == set()
    win.detail.setCurrentWidget(view)
    assert st._grids_shown["A"] == {id(view)}


def test_embedding_sum_is_block_0_input(win):
    st, view = win.state, win.detail.views["Embeddings"]
    win.detail.setCurrentWidget(view)
    st.select_position(3)
    img = view.image.image  # token, position, sum: what is drawn
    np.testing.assert_allclose(img[2], st.history.hook_at(("resid_pre", 0), 3), atol=1e-6)
    np.testing.assert_array_equal(img[0], st.weights.W_U[st.history.tokens[3]])
    first = st.model.tokenizer.token_display(view.summary.nearest[0][0])
    assert f"{first} &nbsp; {view.summary.nearest[0][1]:.3f}" in view.neighbours.text()
    view.a.setText(" king"), view.b.setText(" man"), view.c.setText(" woman")
    view.run_analogy()
    assert view.analogy_out.text().count(" · ") == 4  # five answers
    view.a.setText("unbelievable")
    view.run_analogy()
    assert "4 tokens" in view.analogy_out.text()


def test_tokens_and_residual_views(win):
    st = win.state
    tv = win.detail.views["Tokens"]
    win.detail.setCurrentWidget(tv)
    assert [int(tv.table.item(r, 1).text()) for r in range(tv.table.rowCount())] == list(st.history.tokens)
    assert [tv.table.item(r, 4).text() for r in range(6)] == ["prompt"] * 5 + ["generated"]
    rv = win.detail.views["Residual"]
    win.detail.setCurrentWidget(rv)
    np.testing.assert_allclose(rv.resid_curve.yData[0], np.linalg.norm(st.history.hook_at(("resid_pre", 0), 5)),
                               rtol=1e-5)


def test_pipeline_stage_opens_its_tab(win):
    st, tabs = win.state, win.detail
    from gpt2viz.core.session.session import EMBED, LM_HEAD, LN_FINAL, TOKENS

    for stage, name in ((TOKENS, "Tokens"), (EMBED, "Embeddings"), (Stage.block(0), "Attention"),
                        (LM_HEAD, "Logit lens"), (LN_FINAL, "Residual")):
        st.select_stage(stage)
        assert tabs.currentWidget() is tabs.views[name]


def test_hidden_views_wait_and_catch_up_when_shown(win):
    st, tabs = win.state, win.detail
    mlp = tabs.views["MLP"]
    tabs.setCurrentWidget(tabs.views["Tokens"])
    before = mlp.caption.text()
    st.select_position(1)
    assert mlp.caption.text() == before  # not redrawn while hidden
    tabs.setCurrentWidget(mlp)
    assert "position 1" in mlp.caption.text()


def test_a_long_text_wraps_in_the_tokens_view_and_never_widens_the_window(win, qtbot):
    """Visible spaces (␣) do not break lines: the tokens text was one unbreakable word, and a
    1000-token prompt widened the window to 48,000 px (a 180 MB backing store)."""
    st = win.state
    n = st.model.config.n_positions - 4
    win.prompt.setText(" ".join(["Paris"] * n))
    win.run_prompt()
    qtbot.waitUntil(lambda: not st.busy and len(st.history.tokens) >= n, timeout=20000)
    width = win.width()
    tv = win.detail.views["Tokens"]
    win.detail.setCurrentWidget(tv)
    qtbot.wait(50)
    assert win.width() == width and tv.text.minimumSizeHint().width() < 800


def test_pipeline_bars_keep_every_peak_in_at_most_n_bars():
    from gpt2viz.widgets.pipeline import pooled

    row = np.zeros(200)
    row[[3, 117, 199]] = [0.2, 0.9, 0.5]
    bars = pooled(row, 40)
    assert len(bars) == 40 and sorted(bars[bars > 0]) == [0.2, 0.5, 0.9]
    np.testing.assert_array_equal(pooled(row[:7], 40), row[:7])  # fewer positions than bars: as they are


def test_pipeline_bars_image_draws_each_bar_to_its_height_with_a_gap():
    from PySide6.QtGui import QColor

    from gpt2viz.widgets.pipeline import bars_image

    img = bars_image(np.array([0.0, 0.5, 1.0, 0.25]), 80, 34, QColor(10, 20, 30))
    assert (img.width(), img.height()) == (80, 34)
    a = np.array([[img.pixelColor(x, y).alpha() for x in range(80)] for y in range(34)])
    heights = [(a[:, 20 * j] > 0).sum() for j in range(4)]
    assert heights == [1, 17, 34, 8]  # at least 1 px; 0.5 * 34; 34; round(0.25 * 34)
    assert a[-1, 19] == 0 and a[-1, 18] > 0  # a bar 20 px wide: 19 filled, then the gap
    assert a[-1, 40] == 255 and a[-1, 0] == round(255 * 0.35)  # opacity rises with the value
    assert img.pixelColor(40, 33).red() == 10 and img.pixelColor(40, 33).blue() == 30


def test_pipeline_glyphs_made_together_are_the_glyphs_made_one_by_one():
    from PySide6.QtGui import QColor

    from gpt2viz.widgets.pipeline import bars_image, bars_images, pooled

    rows = np.random.default_rng(0).random((5, 130))
    rows[2, 7] = 1.0
    together = bars_images(pooled(rows, 40), 80, 34, QColor(200, 100, 50))
    for row, img in zip(rows, together):
        assert img == bars_image(pooled(row, 40), 80, 34, QColor(200, 100, 50))
    np.testing.assert_array_equal(pooled(rows, 40), np.stack([pooled(r, 40) for r in rows]))


def test_pipeline_paints_a_part_of_itself_as_it_paints_the_whole(win):
    """The cells out of the paint's region are skipped (the pipeline is wider than the window): the part painted
    alone is pixel for pixel that part of the whole, a cell cut by the region's edge and its arrow included."""
    from PySide6.QtCore import QPoint, QRect
    from PySide6.QtGui import QImage, QRegion

    cells = win.pipeline.cells
    cells.resize(cells.sizeHint())
    size = cells.size()
    whole = QImage(size, QImage.Format_ARGB32)
    whole.fill(0)
    cells.render(whole)
    part_rect = QRect(250, 0, 288, size.height())  # cuts a cell on the left, ends within an arrow on the right
    part = QImage(size, QImage.Format_ARGB32)
    part.fill(0)
    cells.render(part, QPoint(250, 0), QRegion(part_rect))
    assert part.copy(part_rect) == whole.copy(part_rect)


def test_pipeline_frames_follow_the_selected_stage_and_the_palette(win):
    """Each cell's frame is drawn once per look and kept: the selected stage's frame is in the highlight colour,
    the others in the palette's mid colour, and a new palette's colours are used at once."""
    from PySide6.QtGui import QColor, QImage, QPalette

    cells, st = win.pipeline.cells, win.state
    cells.resize(cells.sizeHint())

    def edge_colours():
        image = QImage(cells.size(), QImage.Format_ARGB32)
        image.fill(0)
        cells.render(image)
        return [image.pixelColor(int(cells.cell_rect(i).left()), int(cells.cell_rect(i).center().y()))
                for i in range(len(st.session().stages()))]

    stages = st.session().stages()
    st.select_stage(stages[2])
    pal = cells.palette()
    colours = edge_colours()
    assert colours[2] == pal.color(QPalette.Highlight)
    assert all(c != pal.color(QPalette.Highlight) for i, c in enumerate(colours) if i != 2)
    st.select_stage(stages[4])
    assert edge_colours()[2] != pal.color(QPalette.Highlight) and edge_colours()[4] == pal.color(QPalette.Highlight)
    red = QPalette(pal)
    red.setColor(QPalette.Highlight, QColor(255, 0, 0))
    cells.setPalette(red)
    assert edge_colours()[4] == QColor(255, 0, 0)


def test_the_hidden_journey_waits_and_catches_up_when_shown(win):
    from gpt2viz.core.viewmodels.journey import PAGES

    win.open_journey(PAGES.index("choose"))
    win.journey_dock.hide()
    before = win.journey.text.text()
    win.state.set_sampling(temperature=1.5, top_k=3)
    assert win.journey.text.text() == before  # not reworded while hidden
    win.journey_dock.show()
    assert win.journey.page.numbers["top_k"] == 3 and win.journey.text.text() != before


def test_heatmap_colours_are_viridis_steps_and_masked_cells_grey():
    """Each value takes the viridis colour of its 1/256 step between lo and hi (clipped outside); NaN is grey."""
    import pyqtgraph as pg

    from gpt2viz.widgets.views.common import MASKED_RGBA, to_rgba

    lut = pg.colormap.get("viridis").getLookupTable(0.0, 1.0, 256, alpha=True)
    m = np.array([[-1.0, 0.0, 0.5], [1.0, 2.0, np.nan], [0.25, 0.999, 1e-9]], np.float32)
    rgba = to_rgba(m, 0.0, 1.0)
    for (r, c), v in np.ndenumerate(m):
        want = MASKED_RGBA if np.isnan(v) else tuple(lut[int(min(max(float(v), 0.0), 1.0) * 255)])
        assert tuple(rgba[r, c]) == tuple(want), (r, c, v)
    assert to_rgba(np.full((2, 2), 3.0), 3.0, 3.0).tolist() == [[list(lut[0])] * 2] * 2  # a flat map: no division by 0


def test_a_stack_of_maps_is_coloured_as_each_map_alone():
    """Levels shaped [H, 1, 1] colour each map of an [H, Q, K] stack with its own range, byte for byte as one
    call a map does (scores: each head its min..max; a flat head included)."""
    from gpt2viz.widgets.views.common import to_rgba

    rng = np.random.default_rng(0)
    maps = rng.normal(size=(4, 5, 6)).astype(np.float32) * np.arange(1, 5, dtype=np.float32)[:, None, None]
    maps[:, np.triu_indices(5, 1)[0], np.triu_indices(5, 1)[1]] = np.nan
    maps[3] = np.where(np.isnan(maps[3]), np.nan, 2.0)
    levels = [(float(np.nanmin(m)), float(np.nanmax(m))) for m in maps]
    lo, hi = (np.array(v).reshape(-1, 1, 1) for v in zip(*levels))
    stacked = to_rgba(maps, lo, hi)
    for m, lv, got in zip(maps, levels, stacked):
        assert got.tolist() == to_rgba(m, *lv).tolist()
    assert len({tuple(c) for c in stacked[3].reshape(-1, 4)}) == 2  # the flat head: one colour and the grey


def test_a_heatmap_image_shows_its_colours_byte_for_byte(qtbot):
    """The colours a map is given are the pixels drawn: pyqtgraph's own levels (from each image's extremes) shifted
    every colour of a map without pure black."""
    from gpt2viz.widgets.views.common import HoverImage, to_rgba

    m = np.array([[0.2, np.nan, 0.9], [0.5, 0.7, 0.3]])
    rgba = to_rgba(m, 0.0, 1.0)
    assert rgba[..., :3].min() > 0  # no black byte: levelled by its extremes, it would be stretched
    img = HoverImage()
    img.set_rgba(rgba)
    img.render()
    q = img.qimage
    shown = np.array([[q.pixelColor(c, r).getRgb() for c in range(3)] for r in range(2)], np.uint8)
    assert shown.tolist() == rgba.tolist()


def test_a_plain_label_fits_its_text_and_keeps_its_place(qtbot):
    """A head title grows its label when it no longer fits and keeps the label's size when it is shorter (the
    head grid is not laid out again at every step); it is shown as plain text in its one colour."""
    import pyqtgraph as pg
    from PySide6.QtGui import QColor

    from gpt2viz.widgets.views.common import PlainLabel

    grid = pg.GraphicsLayoutWidget()
    qtbot.addWidget(grid)
    label = PlainLabel("head 1", color=QColor(10, 20, 30))
    grid.addItem(label, row=0, col=0)
    short = label.minimumWidth()
    label.setText("▶ head 1 · 2.50 nats <b>")
    assert label.text == label.item.toPlainText() == "▶ head 1 · 2.50 nats <b>"
    wide = label.minimumWidth()
    assert wide > short and wide >= label.item.boundingRect().width()
    label.setText("head 1 · 0.10 nats")
    assert label.minimumWidth() == wide and label.item.toPlainText() == "head 1 · 0.10 nats"
    assert label.item.defaultTextColor() == QColor(10, 20, 30)


def test_an_axis_keeps_its_picture_when_its_ticks_do_not_change(qtbot):
    """pyqtgraph draws an axis again after every setTicks; set_ticks asks only when the ticks differ."""
    import pyqtgraph as pg

    from gpt2viz.widgets.views.common import set_ticks

    axis = pg.AxisItem("left")
    set_ticks(axis, [[(0, "␣Paris"), (1.0, "␣Rome")]])
    drawn = axis.picture = object()  # stands for the picture pyqtgraph made at the last paint
    set_ticks(axis, [[(0, "␣Paris"), (np.float64(1.0), "␣Rome")]])  # the same ticks (a numpy value among them)
    assert axis.picture is drawn
    set_ticks(axis, [[(0, "␣Paris"), (1.0, "␣Berlin")]])
    assert axis.picture is None and axis._tickLevels == [[(0, "␣Paris"), (1.0, "␣Berlin")]]


def test_a_plot_keeps_its_title_layout_when_its_title_does_not_change(qtbot):
    """pyqtgraph lays a title out again (and asks for a new layout) on every setTitle; set_title asks only when
    the text or its style differs, or the title is hidden."""
    import pyqtgraph as pg

    from gpt2viz.widgets.views.common import set_title

    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    plot.show()
    label = plot.plotItem.titleLabel
    set_title(plot, "layer 1, head 2", size="9pt")
    label.item.setHtml("drawn")  # stands for the layout pyqtgraph made at the last setTitle
    set_title(plot, "layer 1, head 2", size="9pt")
    assert label.item.toPlainText() == "drawn"
    set_title(plot, "layer 1, head 2", size="10pt")
    assert label.item.toPlainText() == "layer 1, head 2"
    set_title(plot.plotItem, "layer 1, head 3", size="10pt")
    assert label.item.toPlainText() == "layer 1, head 3"
    plot.setTitle(None)
    set_title(plot, "layer 1, head 3", size="10pt")
    assert label.isVisible()
    # a title is plain text: a token that looks like a tag or an entity is shown as it is
    set_title(plot, "what <|endoftext|> reads & <b>", size="10pt")
    assert label.item.toPlainText() == "what <|endoftext|> reads & <b>"


def test_a_step_moves_a_full_lens_grid_on_without_repainting_its_frame(qtbot, tmp_path, exported):
    """With more than 16 positions a step keeps the grid's shape and its columns move on by one position. The
    column headers and cells show the new positions; the row headers and the tab bar are not painted again (a
    model reset or a header change laid the headers out again, and any layout request from a page made the
    tab widget repaint itself whole: ~2 ms of every step's frame)."""
    from PySide6.QtCore import Qt

    from tests.widgets.conftest import run_window

    win = run_window(qtbot, tmp_path, exported["l3h4e32"],
                     "The capital of France is Paris, the capital of Italy is Rome and the capital of Spain is")
    st, view = win.state, win.detail.views["Logit lens"]
    win.detail.setCurrentWidget(view)
    qtbot.wait(50)
    assert view.cells.columnCount() == 16 and len(st.history.tokens) > 16
    watched = {view.table.verticalHeader().viewport(): "rows", view.table.horizontalHeader().viewport(): "columns",
               view.table.viewport(): "cells", win.detail.tabBar(): "tabs"}
    painted, _spy = count_paints(watched)
    st.step()
    qtbot.waitUntil(lambda: not st.busy and view.grid.positions[-1] == len(st.history.tokens) - 1, timeout=20000)
    qtbot.wait(100)
    tok, g = st.model.tokenizer, view.grid
    assert view.cells.columnCount() == 16 and g.positions[0] == len(st.history.tokens) - 16
    assert [view.cells.headerData(c, Qt.Horizontal) for c in range(16)] == [
        f"{p} {tok.token_display(t)}" for p, t in zip(g.positions, g.tokens)]
    assert painted["columns"] >= 1 and painted["cells"] >= 1
    assert painted["rows"] == 0 and painted["tabs"] == 0


def test_a_step_leaves_an_earlier_positions_cells_and_bars_unpainted(win, qtbot):
    """With an earlier position selected, a Step or Back changes nothing its pipeline cells or its attention bars
    show (attention is causal): neither is drawn again. Selecting another position draws both, with its numbers."""
    st, view = win.state, win.detail.views["Attention"]
    win.detail.setCurrentWidget(view)
    st.select_block(1)
    st.select_position(2)
    qtbot.wait(100)
    watched = {win.pipeline.cells: "cells", view.bars.viewport(): "bars", view.big.viewport(): "map"}
    painted, _spy = count_paints(watched)
    for action, n in (("step", 7), ("back", 6)):
        getattr(st, action)()
        qtbot.waitUntil(lambda n=n: not st.busy and len(st.history.tokens) == n, timeout=20000)
        qtbot.wait(100)
        assert painted["map"] >= 1, action  # the map's rows did change: the spy sees paints
        assert painted["cells"] == 0 and painted["bars"] == 0, (action, painted)
        painted.clear()
    st.select_position(3)
    qtbot.wait(100)
    assert painted["cells"] >= 1 and painted["bars"] >= 1
    assert win.pipeline.cells.summary.position == 3
    np.testing.assert_allclose(view.bar_item.opts["height"], st.history.hook_at(("pattern", 1), 3)[view.summary.head])
    assert "position 3" in view.bars.plotItem.titleLabel.text


def test_a_block_cells_text_fits_it_with_interventions_in_force(win):
    """With interventions a block cell has three lines under its glyph; the read-out token's and the answer's (its
    rank and change) each wrap in two when the token is long: all of it is inside the cell, Latin and CJK."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QFontMetricsF

    cells = win.pipeline.cells
    rect = cells.text_rect(2, with_glyph=True)
    assert rect.bottom() <= cells.cell_rect(2).bottom()
    for answer in ("␣capital", "␣Washington", "首都", "␣Constantinople"):
        text = f"h3 100%\n{answer} 54%\n{answer} #150 Δ-12%"
        flags = int(Qt.AlignHCenter | Qt.AlignTop | Qt.TextWordWrap)
        need = QFontMetricsF(cells.text_font()).boundingRect(rect, flags, text)
        assert need.height() <= rect.height(), (answer, need, rect)


def test_the_token_axes_of_a_long_text_show_as_many_labels_as_fit(qtbot, tmp_path):
    """On atlas with a ~170-token text the attention map shows its newest 128 tokens: its axes and the bars' show
    every n-th token, n such that no two labels overlap (a fixed 24 of them ran into one smear), and more of
    them when the plots are larger. The path graph's token axis follows the same rule."""
    from PySide6.QtGui import QFontMetrics

    from gpt2viz.core.model_folder.locations import resolve_model
    from tests.widgets.conftest import run_window

    win = run_window(qtbot, tmp_path, resolve_model(None), prompt="The capital of France is Paris. " * 24)
    st, view = win.state, win.detail.views["Attention"]
    assert len(st.history.tokens) > 128
    win.detail.setCurrentWidget(view)
    qtbot.waitUntil(lambda: view.summary is not None and len(view.summary.tokens) == 128)

    def overlapping(axis, ticks, px, vertical):
        """Pairs of neighbouring labels that overlap: each is its text's width (a line's height), centred."""
        fm = QFontMetrics(axis.style.get("tickFont") or axis.font())
        size = [fm.height() if vertical else fm.horizontalAdvance(t) for _, t in ticks]
        return [(a, b) for (a, _), (b, _), sa, sb in zip(ticks, ticks[1:], size, size[1:]) if (sa + sb) / 2 > (b - a) * px]

    def shown():
        out = {}
        for plot, axes, n in ((view.big, ("left", "bottom"), 128), (view.bars, ("bottom",), view.summary.position + 1)):
            vb = plot.getPlotItem().vb
            for ax in axes:
                axis = plot.getAxis(ax)
                ticks = axis._tickLevels[0]
                px = (vb.height() if ax == "left" else vb.width()) / n  # one position
                assert not overlapping(axis, ticks, px, ax == "left"), ax
                out[(id(plot), ax)] = len(ticks)
        return out

    small = shown()
    assert all(n >= 3 for n in small.values())
    win.resize(2200, 1400)
    # more labels where the larger plot leaves room (the map's own axis may keep its step: its text repeats
    # every 7 tokens, and one step less brings ␣capital and ␣France next to each other)
    qtbot.waitUntil(lambda: sum(shown().values()) > sum(small.values()))
    assert all(n >= small[k] for k, n in shown().items())
    path = win.detail.views["Path"]  # the path graph's newest 24 positions: the same rule
    win.detail.setCurrentWidget(path)
    qtbot.waitUntil(lambda: path.summary is not None)
    axis, vb = path.graph.getAxis("bottom"), path.graph.getPlotItem().vb
    ticks = axis._tickLevels[0]
    assert len(ticks) >= 3 and not overlapping(axis, ticks, vb.width() / len(path.summary.token_labels), False)


def test_spaced_ticks_keeps_every_label_that_fits_beside_its_neighbours(qapp):
    """Each label needs half its own width and half its neighbour's: short ones next to a long one all fit (the
    journey's five-token map shows all five), and when they do not, every other one is dropped."""
    from PySide6.QtGui import QFont, QFontMetrics

    from gpt2viz.widgets.views.common import TICK_GAP_PX, spaced_ticks

    font = QFont()
    ticks = [(i, t) for i, t in enumerate(["The", "␣capital", "␣of", "␣France", "␣is"])]
    w = [QFontMetrics(font).horizontalAdvance(t) + TICK_GAP_PX for _, t in ticks]
    fits = max((a + b) / 2 for a, b in zip(w, w[1:])) * len(ticks)  # the shortest axis that holds all five
    assert spaced_ticks(ticks, fits, font, False) == ticks
    assert spaced_ticks(ticks, fits - 5, font, False) == ticks[::2]
    assert spaced_ticks(ticks, 1000, font, True) == ticks
    assert spaced_ticks(ticks, 0, font, False) == ticks[:1]


@settings(max_examples=200, deadline=None)
@given(labels=hst.lists(hst.text("ab␣W的", min_size=1, max_size=9), min_size=1, max_size=60),
       length=hst.floats(0.5, 3000), vertical=hst.booleans())
def test_spaced_ticks_shows_the_densest_labels_that_keep_apart(qapp, labels, length, vertical):
    """spaced_ticks gives every n-th label for the smallest n at which no two shown labels overlap: the rule
    tried for every n from 1, as a person would."""
    from PySide6.QtGui import QFont, QFontMetrics

    from gpt2viz.widgets.views.common import TICK_GAP_PX, spaced_ticks

    font, ticks = QFont(), list(enumerate(labels))
    fm = QFontMetrics(font)
    width = [fm.height() + 2.0 if vertical else fm.horizontalAdvance(t) + TICK_GAP_PX for t in labels]
    unit = length / len(ticks)
    want = next((ticks[::n] for n in range(1, len(ticks))
                 if all((a + b) / 2 <= n * unit for a, b in zip(width[::n], width[::n][1:]))), ticks[:1])
    assert spaced_ticks(ticks, length, font, vertical) == want


def test_a_scrolled_lens_grid_shows_whole_columns(qtbot, tmp_path, exported):
    """A grid wider than its room, scrolled to the newest position, starts with a whole column at its left edge
    (Qt's own rule puts the newest column flush right and cuts the column before the first whole one) and shows
    the newest column whole."""
    from PySide6.QtWidgets import QSplitter

    from tests.widgets.conftest import run_window

    win = run_window(qtbot, tmp_path, exported["l3h4e32"],
                     "The capital of France is Paris, the capital of Italy is Rome and the capital of Spain is")
    st, view = win.state, win.detail.views["Logit lens"]
    win.detail.setCurrentWidget(view)
    view.findChild(QSplitter).setSizes([420, 600])  # room for a few columns only
    for _ in range(2):  # two Steps: a new grid is laid out, then only its widths change (the table's own layout)
        st.step()
        qtbot.waitUntil(lambda: not st.busy and view.grid.positions[-1] == len(st.history.tokens) - 1,
                        timeout=20000)
        qtbot.wait(50)
        table, n = view.table, len(view.grid.positions)
        bar = table.horizontalScrollBar()
        assert bar.maximum() > 0 and bar.value() == bar.maximum()
        first = table.columnAt(0)
        assert table.columnViewportPosition(first) == 0
        last = n - 1
        assert table.columnViewportPosition(last) + table.columnWidth(last) <= table.viewport().width()
