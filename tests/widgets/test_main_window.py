"""The window driven as a person would: type, run, step, move sliders, click bars, go back, close."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt

from gpt2viz.app.settings import Settings
from gpt2viz.app.state import AppState
from gpt2viz.cli import main as cli_main
from gpt2viz.core.session.session import TOKENS, Stage
from gpt2viz.widgets.main_window import MainWindow


@pytest.fixture
def window(qtbot, tmp_path, exported):
    state = AppState(Settings(str(tmp_path / "settings.ini")))
    win = MainWindow(state)
    qtbot.addWidget(win)
    win.show()
    state.load_model(str(exported["l3h4e32"]))  # loading runs the prompt box's text
    wait_idle(qtbot, state)
    yield win
    if state._thread.isRunning():
        state.shutdown()


def wait_idle(qtbot, state, timeout=20000):
    qtbot.waitUntil(lambda: not state.busy and state.history is not None, timeout=timeout)


def run(qtbot, win, text):
    win.prompt.clear()
    qtbot.keyClicks(win.prompt, text)
    qtbot.keyClick(win.prompt, Qt.Key_Return, Qt.ControlModifier)
    wait_idle(qtbot, win.state)


def test_run_and_step_match_the_cli(qtbot, window, exported, capsys):
    st = window.state
    st.set_sampling(temperature=1.2, top_k=30, top_p=0.95, seed=5)
    run(qtbot, window, "Hello there")
    assert [c.text() for c in window.tokens.chips] == ["Hello", "\u2423there"]
    for _ in range(5):
        qtbot.mouseClick(window.controls.step_btn, Qt.LeftButton)
        wait_idle(qtbot, st)
    gui_tokens = list(st.history.generated)
    assert len(gui_tokens) == 5
    assert [c.property("generated") for c in window.tokens.chips] == [False, False] + [True] * 5
    capsys.readouterr()
    cli_main(["run", "--prompt", "Hello there", "--model", str(exported["l3h4e32"]), "--steps", "5",
              "--temperature", "1.2", "--top-k", "30", "--top-p", "0.95", "--seed", "5", "--json"])
    cli_tokens = [json.loads(x)["token_id"] for x in capsys.readouterr().out.splitlines()]
    assert gui_tokens == cli_tokens
    assert "context 7/48" in window.status.text() and "KV cache" in window.status.text()


def test_sliders_redraw_from_stored_logits_without_a_model_run(qtbot, window):
    st, chart = window.state, window.chart
    runs = st.model_runs
    chart.temp.setValue(100)
    before = list(chart.bars.opts["width"])  # what is drawn: the solid bars' lengths
    chart.temp.setValue(30)
    colder = list(chart.bars.opts["width"])
    assert colder != before and colder[0] > before[0]
    chart.topk.setValue(3)
    rows = chart.summary.rows
    assert sum(r.kept for r in rows) == 3 == chart.summary.n_kept
    assert all(w == 0 for w, r in zip(chart.bars.opts["width"], rows) if not r.kept)
    chart.topk.setValue(0)
    chart.topp.setValue(50)
    dist, _ = st.distribution()
    kept_total = float(dist.final[dist.kept].sum())
    assert kept_total == pytest.approx(1.0, abs=1e-6) and dist.kept.sum() == chart.summary.n_kept
    assert f"{chart.summary.n_kept:,} of 50,257 tokens kept" in chart.title.text()
    assert st.model_runs == runs  # no model call for any of it
    raws = list(chart.ghost.opts["width"])
    assert raws == sorted(raws, reverse=True)


def test_clicking_a_bar_forces_that_token(qtbot, window):
    st, chart = window.state, window.chart
    chart.temp.setValue(0)
    third = chart.summary.rows[2].id
    assert not chart.summary.rows[2].chosen
    chart.click_row(2)
    wait_idle(qtbot, st)
    assert st.history.tokens[-1] == third and st.history.current.forced


def test_back_restores_tokens_and_chart(qtbot, window):
    st, chart = window.state, window.chart
    chart.temp.setValue(80)
    tokens0, rows0 = st.history.tokens, chart.summary.rows
    qtbot.mouseClick(window.controls.step_btn, Qt.LeftButton)
    wait_idle(qtbot, st)
    assert st.history.tokens != tokens0 and chart.summary.rows != rows0
    runs = st.model_runs
    qtbot.mouseClick(window.controls.back_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: st.history.tokens == tokens0, timeout=5000)
    assert chart.summary.rows == rows0 and st.model_runs == runs


def test_selecting_position_and_stage_updates_the_pipeline(qtbot, window):
    st, pipe = window.state, window.pipeline
    n = len(st.history.tokens)
    assert pipe.cells.summary.position == n - 1 and len(pipe.cells.summary.blocks[1].bars) == n
    qtbot.mouseClick(window.tokens.chips[1], Qt.LeftButton)
    assert st.selected_position == 1 and window.tokens.chips[1].isChecked()
    s = pipe.cells.summary
    assert s.position == 1 and pipe.cells._texts[TOKENS].endswith("pos 1")
    b = s.blocks[1]
    assert len(b.bars) == 2
    np.testing.assert_allclose(b.bars, st.history.hook_at(("pattern", 1), 1)[b.head])
    r = pipe.cells.cell_rect(3)  # tokens, embed, block.0, block.1
    qtbot.mouseClick(pipe.cells, Qt.LeftButton, pos=r.center().toPoint())
    assert st.stage == Stage.block(1) and st.layer == 1
    assert st.head == b.head  # the block opens on the head its cell shows
    text = pipe.explanation.text()
    assert text.startswith("<b>Block 1.</b>") and f"head {b.head} puts {b.weight:.0%}" in text
    assert text.count("Block 1") == 1  # the title once, not "Block 1. Block 1: ..."
    qtbot.mouseClick(pipe.next_btn, Qt.LeftButton)
    assert st.stage == Stage.block(2)
    qtbot.mouseClick(pipe.prev_btn, Qt.LeftButton)
    qtbot.mouseClick(pipe.prev_btn, Qt.LeftButton)
    assert st.stage == Stage.block(0)


@pytest.mark.parametrize("prompt,expect", [("", None), ("word " * 80, "reads at most 48"), ("🙂 你好 \u200b\x00", None)])
def test_odd_prompts_never_crash(qtbot, window, prompt, expect):
    window.last_error = None
    window.prompt.setText(prompt)
    window.run_prompt()
    qtbot.waitUntil(lambda: not window.state.busy, timeout=10000)
    if expect:
        assert expect in (window.last_error or "")
    else:
        assert window.last_error is None and window.state.history is not None


def test_broken_model_folder_is_a_message(qtbot, window, tmp_path):
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "gpt2viz.json").write_text("{oops")
    window.state.load_model(str(tmp_path / "broken"))
    qtbot.waitUntil(lambda: not window.state.busy, timeout=10000)
    assert "unreadable" in window.last_error and window.state.model is not None  # the old model stays


def test_play_steps_until_paused(qtbot, window):
    st = window.state
    window.controls.pace.setValue(0)
    n = len(st.history.tokens)
    qtbot.mouseClick(window.controls.play_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: len(st.history.tokens) >= n + 3, timeout=10000)
    qtbot.mouseClick(window.controls.play_btn, Qt.LeftButton)
    assert not st.playing and not st.play_timer.isActive() and window.controls.play_btn.text() == "Play"


def test_closing_during_a_run_is_clean(qtbot, window):
    st = window.state
    for _ in range(5):
        st.step()
    window.close()  # waits for the worker; must not raise or leave the thread running
    assert not st._thread.isRunning()


def test_settings_persist(qtbot, tmp_path, exported):
    ini = str(tmp_path / "s.ini")
    state = AppState(Settings(ini))
    win = MainWindow(state)
    qtbot.addWidget(win)
    state.set_sampling(temperature=0.7, top_k=12)
    win.show()
    win.prompt.setText("remember me")
    win.resize(700, 500)  # the offscreen screen is 800 x 600: stay inside it
    win.close()
    state2 = AppState(Settings(ini))
    win2 = MainWindow(state2)
    qtbot.addWidget(win2)
    assert state2.sampling.temperature == 0.7 and state2.sampling.top_k == 12
    assert win2.prompt.text() == "remember me" and win2.width() == win.width() == 700
    win2.close()


def test_token_strip_follows_steps_back_and_partial_characters(qtbot, window):
    st = window.state
    # setText, not keyClicks: QTest cannot synthesise key events for CJK characters (it aborts)
    window.prompt.setText("你")  # two tokens, each part of one 3-byte character
    window.run_prompt()
    wait_idle(qtbot, st)
    qtbot.waitUntil(lambda: len(st.history.tokens) == 2, timeout=5000)
    assert [c.text() for c in window.tokens.chips] == ["你[1-2/3]", "你[3-3/3]"]
    for _ in range(3):
        st.step()
        wait_idle(qtbot, st)
    texts = [c.text() for c in window.tokens.chips]
    want = [t.display.replace("&", "&&") for t in st.model.tokenizer.describe(list(st.history.tokens))]
    assert texts == want and len(texts) == 5
    st.back()
    qtbot.waitUntil(lambda: len(window.tokens.chips) == 4, timeout=5000)
    assert [c.property("generated") for c in window.tokens.chips] == [False, False, True, True]
    st.reset()
    qtbot.waitUntil(lambda: len(window.tokens.chips) == 2, timeout=5000)


def test_token_strip_checks_the_selected_chip_and_dashes_the_subject_through_clicks_steps_and_back(qtbot, window):
    """Only the chips whose state changes are set again (the one checked before and now, subject positions that
    came or went): a Shift+click, which Qt lets check its chip, a click on the selected chip, which Qt lets
    uncheck it, and a subject chip dropped by Back and made again by a Step still end with the selected chip alone
    checked and the subject's chips alone dashed."""
    st, strip = window.state, window.tokens

    def drawn():
        return ([i for i, c in enumerate(strip.chips) if c.isChecked()],
                [i for i, c in enumerate(strip.chips) if c.property("subject")])

    n = len(st.history.tokens)
    qtbot.mouseClick(strip.chips[1], Qt.LeftButton)
    assert drawn() == ([1], [])
    qtbot.mouseClick(strip.chips[1], Qt.LeftButton)  # the selected chip again: Qt unchecks it, the strip does not
    assert drawn() == ([1], [])
    qtbot.mouseClick(strip.chips[2], Qt.LeftButton, Qt.ShiftModifier)  # a subject token, not a selection
    assert st.session("A").subject == (2,) and drawn() == ([1], [2])
    st.step(token=7)
    wait_idle(qtbot, st)
    st.set_subject((2, n), "A")  # the new token is a subject token too
    assert drawn() == ([1], [2, n])
    st.back()
    qtbot.waitUntil(lambda: len(strip.chips) == n, timeout=5000)
    assert drawn() == ([1], [2])
    st.step(token=7)  # the chip of position n is new: it shows the subject it is part of
    wait_idle(qtbot, st)
    qtbot.waitUntil(lambda: len(strip.chips) == n + 1, timeout=5000)
    assert drawn() == ([1], [2, n])
    st.select_position(None)  # follow the newest token
    assert drawn() == ([n], [2, n])


