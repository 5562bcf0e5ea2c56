"""SAELens' folder format: what gpt2viz writes is read back unchanged and by an independent reader of the documented
format (SAELens itself would upgrade transformers past the export pin, so it is not installed); older cfg.json keys
and bfloat16 weights are read; folders that do not fit the model are refused in one line."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from gpt2viz.core.features.sae import SAE, SAEConfig, SAEError, check_fits
from gpt2viz.core.features.saelens_folder import read_sae, write_sae


def random_sae(arch: str, d_in: int = 32, d_sae: int = 64, hook: str = "blocks.1.hook_resid_pre", seed: int = 0,
               **cfg) -> SAE:
    rng = np.random.default_rng(seed)
    c = SAEConfig(d_in=d_in, d_sae=d_sae, architecture=arch, hook_name=hook, k=8 if arch == "topk" else None,
                  metadata={"model_name": "tiny", "context_size": 16}, **cfg)
    th = rng.uniform(0, 0.5, d_sae) if arch == "jumprelu" else None
    return SAE(c, rng.normal(size=(d_in, d_sae)), rng.normal(size=(d_sae, d_in)), rng.normal(size=d_sae),
               rng.normal(size=d_in), th, sparsity=np.log10(rng.uniform(1e-4, 1, d_sae)))


def independent_read(path) -> dict[str, np.ndarray]:
    """safetensors by its documented layout: u64 little-endian header size, JSON header, raw little-endian data."""
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, v in header.items():
        if name == "__metadata__":
            continue
        assert v["dtype"] == "F32"
        s, e = v["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + s:8 + n + e], dtype="<f4").reshape(v["shape"])
    return out


@pytest.mark.parametrize("arch", ["standard", "jumprelu", "topk"])
def test_written_folder_round_trips_and_matches_the_documented_format(arch, tmp_path):
    sae = random_sae(arch)
    folder = write_sae(sae, tmp_path / "sae")
    back = read_sae(folder)
    assert back.cfg == sae.cfg
    for name in ("W_enc", "W_dec", "b_enc", "b_dec", "threshold", "sparsity"):
        a, b = getattr(sae, name), getattr(back, name)
        assert (a is None and b is None) or np.array_equal(a, b), name

    # what SAELens 6 reads (SAEConfig.from_dict + the state dict), checked without gpt2viz's reader
    cfg = json.loads((folder / "cfg.json").read_text())
    assert cfg["d_in"] == 32 and cfg["d_sae"] == 64 and cfg["architecture"] == arch
    assert cfg["apply_b_dec_to_input"] is True and cfg["normalize_activations"] == "none"
    assert cfg["metadata"]["hook_name"] == "blocks.1.hook_resid_pre" and cfg["metadata"]["hook_head_index"] is None
    assert cfg["metadata"]["model_name"] == "tiny" and cfg["dtype"] == "float32"
    assert ("k" in cfg) == (arch == "topk") and cfg.get("k", 8) == 8
    t = independent_read(folder / "sae_weights.safetensors")
    want = {"W_enc": (32, 64), "W_dec": (64, 32), "b_enc": (64,), "b_dec": (32,)}
    if arch == "jumprelu":
        want["threshold"] = (64,)
    assert {k: v.shape for k, v in t.items()} == want
    sp = independent_read(folder / "sparsity.safetensors")
    np.testing.assert_array_equal(sp["sparsity"], sae.sparsity)
    assert all((folder / n).stat().st_mode & 0o044 for n in ("sae_weights.safetensors", "sparsity.safetensors"))
    # the formula on the independently read tensors equals gpt2viz's encode
    x = np.random.default_rng(1).normal(size=(5, 32)).astype(np.float32)
    h = (x - t["b_dec"]) @ t["W_enc"] + t["b_enc"]
    if arch == "standard":
        f = np.maximum(h, 0)
    elif arch == "jumprelu":
        f = np.where(h > t["threshold"], np.maximum(h, 0), 0)
    else:
        f = np.where(h >= np.sort(h, axis=1)[:, -8:-7], np.maximum(h, 0), 0)
    np.testing.assert_allclose(back.encode(x), f, rtol=1e-5, atol=1e-5)


def test_older_cfg_keys_are_read(tmp_path):
    sae = random_sae("topk", d_in=8, d_sae=16, hook="blocks.0.attn.hook_z")
    folder = write_sae(sae, tmp_path / "old")
    old = {"d_in": 8, "d_sae": 16, "hook_point": "blocks.0.attn.hook_z", "hook_point_layer": 0,
           "hook_point_head_index": 2, "activation_fn_str": "topk", "activation_fn_kwargs": {"k": 4},
           "model_name": "gpt2", "dtype": "torch.float32"}
    (folder / "cfg.json").write_text(json.dumps(old))
    back = read_sae(folder)
    c = back.cfg
    assert (c.hook_name, c.hook_head_index, c.architecture, c.k) == ("blocks.0.attn.hook_z", 2, "topk", 4)
    assert c.apply_b_dec_to_input and c.normalize_activations == "none" and c.extra["model_name"] == "gpt2"


def test_bfloat16_weights_are_widened(tmp_path):
    torch = pytest.importorskip("torch")
    from safetensors.torch import save_file

    sae = random_sae("standard", d_in=8, d_sae=16)
    folder = write_sae(sae, tmp_path / "bf16")
    tensors = {k: torch.from_numpy(getattr(sae, k)).to(torch.bfloat16) for k in ("W_enc", "W_dec", "b_enc", "b_dec")}
    save_file(tensors, str(folder / "sae_weights.safetensors"))
    back = read_sae(folder)
    for k, v in tensors.items():
        np.testing.assert_array_equal(getattr(back, k), v.float().numpy())
    assert not np.array_equal(back.W_enc, sae.W_enc)  # really rounded: the file was rewritten


def test_folders_that_do_not_fit_are_refused_in_one_line(tiny_model, tmp_path):
    cfg = tiny_model.config  # 3 layers, 4 heads of 8, width 32, MLP 48
    ok = [random_sae("topk", 32), random_sae("topk", 48, hook="blocks.2.mlp.hook_post"),
          random_sae("topk", 32, hook="blocks.0.attn.hook_z"), random_sae("topk", 8, hook="blocks.0.attn.hook_z",
                                                                          hook_head_index=3)]
    for sae in ok:
        check_fits(sae, cfg)
    bad = {"d_in is 64, but blocks.1.hook_resid_pre is 32 wide": random_sae("topk", 64),
           "the model has blocks 0..2": random_sae("topk", 32, hook="blocks.7.hook_resid_pre"),
           "not one of the model's hooks": random_sae("topk", 32, hook="blocks.1.hook_nonsense"),
           "not one vector per position": random_sae("topk", 4, hook="blocks.0.attn.hook_pattern"),
           "heads 0..3": random_sae("topk", 8, hook="blocks.0.attn.hook_z", hook_head_index=4)}
    for msg, sae in bad.items():
        with pytest.raises(SAEError, match=msg) as e:
            check_fits(sae, cfg)
        assert "\n" not in str(e.value)


def test_unreadable_folders_are_refused_in_one_line(tmp_path):
    (tmp_path / "pt").mkdir()
    (tmp_path / "pt" / "cfg.json").write_text(json.dumps({"d_in": 4, "d_sae": 8, "hook_point": "blocks.0.hook_resid_pre"}))
    (tmp_path / "pt" / "sae_weights.pt").write_bytes(b"not read")
    with pytest.raises(SAEError, match="safetensors only"):
        read_sae(tmp_path / "pt")
    with pytest.raises(SAEError, match="no cfg.json"):
        read_sae(tmp_path)
    folder = write_sae(random_sae("standard", 8, 16), tmp_path / "norm")
    cfg = json.loads((folder / "cfg.json").read_text())
    for how, msg in (("expected_average_only_in", "scaling factor is not stored"), ("whatever", "not supported")):
        (folder / "cfg.json").write_text(json.dumps({**cfg, "normalize_activations": how}))
        with pytest.raises(SAEError, match=msg):
            read_sae(folder)
    (folder / "cfg.json").write_text(json.dumps({**cfg, "d_sae": 17}))
    with pytest.raises(SAEError, match="W_enc is \\[8, 16\\]; cfg.json's d_in 8 and d_sae 17"):
        read_sae(folder)
    with pytest.raises(SAEError, match="exists"):
        write_sae(random_sae("standard", 8, 16), folder)
