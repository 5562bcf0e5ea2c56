"""GPT-2's byte-level BPE tokenizer, with what a viewer needs to show each token honestly.

GPT-2 tokens are sequences of *bytes*, not characters: a CJK character or an emoji is often split
across two or three tokens, none of which is valid UTF-8 on its own. So every token here carries its
exact bytes, its byte span in the UTF-8 text, and a readable form that never hides a partial byte.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors

END_OF_TEXT = "<|endoftext|>"


class TokenizerFileError(ValueError):
    """A tokenizer.json that cannot be used; the message says what is wrong with it."""

# Visible stand-ins for whitespace, so " Paris" and "Paris" look different in a token chip.
_VISIBLE = {" ": "\u2423", "\n": "\u21b5", "\t": "\u21e5", "\r": "\u240d"}


@lru_cache(maxsize=1)
def _byte_decoder() -> dict[str, int]:
    """Inverse of GPT-2's bytes_to_unicode table: the printable char each byte was stored as."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
    bs += list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


@dataclass(frozen=True)
class TokenInfo:
    """One token of a text: what it is and where it came from.

    Attributes
    ----------
    id : int
        Vocabulary id.
    bytes : bytes
        The exact bytes this token stands for.
    byte_span : tuple[int, int]
        Start and end of those bytes in the UTF-8 encoding of the whole text.
    text : str
        The bytes decoded as UTF-8 where they are valid; partial bytes appear as ``\\xNN``.
    display : str
        ``text`` with whitespace made visible (a leading space shows as ``␣``); for a partial
        token, the character it belongs to and which of its bytes it holds, e.g. ``你[1-2/3]``.
    partial : bool
        True when the token is not valid UTF-8 on its own (part of a multi-byte character).
    """

    id: int
    bytes: bytes
    byte_span: tuple[int, int]
    text: str
    display: str
    partial: bool


def readable(data: bytes) -> tuple[str, bool]:
    """Decode bytes for display, keeping undecodable bytes visible as ``\\xNN``.

    Returns the text and whether any byte was undecodable (a partial character).
    """
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="backslashreplace"), True


def make_visible(text: str) -> str:
    """Replace spaces, newlines and tabs with visible symbols."""
    return "".join(_VISIBLE.get(ch, ch) for ch in text)


def build_gpt2_tokenizer(vocab_json: str | Path, merges_txt: str | Path) -> Tokenizer:
    """Build GPT-2's tokenizer from OpenAI's ``encoder.json``/``vocab.json`` and ``vocab.bpe``/``merges.txt``.

    The settings are GPT-2's: byte-level pre-tokenizer without an added prefix space, byte-level
    decoder, ``<|endoftext|>`` as the special token (id 50256 in GPT-2's vocabulary).
    """
    tok = Tokenizer(models.BPE.from_file(str(vocab_json), str(merges_txt)))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.add_special_tokens([END_OF_TEXT])
    return tok


def _is_continuation(b: int) -> bool:
    return b & 0xC0 == 0x80


def _partial_display(full: bytes, span: tuple[int, int]) -> str:
    """Name the whole character(s) a partial token belongs to and which bytes of them it holds."""
    start, end = span
    s0 = start
    while s0 > 0 and _is_continuation(full[s0]):
        s0 -= 1
    e0 = end
    while e0 < len(full) and _is_continuation(full[e0]):
        e0 += 1
    chars, _ = readable(full[s0:e0])
    return f"{make_visible(chars)}[{start - s0 + 1}-{end - s0}/{e0 - s0}]"


class GPT2Tokenizer:
    """Encode and decode text, and describe every token for display.

    Parameters
    ----------
    tokenizer : tokenizers.Tokenizer
        A byte-level BPE tokenizer (GPT-2's, or a fine-tune's).
    """

    def __init__(self, tokenizer: Tokenizer):
        self._tok = tokenizer
        self._decoder = _byte_decoder()
        self.vocab_size = tokenizer.get_vocab_size(with_added_tokens=True)
        self._eot = tokenizer.token_to_id(END_OF_TEXT)
        self._display: dict[int, str] = {}  # token_display's answers (a vocabulary's worth at most)

    @classmethod
    def from_file(cls, path: str | Path) -> "GPT2Tokenizer":
        """Load a ``tokenizer.json`` written by the tokenizers library.

        Raises
        ------
        TokenizerFileError
            The file is unreadable, not JSON, JSON of another shape, or rejected by tokenizers; the
            message says which (tokenizers' own errors name only a line and column).
        """
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as e:
            raise TokenizerFileError(f"unreadable: {e.strerror or e}") from None
        except UnicodeDecodeError:
            raise TokenizerFileError("not UTF-8 text") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise TokenizerFileError(f"invalid JSON at line {e.lineno} column {e.colno}") from None
        model = data.get("model") if isinstance(data, dict) else None
        if not isinstance(model, dict) or not isinstance(model.get("vocab"), dict):
            raise TokenizerFileError("valid JSON but not a tokenizers file (no model.vocab object)")
        try:
            return cls(Tokenizer.from_str(text))
        except Exception as e:  # noqa: BLE001 - tokenizers raises a bare Exception on a bad structure
            raise TokenizerFileError(f"rejected by the tokenizers library: {e}") from None

    @property
    def eot_id(self) -> int | None:
        """Id of ``<|endoftext|>``, or None if the vocabulary lacks it."""
        return self._eot

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (no special tokens added)."""
        return self._tok.encode(text, add_special_tokens=False).ids

    def token_bytes(self, token_id: int) -> bytes:
        """The exact bytes a token stands for."""
        piece = self._tok.id_to_token(int(token_id))
        if piece is None:
            raise ValueError(f"token id {token_id} is not in the vocabulary (size {self.vocab_size})")
        if piece == END_OF_TEXT:
            return piece.encode("utf-8")
        try:
            return bytes(self._decoder[ch] for ch in piece)
        except KeyError:
            # A vocabulary that is not byte-level (a custom fine-tune): fall back to its text.
            return piece.encode("utf-8")

    def decode(self, ids: list[int]) -> str:
        """Text of a token sequence; partial characters at the end are kept as replacement chars."""
        return b"".join(self.token_bytes(i) for i in ids).decode("utf-8", errors="replace")

    def token_text(self, token_id: int) -> str:
        """Readable text of one token (partial bytes as ``\\xNN``)."""
        return readable(self.token_bytes(token_id))[0]

    def token_display(self, token_id: int) -> str:
        """Readable text of one token with whitespace made visible."""
        # Remembered per id: the views show ~250 tokens after every step (the lens grid alone 208), and
        # each was ~7 µs of byte decoding (bench/bench_latency.py's profile of a Step).
        shown = self._display.get(token_id)
        if shown is None:
            shown = self._display[token_id] = make_visible(self.token_text(token_id))
        return shown

    def describe(self, ids: list[int]) -> list[TokenInfo]:
        """Describe each token of a sequence: bytes, byte span, readable and visible text."""
        pieces = [self.token_bytes(i) for i in ids]
        full = b"".join(pieces)
        out: list[TokenInfo] = []
        pos = 0
        for i, data in zip(ids, pieces):
            text, partial = readable(data)
            span = (pos, pos + len(data))
            display = _partial_display(full, span) if partial else make_visible(text)
            out.append(TokenInfo(int(i), data, span, text, display, partial))
            pos += len(data)
        return out

    def tokenize(self, text: str) -> list[TokenInfo]:
        """Encode ``text`` and describe each token."""
        return self.describe(self.encode(text))