def test_token_strip_completes_a_character_split_across_steps_after_a_long_prompt(qtbot, window):
    """The strip describes only its tail after a step: a character whose bytes arrive in two steps, after more
    tokens than that tail, still shows whole on both chips, as describing the whole text shows it."""
    st = window.state
    tok = st.model.tokenizer
    window.prompt.setText("one two three four five six seven eight nine ten eleven twelve")
    window.run_prompt()
    wait_idle(qtbot, st)
    parts = tok.encode("你")
    assert len(parts) == 2
    for t in parts:
        st.step(token=t)
        wait_idle(qtbot, st)
        want = [d.display.replace("&", "&&") for d in tok.describe(list(st.history.tokens))]
        assert [c.text() for c in window.tokens.chips] == want
    assert [c.text() for c in window.tokens.chips[-2:]] == ["你[1-2/3]", "你[3-3/3]"]


def test_a_step_places_only_its_new_chip_in_a_strip_wider_than_the_window(qtbot, window):
    """The chips already shown stay put when a step adds one to a strip that scrolls: in a row stretched to the view,
    the new chip was first squeezed into the old width and every chip moved left and back. The new chip is shown
    with the step's frame (not from a queued call after it), after the last one, and the strip scrolls to it."""
    st, strip = window.state, window.tokens
    window.prompt.setText(" ".join(["word"] * 40))
    window.run_prompt()
    wait_idle(qtbot, st)
    assert strip.widget().width() > strip.viewport().width()  # it scrolls
    old = list(strip.chips)
    moved = []

    class Moves(QObject):
        def eventFilter(self, obj, e):
            if e.type() == QEvent.Move and obj in old:
                moved.append(obj.text())
            return False

    watcher = Moves()
    for chip in old:
        chip.installEventFilter(watcher)
    st.step()
    wait_idle(qtbot, st)
    qtbot.wait(50)
    new = strip.chips[-1]
    assert len(strip.chips) == len(old) + 1 and moved == []
    assert new.isVisible() and new.x() > old[-1].x()
    bar = strip.horizontalScrollBar()
    qtbot.waitUntil(lambda: bar.value() == bar.maximum() > 0, timeout=2000)


