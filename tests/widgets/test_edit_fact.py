"""Edit a fact in the app: ROME computed on the worker with progress, put in force on A as a chip (the answer
changes, the chart keeps the unedited probabilities as ghosts), removed by its chip; bad input is a message."""

from __future__ import annotations

import numpy as np
import pytest

from gpt2viz.app.settings import Settings
from gpt2viz.app.state import AppState
from gpt2viz.core.editing.evaluation import target_prob
from gpt2viz.core.interventions import RankOneEdit
from gpt2viz.core.model_folder.locations import resolve_model
from gpt2viz.widgets.main_window import MainWindow

PROMPT = "The capital of France is"


@pytest.fixture
def win(qtbot, tmp_path):
    st = AppState(Settings(str(tmp_path / "e.ini")))
    w = MainWindow(st)
    qtbot.addWidget(w)
    w.prompt.setText(PROMPT)
    w.show()
    st.load_model(str(resolve_model(None)))
    qtbot.waitUntil(lambda: not st.busy and st.history is not None, timeout=30000)
    yield w
    w.close()


def test_an_edit_made_in_the_dialog_is_in_force_and_removable(qtbot, win):
    st = win.state
    paris, rome = (st.model.tokenizer.encode(t)[0] for t in (" Paris", " Rome"))
    before = st.history.frames[-1].logits.copy()
    dlg = win.open_edit_fact()
    dlg.subject.setText(" France")
    dlg.target.setText(" Rome")
    dlg.layer.setValue(0)
    seen = []
    st.sigJobProgress.connect(lambda ch, d, n: ch == "edit" and seen.append((d, n)))
    dlg.run()
    qtbot.waitUntil(lambda: any(isinstance(iv, RankOneEdit) for iv in st.session("A").interventions), timeout=120000)
    qtbot.waitUntil(lambda: not st.busy and not st.jobs, timeout=30000)
    summary = st.session("A").analyses["edit"]
    assert seen and seen[-1][0] == seen[-1][1]
    assert summary.layer == 0 and summary.layer_from == "given"
    assert summary.p_before == pytest.approx(target_prob(st.model, PROMPT, " Rome"))
    assert summary.p_after == pytest.approx(target_prob(st.model, PROMPT, " Rome", (summary.edit,)), rel=1e-5)
    assert summary.p_after > 0.5 > summary.p_before
    assert f"{summary.p_after:.2%}" in dlg.message.text()
    # the text ran again under the edit: Rome leads now; the unedited logits are kept for the ghosts
    after = st.history.frames[-1].logits
    assert int(np.argmax(after)) == rome and int(np.argmax(before)) == paris
    assert st.session("A").baseline is not None
    np.testing.assert_allclose(st.session("A").baseline[0], before, atol=1e-4)
    chips = [c for c in win.chips.chips if "France → Rome" in c.text()]
    assert len(chips) == 1
    chips[0].click()
    qtbot.waitUntil(lambda: not st.session("A").interventions and not st.busy, timeout=30000)
    assert int(np.argmax(st.history.frames[-1].logits)) == paris


def test_a_subject_not_in_the_prompt_is_a_message(qtbot, win):
    errors = []
    win.state.sigError.connect(errors.append)
    dlg = win.open_edit_fact()
    dlg.subject.setText(" Germany")
    dlg.target.setText(" Rome")
    dlg.run()
    assert errors and "Germany" in errors[0] and not win.state.jobs and dlg.edit_btn.isEnabled()


def test_save_edited_model_writes_a_folder_that_answers_as_the_edit(qtbot, win, tmp_path):
    from gpt2viz.core.engine.model import Model

    st = win.state
    errors = []
    st.sigError.connect(errors.append)
    win.exports.save_edited_model(str(tmp_path / "none"))  # no edit in force yet: a message, no folder
    assert errors and "No model edit" in errors[0] and not (tmp_path / "none").exists()
    dlg = win.open_edit_fact()
    dlg.subject.setText(" France")
    dlg.target.setText(" Rome")
    dlg.layer.setValue(0)
    dlg.run()
    qtbot.waitUntil(lambda: any(isinstance(iv, RankOneEdit) for iv in st.session("A").interventions), timeout=120000)
    qtbot.waitUntil(lambda: not st.busy and not st.jobs, timeout=30000)
    edited_logits = st.history.frames[-1].logits.copy()
    win.exports.save_edited_model(str(tmp_path / "edited"))
    qtbot.waitUntil(lambda: not st.jobs, timeout=120000)
    assert "edited" in win.statusBar().currentMessage()
    saved = Model(tmp_path / "edited")
    trace, _ = saved.run(saved.tokenizer.encode(PROMPT), hooks=[])
    np.testing.assert_allclose(trace.last_logits, edited_logits, atol=2e-3)
    win.exports.save_edited_model(str(tmp_path / "edited"))  # it exists now: refused in one message
    assert not st.jobs and "exists" in errors[-1]


def test_the_journeys_last_page_offers_to_edit_the_story_fact(qtbot, win):
    """"Edit this fact…" shows on the last page only and opens the dialog with the story's prompt, subject and
    new target."""
    from PySide6.QtCore import Qt

    from gpt2viz.core.viewmodels.journey import PAGES

    win.open_journey(0)
    j = win.journey
    assert not j.edit_btn.isVisible()
    win.open_journey(len(PAGES) - 1)
    assert j.edit_btn.isVisible() and "Rome" in j.text.text() and "France" in j.text.text()
    qtbot.mouseClick(j.edit_btn, Qt.LeftButton)
    dlg = win._edit_dialog
    assert dlg is not None and dlg.isVisible()
    assert (dlg.prompt.text(), dlg.subject.text(), dlg.target.text()) == (PROMPT, " France", " Rome")
    assert dlg.layer.value() == -1  # the block: from the causal trace, as gpt2viz edit picks it
    j.go(len(PAGES) - 2)
    assert not j.edit_btn.isVisible()
