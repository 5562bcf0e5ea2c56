"""Seeded GUI fuzz: thousands of random events on the real main window (bundled model), in bursts.

Clicks on every kind of widget (buttons, tabs, token chips, pipeline cells, chart bars, table cells, plot
items), keys, prompt edits (empty, past the context, emoji, CJK, zero-width and control characters), slider
drags, tab switches, exports into a temporary folder, model switches. After each burst the worker is waited
for and the window must agree with its session: chips = the history's tokens, chart rows = the session's
distribution, the visible views show the current selection. Any uncaught exception fails the test.

A failure names its seed and the last events; reproduce it with
``GPT2VIZ_FUZZ_SEED=N python -m pytest tests/widgets/test_fuzz.py`` (``GPT2VIZ_FUZZ_EVENTS`` sets the count).
Events wait for the worker except in race bursts (marked in the log), whose interleaving also depends on timing.
"""

from __future__ import annotations

import os
import random
import re
import sys
import traceback

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QComboBox,
    QFileDialog,
    QInputDialog,
    QLineEdit,
    QMenu,
    QMessageBox,
    QSlider,
    QSpinBox,
    QTableView,
)

from gpt2viz.app.settings import Settings
from gpt2viz.app.state import AppState
from gpt2viz.core.model_folder.locations import resolve_model
from gpt2viz.core.viewmodels.chart import N_BARS, chart_summary
from gpt2viz.widgets.main_window import MainWindow

N_EVENTS = int(os.environ.get("GPT2VIZ_FUZZ_EVENTS", "2000"))
BURST = 25
RACE = 0.2  # share of bursts that do not wait for the worker between events
SEED = int(os.environ.get("GPT2VIZ_FUZZ_SEED", "1717"))

WORDS = ("the", "cat", "Paris", "is", "a", "of", "and", "model", "token", "quantum", "zebra", "1492")
ODD_TEXTS = ("", " ", "\n", "\t\t", "😀🚀 rocket", "👩‍👩‍👧 family", "東京は日本の首都です", "中文测试，标点。",
             "zero\u200bwidth\u200c\u200djoin\ufeff", "ctrl\x00\x01\x07\x1b[31mred\x7f", "\u202eright-to-left",
             "e\u0301\u0301 combining", "\ud7ff\ue000 private", "a" * 3000, "&amp; <b>html</b> %s {0} {name}")


def random_text(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.35:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 8)))
    if kind < 0.75:
        return rng.choice(ODD_TEXTS)
    if kind < 0.85:  # past the context of every model here (atlas: 256 positions)
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(300, 600)))
    return "".join(chr(rng.choice((rng.randint(0x20, 0x7e), rng.randint(0xa0, 0x2fff), rng.randint(0x4e00, 0x9fff),
                                   rng.randint(0x1f300, 0x1faff), rng.randint(0, 0x1f))))
                   for _ in range(rng.randint(1, 40)))


