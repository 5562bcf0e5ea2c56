"""The graph JSON has circuit-tracer's schema (frontend/graph_models.py: Metadata, QParams, Node, Link; node ids as
create_graph_files writes them), and its links are the graph's own edges."""

from __future__ import annotations

import json
import re

import numpy as np

from gpt2viz.core.circuits.graph import build_graph
from gpt2viz.core.circuits.graph_json import graph_json
from gpt2viz.core.circuits.prune import prune
from gpt2viz.core.features.transcoder import random_transcoder

# circuit-tracer's pydantic models, field -> accepted types (None where the field is Optional)
METADATA = {"slug": (str,), "scan": (str,), "transcoder_list": (list,), "prompt_tokens": (list,), "prompt": (str,),
            "node_threshold": (float, type(None)), "schema_version": (int, type(None))}
QPARAMS = {"pinnedIds": (list,), "supernodes": (list,), "linkType": (str,), "clickedId": (str,), "sg_pos": (str,)}
NODE = {"node_id": (str,), "feature": (int,), "layer": (str,), "ctx_idx": (int,), "feature_type": (str,),
        "token_prob": (float,), "is_target_logit": (bool,), "run_idx": (int,), "reverse_ctx_idx": (int,),
        "jsNodeId": (str,), "clerp": (str,), "influence": (float, type(None)), "activation": (float, type(None))}
LINK = {"source": (str,), "target": (str,), "weight": (float,)}


def _fields(obj, schema, what):
    assert set(obj) >= set(schema), f"{what} lacks {set(schema) - set(obj)}"
    for k, types in schema.items():
        assert isinstance(obj[k], types), f"{what}.{k} is {type(obj[k]).__name__}"


def test_json_follows_circuit_tracers_schema(circuit_model):
    m = circuit_model
    nL = m.config.n_layer
    tcs = [random_transcoder(L, m.config.n_embd, 64, k=6, seed=L) for L in range(nL)]
    prompt = "The capital of France is"
    g = build_graph(m, tcs, prompt)
    pruned = prune(g)
    out = json.loads(json.dumps(graph_json(g, pruned, m.tokenizer, prompt=prompt, slug="t")))
    assert set(out) == {"metadata", "qParams", "nodes", "links"}
    _fields(out["metadata"], METADATA, "metadata")
    assert out["metadata"]["prompt_tokens"] == [m.tokenizer.token_text(t) for t in g.tokens]
    _fields(out["qParams"], QPARAMS, "qParams")
    ids = set()
    kinds = {}
    for n in out["nodes"]:
        _fields(n, NODE, "node")
        ids.add(n["node_id"])
        kinds.setdefault(n["feature_type"], []).append(n)
    assert len(ids) == len(out["nodes"])
    assert set(kinds) <= {"cross layer transcoder", "mlp reconstruction error", "embedding", "logit"}
    assert len(kinds["embedding"]) == g.n_pos and len(kinds["logit"]) == len(g.logit_tokens)
    for n in kinds["embedding"]:
        assert n["layer"] == "E" and n["node_id"] == f"E_{g.tokens[n['ctx_idx']]}_{n['ctx_idx']}"
    logits = kinds["logit"]
    assert all(n["layer"] == str(nL + 1) and n["ctx_idx"] == g.n_pos - 1 for n in logits)
    assert [n["is_target_logit"] for n in logits].count(True) == 1
    assert sum(n["token_prob"] for n in logits) <= 1.0
    for n in kinds.get("cross layer transcoder", []):
        L, f, p = (int(v) for v in n["node_id"].split("_"))
        assert n["feature"] == (L + f) * (L + f + 1) // 2 + f and n["jsNodeId"] == f"{L}_{f}-0"
        assert n["activation"] > 0
    for n in kinds.get("mlp reconstruction error", []):
        assert re.fullmatch(r"\d+_-1_\d+", n["node_id"]) and n["feature"] == -1
    # every link joins listed nodes and carries the graph's own edge weight
    index = {}
    for i in range(g.adjacency.shape[0]):
        if i < g.n_features:
            L, p, f = g.active_features[i]
            index[f"{L}_{f}_{p}"] = i
        elif i < g.token_slice.start:
            L, p = divmod(i - g.n_features, g.n_pos)
            index[f"{L}_-1_{p}"] = i
        elif i < g.logit_slice.start:
            p = i - g.token_slice.start
            index[f"E_{g.tokens[p]}_{p}"] = i
        else:
            index[f"{nL + 1}_{g.logit_tokens[i - g.logit_slice.start]}_{g.n_pos - 1}"] = i
    assert out["links"]
    for lk in out["links"]:
        _fields(lk, LINK, "link")
        assert lk["source"] in ids and lk["target"] in ids
        assert lk["weight"] == g.adjacency[index[lk["target"]], index[lk["source"]]] != 0
    assert len(out["links"]) == int(pruned.edge_mask.sum())
    assert np.isclose(sum(1 for n in out["nodes"] if n["feature_type"] == "cross layer transcoder"),
                      len(kinds.get("cross layer transcoder", [])))
