import numpy as np
import torch

from gpt2viz.core.analysis import logit_lens, residual_stack, token_rank_and_prob
from gpt2viz.core.runtime import Model
from gpt2viz.core.weights import Weights


def test_lens_last_layer_equals_model_logits(exported):
    for name in ("l2h2e16", "l3h4e32"):
        model = Model(exported[name])
        trace, _ = model.run([464, 3139, 286, 4881, 318])
        w = Weights(model.folder / "model.onnx", model.manifest["config"]["layer_norm_epsilon"])
        lens = logit_lens(trace, w, model.config.n_layer)
        assert lens.shape == (model.config.n_layer + 1, 50257)
        scale = np.abs(trace.last_logits).max()
        assert np.abs(lens[-1] - trace.last_logits).max() <= 1e-4 * scale


def test_weights_are_the_checkpoints(exported, torch_models):
    w = Weights(exported["l3h4e32"] / "model.onnx")
    sd = torch_models["l3h4e32"].state_dict()
    for name in ("transformer.wte.weight", "transformer.wpe.weight", "transformer.ln_f.weight"):
        np.testing.assert_array_equal(w.get(name), sd[name].numpy())


def test_residual_stack_and_ranks(tiny_model_dir):
    model = Model(tiny_model_dir)
    trace, _ = model.run([1, 2, 3])
    labels, stack = residual_stack(trace, 2, position=1)
    assert labels == ["embed", "block 0", "block 1"]
    np.testing.assert_allclose(stack[0], trace["hook_embed"][1] + trace["hook_pos_embed"][1], atol=1e-6)
    logits = np.array([[0.0, 2.0, 1.0], [3.0, 2.0, 1.0]])
    ranks, probs = token_rank_and_prob(logits, 1)
    assert ranks.tolist() == [0, 1]
    np.testing.assert_allclose(probs[1], torch.softmax(torch.tensor(logits[1]), 0)[1].item())