class Fuzzer:
    """Picks and performs one random event at a time; every event is logged for the failure message."""

    def __init__(self, qtbot, win: MainWindow, rng: random.Random, folders: list[str], out):
        self.qtbot, self.win, self.st, self.rng = qtbot, win, win.state, rng
        self.folders, self.out = folders, out
        self.log: list[str] = []
        self.counts: dict[str, int] = {}
        self.n_files = 0
        self.actions = [
            (self.click_button, 14), (self.click_chip, 8), (self.click_cell, 8), (self.click_chart, 6),
            (self.click_table, 6), (self.click_plot, 8), (self.hover_plot, 3), (self.key, 14), (self.edit_prompt, 6),
            (self.slider, 8), (self.spin, 4), (self.tab, 6), (self.combo, 2), (self.view_text, 4),
            (self.resize, 1), (self.context_menu, 1), (self.export, 1), (self.model_switch, 0.4),
            (self.play, 2), (self.intervene, 4), (self.compare, 2), (self.analysis, 1),
        ]
        self.weights = [w for _, w in self.actions]

    def event(self) -> None:
        fn = self.rng.choices([a for a, _ in self.actions], self.weights)[0]
        name = fn.__name__
        self.counts[name] = self.counts.get(name, 0) + 1
        self.log.append(name)
        fn()

    def note(self, text: str) -> None:
        self.log[-1] += f" {text}"

    # ---- pointers --------------------------------------------------------------------------------
    def _visible(self, kind):
        return [w for w in self.win.findChildren(kind) if w.isVisible()]

    def click_button(self) -> None:
        btns = [b for b in self._visible(QAbstractButton) if b.isEnabled()]
        if btns:
            b = self.rng.choice(btns)
            self.note(repr(b.text()[:20]))
            self.qtbot.mouseClick(b, Qt.LeftButton)

    def click_chip(self) -> None:
        chips = self.win.tokens.chips
        if chips:
            i = self.rng.randrange(len(chips))
            self.note(str(i))
            self.qtbot.mouseClick(chips[i], Qt.LeftButton)

    def click_cell(self) -> None:
        cells = self.win.pipeline.cells
        n = len(cells.session.stages())
        if self.rng.random() < 0.8 and n:
            i = self.rng.randrange(n)
            pos = cells.cell_rect(i).center().toPoint()
        else:  # anywhere, between cells too
            pos = QPoint(self.rng.randrange(max(1, cells.width())), self.rng.randrange(max(1, cells.height())))
        self.note(f"{pos.x()},{pos.y()}")
        self.qtbot.mouseClick(cells, Qt.LeftButton, pos=pos)

    def click_chart(self) -> None:
        if self.rng.random() < 0.5:
            i = self.rng.randrange(-1, N_BARS + 1)
            self.note(f"row {i}")
            self.win.chart.click_row(i)
        else:
            self._click_view(self.win.chart.plot)

    def _click_view(self, view, button=Qt.LeftButton) -> None:
        vp = view.viewport()
        pos = QPoint(self.rng.randrange(max(1, vp.width())), self.rng.randrange(max(1, vp.height())))
        self.note(f"{type(view).__name__} {pos.x()},{pos.y()}")
        self.qtbot.mouseClick(vp, button, pos=pos)

    def click_table(self) -> None:
        tables = [t for t in self._visible(QTableView) if t.model().rowCount() and t.model().columnCount()]
        if tables:
            t = self.rng.choice(tables)
            r, c = self.rng.randrange(t.model().rowCount()), self.rng.randrange(t.model().columnCount())
            t.scrollTo(t.model().index(r, c))
            rect = t.visualRect(t.model().index(r, c))
            self.note(f"{r},{c}")
            self.qtbot.mouseClick(t.viewport(), Qt.LeftButton, pos=rect.center())

    def _plots(self):
        import pyqtgraph as pg

        return [v for v in self._visible(pg.GraphicsView) if v.width() > 4 and v.height() > 4]

    def click_plot(self) -> None:
        plots = self._plots()
        if plots:
            self._click_view(self.rng.choice(plots))

    def hover_plot(self) -> None:
        plots = self._plots()
        if plots:
            v = self.rng.choice(plots).viewport()
            for _ in range(3):
                self.qtbot.mouseMove(v, QPoint(self.rng.randrange(v.width()), self.rng.randrange(v.height())))

    def context_menu(self) -> None:
        w = self.rng.choice([self.win.pipeline, self.win.chart, self.win.detail])
        w.customContextMenuRequested.emit(QPoint(5, 5))
        for m in QApplication.topLevelWidgets():
            if isinstance(m, QMenu) and m.isVisible():
                m.close()

    def intervene(self) -> None:
        """Ablate something from a view's context menu, or remove a chip, or remove them all."""
        win, how = self.win, self.rng.random()
        if how < 0.6:
            view = self.rng.choice(("attention", "mlp", "pipeline"))
            if view != "pipeline":
                win.detail.setCurrentWidget(win.detail.views["Attention" if view == "attention" else "MLP"])
            w = win.pipeline if view == "pipeline" else win.detail
            pos = QPoint(self.rng.randrange(max(1, w.width())), self.rng.randrange(max(1, w.height())))
            menu = QMenu(win)
            acts = win.add_ablation_actions(menu, view, w.mapToGlobal(pos))
            self.note(f"{view} {pos.x()},{pos.y()}: {len(acts)} actions")
            if acts:
                a = self.rng.choice(acts)
                self.note(a.text())
                a.trigger()
            menu.deleteLater()
        elif how < 0.85 and win.chips.chips:
            i = self.rng.randrange(len(win.chips.chips))
            self.note(f"remove chip {i}")
            win.chips.chips[i].click()
        elif win.chips.clear_btn is not None:
            self.note("remove all")
            win.chips.clear_btn.click()

    def compare(self) -> None:
        """Open prompt B, or run B with another text."""
        text = self.rng.choice(("The capital of Germany is", "The capital of France is", random_text(self.rng)[:200]))
        self.note(repr(text[:30]))
        if self.win.compare is None or self.rng.random() < 0.3:
            self.win.open_compare(text if self.rng.random() < 0.7 else None)
        else:
            self.win.compare.prompt.setText(text)
            self.win.compare.run()

    def analysis(self) -> None:
        """Run a patching table or a causal trace (small), sometimes cancelling it at once."""
        an = self.win.analysis
        self.win.open_analysis(self.rng.randrange(2))
        an.causal.samples.setValue(self.rng.choice((1, 2, 3)))
        if self.rng.random() < 0.3:
            an.causal.noise.setValue(0.0)
        panel = an.currentWidget()
        self.note(type(panel).__name__)
        panel.run()
        if self.rng.random() < 0.3:
            self.note("cancel")
            panel.cancel_btn.click()
        if not self.race:
            self.qtbot.waitUntil(lambda: not self.st.jobs, timeout=60000)

    def resize(self) -> None:
        self.win.resize(self.rng.randint(500, 1800), self.rng.randint(400, 1100))

    # ---- keys and text ---------------------------------------------------------------------------
    KEYS = ((Qt.Key_Space, Qt.NoModifier), (Qt.Key_Right, Qt.NoModifier), (Qt.Key_Left, Qt.NoModifier),
            (Qt.Key_Return, Qt.ControlModifier), (Qt.Key_Enter, Qt.ControlModifier), (Qt.Key_Escape, Qt.NoModifier),
            (Qt.Key_Up, Qt.NoModifier), (Qt.Key_Down, Qt.NoModifier), (Qt.Key_Tab, Qt.NoModifier),
            (Qt.Key_PageDown, Qt.NoModifier), (Qt.Key_Home, Qt.NoModifier), (Qt.Key_End, Qt.NoModifier),
            (Qt.Key_Return, Qt.NoModifier), (Qt.Key_Backspace, Qt.NoModifier), (Qt.Key_A, Qt.NoModifier),
            (Qt.Key_Z, Qt.ControlModifier))

    def key(self) -> None:
        key, mod = self.rng.choice(self.KEYS)
        target = QApplication.focusWidget() or self.win
        if self.rng.random() < 0.3:
            target = self.rng.choice([self.win, self.win.prompt, self.win.controls.step_btn, self.win.detail,
                                      self.win.chart.plot])
            target.setFocus()
        self.note(f"{Qt.Key(key).name} {type(target).__name__}")
        self.qtbot.keyClick(target, key, mod)

    def edit_prompt(self) -> None:
        text = random_text(self.rng)
        self.note(repr(text[:30]) + (f"…({len(text)})" if len(text) > 30 else ""))
        p = self.win.prompt
        if text.isascii() and len(text) < 40 and text.isprintable() and self.rng.random() < 0.5:
            p.clear()
            self.qtbot.keyClicks(p, text)  # typed (ASCII only: keyClicks aborts on CJK under offscreen)
        else:
            p.setText(text)
        how = self.rng.random()
        if how < 0.4:
            self.qtbot.keyClick(p, Qt.Key_Return, Qt.ControlModifier)
        elif how < 0.6:
            self.qtbot.mouseClick(self.win.run_btn, Qt.LeftButton)
        elif how < 0.8:
            p.returnPressed.emit()

    def view_text(self) -> None:
        edits = [e for e in self._visible(QLineEdit) if e is not self.win.prompt]
        if edits:
            e = self.rng.choice(edits)
            text = random_text(self.rng)
            self.note(repr(text[:20]))
            e.setText(text[:200])
            e.editingFinished.emit()

    def slider(self) -> None:
        sliders = [s for s in self._visible(QSlider) if s.isEnabled()]
        if not sliders:
            return
        s = self.rng.choice(sliders)
        if self.rng.random() < 0.5:
            v = self.rng.randint(s.minimum() - 5, s.maximum() + 5)
            self.note(f"set {v}")
            s.setValue(v)
        else:  # a drag across the groove
            w = max(2, s.width() - 2)
            y = s.height() // 2
            xs = [self.rng.randrange(1, w) for _ in range(3)]
            self.note(f"drag {xs}")
            self.qtbot.mousePress(s, Qt.LeftButton, pos=QPoint(xs[0], y))
            for x in xs[1:]:
                self.qtbot.mouseMove(s, QPoint(x, y))
            self.qtbot.mouseRelease(s, Qt.LeftButton, pos=QPoint(xs[-1], y))

    def spin(self) -> None:
        boxes = [b for b in self._visible(QSpinBox) if b.isEnabled()]
        if boxes:
            b = self.rng.choice(boxes)
            if self.rng.random() < 0.5:
                v = self.rng.randint(b.minimum() - 3, min(b.maximum(), 10**6) + 3)
                self.note(f"set {v}")
                b.setValue(v)
            else:
                self.qtbot.keyClick(b, self.rng.choice((Qt.Key_Up, Qt.Key_Down, Qt.Key_PageUp)))

    def tab(self) -> None:
        d = self.win.detail
        i = self.rng.randrange(d.count())
        self.note(d.tabText(i))
        if self.rng.random() < 0.5:
            self.qtbot.mouseClick(d.tabBar(), Qt.LeftButton, pos=d.tabBar().tabRect(i).center())
        else:
            d.setCurrentIndex(i)

    def combo(self) -> None:
        boxes = [b for b in self._visible(QComboBox) if b is not self.win.model_box and b.count()]
        if boxes:
            b = self.rng.choice(boxes)
            b.setCurrentIndex(self.rng.randrange(b.count()))

    race = False  # True in a race burst: no waiting for the worker between events

    def play(self) -> None:
        self.win.controls.pace.setValue(self.rng.choice((0, 0, 50, 400)))
        btn = self.win.controls.play_btn
        self.qtbot.mouseClick(btn, Qt.LeftButton)
        if self.race or not self.st.playing:
            return  # paused (it was playing), or nothing to play
        # a deterministic stretch: k tokens, then Pause (the seed alone decides what happens)
        k, runs = self.rng.randint(1, 12), self.st.session().model_runs
        self.note(f"{k} tokens")
        self.qtbot.waitUntil(lambda: self.st.session().model_runs - runs >= k or not self.st.playing, timeout=60000)
        self.st.pause()

    # ---- files and models ------------------------------------------------------------------------
    def export(self) -> None:
        from gpt2viz.widgets.view_names import VIEWS

        self.n_files += 1
        what = self.rng.choice(("view", "view", "all", "data", "cancel"))
        ext = self.rng.choice((".png", ".svg", ".txt")) if what == "view" else ".npz"
        path = "" if what == "cancel" else str(self.out / f"f{self.n_files}{ext}")
        self.note(f"{what} {path}")
        self.qtbot_patch("getSaveFileName", lambda *a, **k: (path, ""))
        self.qtbot_patch("getExistingDirectory", lambda *a, **k: str(self.out / "layers"))
        (self.out / "layers").mkdir(exist_ok=True)
        if what in ("view", "cancel"):
            self.win.export_view(self.rng.choice((None,) + VIEWS))
        elif what == "all":
            self.win.export_all_layers()
        else:
            self.win.export_data()

    def model_switch(self) -> None:
        box = self.win.model_box
        for f in self.folders:
            if box.findData(f) < 0:
                box.addItem(os.path.basename(f), f)
        i = self.rng.randrange(box.count())
        self.note(box.itemText(i))
        box.setCurrentIndex(i)
        box.activated.emit(i)

    qtbot_patch = None  # set by the test: monkeypatch.setattr on QFileDialog


