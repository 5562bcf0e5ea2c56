"""Laying out an attribution graph's JSON: rows, cells capped by influence, links only between drawn nodes."""

from __future__ import annotations

import pytest

from gpt2viz.core.circuits.graph import build_graph
from gpt2viz.core.circuits.graph_json import graph_json
from gpt2viz.core.circuits.prune import graph_scores, prune
from gpt2viz.core.engine.model import Model
from gpt2viz.core.features.transcoder import read_transcoders
from gpt2viz.core.viewmodels.graph_layout import graph_layout
from tests.conftest import REPO


@pytest.fixture(scope="module")
def story():
    atlas = Model(REPO / "models" / "atlas")
    g = build_graph(atlas, read_transcoders(atlas.folder / "transcoders"), "The capital of France is")
    data = graph_json(g, prune(g), atlas.tokenizer, prompt="The capital of France is", slug="story")
    r, c = graph_scores(g)
    data["metadata"]["info"] = {"replacement_score": r, "completeness_score": c}
    return g, data


def test_every_node_is_drawn_or_counted_and_links_join_drawn_nodes(story):
    g, data = story
    lay = graph_layout(data, per_cell=3, max_edges=50)
    assert len(lay.nodes) + lay.hidden_nodes == len(data["nodes"])
    assert len(lay.edges) + lay.hidden_edges == len(data["links"]) and len(lay.edges) <= 50
    assert lay.n_layer == g.n_layer and lay.n_pos == g.n_pos and lay.slots <= 3
    weights = [abs(e.weight) for e in lay.edges]
    assert weights == sorted(weights, reverse=True) and lay.max_weight == weights[0]
    for e in lay.edges:  # direct effects go up the rows (or stay in a row: an error or feature of the same block
        # never feeds itself, but embeddings feed block 0 and features feed later blocks and the logits)
        assert lay.nodes[e.source].row < lay.nodes[e.target].row
    assert set(lay.scores) == {"replacement_score", "completeness_score"}


def test_rows_and_labels(story):
    g, data = story
    lay = graph_layout(data)
    by_kind = {k: [n for n in lay.nodes if n.kind == k] for k in ("embedding", "feature", "error", "logit")}
    assert [n.column for n in by_kind["embedding"]] == list(range(g.n_pos)) and {n.row for n in by_kind["embedding"]} == {0}
    assert {n.row for n in by_kind["logit"]} == {g.n_layer + 1}
    assert by_kind["logit"][0].label.startswith(" Paris ") and by_kind["logit"][0].label.endswith("%")
    for n in by_kind["feature"]:
        layer, index = (int(v) for v in n.label.split("/"))
        assert n.row == layer + 1 and f"{layer}_{index}_{n.column}" == n.node_id
    # the most influential features of a cell are the ones drawn
    kept = {n.node_id for n in lay.nodes}
    for n in by_kind["feature"]:
        cell = [m for m in data["nodes"] if m["feature_type"] == "cross layer transcoder"
                and int(m["layer"]) == n.row - 1 and m["ctx_idx"] == n.column]
        dropped = [m["influence"] for m in cell if m["node_id"] not in kept]
        assert all(d >= n.influence for d in dropped)
