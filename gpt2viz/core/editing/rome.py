"""ROME (Meng et al., 2022): change one fact by a rank-one update of one MLP's output weight.

The fact is (subject, relation prompt, target): after the edit, the prompt that names the subject should
continue with the new target. The MLP at ``layer`` is read as a key-value memory: its down-projection maps
the key k (``mlp.hook_post``, the input of the down-projection) at the subject's last token to a value
written into the residual stream. ROME finds

- k*: the key at the subject's last token, averaged over the prompt and ~20 short prefixes the model
  itself generates (seeded), so the edit does not depend on the words just before the subject;
- u = C^-1 k*, with C = E[k k^T] the keys' second moment over a text (identity when none is given: ROME's
  ``mom2_adjustment`` off), so the update disturbs other keys little;
- v*: the value that makes the new target likely, found by Adam on a vector added to the MLP output at
  the subject's last token: NLL of the target (under every prefix) + a KL term that keeps the model's
  distribution after "{subject} is a" close to the original (the subject's essence) + a weight decay,
  with the vector's norm clamped to ``clamp`` times the original value's norm;
- the update W += u (v* - W k)^T / (k^T u) for the down-projection weight W [M, E] (GPT-2's Conv1D layout),
  with k, W k the edited prompt's own key and value (ROME's ``compute_v``: the prompt itself reaches v*).

Keys, C and every number after the edit come from onnxruntime; only the optimisation of v* runs in torch
(transformers' GPT-2 loaded with the folder's own weights; the ``[export]`` extra), because it needs
gradients.
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from gpt2viz.core.engine.errors import Cancelled
from gpt2viz.core.generation.sampling import SamplingSettings
from gpt2viz.core.generation.stepper import Generator
from gpt2viz.core.hooks import block_hook
from gpt2viz.core.interventions import InterventionError, RankOneEdit

# ROME's hyperparameters for GPT-2 (hparams/ROME/gpt2-*.json)
STEPS = 20
LR = 0.5
WEIGHT_DECAY = 0.5
KL_FACTOR = 0.0625
CLAMP = 4.0
PREFIXES = ((5, 10), (10, 10))  # (tokens, how many): ROME's context_template_length_params
KL_PROMPT = "{} is a"


# Per opened model: the torch copy (read once from the file) and each layer's key statistics over a text
# (the same for every edit of that layer): a series of edits computes them once.
_TORCH: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_MOMENTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_PREFIXES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # per model and seed (ROME makes them once)


class EditError(InterventionError):
    """An edit request that cannot be made (subject not in the prompt, empty target, ...)."""


@dataclass(frozen=True)
class EditRequest:
    """One fact to change: ``prompt`` names ``subject`` (a substring, e.g. " France") and should continue with
    ``target`` (e.g. " Rome")."""

    prompt: str
    subject: str
    target: str


@dataclass(frozen=True)
class EditResult:
    """A computed edit and the numbers that made it.

    Attributes
    ----------
    edit : RankOneEdit
        The intervention (``u`` = C^-1 k* scaled, ``v`` = (v* - W k) / (k . u)).
    layer : int
    u_norm, v_star_norm, delta_norm : float
        Norms of C^-1 k* (u is that, made a unit vector), of the target value v*, and of v* - W k (what the
        layer's output moves by at the edited prompt).
    covariance : str
        "text" when C was estimated from text (``stats_tokens`` tokens), "identity" otherwise.
    stats_tokens : int
    losses : tuple of float
        The optimisation's loss per step (NLL + KL + decay).
    prefixes : tuple of str
        The generated prefixes (the first is empty: the prompt itself).
    v_star, key : np.ndarray
        v* [E], the MLP output the edited prompt's subject gets, and k [M], that position's key.
    """

    edit: RankOneEdit
    layer: int
    u_norm: float
    v_star_norm: float
    delta_norm: float
    covariance: str
    stats_tokens: int
    losses: tuple[float, ...]
    prefixes: tuple[str, ...]
    v_star: np.ndarray
    key: np.ndarray


def subject_last_index(tokenizer, prefix: str, prompt: str, subject: str) -> int:
    """Index of the subject's last token in ``prefix + prompt`` (the subject's last occurrence in the prompt)."""
    at = prompt.rfind(subject)
    if not subject or at < 0:
        raise EditError(f"the subject {subject!r} does not occur in the prompt {prompt!r}")
    return len(tokenizer.encode(prefix + prompt[: at + len(subject)])) - 1


def generate_prefixes(model, seed: int, cancel: Callable[[], bool] | None = None) -> tuple[str, ...]:
    """"" and ROME's ~20 short texts the model writes from ``<|endoftext|>`` (seeded), each ending in ". "."""
    out = [""]
    eot = model.tokenizer.eot_id
    for length, count in PREFIXES:
        for i in range(count):
            if cancel is not None and cancel():
                raise Cancelled("cancelled")
            gen = Generator(model, hooks=())
            gen.start([] if eot is None else [eot])
            settings = SamplingSettings(temperature=1.0, top_k=5, seed=seed * 1000 + length * 100 + i)
            for _ in range(length):
                gen.step(settings)
            text = model.tokenizer.decode(list(gen.tokens[1:])).replace("{", " ").replace("}", " ")
            out.append(text.strip() + ". ")
    return tuple(out)