def close_message_boxes() -> int:
    """Press OK on every open message box (errors are shown non-modally and stay until closed)."""
    n = 0
    for w in QApplication.topLevelWidgets():
        if isinstance(w, QMessageBox) and w.isVisible():
            w.done(QMessageBox.Ok)
            n += 1
    return n


def check_consistent(win: MainWindow) -> None:
    """The token strip, chart, pipeline and visible view agree with session A."""
    st = win.state
    s = st.session()
    h = s.history
    strip = win.tokens
    if h is None:
        assert strip.chips == []
        assert win.chart.summary is None
        return
    ids = [int(re.search(r"id (\d+)", c.toolTip()).group(1)) for c in strip.chips]
    assert tuple(ids) == h.tokens[strip._offset:], "token strip chips != the history's tokens"
    assert strip._offset == max(0, len(h.tokens) - strip.MAX_CHIPS)
    checked = [i + strip._offset for i, c in enumerate(strip.chips) if c.isChecked()]
    assert checked == [s.selected_position], f"checked chips {checked} != selected {s.selected_position}"
    assert [c.property("generated") for c in strip.chips] == [p >= h.prompt_len for p in
                                                             range(strip._offset, len(h.tokens))]
    # chart rows = the session's distribution under the current settings
    dist, chosen = s.distribution()
    fresh = chart_summary(s, N_BARS)
    drawn = win.chart.summary
    assert drawn is not None and [r.id for r in drawn.rows] == [r.id for r in fresh.rows], "chart rows are stale"
    assert [r.final for r in drawn.rows] == pytest.approx([float(dist.final[r.id]) for r in drawn.rows], abs=1e-6)
    assert list(win.chart.bars.opts["width"]) == pytest.approx([r.final for r in drawn.rows])
    assert drawn.chosen == chosen
    # pipeline and the visible detail view show the current selection
    pos, sel = s.selected_position, s.selection
    ps = win.pipeline.cells.summary
    assert ps is not None and ps.position == pos and ps.n_tokens == len(h.tokens)
    assert len(ps.blocks) == s.model.config.n_layer
    view = win.detail.currentWidget()
    vs = getattr(view, "summary", None)
    if vs is not None and hasattr(vs, "position"):
        assert vs.position == pos, f"{type(view).__name__} shows position {vs.position}, selected {pos}"
    if vs is not None and hasattr(vs, "layer"):
        assert vs.layer == sel.layer, f"{type(view).__name__} shows layer {vs.layer}, selected {sel.layer}"
    assert f"context {len(h.tokens)}/{s.model.config.n_positions}" in win.status.text()
    # interventions: one chip each; the chart's ghost is the run without them exactly when some are in force
    assert len(win.chips.chips) == len(s.interventions)
    if h.current.interventions == s.interventions:
        assert all((r.before is not None) == bool(s.interventions) for r in drawn.rows)
    assert win.controls.back_btn.isEnabled() == (len(h.frames) > 1)


