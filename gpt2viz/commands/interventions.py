"""`gpt2viz run --ablate-head / --mean-ablate-head / --ablate-neuron / --steer-feature`: flags -> intervention tuple."""

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
    ivs += feature_steering(getattr(a, "steer_feature", None) or [], model)
    validate(ivs, model.config)
    return tuple(ivs)


def feature_steering(specs, model) -> list:
    """``--steer-feature L.F=VALUE`` flags -> Steer interventions along the model's own SAEs' decoder directions
    (SAEError, one line, when the model has no SAE for that block or F is out of range)."""
    if not specs:
        return []
    from gpt2viz.core.features.shipped import open_sae
    from gpt2viz.core.features.steering import FeatureSteer, parse_feature_value, to_interventions

    steers = [FeatureSteer(L, F, v) for L, F, v in (parse_feature_value(s) for s in specs)]
    saes = {L: open_sae(model, layer=L) for L in sorted({s.layer for s in steers})}
    return list(to_interventions(model, saes, steers))


def describe_all(ivs) -> list[dict]:
    """JSON list of what is in force."""
    return [describe(iv) for iv in ivs]
