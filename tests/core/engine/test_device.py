import numpy as np
import onnxruntime as ort
import pytest

from gpt2viz.core.engine.device import CPU, CUDA, DeviceError, providers_for
from gpt2viz.core.engine.model import Model
from gpt2viz.core.engine.weights import Weights
from gpt2viz.core.export.exporter import TOLERANCE
from gpt2viz.core.model_folder.locations import resolve_model

HAS_CUDA = CUDA in ort.get_available_providers()


def test_cpu_is_the_cpu_provider_alone():
    assert providers_for("cpu") == [CPU]
    assert providers_for() == [CPU]


def test_cuda_comes_first_with_the_cpu_after_it_and_float32_kept_exact():
    got = providers_for("cuda", available=[CUDA, CPU])
    assert got[0] == (CUDA, {"use_tf32": "0"}) and got[1:] == [CPU]


def test_cuda_without_its_provider_says_why_in_one_line():
    with pytest.raises(DeviceError) as e:
        providers_for("cuda", available=[CPU])
    msg = str(e.value)
    assert "\n" not in msg and "CUDA execution provider" in msg and "onnxruntime-gpu" in msg


def test_an_unknown_device_is_refused():
    with pytest.raises(DeviceError, match="cpu, cuda"):
        providers_for("tpu")


@pytest.mark.skipif(HAS_CUDA, reason="onnxruntime has a CUDA provider here: the refusal cannot happen")
def test_model_on_cuda_is_refused_before_reading_the_folder(tmp_path):
    with pytest.raises(DeviceError):
        Model(tmp_path / "missing", device="cuda")


@pytest.mark.skipif(not HAS_CUDA, reason="onnxruntime has no CUDA execution provider here")
def test_every_hook_on_cuda_matches_the_cpu_run():
    """The model's own numbers on the GPU: every hook of a prefill and of a cached step, the KV cache and the
    logit lens equal the CPU run's within the export's tolerance (relative to each hook's scale)."""
    folder = resolve_model("atlas")
    cpu, gpu = Model(folder, device="cpu"), Model(folder, device="cuda")
    assert gpu.session.get_providers()[0] == CUDA
    ids = cpu.tokenizer.encode("The capital of France is")

    def close(name, got, ref):
        ref = np.asarray(ref, np.float64)
        scale = max(float(np.abs(ref).max()), 1e-12)
        err = float(np.abs(np.asarray(got, np.float64) - ref).max()) / scale
        assert err <= TOLERANCE, f"{name}: {err:.2e} of scale"

    ref_trace, ref_cache = cpu.run(ids)
    got_trace, got_cache = gpu.run(ids)
    for name in cpu.hook_names:
        if name in ref_trace:
            close(name, got_trace[name], ref_trace[name])
    close("last_logits", got_trace.last_logits, ref_trace.last_logits)
    nxt = [int(np.argmax(ref_trace.last_logits))]
    ref_step, _ = cpu.run(nxt, ref_cache)
    got_step, _ = gpu.run(nxt, got_cache)
    for name in cpu.hook_names:
        if name in ref_step:
            close("step " + name, got_step[name], ref_step[name])
    # interventions run the other graph (its own session): zero one head on both devices
    from gpt2viz.core.interventions import HeadAblation

    iv = (HeadAblation(layer=0, head=0),)
    close("ablated logits", gpu.run_with_hooks(ids, iv), cpu.run_with_hooks(ids, iv))
    resid = ref_trace["blocks.0.hook_resid_post"][-1:]
    close("lens", Weights.of(gpu).lens(resid), Weights.of(cpu).lens(resid))
