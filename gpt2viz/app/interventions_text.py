"""Words for interventions: chip labels, captions, exports. QtCore only (translations)."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from gpt2viz.core.interventions import HeadAblation, NeuronAblation, Patch, RankOneEdit, Steer, SublayerAblation

translate = QCoreApplication.translate


def _mode(mode: str) -> str:
    return translate("Interventions", "zero") if mode == "zero" else translate("Interventions", "mean")


def label(iv) -> str:
    """A short label for one intervention (a chip, a caption)."""
    if isinstance(iv, HeadAblation):
        return translate("Interventions", "ablate head {layer}.{head} ({mode})").format(
            layer=iv.layer, head=iv.head, mode=_mode(iv.mode))
    if isinstance(iv, NeuronAblation):
        return translate("Interventions", "ablate neuron {layer}.{neuron} (= {value:g})").format(
            layer=iv.layer, neuron=iv.neuron, value=iv.value)
    if isinstance(iv, SublayerAblation):
        if iv.site == "attn_out":
            return translate("Interventions", "ablate block {layer} attention ({mode})").format(
                layer=iv.layer, mode=_mode(iv.mode))
        return translate("Interventions", "ablate block {layer} MLP ({mode})").format(layer=iv.layer, mode=_mode(iv.mode))
    if isinstance(iv, Patch):
        where = translate("Interventions", "head {head}").format(head=iv.head) if iv.site == "head" else iv.site
        return translate("Interventions", "patch {site} of block {layer} at position {position} from B").format(
            site=where, layer=iv.layer, position=iv.position)
    if isinstance(iv, Steer) and iv.feature is not None and iv.clamp is not None:
        return translate("Interventions", "feature {layer}.{feature} set to {value:g} at position {position}").format(
            layer=iv.layer, feature=iv.feature, value=iv.clamp, position=iv.positions[0] if iv.positions else "?")
    if isinstance(iv, Steer) and iv.feature is not None:
        return translate("Interventions", "feature {layer}.{feature} ×{scale:g}").format(
            layer=iv.layer, feature=iv.feature, scale=iv.scale)
    if isinstance(iv, Steer):
        return translate("Interventions", "steer block {layer} input (×{scale:g})").format(layer=iv.layer, scale=iv.scale)
    if isinstance(iv, RankOneEdit):
        return translate("Interventions", "edit block {layer} MLP: {label}").format(layer=iv.layer, label=iv.label)
    return str(iv)


def summary(interventions) -> str:
    """Every intervention in one line ("none" when the tuple is empty)."""
    if not interventions:
        return translate("Interventions", "no interventions")
    return "; ".join(label(iv) for iv in interventions)