@pytest.fixture
def fuzz_window(qtbot, tmp_path, exported):
    state = AppState(Settings(str(tmp_path / "settings.ini")))
    win = MainWindow(state)
    qtbot.addWidget(win)
    win.prompt.setText("The capital of France is")
    win.resize(1400, 900)
    win.show()
    atlas = resolve_model(None)
    copy = tmp_path / "atlas-copy"  # a second folder of the same model: switching reloads it
    copy.mkdir()
    for f in atlas.iterdir():
        if f.is_file():
            os.symlink(f, copy / f.name)
    state.load_model(str(atlas))
    qtbot.waitUntil(lambda: not state.busy and state.history is not None, timeout=60000)
    yield win, [str(atlas), str(copy), str(exported["l3h4e32"])]
    if state._thread.isRunning():
        win.close()


def test_seeded_gui_fuzz(qtbot, fuzz_window, tmp_path, monkeypatch):
    win, folders = fuzz_window
    st = win.state
    seed = SEED
    rng = random.Random(seed)
    out = tmp_path / "exports"
    out.mkdir()
    caught: list[str] = []
    previous = sys.excepthook

    def hook(kind, value, tb):
        caught.append("".join(traceback.format_exception(kind, value, tb)))
        previous(kind, value, tb)

    monkeypatch.setattr(sys, "excepthook", hook)
    monkeypatch.setattr(QMessageBox, "question", staticmethod(
        lambda *a, **k: rng.choice((QMessageBox.Yes, QMessageBox.No))))
    fz = Fuzzer(qtbot, win, rng, folders, out)
    fz.qtbot_patch = lambda name, fn: monkeypatch.setattr(QFileDialog, name, staticmethod(fn))
    # A button clicked before the first export event (the causal trace's Export…) would open a real, modal
    # file dialog and wait for a person forever: until an export event sets a path, every dialog is cancelled.
    for name, cancelled in (("getSaveFileName", ("", "")), ("getOpenFileName", ("", "")),
                            ("getExistingDirectory", "")):
        fz.qtbot_patch(name, lambda *a, _c=cancelled, **k: _c)
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("", False)))  # a supernode's name
    win.export_scale = 1.0  # pictures at screen size: the fuzz is about the paths, not the pixels
    errors = 0
    reproduce = f"GPT2VIZ_FUZZ_SEED={seed} python -m pytest {__file__}"

    def fail(msg: str) -> None:
        pytest.fail(f"fuzz seed {seed} failed after {len(fz.log)} events ({reproduce}): {msg}\n"
                    f"last events:\n  " + "\n  ".join(fz.log[-15:]), pytrace=False)

    n = 0
    while n < N_EVENTS:
        # Most bursts wait for the worker after every event, so the seed alone decides what happens and a
        # failure reproduces; one in five is a race burst (events while requests are in flight), which
        # depends on timing too.
        fz.race = rng.random() < RACE
        fz.log.append(f"-- burst at event {n}{' (race)' if fz.race else ''}")
        for _ in range(min(BURST, N_EVENTS - n)):
            fz.event()
            n += 1
            QApplication.processEvents()
            if not fz.race:
                qtbot.waitUntil(lambda: not st.busy, timeout=60000)
            if caught:
                fail(caught[0])
        st.pause()
        problem = None
        try:
            qtbot.waitUntil(lambda: not st.busy, timeout=60000)
        except Exception:  # noqa: BLE001 - reported with the seed
            problem = "the worker did not become idle within 60 s"
        QApplication.processEvents()
        errors += close_message_boxes()
        if caught:
            fail(caught[0])
        if problem is None:
            try:
                check_consistent(win)
            except AssertionError as e:
                problem = f"inconsistent state: {e}"
        if problem:
            fail(problem)
    print(f"fuzz seed {seed}: {n} events, {errors} error messages shown, {fz.n_files} exports; {fz.counts}")
    assert not caught