def keys_at(model, layer: int, texts: Sequence[str], indices: Sequence[int]) -> np.ndarray:
    """[N, M] ``mlp.hook_post`` of block ``layer`` at ``indices[i]`` of ``texts[i]`` (onnxruntime)."""
    name = block_hook(layer, "mlp.hook_post")
    rows = []
    for text, i in zip(texts, indices):
        trace, _ = model.run(model.tokenizer.encode(text), hooks=[name])
        rows.append(np.asarray(trace[name][i], np.float64))
    return np.stack(rows)


def second_moment(model, layer: int, texts: Sequence[str], max_tokens: int = 20_000,
                  cancel: Callable[[], bool] | None = None) -> tuple[np.ndarray, int]:
    """C = E[k k^T] of block ``layer``'s keys over ``texts`` (at most ``max_tokens`` positions), and the count."""
    name = block_hook(layer, "mlp.hook_post")
    M = model.config.d_mlp
    acc, n = np.zeros((M, M)), 0
    window = min(model.config.n_positions, 128)
    for text in texts:
        ids = model.tokenizer.encode(text)
        for s in range(0, len(ids), window):
            if cancel is not None and cancel():
                raise Cancelled("cancelled")
            piece = ids[s:s + window]
            if not piece:
                continue
            trace, _ = model.run(piece, hooks=[name])
            k = np.asarray(trace[name], np.float64)
            acc += k.T @ k
            n += len(k)
            if n >= max_tokens:
                return acc / n, n
    return (acc / n, n) if n else (np.eye(M), 0)


