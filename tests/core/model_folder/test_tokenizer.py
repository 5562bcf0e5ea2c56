import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpt2viz.core.model_folder.tokenizer import GPT2Tokenizer
from tests.conftest import TOKENIZER_JSON


@pytest.fixture(scope="module")
def tok():
    return GPT2Tokenizer.from_file(TOKENIZER_JSON)


@pytest.mark.parametrize("text,ids", [
    ("Hello world", [15496, 995]),
    (" Paris", [6342]),
    ("The capital of France is", [464, 3139, 286, 4881, 318]),
    ("<|endoftext|>", [50256]),
])
def test_known_gpt2_ids(tok, text, ids):
    assert tok.encode(text) == ids
    assert tok.vocab_size == 50257


def test_leading_space_is_part_of_the_token(tok):
    assert [t.display for t in tok.tokenize("unbelievable")] == ["un", "bel", "iev", "able"]
    one = tok.tokenize(" unbelievable")
    assert len(one) == 1 and one[0].display == "\u2423unbelievable" and one[0].text == " unbelievable"


@pytest.mark.parametrize("text", [
    "The quick brown fox.", "你好，世界", "こんにちは", "🙂👍🏽 family: 👨‍👩‍👧", "a  \n\n\t  b   ", "", " ", "café naïve",
])
def test_round_trip_and_byte_spans(tok, text):
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    infos = tok.describe(ids)
    data = text.encode("utf-8")
    assert b"".join(t.bytes for t in infos) == data
    for t in infos:
        assert data[t.byte_span[0]:t.byte_span[1]] == t.bytes


def test_partial_utf8_tokens_are_named_by_their_character(tok):
    infos = tok.tokenize("你")
    assert len(infos) == 2 and all(t.partial for t in infos)
    assert [t.display for t in infos] == ["你[1-2/3]", "你[3-3/3]"]
    assert infos[0].text == "\\xe4\\xbd"  # raw bytes stay visible, never silently replaced


def test_whitespace_made_visible(tok):
    assert [t.display for t in tok.tokenize("a\n\tb")] == ["a", "\u21b5", "\u21e5", "b"]


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_round_trip_any_text(tok, text):
    assert tok.decode(tok.encode(text)) == text


def test_unknown_id_is_a_clear_error(tok):
    with pytest.raises(ValueError, match="not in the vocabulary"):
        tok.token_bytes(60000)
