"""Round trip on every real tokenizer we can encode with: strings drawn from the regex, tokenized
by the real tokenizer, are accepted token by token and end accepting; a mutated string outside
the language is rejected exactly at its first token that leaves every viable prefix."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from constrain import Compiler, Matcher

PATTERN = r'\{"city": "[A-Za-zéü ]{1,12}", "zip": "[0-9]{5}", "tags": \[("[a-z]{1,6}"(, "[a-z]{1,6}"){0,2})?\]\}'
ENCODERS = ["llama3", "qwen2.5", "deepseek-v3", "unigram", "sentencepiece"]


@pytest.fixture(scope="module")
def encoders(tokenizer_files):
    """name -> callable(text) -> ids, from each tokenizer's own library (no special tokens)."""
    from tokenizers import Tokenizer

    out = {}
    for name in ENCODERS:
        if name not in tokenizer_files:
            continue
        path = tokenizer_files[name]
        if name == "sentencepiece":
            import sentencepiece

            sp = sentencepiece.SentencePieceProcessor(model_file=str(path))
            out[name] = lambda text, sp=sp: sp.encode(text)
        else:
            tok = Tokenizer.from_file(str(path / "tokenizer.json"))
            out[name] = lambda text, tok=tok: tok.encode(text, add_special_tokens=False).ids
    return out


@pytest.mark.parametrize("name", ENCODERS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_round_trip(name, data, encoders, load_vocab):
    if name not in encoders:
        pytest.skip(f"{name} is not installed")
    vocab = load_vocab(name)
    encode = encoders[name]
    rx = re.compile(PATTERN, re.ASCII)
    text = data.draw(st.from_regex(rx, fullmatch=True))
    ids = encode(text)
    produced = b"".join(vocab.token_bytes[i] for i in ids)
    # SentencePiece-style tokenizers prepend a space (the "dummy prefix") to the first piece:
    # the grammar is over the bytes tokens produce, so it then allows that one leading space.
    pattern = PATTERN if produced == text.encode() else "( )?" + PATTERN
    assert produced in (text.encode(), b" " + text.encode())
    grammar = Compiler(vocab).compile_regex(pattern)
    m = Matcher(grammar)
    assert m.accept_tokens(ids) == len(ids)
    assert m.is_accepting()
    assert m.accept_token(min(vocab.eos_token_ids)) and m.is_terminated()

    pos = data.draw(st.integers(0, len(text) - 1))
    bad = text[:pos] + data.draw(st.sampled_from(['"', "{", "7", "Q", "\n", "é"])) + text[pos + 1 :]
    if rx.fullmatch(bad):
        return
    bad_ids = encode(bad)
    prefix = b""
    expected = len(bad_ids)
    for k, tid in enumerate(bad_ids):
        prefix += vocab.token_bytes[tid]
        if grammar.dfa.walk(0, prefix) < 0:
            expected = k
            break
    m = Matcher(grammar)
    assert m.accept_tokens(bad_ids) == expected
    if expected == len(bad_ids):
        assert not m.is_accepting()