def torch_gpt2(model):
    """transformers' GPT-2 with the folder's own weights (read from its ONNX file), eval mode, float32.

    Only for the optimisation of v*, which needs gradients; the numbers shown come from onnxruntime.
    """
    # the [export] extra: torch and transformers are imported only when an edit is computed
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from gpt2viz.core.engine.weights import Weights

    c = model.config
    extra = model.manifest["config"]
    cfg = GPT2Config(n_layer=c.n_layer, n_head=c.n_head, n_embd=c.n_embd, n_positions=c.n_positions,
                     vocab_size=c.vocab_size, n_inner=c.d_mlp,
                     layer_norm_epsilon=extra.get("layer_norm_epsilon", 1e-5),
                     activation_function=extra.get("activation_function", "gelu_new"),
                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    tm = GPT2LMHeadModel(cfg).eval()
    w = Weights.of(model)
    params = dict(tm.named_parameters())
    with torch.no_grad():
        for name, p in params.items():
            if name == "lm_head.weight":  # tied to the token embedding
                continue
            p.copy_(torch.from_numpy(np.array(w.get(name), dtype=np.float32)).reshape(p.shape))
    tm.tie_weights()
    for p in tm.parameters():
        p.requires_grad_(False)
    return tm


def compute_edit(model, request: EditRequest, layer: int, *, stats_texts: Sequence[str] = (), seed: int = 0,
                 steps: int = STEPS, lr: float = LR, weight_decay: float = WEIGHT_DECAY, kl_factor: float = KL_FACTOR,
                 clamp: float = CLAMP, progress: Callable[[int, int], None] | None = None,
                 cancel: Callable[[], bool] | None = None) -> EditResult:
    """ROME's edit of ``request`` at block ``layer`` (see the module's docstring for each step).

    ``stats_texts`` give C; empty: the identity (said in the result's ``covariance``). ``progress(done, total)``
    after each stage and optimisation step; ``cancel()`` is polled between them (raises ``Cancelled``).
    """
    import torch  # the [export] extra (see torch_gpt2)

    tok, cfg = model.tokenizer, model.config
    if not 0 <= layer < cfg.n_layer:
        raise EditError(f"layer {layer} is out of range: the model has layers 0..{cfg.n_layer - 1}")
    target_ids = tok.encode(request.target)
    if not target_ids:
        raise EditError("the new target is empty")
    subject_last_index(tok, "", request.prompt, request.subject)  # the subject must be in the prompt
    total = steps + 4
    done = 0

    def tick():
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)
        if cancel is not None and cancel():
            raise Cancelled("cancelled")

    made = _PREFIXES.setdefault(model, {})
    if seed not in made:
        made[seed] = generate_prefixes(model, seed, cancel)
    prefixes = made[seed]
    tick()
    texts = [p + request.prompt for p in prefixes]
    idx = [subject_last_index(tok, p, request.prompt, request.subject) for p in prefixes]
    k_star = keys_at(model, layer, texts, idx).mean(axis=0)
    tick()
    if stats_texts:
        digest = hashlib.sha256("\x00".join(stats_texts).encode("utf-8")).hexdigest()
        known = _MOMENTS.setdefault(model, {})
        if (layer, digest) not in known:
            known[(layer, digest)] = second_moment(model, layer, stats_texts, cancel=cancel)
        C, n_stats = known[(layer, digest)]
        # ROME inverts C as is; a small ridge keeps it invertible when the text is short or a key never fires
        raw = np.linalg.solve(C + 1e-4 * np.trace(C) / len(C) * np.eye(len(C)), k_star)
        covariance = "text"
    else:
        raw, n_stats, covariance = k_star.copy(), 0, "identity"
    u_norm = float(np.linalg.norm(raw))
    u = raw / u_norm  # ROME keeps u a unit vector; the right vector carries the scale
    tick()

    # v*: Adam on a vector added to block ``layer``'s MLP output at the subject's last token
    if model not in _TORCH:
        _TORCH[model] = torch_gpt2(model)
    tm = _TORCH[model]
    mlp = tm.transformer.h[layer].mlp
    rewrite = [tok.encode(t) for t in texts]
    kl_text = KL_PROMPT.format(request.subject.strip())
    kl_ids = tok.encode(kl_text)
    kl_index = subject_last_index(tok, "", kl_text, request.subject.strip())
    rows = [ids + target_ids[:-1] for ids in rewrite] + [kl_ids]
    where = idx + [kl_index]
    width = max(len(r) for r in rows)
    batch = torch.zeros((len(rows), width), dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        batch[i, : len(r)] = torch.tensor(r)
        mask[i, : len(r)] = 1
    delta = torch.zeros(cfg.n_embd, requires_grad=True)

    def add_delta(_module, _inputs, output):
        out = output.clone()
        for i, w in enumerate(where):
            out[i, w] = out[i, w] + delta
        return out

    # Only the positions the loss reads go through the LM head (its [V, E] product is most of the work):
    # each rewriting prompt's target positions, and the KL prompt's subject.
    picks = [(i, len(ids) - 1 + j) for i, ids in enumerate(rewrite) for j in range(len(target_ids))]
    picks.append((len(rows) - 1, kl_index))
    rows_at = torch.tensor([i for i, _ in picks])
    cols_at = torch.tensor([j for _, j in picks])

    def read(hidden):
        return torch.log_softmax(tm.lm_head(hidden[rows_at, cols_at]), dim=-1)  # [picks, V]

    with torch.no_grad():
        captured = {}
        h = mlp.register_forward_hook(lambda m, i, o: captured.setdefault("out", o.detach().clone()))
        base = read(tm.transformer(input_ids=batch, attention_mask=mask).last_hidden_state)
        h.remove()
        v0 = captured["out"][0, idx[0]]  # the value at the subject's last token of the prompt itself
        kl_base = base[-1]
    handle = mlp.register_forward_hook(add_delta)
    opt = torch.optim.Adam([delta], lr=lr)
    losses = []
    tgt = torch.tensor(target_ids * len(rewrite))
    try:
        for _ in range(steps):
            opt.zero_grad()
            logp = read(tm.transformer(input_ids=batch, attention_mask=mask).last_hidden_state)
            # NLL of the target's tokens, averaged per prompt, then over the prompts
            nll = -logp[torch.arange(len(tgt)), tgt].mean()
            kl = torch.nn.functional.kl_div(logp[-1], kl_base, log_target=True, reduction="sum")
            decay = weight_decay * delta.norm() / v0.norm() ** 2  # ROME's form: |delta| / |v0|^2
            loss = nll + kl_factor * kl + decay
            losses.append(float(loss.detach()))
            loss.backward()
            opt.step()
            with torch.no_grad():  # ROME's clamp: the value may move at most ``clamp`` times its own norm
                limit = clamp * v0.norm()
                if delta.norm() > limit:
                    delta.mul_(limit / delta.norm())
            tick()
    finally:
        handle.remove()
    v_star = (v0 + delta).detach().numpy().astype(np.float64)

    # the update, with the prompt's own key and value (ROME's compute_v)
    k = keys_at(model, layer, [request.prompt], [idx[0]])[0]
    value_now = v0.detach().numpy().astype(np.float64)
    right = (v_star - value_now) / float(k @ u)
    tick()
    label = f"{request.subject.strip()} → {request.target.strip()}"
    edit = RankOneEdit(layer, u.astype(np.float32), right.astype(np.float32), label)
    return EditResult(edit, layer, u_norm, float(np.linalg.norm(v_star)),
                      float(np.linalg.norm(v_star - value_now)), covariance, n_stats, tuple(losses), prefixes,
                      v_star, k)
