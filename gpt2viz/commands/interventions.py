"""`gpt2viz run --ablate-head / --mean-ablate-head / --ablate-neuron`: flags -> intervention tuple."""

from __future__ import annotations

from gpt2viz.core.interventions import HeadAblation, NeuronAblation, SublayerAblation, describe, parse_pair, validate


def from_args(a, model) -> tuple:
    """The interventions the run flags ask for, checked against ``model`` (InterventionError otherwise)."""
    ivs = []
    for spec in a.ablate_head:
        L, H = parse_pair(spec, "--ablate-head L.H")
        ivs.append(HeadAblation(L, H, "zero"))
    for spec in a.mean_ablate_head:
        L, H = parse_pair(spec, "--mean-ablate-head L.H")
        ivs.append(HeadAblation(L, H, "mean"))
    for spec in a.ablate_neuron:
        L, N = parse_pair(spec, "--ablate-neuron L.N")
        ivs.append(NeuronAblation(L, N))
    for flag, site, mode in (("ablate_attn", "attn_out", "zero"), ("mean_ablate_attn", "attn_out", "mean"),
                             ("ablate_mlp", "mlp_out", "zero"), ("mean_ablate_mlp", "mlp_out", "mean")):
        for L in getattr(a, flag, None) or []:
            ivs.append(SublayerAblation(int(L), site, mode))
    validate(ivs, model.config)
    return tuple(ivs)


def describe_all(ivs) -> list[dict]:
    """JSON list of what is in force."""
    return [describe(iv) for iv in ivs]
