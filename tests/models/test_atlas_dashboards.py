"""atlas's shipped feature dashboards are what `gpt2viz sae-dashboards` builds today from the shipped text, and
they name block 4's " capital" feature."""

from __future__ import annotations

import numpy as np
import pytest

from gpt2viz.core.engine.model import Model
from gpt2viz.core.features.dashboards import build_dashboards, feature_label, load_dashboards
from gpt2viz.core.features.shipped import open_sae, shipped_saes
from gpt2viz.core.model_folder.locations import resolve_model


@pytest.fixture(scope="module")
def atlas():
    return Model(resolve_model(None))


def test_every_shipped_sae_has_its_dashboards(atlas):
    for hook, folder in shipped_saes(atlas).items():
        sae = open_sae(atlas, folder)
        dash = load_dashboards(sae)
        assert dash is not None, hook
        assert dash.meta["hook_name"] == hook and dash.d_sae == sae.cfg.d_sae
        assert (dash.arrays["density"] > 0).mean() > 0.95  # the SAEs have < 5 % dead features


def test_the_shipped_dashboards_are_what_the_command_builds(atlas):
    """Same numbers; the chosen contexts may differ only where another CPU's last bits reorder near-ties."""
    sae = open_sae(atlas, layer=4)
    shipped = load_dashboards(sae)
    again = build_dashboards(atlas, sae, seed=shipped.meta["seed"])
    assert again.meta == shipped.meta
    for k in ("max_activation", "density", "promote_values", "suppress_values", "neighbour_cos"):
        assert np.allclose(again.arrays[k], shipped.arrays[k], rtol=1e-4, atol=1e-5), k
    same = (again.arrays["ctx_tokens"] == shipped.arrays["ctx_tokens"]).all(axis=(1, 2))
    assert same.mean() >= 0.99


def test_block_4_feature_217_is_the_capital_feature(atlas):
    dash = load_dashboards(open_sae(atlas, layer=4)).feature(217)
    assert atlas.tokenizer.token_text(dash.top_tokens(1)[0]) == " capital"
    assert feature_label(dash, atlas.tokenizer).startswith("␣capital")


def test_every_shipped_transcoder_has_its_dashboards_and_the_graph_labels_its_nodes(atlas, tmp_path, capsys):
    import json

    from gpt2viz.cli import main
    from gpt2viz.core.features.transcoder import read_transcoders

    tcs = read_transcoders(atlas.folder / "transcoders")
    dashes = [load_dashboards(t) for t in tcs]
    assert all(d is not None and d.meta["hook_name"] == t.cfg.hook_name for d, t in zip(dashes, tcs, strict=True))
    assert main(["graph", "--prompt", "The capital of France is", "--out", str(tmp_path / "g.json")]) == 0
    capsys.readouterr()
    nodes = [n for n in json.loads((tmp_path / "g.json").read_text())["nodes"]
             if n["feature_type"] == "cross layer transcoder"]
    assert nodes
    for n in nodes:
        L, f, _p = n["node_id"].split("_")
        assert n["clerp"] == feature_label(dashes[int(L)].feature(int(f)), atlas.tokenizer)
