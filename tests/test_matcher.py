"""Matcher API: accept/validate/rollback/fork semantics, EOS and special tokens, bad input."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from constrain import Compiler, Matcher, RollbackError, TokenError, allocate_token_bitmask

PATTERN = r'\{"id": [1-9][0-9]{0,5}, "tag": "[a-z]{1,8}"\}'


@pytest.fixture(scope="module")
def compiler(llama3):
    return Compiler(llama3)


@pytest.fixture(scope="module")
def hf_llama3(tokenizer_files):
    return Tokenizer.from_file(str(tokenizer_files["llama3"] / "tokenizer.json"))


def _ids(tok: Tokenizer, text: str) -> list[int]:
    return tok.encode(text, add_special_tokens=False).ids


def test_round_trip_accepts_and_ends_accepting(compiler, hf_llama3, llama3):
    text = '{"id": 4821, "tag": "alpha"}'
    ids = _ids(hf_llama3, text)
    m = Matcher(compiler.compile_regex(PATTERN))
    assert m.accept_tokens(ids) == len(ids)
    assert m.is_accepting() and not m.is_terminated()
    eos = min(llama3.eos_token_ids)
    assert m.accept_token(eos)
    assert m.is_terminated() and m.is_accepting()
    # After termination only EOS remains allowed, and text tokens are rejected.
    assert set(m.allowed_token_ids()) == set(llama3.eos_token_ids)
    assert not m.accept_token(ids[0])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_hypothesis_strings_round_trip_and_mutations_fail_at_first_bad_token(data, compiler, hf_llama3, llama3):
    pattern = r"[a-z]{1,6}(-[0-9]{2,4})?( [A-Z][a-z]{0,5}){0,3}"
    rx = re.compile(pattern, re.ASCII)
    text = data.draw(st.from_regex(rx, fullmatch=True))
    g = compiler.compile_regex(pattern)
    ids = _ids(hf_llama3, text)
    m = Matcher(g)
    assert m.accept_tokens(ids) == len(ids)
    assert m.is_accepting()
    # Mutate one character; the matcher must stop exactly at the first token that leaves
    # every viable prefix of the language.
    pos = data.draw(st.integers(0, len(text) - 1))
    bad = text[:pos] + data.draw(st.sampled_from(["#", "é", "9", "Z", " "])) + text[pos + 1 :]
    if rx.fullmatch(bad):
        return
    ids = _ids(hf_llama3, bad)
    expected = len(ids)
    prefix = b""
    dfa = g.dfa
    for k, tid in enumerate(ids):
        prefix += llama3.token_bytes[tid]
        if dfa.walk(0, prefix) < 0:
            expected = k
            break
    m = Matcher(g)
    assert m.accept_tokens(ids) == expected
    if expected == len(ids):
        assert not m.is_accepting()


def test_rejected_token_changes_nothing(compiler, hf_llama3):
    m = Matcher(compiler.compile_regex(PATTERN))
    before = m.allowed_token_ids()
    assert not m.accept_token(_ids(hf_llama3, "hello")[0])
    assert np.array_equal(before, m.allowed_token_ids())
    assert m.num_accepted_tokens == 0


def test_validate_does_not_advance(compiler, hf_llama3):
    ids = _ids(hf_llama3, '{"id": 12, "tag": "x"}')
    m = Matcher(compiler.compile_regex(PATTERN))
    assert m.validate_tokens(ids) == len(ids)
    assert m.num_accepted_tokens == 0
    bad = ids[:3] + _ids(hf_llama3, "zzz")
    assert m.validate_tokens(bad) == 3


def test_rollback_and_fork_equal_a_fresh_matcher(compiler, hf_llama3):
    g = compiler.compile_regex(PATTERN)
    ids = _ids(hf_llama3, '{"id": 99, "tag": "abc"}')
    rng = random.Random(7)
    m = Matcher(g)
    for _ in range(200):
        op = rng.choice(["accept", "accept", "rollback", "fork"])
        if op == "accept" and m.num_accepted_tokens < len(ids):
            assert m.accept_token(ids[m.num_accepted_tokens])
        elif op == "rollback" and m.num_accepted_tokens:
            m.rollback(rng.randint(1, m.num_accepted_tokens))
        elif op == "fork":
            other = m.fork()
            if other.num_accepted_tokens < len(ids):
                other.accept_token(ids[other.num_accepted_tokens])  # must not affect m
            m = m if rng.random() < 0.5 else other
        fresh = Matcher(g)
        fresh.accept_tokens(ids[: m.num_accepted_tokens])
        assert np.array_equal(fresh.allowed_token_ids(), m.allowed_token_ids())
        assert fresh.is_accepting() == m.is_accepting()
        assert fresh.forced_bytes() == m.forced_bytes()


def test_rollback_past_termination(compiler, hf_llama3, llama3):
    m = Matcher(compiler.compile_regex("yes|no"))
    assert m.accept_tokens(_ids(hf_llama3, "yes")) == 1
    assert m.accept_token(min(llama3.eos_token_ids))
    m.rollback(1)
    assert not m.is_terminated() and m.is_accepting()


def test_reset(compiler, hf_llama3):
    m = Matcher(compiler.compile_regex(PATTERN))
    m.accept_tokens(_ids(hf_llama3, '{"id": 5'))
    m.reset()
    assert m.num_accepted_tokens == 0
    assert m.forced_bytes() == b'{"id": '


def test_eos_only_at_accepting_states(compiler, llama3):
    m = Matcher(compiler.compile_regex("[0-9]{2}"))
    eos = llama3.eos_token_ids
    assert not eos & set(m.allowed_token_ids().tolist())
    for tid in eos:
        assert not m.accept_token(tid)
    assert m.accept_token(llama3.token_id("12"))
    assert eos <= set(m.allowed_token_ids().tolist())


def test_special_tokens_are_never_text(compiler, llama3):
    """Free-text classes must not let control tokens through (a peer lets 251 of them pass)."""
    m = Matcher(compiler.compile_regex(r"(?s).*"))
    allowed = set(m.allowed_token_ids().tolist())
    leaked = (llama3.special_ids - llama3.eos_token_ids) & allowed
    assert not leaked, sorted(leaked)[:10]
    header = llama3.token_id("<|start_header_id|>")
    assert header is not None and not m.accept_token(header)


def test_forced_bytes(compiler, hf_llama3):
    m = Matcher(compiler.compile_regex(PATTERN))
    assert m.forced_bytes() == b'{"id": '
    m.accept_tokens(_ids(hf_llama3, '{"id": 7, "'))
    assert m.forced_bytes() == b'tag": "'


def test_fill_into_torch_numpy_rows_and_wide_logits(compiler, llama3):
    m = Matcher(compiler.compile_regex("[0-9]+"))
    expected = m.allowed_token_ids()
    wide = llama3.size + 1000  # logits wider than the tokenizer: extra columns stay masked
    bm = allocate_token_bitmask(3, wide)
    m.fill_next_token_bitmask(bm, index=1)
    bits = np.unpackbits(bm[1].numpy().view(np.uint8), bitorder="little")
    assert np.array_equal(np.nonzero(bits)[0], expected)
    assert (bm[0] == -1).all() and (bm[2] == -1).all()  # other rows untouched
    arr = np.full((bm.shape[1],), -1, dtype=np.int32)
    m.fill_next_token_bitmask(arr)
    assert np.array_equal(arr, bm[1].numpy())


def test_bad_bitmasks_are_rejected_clearly(compiler, llama3):
    m = Matcher(compiler.compile_regex("[0-9]+"))
    with pytest.raises(TypeError, match="int32"):
        m.fill_next_token_bitmask(torch.zeros((1, 4008), dtype=torch.int64))
    with pytest.raises(ValueError, match="words per row"):
        m.fill_next_token_bitmask(np.zeros(10, dtype=np.int32))
    with pytest.raises(IndexError):
        m.fill_next_token_bitmask(allocate_token_bitmask(2, llama3.size), index=5)
    with pytest.raises(TypeError):
        m.fill_next_token_bitmask([0] * 4008)


def test_bad_token_ids_and_rollback(compiler, llama3):
    m = Matcher(compiler.compile_regex("[0-9]+"))
    for bad in (-1, llama3.logits_width, 10**9):
        with pytest.raises(TokenError, match="out of range"):
            m.accept_token(bad)
        with pytest.raises(TokenError):
            m.validate_tokens([bad])
    with pytest.raises(TokenError):
        m.accept_token("7")  # type: ignore[arg-type]
    with pytest.raises(RollbackError, match="only 0 accepted"):
        m.rollback(1)
    with pytest.raises(RollbackError):
        m.rollback(-1)


def test_matcher_needs_a_compiled_grammar():
    with pytest.raises(TypeError, match="CompiledGrammar"):
        Matcher("[0-9]+")  # type: ignore[arg-type]


def test_accelerator_fill_path_matches_the_cpu_path(compiler, llama3):
    """The copy path used for tensors on an accelerator, exercised on CPU (CI has no GPU)."""
    from constrain.matcher import _fill_device_tensor

    m = Matcher(compiler.compile_regex("[a-z]+"))
    state = m._history[-1]
    row = m.compiled.mask_row(state)
    wide = torch.full((2, row.shape[0] + 3), -1, dtype=torch.int32)
    _fill_device_tensor(wide, 1, row)
    expected = allocate_token_bitmask(2, llama3.size + 96)
    m.fill_next_token_bitmask(expected, index=1)
    assert torch.equal(wide, expected)


def test_reused_bitmask_view_follows_new_storage(compiler, llama3):
    """The cached NumPy view of a bitmask tensor is dropped when the tensor gets new storage.
    (torch refuses resize_ on storage shared with NumPy; set_ swaps the storage.)"""
    m = Matcher(compiler.compile_regex("[0-9]+"))
    expected = m.allowed_token_ids()
    bm = allocate_token_bitmask(1, llama3.size)
    m.fill_next_token_bitmask(bm)
    with pytest.raises(RuntimeError):
        bm.resize_(3, bm.shape[1])
    bm.set_(torch.full((3, bm.shape[1]), -1, dtype=torch.int32))  # the old view is stale now
    m.fill_next_token_bitmask(bm, index=2)
    bits = np.unpackbits(bm[2].numpy().view(np.uint8), bitorder="little")
    assert np.array_equal(np.nonzero(bits)[0], expected)
    assert (bm[:2] == -1).all()


def test_new_matchers_reuse_the_view_only_of_the_same_live_tensor(compiler, llama3):
    """Matchers share the last bitmask view made (engines fill one tensor request after
    request); a different tensor, even one that reuses the freed memory, gets its own view."""
    digits, letters = compiler.compile_regex("[0-9]+"), compiler.compile_regex("[a-z]+")

    def filled(m, bm):
        m.fill_next_token_bitmask(bm)
        return np.nonzero(np.unpackbits(bm[0].numpy().view(np.uint8), bitorder="little"))[0]

    bm = allocate_token_bitmask(1, llama3.size)
    assert np.array_equal(filled(Matcher(digits), bm), Matcher(digits).allowed_token_ids())
    assert np.array_equal(filled(Matcher(letters), bm), Matcher(letters).allowed_token_ids())
    del bm
    for _ in range(3):  # new tensors (the allocator may hand out the same address again)
        bm = allocate_token_bitmask(1, llama3.size)
        assert np.array_equal(filled(Matcher(digits), bm), Matcher(digits).allowed_token_ids())
        del bm


def test_must_terminate_exactly_when_only_eos_is_allowed(compiler, hf_llama3, llama3):
    m = Matcher(compiler.compile_regex("yes|no|nope"))
    assert not m.must_terminate()
    m.accept_tokens(_ids(hf_llama3, "yes"))
    assert m.must_terminate() and set(m.allowed_token_ids()) == set(llama3.eos_token_ids)
    n = Matcher(compiler.compile_regex("yes|no|nope"))
    n.accept_tokens(_ids(hf_llama3, "no"))
    assert n.is_accepting() and not n.must_terminate()  # "pe" may follow
    m.accept_token(min(llama3.eos_token_ids))
    assert m.is_terminated() and not m.must_terminate()


def test_spells_complete_document_tells_whole_from_half_and_rejected(compiler, llama3):
    from constrain.matcher import spells_complete_document

    grammar = compiler.compile_regex(r"\(1[0-9]\)")
    open_, twelve, close, letter = (llama3.token_id(t) for t in ("(", "12", ")", "a"))
    assert spells_complete_document(grammar, [open_, twelve, close])
    assert not spells_complete_document(grammar, [open_, twelve])  # half a document
    assert not spells_complete_document(grammar, [open_, letter, twelve, close])  # a rejected token
    assert not spells_complete_document(grammar, [])
