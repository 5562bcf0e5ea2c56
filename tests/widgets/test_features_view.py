"""The Features tab and a feature's page on atlas: the same features `gpt2viz features` prints, steering and
ablation through the graph as chips (in force while generating), "test your own text" from a run of its own, and a
model without SAEs is a sentence, not an error."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gpt2viz.cli import main as cli_main
from gpt2viz.core.features.activations import sae_activations
from gpt2viz.core.features.shipped import feature_set
from gpt2viz.core.features.steering import FeatureClamp, to_interventions
from gpt2viz.core.interventions import Steer
from gpt2viz.core.model_folder.locations import resolve_model
from tests.widgets.conftest import run_window

PROMPT = "The capital of France is"
LAYER, CAPITAL = 4, 217  # block 4's " capital" feature (tests/models/test_atlas_dashboards.py)


def _window(qtbot, tmp_path, folder):
    w = run_window(qtbot, tmp_path, folder, PROMPT)
    w.detail.setCurrentWidget(w.detail.views["Features"])
    return w


@pytest.fixture
def win(qtbot, tmp_path):
    w = _window(qtbot, tmp_path, resolve_model(None))
    yield w
    w.close()


def _idle(qtbot, st):
    qtbot.waitUntil(lambda: not st.busy and not st.jobs, timeout=30000)


def test_the_tab_lists_what_the_command_prints(qtbot, win, capsys):
    st, view = win.state, win.detail.views["Features"]
    st.select_block(LAYER)
    st.select_position(1)
    sm = view.summary
    assert (sm.layer, sm.position) == (LAYER, 1)
    assert cli_main(["features", "--prompt", PROMPT, "--layer", str(LAYER), "--position", "1", "--top", "20",
                     "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["positions"][0]
    assert [r.feature for r in sm.rows] == [f["feature"] for f in row["features"]]
    assert [round(r.activation, 4) for r in sm.rows] == pytest.approx([f["activation"] for f in row["features"]],
                                                                       abs=2e-4)
    assert sm.l0 == row["l0"] and sm.relative_error == pytest.approx(row["relative_error"], abs=1e-4)
    assert sm.rows[0].feature == CAPITAL and "capital" in sm.rows[0].label  # at " capital", its own feature leads
    assert view.table.item(0, 0).text() == str(CAPITAL)
    assert f"{sm.relative_error:.1%}" in view.caption.text()


def test_a_click_opens_the_feature_page(qtbot, win):
    st, view = win.state, win.detail.views["Features"]
    st.select_block(LAYER)
    st.select_position(1)
    view.table.cellClicked.emit(0, 0)
    page = view.page.page
    assert (page.layer, page.feature) == (LAYER, CAPITAL)
    assert page.here == pytest.approx(view.summary.rows[0].activation, rel=1e-5)
    assert "capital" in view.page.contexts.toPlainText() and str(CAPITAL) in view.page.title.text()
    link = page.neighbours[0][0]
    view.page.neighbours.linkActivated.emit(str(link))
    assert view.page.page.feature == link


def test_steering_is_a_chip_in_force_while_generating(qtbot, win):
    st, view = win.state, win.detail.views["Features"]
    view.open_feature(LAYER, CAPITAL)
    view.page.scale.setValue(12.0)
    view.page.steer.click()
    _idle(qtbot, st)
    ivs = st.session("A").interventions
    assert len(ivs) == 1 and isinstance(ivs[0], Steer) and ivs[0].feature == CAPITAL and ivs[0].positions is None
    assert any(f"feature {LAYER}.{CAPITAL} ×12" in c.text() for c in win.chips.chips)
    assert st.session("A").baseline is not None  # the ghosts: the run without it
    st.set_sampling(temperature=0.0)
    st.step()
    _idle(qtbot, st)
    ids = [int(t) for t in st.history.tokens]
    # the cached step that read the generated token ran under the steer: a whole run's logits with it
    steered = st.model.run(ids, hooks=[], interventions=ivs)[0].last_logits
    np.testing.assert_allclose(st.history.frames[-1].logits, steered, atol=2e-4)
    clean = st.model.run(ids, hooks=[])[0].last_logits
    assert np.abs(clean - steered).max() > 0.1


def test_ablating_a_feature_everywhere_uses_the_clamp_rule(qtbot, win):
    st, view = win.state, win.detail.views["Features"]
    view.open_feature(LAYER, CAPITAL)
    view.page.ablate_all.click()
    _idle(qtbot, st)
    ivs = st.session("A").interventions
    ids = [int(t) for t in st.history.tokens]
    want = to_interventions(st.model, {LAYER: feature_set(st.model, LAYER).sae}, [FeatureClamp(LAYER, CAPITAL)], ids)
    assert ivs == want and ivs and all(iv.clamp == 0.0 for iv in ivs)
    assert any(f"feature {LAYER}.{CAPITAL} set to 0" in c.text() for c in win.chips.chips)


def test_test_your_own_text_reads_the_feature_on_a_run_of_its_own(qtbot, win):
    st, view = win.state, win.detail.views["Features"]
    view.open_feature(LAYER, CAPITAL)
    text = "Rome is the capital of Italy."
    view.page.text.setText(text)
    view.page.read.click()
    _idle(qtbot, st)
    got = st.session("A").analyses["feature-text"]
    fs = feature_set(st.model, LAYER)
    want = sae_activations(st.model, fs.sae, text)[1][:, CAPITAL]
    assert [a for _, a in got.pieces] == pytest.approx(list(want), abs=1e-5)
    assert max(got.pieces, key=lambda p: p[1])[0] == " capital"
    assert "capital" in view.page.text_result.text()


def test_a_model_without_saes_says_so(qtbot, tmp_path, exported):
    w = _window(qtbot, tmp_path, exported["l2h2e16"])
    view = w.detail.views["Features"]
    assert view.summary.missing and "no sparse autoencoder" in view.caption.text()
    assert view.table.rowCount() == 0 and not view.page.steer.isEnabled()
    w.close()


def test_snapshot_draws_the_features_and_a_feature_page(tmp_path, capsys):
    from PySide6.QtGui import QImage

    base = ["snapshot", "--prompt", PROMPT, "--layer", str(LAYER), "--position", "1"]
    assert cli_main([*base, "--view", "features", "--out", str(tmp_path / "f.png")]) == 0
    assert cli_main([*base, "--view", "feature", "--feature", str(CAPITAL), "--steer-feature", f"{LAYER}.{CAPITAL}=4",
                     "--out", str(tmp_path / "p.png")]) == 0
    for name in ("f.png", "p.png"):
        img = QImage(str(tmp_path / name))
        assert img.width() > 800 and img.height() > 400 and img.text("Layer") == str(LAYER)
    assert f"feature L{LAYER}.F{CAPITAL} ×4" in QImage(str(tmp_path / "p.png")).text("Interventions")
    capsys.readouterr()
    assert cli_main([*base, "--view", "feature", "--out", str(tmp_path / "x.png")]) == 2
    assert "--feature" in capsys.readouterr().err
    assert cli_main([*base, "--view", "feature", "--feature", "5000", "--out", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert "out of range" in err and len(err.strip().splitlines()) == 1


def test_the_pipeline_and_the_journey_name_the_features_at_a_block(qtbot, win):
    from gpt2viz.core.viewmodels.features import features_summary
    from gpt2viz.core.viewmodels.journey import journey_page

    st = win.state
    st.select_block(LAYER)
    a = st.session("A")
    sm = features_summary(a, n_rows=3, layer=LAYER)
    text = win.pipeline.explanation.text()
    assert all(f"#{r.feature} " in text for r in sm.rows) and "Features tab" in text
    page = journey_page(a, "mlp")
    want = features_summary(a, replace_position_none(a), n_rows=3, layer=page.numbers["layer"])
    assert page.numbers["features"] == tuple((r.feature, r.activation, r.label) for r in want.rows)


def replace_position_none(session):
    from dataclasses import replace

    return replace(session.selection, position=None)
