"""The tokens view: the text cut into BPE tokens with ids, bytes and readable forms."""

from __future__ import annotations

from dataclasses import dataclass

from gpt2viz.core.session.session import Session


@dataclass(frozen=True)
class TokenRow:
    position: int
    id: int
    display: str  # the token with whitespace made visible (and [i-j/n] on partial characters)
    bytes_hex: str
    partial: bool
    generated: bool


@dataclass(frozen=True)
class TokensSummary:
    rows: tuple[TokenRow, ...]
    n_bytes: int
    n_positions: int


def tokens_summary(session: Session) -> TokensSummary | None:
    """One row per token of the session's text; None before a run."""
    h = session.history
    if h is None or session.model is None:
        return None
    infos = session.model.tokenizer.describe(list(h.tokens))
    rows = tuple(TokenRow(i, t.id, t.display, t.bytes.hex(" "), t.partial, i >= h.prompt_len)
                 for i, t in enumerate(infos))
    return TokensSummary(rows, sum(len(t.bytes) for t in infos), session.model.config.n_positions)