def test_steps_and_backs_within_the_rows_room_move_no_chip(qtbot, window):
    """The strip's row keeps room for a few chips after its last one: a Step that fits into it and a Back move no
    chip and leave the row's size (so its scroll bar) as it was. Whatever the steps do, the newest chip stays in
    view at the right and the room after it stays within SPARE_CHIPS typical chips."""
    from gpt2viz.widgets.token_strip import CHIP_PX, SPARE_CHIPS

    st, strip = window.state, window.tokens
    bar = strip.horizontalScrollBar()
    window.prompt.setText(" ".join(["word"] * 40))
    window.run_prompt()
    wait_idle(qtbot, st)
    events = []

    class Watch(QObject):
        def eventFilter(self, obj, e):
            if e.type() in (QEvent.Move, QEvent.Resize):
                events.append(obj)
            return False

    watcher = Watch()
    strip._inner.installEventFilter(watcher)
    still = 0
    for action in [st.step] * 8 + [st.back] * 8 + [st.step, st.back] * 3:
        width = strip._inner.width()
        old = list(strip.chips)
        for chip in old:
            chip.installEventFilter(watcher)
        events.clear()
        action()
        wait_idle(qtbot, st)
        qtbot.wait(20)
        if strip._inner.width() == width:
            still += 1
            assert not [e for e in events if e is strip._inner or e in old[:-1]]  # nothing before the tail moved
        last = strip.chips[-1]
        assert 0 <= last.x() + last.width() - bar.value() <= strip.viewport().width()  # the newest chip in view
        assert bar.value() == bar.maximum()
        assert 0 <= strip._inner.width() - strip._row.sizeHint().width() <= SPARE_CHIPS * CHIP_PX
    assert still >= 14  # most of the 22 fit: the row's size changed only every few steps


