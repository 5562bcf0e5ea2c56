"""The circuit graph tab: built on the worker from atlas's own transcoders, the same graph `gpt2viz graph` writes,
hover and pin on the drawn nodes, saved as JSON / PNG / SVG; a model without transcoders is a message."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import QPointF

from gpt2viz.app.settings import Settings
from gpt2viz.app.state import AppState
from gpt2viz.cli import main as cli_main
from gpt2viz.core.model_folder.locations import resolve_model
from gpt2viz.widgets.main_window import MainWindow

PROMPT = "The capital of France is"


def window(qtbot, tmp_path, folder):
    st = AppState(Settings(str(tmp_path / "g.ini")))
    w = MainWindow(st)
    qtbot.addWidget(w)
    w.prompt.setText(PROMPT)
    w.resize(1400, 900)
    w.show()
    st.load_model(str(folder))
    qtbot.waitUntil(lambda: not st.busy and st.history is not None, timeout=30000)
    return w


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
