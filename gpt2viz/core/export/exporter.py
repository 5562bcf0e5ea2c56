"""`gpt2viz export`: a GPT-2 checkpoint -> a validated gpt2viz model folder.

Steps: resolve the source (local folder or model-hub id, safetensors only) -> load it in
transformers with eager attention -> optimum's ONNX export with the KV cache -> expose every hook
(`surgery`) -> check every hook against transformers, from scratch and as a cached step -> write
`tokenizer.json` and the manifest -> move the finished folder into place. Nothing is left at the
destination unless validation passed.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata as md
import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx

from gpt2viz.core.engine.model import Model
from gpt2viz.core.graph.surgery import GraphStructureError, add_interventions, expose_hooks
from gpt2viz.core.hooks import hook_shapes
from gpt2viz.core.model_folder.manifest import (
    DATA_FILE,
    FORMAT,
    FORMAT_VERSION,
    MANIFEST,
    MODEL_FILE,
    TOKENIZER_FILE,
    sha256_file,
)
from gpt2viz.core.model_folder.tokenizer import GPT2Tokenizer, build_gpt2_tokenizer

# Prompt of the export-time check; any tokenizer of a GPT-2 fine-tune encodes it.
VALIDATION_PROMPT = "The capital of France is"
TOLERANCE = 1e-4  # max |onnx - torch| / max |torch|, per hook
TWO_GB = 2 * 1024**3


class ExportError(RuntimeError):
    """The export could not be made, or did not match transformers."""


Progress = Callable[[str], None]


def _versions() -> dict[str, str]:
    out = {}
    for pkg in ("gpt2viz", "torch", "transformers", "optimum", "optimum-onnx", "onnx", "onnxruntime", "tokenizers"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    return out


def resolve_source(source: str, progress: Progress = print) -> Path:
    """A local checkpoint folder, or a model-hub id downloaded (safetensors and tokenizer files only)."""
    local = Path(source).expanduser()
    if local.exists():
        if not local.is_dir():
            raise ExportError(f"{source} is a file; give the checkpoint folder that holds config.json")
        return local
    if source.startswith((".", "/", "~")) or source.count("/") > 1:
        raise ExportError(f"{source}: no such folder")
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise ExportError("downloading needs huggingface_hub: pip install 'gpt2viz[export]'") from None
    progress(f"download: {source} (safetensors weights and tokenizer files)")
    try:
        path = snapshot_download(source, allow_patterns=["config.json", "*.safetensors", "tokenizer.json",
                                                         "vocab.json", "merges.txt", "generation_config.json"])
    except Exception as e:  # the hub client raises many types: offline, 404, gated, ...
        raise ExportError(f"could not download {source} from the model hub: {type(e).__name__}: {e}. "
                          "Without network, download the checkpoint elsewhere and pass its folder.") from None
    return Path(path)


def load_checkpoint(folder: Path):
    """Load a transformers GPT-2 with eager attention from safetensors (never a pickle)."""
    import transformers  # the [export] extra, imported only when a checkpoint is loaded

    if not (folder / "config.json").is_file():
        raise ExportError(f"{folder} has no config.json: not a transformers checkpoint")
    if not any(folder.glob("*.safetensors")):
        raise ExportError(f"{folder} has no .safetensors weights; gpt2viz never unpickles a .bin checkpoint. "
                          "Convert it with transformers: model.save_pretrained(dir, safe_serialization=True)")
    cfg = transformers.AutoConfig.from_pretrained(folder)
    if cfg.model_type != "gpt2":
        raise ExportError(f"{folder} holds a {cfg.model_type!r} model; gpt2viz shows GPT-2 models")
    # eager attention: sdpa has no attention weights to expose and returns None for them.
    model = transformers.GPT2LMHeadModel.from_pretrained(folder, use_safetensors=True,
                                                         attn_implementation="eager")
    return model.eval()


def load_tokenizer_json(folder: Path, out: Path) -> None:
    """Write the checkpoint's tokenizer as tokenizer.json (from vocab.json + merges.txt if needed)."""
    if (folder / "tokenizer.json").is_file():
        shutil.copyfile(folder / "tokenizer.json", out)
    elif (folder / "vocab.json").is_file() and (folder / "merges.txt").is_file():
        build_gpt2_tokenizer(folder / "vocab.json", folder / "merges.txt").save(str(out))
    else:
        raise ExportError(f"{folder} has no tokenizer.json, nor vocab.json + merges.txt")


def compare(onnx_hooks: dict[str, np.ndarray], ref_hooks: dict[str, np.ndarray]) -> dict[str, dict]:
    """Per hook: max abs difference and that difference relative to the reference's scale."""
    out = {}
    for name, ref in ref_hooks.items():
        got = onnx_hooks[name]
        if got.shape != ref.shape:
            raise ExportError(f"{name}: onnx shape {got.shape} != transformers shape {ref.shape}")
        diff = float(np.max(np.abs(got.astype(np.float64) - ref))) if ref.size else 0.0
        scale = float(np.max(np.abs(ref))) if ref.size else 0.0
        out[name] = {"max_abs_diff": diff, "relative": diff / max(scale, 1e-12)}
    return out


