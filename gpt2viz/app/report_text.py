"""The words of the journey report. Its sections are the guided journey's pages, worded by
:mod:`gpt2viz.app.journey_text` (one text for both: the report prints what the journey says), plus one
section of its own, the direct logit attribution, and the title page and footer words below.
QtCore only: every string goes through ``QCoreApplication.translate``.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from gpt2viz.app import journey_text
from gpt2viz.core.viewmodels.journey import PAGES

translate = QCoreApplication.translate  # lupdate reads calls spelled translate("Report", "...")

# the stages of the next token's life, in the order the report tells them: the journey's pages
# the journey's pages but the circuit: a report builds no attribution graph (Analysis → Circuit graph does)
SECTIONS = tuple(p for p in PAGES if p != "circuit")
ATTRIBUTION = "attribution"  # the report's own last section (the journey has no page for it)


def section_title(key: str) -> str:
    """The heading of section ``key`` in the current language, unnumbered (the report numbers its sections)."""
    if key == ATTRIBUTION:
        return translate("Report", "Who wrote the answer: direct logit attribution")
    return journey_text.page_title(key)


def section_text(key: str, numbers: dict) -> str:
    """The explanation of section ``key`` with its ``numbers``: a journey page's numbers
    (:func:`gpt2viz.core.viewmodels.journey.journey_page`), or the attribution's formatted strings."""
    if key == ATTRIBUTION:
        return translate(
            "Report", "The logit of {target} ({logit}) split into what each part of the model wrote directly "
            "(final LayerNorm scale frozen at the real residual). Largest source: {headline}. Top parts: {parts}."
        ).format(**numbers)
    return journey_text.page_text(key, numbers)


def words() -> dict[str, str]:
    """The report's other words (title page, footer), translated."""
    return {
        "title": translate("Report", "The life of the next token"),
        "subtitle": translate("Report", "A gpt2viz report: one token traced through GPT-2"),
        "prompt": translate("Report", "Prompt"),
        "model": translate("Report", "Model"),
        "size": translate("Report", "{params} parameters · {n_layer} layers × {n_head} heads · {n_embd} wide · "
                          "context {n_positions}"),
        "date": translate("Report", "Date"),
        "next": translate("Report", "Next token"),
        "generated": translate("Report", "Generated before this step"),
        "none": translate("Report", "none"),
        "off": translate("Report", "off"),  # a sampling setting that cuts nothing (top-k 0)
        "repro": translate("Report", "Reproducibility"),
        "sha": translate("Report", "Model files (sha256)"),
        "settings": translate("Report", "Settings"),
        "settings_line": translate("Report", "temperature {temperature}, top-k {top_k}, top-p {top_p}, seed {seed}; "
                                   "{steps} step(s) after the prompt"),
        "version": translate("Report", "gpt2viz version"),
        "command": translate("Report", "Command"),
        "interventions": translate("Report", "Interventions"),
        "contents": translate("Report", "Contents"),
    }
