"""The words of the journey report: one title and one explanation per section, numbers filled in.

The seam: :func:`section_title` / :func:`section_text` take a section key and a dict of live numbers (and
token texts). When the guided journey's texts exist (``gpt2viz.app.journey_text.page_title(page)`` /
``page_text(page, numbers)``), a section whose key is one of the journey's pages uses those, so the report
and the journey say the same thing; otherwise the texts below (context "Report") are used.
QtCore only: every string goes through ``QCoreApplication.translate``.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

translate = QCoreApplication.translate  # lupdate reads calls spelled translate("Report", "...")

# the stages of the next token's life, in the order the report tells them
SECTIONS = ("tokens", "embeddings", "position", "attention", "mlp", "residual", "lens", "lm_head", "sampling",
            "kv_cache")


def _journey():
    try:
        from gpt2viz.app import journey_text  # noqa: PLC0415 - lands with the guided journey (issue 14)
    except ImportError:
        return None
    return journey_text if hasattr(journey_text, "page_title") and hasattr(journey_text, "page_text") else None


def _titles() -> dict[str, str]:
    return {
        "tokens": translate("Report", "Tokens: the text becomes numbers"),
        "embeddings": translate("Report", "Embeddings: a vector per token"),
        "position": translate("Report", "Position: where the token stands"),
        "attention": translate("Report", "Attention: reading the earlier tokens"),
        "mlp": translate("Report", "MLP: the neurons write"),
        "residual": translate("Report", "The residual stream: the sum every block writes into"),
        "lens": translate("Report", "Logit lens: the prediction forming, block by block"),
        "lm_head": translate("Report", "LM head and softmax: a score and a probability for every token"),
        "sampling": translate("Report", "Sampling: the choice"),
        "kv_cache": translate("Report", "KV cache: what the next step reuses"),
        "attribution": translate("Report", "Who wrote the answer: direct logit attribution"),
    }


def _texts() -> dict[str, str]:
    return {
        "tokens": translate(
            "Report", "The prompt “{prompt}” is {n_bytes} bytes of UTF-8; byte-pair encoding cuts it into {n_tokens} "
            "tokens, each an id in a vocabulary of {vocab} (a leading space belongs to the token). The token "
            "whose next token this report follows is {token} at position {position}. The model reads at most "
            "{n_positions} tokens."),
        "embeddings": translate(
            "Report", "{token} (id {token_id}) is looked up in a table of {vocab} learned vectors of {n_embd} numbers; "
            "its vector has norm {embed_norm}. Its nearest tokens by cosine: {nearest}."),
        "position": translate(
            "Report", "GPT-2 has no notion of order except a second table: one learned vector per position. The "
            "vector of position {position} (norm {pos_norm}) is added to the token's; their sum (norm {sum_norm}) "
            "starts the residual stream. Cosine between the token and position vectors: {cos_tp}."),
        "attention": translate(
            "Report", "Each of the {n_layer} blocks has {n_head} attention heads; a head lets {token} read earlier "
            "tokens and copy from them. The figure shows block {layer}, where head {head} is the most focused: "
            "{weight} of its attention goes to {key_token} (position {key}). Block by block: {blocks}."),
        "mlp": translate(
            "Report", "After attention, each block's MLP of {d_mlp} neurons reads the residual and writes into it. "
            "The figure shows block {layer}, whose MLP writes the most here (norm {mlp_norm}); {n_active} of its "
            "neurons fire above {active}. Its output, read by the unembedding, promotes {promotes}."),
        "residual": translate(
            "Report", "The residual stream carries the token through the model: every attention and MLP adds to it. "
            "Its norm grows from {first_norm} after the embeddings to {last_norm} after the last block; its "
            "direction is within cosine {cos_half} of the final one by block {half_block}."),
        "lens": translate(
            "Report", "Read out early (final LayerNorm + unembedding after each block), the residual already "
            "predicts {final_token} from depth {settled} on; after the last block its probability is {final_prob}."),
        "lm_head": translate(
            "Report", "The final LayerNorm rescales the residual (norm {ln_in} → {ln_out}); the LM head multiplies "
            "it by the {vocab} token embeddings again (tied weights) to score every possible next token: "
            "{top_logits}. Softmax turns the scores into probabilities that sum to 1: {top_probs}. Entropy "
            "{entropy} nats (0 = certain, {max_entropy} = uniform)."),
        "sampling": translate(
            "Report", "With temperature {temperature}, top-k {top_k}, top-p {top_p} and seed {seed}, {n_kept} "
            "candidates remain and the next step takes {chosen}: {p_final} after the settings, {p_raw} as the "
            "model gave it."),
        "kv_cache": translate(
            "Report", "To take that step the model does not rerun the whole text: every block keeps the keys and "
            "values of every earlier position ({n_layer} layers × 2 × {n_tokens} positions × {n_embd} numbers × 4 bytes = "
            "{kv_mb} MB). The step runs only {chosen} through the path above and appends its keys and values; "
            "the context holds {n_tokens} of {n_positions} positions."),
        "attribution": translate(
            "Report", "The logit of {target} ({logit}) split into what each part of the model wrote directly "
            "(final LayerNorm scale frozen at the real residual). Largest source: {headline}. Top parts: {parts}."),
    }


def section_title(key: str) -> str:
    """The heading of section ``key`` in the current language, unnumbered (the report numbers its sections)."""
    j = _journey()
    if j is not None:
        try:
            return j.page_title(key)
        except (KeyError, ValueError, TypeError):
            pass
    return _titles()[key]


def section_text(key: str, numbers: dict) -> str:
    """The explanation of section ``key`` with ``numbers`` (already formatted strings) filled in."""
    j = _journey()
    if j is not None:
        try:
            return j.page_text(key, numbers)
        except (KeyError, ValueError, TypeError, IndexError):
            pass
    return _texts()[key].format(**numbers)


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
