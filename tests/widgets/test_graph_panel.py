"""The circuit graph tab: built on the worker from atlas's own transcoders, the same graph `gpt2viz graph` writes,
hover and pin on the drawn nodes, saved as JSON / PNG / SVG; a model without transcoders is a message."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt

from gpt2viz.cli import main as cli_main
from gpt2viz.core.model_folder.locations import resolve_model
from tests.widgets.conftest import run_window

PROMPT = "The capital of France is"


def window(qtbot, tmp_path, folder):
    return run_window(qtbot, tmp_path, folder, PROMPT)


@pytest.fixture
def atlas_window(qtbot, tmp_path):
    w = window(qtbot, tmp_path, resolve_model(None))
    yield w
    w.close()


def test_the_tab_builds_the_graph_the_command_writes(qtbot, atlas_window, tmp_path, capsys):
    w, st = atlas_window, atlas_window.state
    w.open_analysis(2)
    panel = w.analysis.graph
    seen = []
    st.sigJobProgress.connect(lambda ch, d, n: ch == "graph" and seen.append((d, n)))
    panel.run()
    qtbot.waitUntil(lambda: st.session("A").analyses.get("graph") is not None and not st.jobs, timeout=60000)
    data = st.session("A").analyses["graph"]
    n_layer = st.model.config.n_layer
    assert seen[-1] == (n_layer, n_layer)
    assert cli_main(["graph", "--prompt", PROMPT, "--out", str(tmp_path / "cli.json")]) == 0
    capsys.readouterr()
    cli = json.loads((tmp_path / "cli.json").read_text())
    assert [n["node_id"] for n in data["nodes"]] == [n["node_id"] for n in cli["nodes"]]
    assert [lk["weight"] for lk in data["links"]] == pytest.approx([lk["weight"] for lk in cli["links"]], abs=1e-9)
    assert "replacement score" in panel.message.text()

    # hover a drawn node: its numbers; click: its links pinned; click empty space: unpinned
    canvas = panel.canvas
    qtbot.waitUntil(lambda: canvas.width() > 100, timeout=5000)
    i = next(k for k, n in enumerate(panel.layout_.nodes) if n.kind == "feature")
    s = canvas._scale()
    at = canvas._centres[i] * s + QPointF(canvas._offset(), 0)
    assert canvas.node_at(at) == i
    panel._hover(canvas.node_at(at))
    assert panel.layout_.nodes[i].label in panel.readout.text() and "activation" in panel.readout.text()
    panel._click(i)
    assert canvas.pinned == {i}
    panel._click(-1)
    assert canvas.pinned == frozenset()

    for suffix in ("json", "png", "svg"):
        panel.save_to(tmp_path / f"g.{suffix}")
    assert json.loads((tmp_path / "g.json").read_text()) == data
    assert (tmp_path / "g.png").stat().st_size > 10000 and "<svg" in (tmp_path / "g.svg").read_text()


def test_a_model_without_transcoders_is_a_message(qtbot, tmp_path, exported):
    w = window(qtbot, tmp_path, exported["l3h4e32"])
    errors = []
    w.state.sigError.connect(errors.append)
    w.open_analysis(2)
    w.analysis.graph.run()
    assert errors and "ships no transcoders" in errors[0] and not w.state.jobs
    w.close()


def _built(qtbot, w):
    st = w.state
    w.open_analysis(2)
    panel = w.analysis.graph
    panel.run()
    qtbot.waitUntil(lambda: st.session("A").analyses.get("graph") is not None and not st.jobs, timeout=60000)
    return panel


def test_pinned_nodes_ablated_and_scaled_in_the_model_beside_the_graphs_prediction(qtbot, atlas_window):
    """Ablate / Scale × run the pinned nodes' change inside the model (a worker job); the scatter shows each target
    logit's predicted change against the real one with the correlation, the numbers core's ablation_check gives."""
    from gpt2viz.core.circuits.ablation import ablation_check
    from gpt2viz.core.features.transcoder import read_transcoders

    w, st = atlas_window, atlas_window.state
    panel = _built(qtbot, w)
    panel.check_pinned(0.0)  # nothing pinned: a message, no job
    assert "Pin nodes first" in panel.message.text() and not st.jobs
    data = st.session("A").analyses["graph"]
    n_layer = st.model.config.n_layer
    last = [i for i, n in enumerate(panel.layout_.nodes) if n.kind == "feature" and n.node_id.startswith(f"{n_layer - 1}_")
            and n.node_id.endswith(f"_{len(data['metadata']['prompt_tokens']) - 1}")]
    assert last
    panel.draw(frozenset(last[:1]))
    qtbot.mouseClick(panel.ablate_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: st.session("A").analyses.get("graph-ablation") is not None and not st.jobs, timeout=60000)
    c = st.session("A").analyses["graph-ablation"]
    ids = data["metadata"]["info"]["prompt_ids"]
    want = ablation_check(st.model, read_transcoders(st.model.folder / "transcoders"), ids, data, c.nodes, 0.0)
    np.testing.assert_allclose(c.real, want.real)
    np.testing.assert_allclose(c.predicted, want.predicted)
    assert c.scale == 0.0 and c.pearson > 0.9  # a last-block feature: the graph's direct effect is its whole effect
    assert panel.scatter.isVisible() and "Pearson r" in panel.message.text()
    panel.scale.setValue(3.0)
    qtbot.mouseClick(panel.scale_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: st.session("A").analyses["graph-ablation"].scale == 3.0 and not st.jobs, timeout=60000)
    c3 = st.session("A").analyses["graph-ablation"]
    np.testing.assert_allclose(c3.predicted, -2.0 * c.predicted)


def test_a_supernode_is_named_drawn_and_saved_as_circuit_tracer_stores_it(qtbot, atlas_window, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QInputDialog

    from gpt2viz.core.viewmodels.graph_layout import graph_layout

    w, st = atlas_window, atlas_window.state
    panel = _built(qtbot, w)
    feats = [i for i, n in enumerate(panel.layout_.nodes) if n.kind == "feature"][:3]
    panel.draw(frozenset(feats))
    ids = panel.pinned_ids()
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("capital cities", True)))
    qtbot.mouseClick(panel.group_btn, Qt.LeftButton)  # the name comes from the dialog
    data = st.session("A").analyses["graph"]
    assert data["qParams"]["supernodes"] == [["capital cities", *ids]]
    assert set(ids) <= set(data["qParams"]["pinnedIds"])
    assert panel.layout_.supernodes == (("capital cities", tuple(sorted(feats))),)
    panel.save_to(tmp_path / "g.json")
    back = json.loads((tmp_path / "g.json").read_text(encoding="utf-8"))
    assert back["qParams"]["supernodes"] == [["capital cities", *ids]]
    assert graph_layout(back).supernodes == panel.layout_.supernodes  # the round trip draws the same box
    panel.save_to(tmp_path / "g.png")
    assert (tmp_path / "g.png").stat().st_size > 1000
    errors = []
    st.sigError.connect(errors.append)
    panel.group_pinned("  ")  # an empty name is a message
    assert errors and "name" in errors[-1]


def test_double_clicking_a_feature_node_opens_its_transcoder_feature_page(qtbot, atlas_window):
    from gpt2viz.core.features.dashboards import feature_label, load_dashboards
    from gpt2viz.core.features.shipped import feature_set

    w, st = atlas_window, atlas_window.state
    panel = _built(qtbot, w)
    qtbot.waitUntil(lambda: panel.canvas.width() > 100, timeout=5000)
    i = max((k for k, n in enumerate(panel.layout_.nodes) if n.kind == "feature"),
            key=lambda k: panel.layout_.nodes[k].row)  # a feature of a late block
    node = panel.layout_.nodes[i]
    layer, feature, pos = (int(v) for v in node.node_id.split("_"))
    canvas = panel.canvas
    at = canvas._centres[i] * canvas._scale() + QPointF(canvas._offset(), 0)
    qtbot.mouseDClick(canvas, Qt.LeftButton, pos=at.toPoint())
    view = w.detail.views["Features"]
    assert w.detail.currentWidget() is view
    page = view.page.page
    assert (page.layer, page.feature, page.kind) == (layer, feature, "transcoder")
    fs = feature_set(st.model, layer, "transcoder")
    assert page.label == feature_label(load_dashboards(fs.sae).feature(feature), st.model.tokenizer) == node.label
    assert "transcoder" in view.page.title.text() and not view.page.steer.isEnabled()
    # its activation at the node's position is the node's activation in the graph
    st.select_position(pos)
    assert view.page.page.here == pytest.approx(node.activation, rel=1e-4, abs=1e-4)
    # test your own text reads the transcoder on a run of its own
    view.page.text.setText("The capital of Spain is")
    view.page.read.click()
    qtbot.waitUntil(lambda: not st.jobs and st.session("A").analyses.get("feature-text") is not None, timeout=30000)
    assert st.session("A").analyses["feature-text"].kind == "transcoder"


def test_the_journey_has_a_page_for_the_circuit(qtbot, atlas_window):
    from gpt2viz.core.viewmodels.journey import PAGES

    w, st = atlas_window, atlas_window.state
    w.open_journey(PAGES.index("circuit"))
    j = w.journey
    assert j.key == "circuit" and j.graph_btn.isVisible()
    assert "Build the circuit graph" in j.text.text()
    j.graph_btn.click()
    qtbot.waitUntil(lambda: st.session("A").analyses.get("graph") is not None and not st.jobs, timeout=60000)
    n = j.page.numbers
    data = st.session("A").analyses["graph"]
    target = next(x for x in data["nodes"] if x["is_target_logit"])
    into = sorted((lk for lk in data["links"] if lk["target"] == target["node_id"]), key=lambda lk: -lk["weight"])
    assert n["built"] and n["n_nodes"] == len(data["nodes"]) and n["target_text"] == "␣Paris"
    assert [round(i[4], 6) for i in n["inputs"]] == [round(lk["weight"], 6) for lk in into[:3]]
    text = j.text.text()
    assert f"{n['n_nodes']} nodes" in text and "Paris" in text
    st.run_prompt("The capital of Spain is")  # another text: the page no longer claims that graph
    qtbot.waitUntil(lambda: not st.busy and st.history.prompt_len == 5, timeout=30000)
    assert not j.page.numbers["built"]