def test_a_strip_with_more_tokens_than_chips_fits_its_label_and_chips(qtbot, window):
    """Past MAX_CHIPS the row starts with "… n earlier": the row is made wide enough for it and every chip, each
    chip at its full width after the one before."""
    st, strip = window.state, window.tokens
    strip.MAX_CHIPS = 10
    window.prompt.setText(" ".join(["word"] * 40))
    window.run_prompt()
    wait_idle(qtbot, st)
    qtbot.wait(20)
    label = strip._row.itemAt(0).widget()
    assert strip._offset == 30 and "30" in label.text() and label.isVisible()
    assert label.width() >= label.sizeHint().width()
    edges = [label.geometry().right()] + [c.geometry().right() for c in strip.chips]
    assert all(c.x() > edge and c.width() == c.sizeHint().width() for c, edge in zip(strip.chips, edges))
    assert edges[-1] < strip._inner.width()


def test_keyboard_focus_starts_in_the_prompt_box(qtbot, window):
    """A newcomer's first keystrokes type a prompt: the model's first run keeps the focus there."""
    assert window.focusWidget() is window.prompt
    qtbot.keyClicks(window.prompt, " a")
    assert window.prompt.text().endswith(" a")


def test_a_run_the_user_asks_for_hands_the_keyboard_to_step(qtbot, window):
    window.prompt.setFocus()
    run(qtbot, window, "Hello")
    qtbot.waitUntil(lambda: window.focusWidget() is window.controls.step_btn, timeout=5000)