def validate(folder: Path, torch_model, token_ids: list[int]) -> dict:
    """Run the exported folder and transformers on a prompt and on a cached step; compare every hook.

    Returns the manifest's validation record; raises ExportError when a hook is off by more than
    TOLERANCE relative to its scale.
    """
    # the oracle imports torch (the [export] extra): only an export or an upgrade loads it
    from gpt2viz.core.export.reference import reference_hooks

    model = Model(folder, verify=False)
    trace, cache = model.run(token_ids, keep_all_logits=True)
    ref, ref_cache = reference_hooks(torch_model, np.asarray([token_ids]))
    prefill = compare({k: v[None] for k, v in trace.hooks.items()}, ref)
    for L, ((k, v), (rk, rv)) in enumerate(zip(cache.layers, ref_cache)):
        prefill.update(compare({f"present.{L}.key": k, f"present.{L}.value": v},
                               {f"present.{L}.key": rk, f"present.{L}.value": rv}))
    nxt = [int(np.argmax(trace.last_logits))]
    trace2, _ = model.run(nxt, cache, keep_all_logits=True)
    ref2, _ = reference_hooks(torch_model, np.asarray([nxt]), [(k, v) for k, v in cache.layers])
    step = compare({k: v[None] for k, v in trace2.hooks.items()}, ref2)
    worst = max([*prefill.items(), *step.items()], key=lambda kv: kv[1]["relative"])
    record = {
        "prompt_ids": token_ids, "step_id": nxt[0], "tolerance_relative": TOLERANCE,
        "max_relative": worst[1]["relative"], "worst_hook": worst[0],
        "prefill_max_abs_diff": {k: v["max_abs_diff"] for k, v in prefill.items()},
        "cached_step_max_abs_diff": {k: v["max_abs_diff"] for k, v in step.items()},
    }
    if worst[1]["relative"] > TOLERANCE:
        raise ExportError(f"validation failed: {worst[0]} differs from transformers by "
                          f"{worst[1]['max_abs_diff']:.3g} ({worst[1]['relative']:.3g} of its scale, "
                          f"tolerance {TOLERANCE})")
    return record


def export_model(source: str, out: Path, *, name: str | None = None, force: bool = False,
                 progress: Progress = print) -> Path:
    """Export ``source`` (checkpoint folder or hub id) into the model folder ``out``.

    Raises ExportError with a one-line reason; leaves ``out`` untouched unless everything passed.
    """
    # the [export] extra: torch and optimum are imported only when a model is exported
    import torch
    from optimum.exporters.onnx import onnx_export_from_model

    out = Path(out).expanduser().resolve()
    if out.exists() and any(out.iterdir()) and not force:
        raise ExportError(f"{out} exists and is not empty (use --force to replace it)")
    src = resolve_source(source, progress)
    progress(f"load: {src}")
    torch_model = load_checkpoint(src)
    cfg = torch_model.config
    n_params = sum(p.numel() for p in torch_model.parameters())  # tied wte/lm_head counted once
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    try:
        progress(f"export: optimum ONNX export of {n_params:,} parameters (text-generation-with-past)")
        raw = work / "optimum"
        with torch.no_grad():
            # Tracing shapes must fit in n_positions (past + new tokens), or eager GPT-2's causal-mask
            # buffer does not broadcast; the exported graph itself has dynamic axes.
            seq = max(2, min(8, cfg.n_positions // 4))
            onnx_export_from_model(torch_model, raw, task="text-generation-with-past", do_validation=False,
                                   sequence_length=seq)
        progress("export: exposing every hook as a graph output")
        graph = onnx.load(str(raw / MODEL_FILE), load_external_data=True)
        d_mlp = cfg.n_inner or 4 * cfg.n_embd
        dims = {"H": cfg.n_head, "D": cfg.n_embd // cfg.n_head, "E": cfg.n_embd, "M": d_mlp, "V": cfg.vocab_size}
        try:
            tensors = expose_hooks(graph, cfg.n_layer, dims)
            iv_inputs = add_interventions(graph, cfg.n_layer)
        except GraphStructureError as e:
            raise ExportError(f"unexpected graph structure: {e}") from None
        weight_bytes = sum(int(np.prod(t.dims)) * 4 for t in graph.graph.initializer)
        final = work / "final"
        final.mkdir()
        if weight_bytes > TWO_GB - (64 << 20):
            onnx.save_model(graph, str(final / MODEL_FILE), save_as_external_data=True,
                            all_tensors_to_one_file=True, location=DATA_FILE)
        else:
            onnx.save_model(graph, str(final / MODEL_FILE))
        del graph
        shutil.rmtree(raw)
        load_tokenizer_json(src, final / TOKENIZER_FILE)
        tok = GPT2Tokenizer.from_file(final / TOKENIZER_FILE)
        ids = [t for t in tok.encode(VALIDATION_PROMPT) if t < cfg.vocab_size][: cfg.n_positions - 1]
        config = {"n_layer": cfg.n_layer, "n_head": cfg.n_head, "n_embd": cfg.n_embd,
                  "n_positions": cfg.n_positions, "vocab_size": cfg.vocab_size, "d_mlp": d_mlp,
                  "layer_norm_epsilon": cfg.layer_norm_epsilon, "activation_function": cfg.activation_function}

        manifest = {
            "format": FORMAT, "format_version": FORMAT_VERSION,
            "name": name or out.name, "source": source,
            "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "config": config, "n_params": n_params,
            "hooks": hook_shapes(cfg.n_layer), "hook_tensors": tensors, "interventions": iv_inputs,
            "files": {f.name: sha256_file(f) for f in sorted(final.iterdir()) if f.name in (MODEL_FILE, DATA_FILE)},
            "exporter": _versions(),
        }

        (final / MANIFEST).write_text(json.dumps(manifest, indent=1))
        progress(f"validate: every hook against transformers, prefill of {len(ids)} tokens and one cached step")
        manifest["validation"] = validate(final, torch_model, ids)
        (final / MANIFEST).write_text(json.dumps(manifest, indent=1))
        progress(f"validate: worst hook {manifest['validation']['worst_hook']} at "
                 f"{manifest['validation']['max_relative']:.2e} of its scale (tolerance {TOLERANCE})")
        if out.exists():
            shutil.rmtree(out)
        final.rename(out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    progress(f"done: {out}")
    return out
