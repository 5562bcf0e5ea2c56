"""`gpt2viz attribute`: direct logit attribution of the next token, as a table or one JSON object."""

from __future__ import annotations

import json

from gpt2viz.core.analysis.attribution import attribute, attribution_json, needed_hooks, token_id

TOP = 15


def add_parser(sub, add_model) -> None:
    """Register the subcommand on ``sub`` (argparse subparsers); ``add_model`` adds --model."""
    p = sub.add_parser("attribute", help="which heads, MLPs and source tokens wrote the next token's logit "
                       "(direct logit attribution)")
    p.add_argument("--prompt", required=True)
    p.add_argument("--target", metavar="TOKEN", help="token to explain (one token, e.g. ' Paris'; "
                   "default: the model's top-1 next token)")
    p.add_argument("--vs", metavar="TOKEN", help="explain the logit difference target − this token")
    add_model(p)
    p.add_argument("--steps", type=int, default=0, help="greedy tokens to generate first; the newest position is "
                   "attributed (default 0)")
    p.add_argument("--json", action="store_true", help="one JSON object with every component")


def run(a, open_model) -> int:
    """Run the prompt (and ``--steps`` greedy steps), attribute, print. Bad input raises ValueError."""
    from gpt2viz.core.engine.weights import Weights
    from gpt2viz.core.generation.sampling import SamplingSettings
    from gpt2viz.core.generation.stepper import Generator

    if a.steps < 0:
        raise ValueError(f"--steps must be ≥ 0, got {a.steps}")
    model = open_model(a.model)
    tok, cfg = model.tokenizer, model.config
    # Check the tokens before the model runs: a typo should cost nothing.
    target = token_id(tok, a.target, "target") if a.target is not None else None
    vs = token_id(tok, a.vs, "vs") if a.vs is not None else None
    gen = Generator(model, hooks=needed_hooks(cfg.n_layer))  # headless: only what attribution reads
    gen.start(tok.encode(a.prompt))
    greedy = SamplingSettings(temperature=0.0)
    for _ in range(a.steps):
        if not gen.can_step():
            break
        gen.step(greedy)
    weights = Weights.of(model)
    attr = attribute(gen.history(), weights, cfg.n_layer, cfg.n_head, target=target, vs=vs)
    if a.json:
        print(json.dumps(attribution_json(attr, tok), ensure_ascii=False))
        return 0
    what = tok.token_display(attr.target) + (f" − {tok.token_display(attr.vs)}" if attr.vs is not None else "")
    kind = "logit difference" if attr.vs is not None else "logit"
    print(f"{kind} of {what} after {tok.token_display(attr.tokens[-1])} (position {attr.position}): {attr.logit:.4f}"
          f"  = parts {attr.total() - attr.ln_bias_term:.4f} + final LayerNorm bias {attr.ln_bias_term:.4f}")
    print(f"{'rank':>4}  {'component':<12} {'value':>10}  {'share':>6}")
    whole = sum(abs(c.value) for c in attr.components()) or 1.0
    for i, c in enumerate(attr.ranked(TOP), 1):
        print(f"{i:>4}  {c.label:<12} {c.value:>+10.4f}  {abs(c.value) / whole:>6.1%}")
    src = sorted(((attr.by_source[L, h, k], L, h, k) for L in range(attr.heads.shape[0])
                  for h in range(attr.heads.shape[1]) for k in range(attr.position + 1)), key=lambda t: -abs(t[0]))
    v, L, h, k = src[0]
    print(f"largest source: {tok.token_display(attr.tokens[k])} (position {k}), carried by head {L}.{h}: {v:+.4f}")
    print("share = |value| / Σ|values|; the LayerNorm scale is frozen at the real residual (sigma "
          f"{attr.sigma:.4f})")
    return 0