def test_the_widgets_never_see_the_command_line():
    """The command line's Namespace is read by gpt2viz/launch.py; the widgets layer has no argparse."""
    from pathlib import Path

    import gpt2viz.widgets as widgets

    for path in Path(widgets.__file__).parent.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "argparse" not in text and "Namespace" not in text, path


class FrameCount(QObject):
    """Installed on a window: the times at which it painted a frame (its UpdateRequest events)."""

    def __init__(self, win):
        super().__init__()
        self.win, self.frames = win, []
        win.installEventFilter(self)

    def eventFilter(self, obj, e):  # noqa: N802 - Qt's name
        if obj is self.win and e.type() == QEvent.UpdateRequest:
            self.frames.append(time.perf_counter())
        return False


@pytest.mark.parametrize("action", ["step", "back"])
def test_a_step_is_painted_in_few_frames(qtbot, stepped_window, action):
    """Layouts and plot items are settled before a frame is painted: a step drew the window six times before
    (each level of layouts and each plot's queued scene update after its own frame), the request's frame included;
    then three (a "running…" frame, and the new token's chip shown by a queued call after the main frame). A Back
    drew one more frame when its dropped chip was deleted after the main one."""
    win = stepped_window("l3h4e32")
    st = win.state
    counter = FrameCount(win)
    frames = counter.frames
    for _ in range(3):
        if action == "back":  # a token to take back
            st.step()
            qtbot.waitUntil(lambda: not st.busy, timeout=20000)
        qtbot.wait(200)
        frames.clear()
        n = len(st.history.tokens)
        getattr(st, action)()
        want = n + 1 if action == "step" else n - 1
        qtbot.waitUntil(lambda: not st.busy and len(st.history.tokens) == want, timeout=20000)
        qtbot.wait(200)
        assert 1 <= len(frames) <= 2, len(frames)
    win.removeEventFilter(counter)


def test_a_tab_switch_is_painted_in_fewer_frames(qtbot, stepped_window):
    """The page a tab switch shows asks to be painted through posted UpdateLater events; handled after the frame,
    they painted the whole page once more in a frame of its own."""
    from gpt2viz.widgets.views.attention_view import AttentionView

    win = stepped_window("l3h4e32")
    bar = win.detail.tabBar()
    att = next(i for i in range(bar.count()) if isinstance(win.detail.widget(i), AttentionView))
    counter = FrameCount(win)
    frames = counter.frames

    def settled():  # no frame for 0.3 s: what the tab before it shows is drawn (a view may wait for the worker)
        since = time.perf_counter()
        qtbot.waitUntil(lambda: time.perf_counter() - max(frames[-1:] + [since]) > 0.3, timeout=10000)

    counts = []
    for _ in range(4):
        qtbot.mouseClick(bar, Qt.LeftButton, pos=bar.tabRect(att - 1).center())
        settled()
        frames.clear()
        qtbot.mouseClick(bar, Qt.LeftButton, pos=bar.tabRect(att).center())
        settled()
        counts.append(len(frames))
    win.removeEventFilter(counter)
    # the first show builds the page; after it at most one more frame than the switch's own (1 in the bench's
    # window at 200 tokens, 2 in this small one, 3 before)
    assert all(n <= 2 for n in counts[1:]), counts


def test_a_new_chip_has_handled_its_own_events_when_the_history_is_drawn(qtbot, stepped_window):
    """A new chip's polish request and the update it posts are handled with the step, not from the event loop after
    the step's frame (where they painted the chip in a frame of its own)."""
    from PySide6.QtWidgets import QApplication, QToolButton

    win = stepped_window("l3h4e32")
    st, strip = win.state, win.tokens
    drawn = []
    late = []

    class Late(QObject):
        def eventFilter(self, obj, e):
            if drawn and isinstance(obj, QToolButton) and obj in strip.chips[-1:] and \
                    e.type() in (QEvent.PolishRequest, QEvent.UpdateLater, QEvent.MetaCall):
                late.append(e.type().name)
            return False

    watcher = Late()
    QApplication.instance().installEventFilter(watcher)
    st.sigHistory.connect(lambda _name: drawn.append(True))  # after the strip's own slot
    try:
        st.step()
        qtbot.waitUntil(lambda: bool(drawn) and not st.busy, timeout=20000)
        qtbot.wait(100)
    finally:
        QApplication.instance().removeEventFilter(watcher)
    assert late == []


def test_a_steps_chip_is_the_spare_made_while_idle_and_acts_as_any_chip(qtbot, stepped_window):
    """After a Step the strip makes the next chip while idle; the next Step's chip is that one, shown as a generated
    token with its own text and tooltip, and a click on it selects its position."""
    win = stepped_window("l3h4e32")
    st, strip = win.state, win.tokens
    st.step()
    wait_idle(qtbot, st)
    qtbot.waitUntil(lambda: strip._spare is not None, timeout=5000)
    spare = strip._spare
    assert not spare.isVisible()
    st.step()
    wait_idle(qtbot, st)
    n = len(st.history.tokens)
    chip = strip.chips[-1]
    assert chip is spare and chip.isVisible() and chip.property("generated")
    info = st.model.tokenizer.describe(list(st.history.tokens))[-1]
    assert chip.text() == info.display.replace("&", "&&") and f"position {n - 1} " in chip.toolTip()
    st.select_position(0)
    qtbot.mouseClick(chip, Qt.LeftButton)
    assert st.session("A").selected_position == n - 1 and chip.isChecked()


def test_the_chip_a_back_drops_leaves_the_strip_at_once(qtbot, stepped_window):
    """Back takes its chip off the strip when the history changes, not when the chip is deleted after the frame:
    it stayed shown until then (its sliver painted beside the row), and its deletion made the strip paint again in
    a frame of its own (bench/bench_latency.py at 200 tokens)."""
    win = stepped_window("l3h4e32")
    st, strip = win.state, win.tokens
    dropped = strip.chips[-1]
    seen = []
    st.sigHistory.connect(lambda _name: seen.append((len(strip.chips), dropped.isVisible(),
                                                     strip._row.indexOf(dropped))))
    st.back()
    qtbot.waitUntil(lambda: bool(seen), timeout=20000)
    assert seen[0] == (5, False, -1)
    qtbot.waitUntil(lambda: not shiboken6.isValid(dropped), timeout=5000)  # and deleted after the frame


def test_running_is_said_only_for_work_that_lasts(qtbot, window):
    """A step answers within a few frames: the window does not flash "Running…" for it (each flash relaid the Run
    button and the status line out twice). Work that outlasts BUSY_SHOWN_AFTER_MS is said, and unsaid when done."""
    from gpt2viz.app.sessions import SessionId
    from gpt2viz.widgets.main_window import BUSY_SHOWN_AFTER_MS

    bus = window.state.requests
    said = []
    bus.send(SessionId.A)  # a request goes out (nothing reaches the worker: the bus only counts it)
    said.append(window.run_btn.text())
    bus.answered()  # ...and is answered at once
    qtbot.wait(BUSY_SHOWN_AFTER_MS + 150)
    said.append(window.run_btn.text())
    assert said == ["Run", "Run"] and "running" not in window.status.text()

    bus.send(SessionId.A)
    qtbot.waitUntil(lambda: window.run_btn.text() == "Running…", timeout=2000)
    assert window.status.text().endswith("running…")
    bus.answered()
    assert window.run_btn.text() == "Run" and "running" not in window.status.text()


def test_every_plot_of_the_window_is_one_it_prepares_before_a_frame(qtbot, stepped_window):
    """The window settles each plot's queued scene update before it paints (MainWindow.event), over the plots made by
    views.common.repaint_whole: a plot made another way would be painted a frame late. Every tab is shown once, so
    the plots its first show builds are counted too."""
    import pyqtgraph as pg

    from gpt2viz.widgets.views.common import plots

    win = stepped_window("l3h4e32")
    for i in range(win.detail.count()):
        win.detail.setCurrentIndex(i)
        qtbot.wait(50)
    found = win.findChildren(pg.GraphicsView)
    assert len(found) >= 3
    assert set(map(id, found)) <= set(map(id, plots()))
