"""Jump-forward as drafts (specdec/jump_forward.py): forced runs tokenized into draft tokens that
the grammar accepts in sequence, spelling a prefix of the forced bytes, with the tokens a longer
allowed token could cross held back. Real tokenizers only."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from constrain import Compiler, Matcher
from constrain.specdec.drafting import Draft
from constrain.specdec.jump_forward import ForcedDrafter, forced_tokens, token_index
from constrain.specdec.randomness import TorchRandomness

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 12},
        "age": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 8}, "maxItems": 3},
        "kind": {"const": "a long constant value with words"},
        "level": {"enum": ["low", "medium", "high"]},
    },
    "required": ["name", "age", "tags", "kind", "level"],
    "additionalProperties": False,
}
DOCUMENT = '{"name":"Bob","age":3,"tags":["x","yz"],"kind":"a long constant value with words","level":"medium"}'
CLOSERS = {b'"', b"}", b"]", b"1", b","}


@pytest.fixture(scope="module")
def compiler(llama3):
    return Compiler(llama3)


@pytest.fixture(scope="module")
def json_grammar(compiler):
    return compiler.compile_json_schema(SCHEMA)


@pytest.fixture(scope="module")
def hf_llama3(tokenizer_files):
    return Tokenizer.from_file(str(tokenizer_files["llama3"] / "tokenizer.json"))


@pytest.fixture(scope="module")
def encode(hf_llama3):
    return lambda text: hf_llama3.encode(text, add_special_tokens=False).ids


def _spell(vocab, tokens) -> bytes:
    return b"".join(vocab.token_bytes[t] for t in tokens)


def _check_draft(matcher: Matcher, tokens: list[int]) -> None:
    """The draft spells a prefix of the forced bytes and the grammar accepts all of it; the
    matcher is left where it was."""
    vocab = matcher.compiled.vocab
    before = matcher.num_accepted_tokens
    forced = matcher.forced_bytes()
    assert forced.startswith(_spell(vocab, tokens))
    assert not set(tokens) & vocab.special_ids
    assert matcher.validate_tokens(tokens) == len(tokens)
    fork = matcher.fork()
    assert fork.accept_tokens(tokens) == len(tokens)
    assert matcher.num_accepted_tokens == before


# -- forced runs of a JSON schema ------------------------------------------------------------------
@pytest.mark.parametrize("with_encode", [False, True])
def test_json_forced_runs_are_accepted_prefixes(json_grammar, llama3, hf_llama3, encode, with_encode):
    m = Matcher(json_grammar)
    ids = hf_llama3.encode(DOCUMENT, add_special_tokens=False).ids
    drafted = 0
    for tid in ids + [min(llama3.eos_token_ids)]:
        forced = m.forced_bytes()
        tokens = forced_tokens(m, encode if with_encode else None)
        _check_draft(m, tokens)
        if not forced:
            assert tokens == []
        if with_encode and tokens:
            # Byte-level BPE spells every text exactly, so the draft is the encoder's own
            # tokenization of the run (cut at the hold-back).
            text = forced.decode("utf-8")
            assert encode(text)[: len(tokens)] == tokens
        drafted += len(tokens)
        assert m.accept_token(tid)
    assert m.is_terminated()
    assert forced_tokens(m, encode) == []  # terminated: nothing is forced
    assert drafted >= 10


def test_json_start_drafts_the_opening_and_holds_back_the_crossable_end(json_grammar, llama3, encode):
    m = Matcher(json_grammar)
    assert m.forced_bytes() == b'{"name":"'
    for enc in (None, encode):
        tokens = forced_tokens(m, enc)
        assert _spell(llama3, tokens) == b'{"name'
        # Without hold-back the run ends in '":"', which '":""' style tokens could cross.
        full = forced_tokens(m, enc, holdback_window=0)
        assert _spell(llama3, full) == b'{"name":"'
        assert full[: len(tokens)] == tokens


def test_long_forced_run_is_limited_by_max_tokens(json_grammar, llama3, hf_llama3, encode):
    m = Matcher(json_grammar)
    prefix = DOCUMENT[: DOCUMENT.index('"kind":"') + len('"kind":"')]
    ids = hf_llama3.encode(prefix, add_special_tokens=False).ids
    assert m.accept_tokens(ids) == len(ids)
    assert m.forced_bytes().startswith(b'a long constant value with words"')
    full = forced_tokens(m, encode)
    assert _spell(llama3, full).startswith(b"a long constant value with words")
    for limit in (0, 1, 3):
        assert forced_tokens(m, encode, max_tokens=limit) == full[:limit]


# -- hold-back with a real crossable token pair ----------------------------------------------------
def _crossable_pair(vocab) -> tuple[bytes, bytes]:
    """(b" word", suffix) with both b" word" and b" word" + suffix single ordinary tokens."""
    ordinary = {data for tid, data in enumerate(vocab.token_bytes) if tid not in vocab.special_ids}
    for tid, data in enumerate(vocab.token_bytes):
        word = data[1:]
        if tid in vocab.special_ids or not data.startswith(b" ") or not (4 <= len(word) <= 8):
            continue
        if not (word.isalpha() and word.islower()):
            continue
        for suffix in (b"Id", b"s", b"ed"):
            if data + suffix in ordinary:
                return data, suffix
    pytest.fail("no crossable token pair in the vocabulary")


def _uncrossable_bytes(vocab, stem: bytes) -> list[bytes]:
    """Two bytes c such that no token starts with stem + c."""
    out = [bytes([c]) for c in b"#@~|^"]
    out = [c for c in out if not any(data.startswith(stem + c) for data in vocab.token_bytes)]
    assert len(out) >= 2
    return out[:2]


@pytest.mark.parametrize("with_encode", [False, True])
def test_holdback_drops_a_token_that_an_allowed_longer_token_crosses(compiler, llama3, encode, with_encode):
    stem, suffix = _crossable_pair(llama3)
    word = stem[1:].decode()
    enc = encode if with_encode else None
    crossable = Matcher(compiler.compile_regex(f"let value = {word}({suffix.decode()})?;"))
    assert crossable.forced_bytes() == b"let value = " + word.encode()
    full = forced_tokens(crossable, enc, holdback_window=0)
    assert llama3.token_bytes[full[-1]] == stem  # the run's canonical last token is b" word"
    held = forced_tokens(crossable, enc)
    assert held == full[:-1]  # b" word" + suffix is one token the grammar allows: held back
    _check_draft(crossable, held)
    # With a window of one token, the crossable token is the window's earliest: everything goes.
    assert forced_tokens(crossable, enc, holdback_window=1) == []

    # The same run followed by bytes no token can glue onto it: nothing is held back.
    a, b = _uncrossable_bytes(llama3, stem)
    plain = Matcher(compiler.compile_regex(f"let value = {word}({re.escape(a.decode())}|{re.escape(b.decode())})"))
    assert plain.forced_bytes() == crossable.forced_bytes()
    assert forced_tokens(plain, enc) == full


def test_no_forced_bytes_gives_an_empty_draft(compiler, llama3, hf_llama3):
    m = Matcher(compiler.compile_regex("[a-z]+(;[0-9])?"))
    assert m.forced_bytes() == b""
    assert forced_tokens(m) == []
    drafter = ForcedDrafter(hf_llama3)
    draft = drafter.propose([], m, 8, TorchRandomness())
    assert isinstance(draft, Draft) and draft.tokens == [] and draft.q is None and draft.forced == 0
    # After EOS only EOS remains: nothing to draft either.
    assert m.accept_token(llama3.token_id("abc"))
    assert m.accept_token(min(llama3.eos_token_ids))
    assert forced_tokens(m) == []


def test_incomplete_utf8_at_the_end_of_the_run_is_not_drafted(compiler, llama3, encode):
    m = Matcher(compiler.compile_regex("(é|è)x"))
    assert m.forced_bytes() == b"\xc3"  # the lead byte only: the choice is in the second byte
    assert forced_tokens(m) == [] and forced_tokens(m, encode) == []
    m = Matcher(compiler.compile_regex("abc(é|è)x"))
    assert m.forced_bytes() == b"abc\xc3"
    for enc in (None, encode):
        tokens = forced_tokens(m, enc, holdback_window=0)
        assert _spell(llama3, tokens) == b"abc"
        _check_draft(m, forced_tokens(m, enc))


# -- the encoder: used when it spells the run, greedy longest match otherwise ----------------------
def test_encoder_tokens_are_used_where_they_spell_the_run(compiler, llama3, encode):
    text = "  indented;"  # BPE: ' ', ' ind', 'ented', ';'; greedy longest match: '  ', 'indent', 'ed', ';'
    m = Matcher(compiler.compile_regex(re.escape(text)))
    assert m.forced_bytes() == text.encode()
    with_encoder = forced_tokens(m, encode)
    greedy = forced_tokens(m)
    assert with_encoder == encode(text)
    assert _spell(llama3, greedy) == text.encode()
    assert with_encoder != greedy
    for tokens in (with_encoder, greedy):
        _check_draft(m, tokens)


def test_drafter_accepts_tokenizer_objects_and_callables(compiler, llama3, hf_llama3, encode, tokenizer_files):
    import transformers
    from tokenizers import processors

    # A tokenizer that adds BOS by default (as most model tokenizers do): the drafter must turn
    # that off, or the encoder's tokens would not spell the run.
    with_bos = Tokenizer.from_file(str(tokenizer_files["llama3"] / "tokenizer.json"))
    bos = min(llama3.special_ids)
    bos_text = llama3.token_bytes[bos].decode()
    with_bos.post_processor = processors.TemplateProcessing(single=f"{bos_text} $A", special_tokens=[(bos_text, bos)])
    hf_fast = transformers.PreTrainedTokenizerFast(tokenizer_object=with_bos)
    assert with_bos.encode("x").ids[0] == bos and hf_fast.encode("x")[0] == bos
    text = "  indented;"
    m = Matcher(compiler.compile_regex(re.escape(text)))
    expected = encode(text)
    rng = TorchRandomness()
    for source in (hf_llama3, with_bos, hf_fast, encode):
        drafter = ForcedDrafter(source)
        assert drafter.kind == "forced"
        draft = drafter.propose([1, 2, 3], m, 16, rng)
        assert draft.tokens == expected and draft.forced == len(expected) and draft.q is None
        assert m.num_accepted_tokens == 0
    greedy = ForcedDrafter().propose([], m, 16, rng)
    assert greedy.tokens == forced_tokens(m) != expected
    assert ForcedDrafter(encode, max_tokens=2).propose([], m, 16, rng).tokens == expected[:2]
    assert ForcedDrafter(encode).propose([], m, 1, rng).tokens == expected[:1]
    assert ForcedDrafter(encode).propose([], m, 0, rng).tokens == []


def test_sentencepiece_encoder_falls_back_to_greedy(load_vocab, tokenizer_files):
    import sentencepiece

    vocab = load_vocab("sentencepiece")
    sp = sentencepiece.SentencePieceProcessor(model_file=str(tokenizer_files["sentencepiece"]))
    grammar = Compiler(vocab).compile_regex(r'\{"name":"[a-z]{1,8}","id":[0-9]{1,3}\}')
    m = Matcher(grammar)
    forced = m.forced_bytes()
    assert forced == b'{"name":"'
    # SentencePiece prepends "▁" (a space) to the text: its tokens do not spell the run.
    assert _spell(vocab, sp.encode(forced.decode())) != forced
    greedy = forced_tokens(m, holdback_window=0)
    assert _spell(vocab, greedy) == forced
    assert forced_tokens(m, sp.encode, holdback_window=0) == greedy
    assert ForcedDrafter(sp).propose([], m, 32, TorchRandomness()).tokens == forced_tokens(m)
    for enc in (None, sp.encode):
        _check_draft(m, forced_tokens(m, enc))
    # Further on: the run ',"id":' after the name.
    name = greedy + [vocab.token_id(c) for c in ("b", "o", "b", '"')]
    assert m.accept_tokens(name) == len(name)
    assert m.forced_bytes() == b',"id":'
    _check_draft(m, forced_tokens(m, sp.encode))
    assert _spell(vocab, forced_tokens(m, sp.encode, holdback_window=0)) == b',"id":'


# -- property: along random masked walks -----------------------------------------------------------
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 40))
def test_random_masked_walks_drafts_are_accepted_prefixes(json_grammar, llama3, encode, masked_walk, seed, steps):
    rng = np.random.default_rng(seed)
    m = Matcher(json_grammar)
    masked_walk(m, llama3, rng, steps, CLOSERS)
    for enc in (None, encode):
        for window in (0, 1, 4):
            _check_draft(m, forced_tokens(m, enc, holdback_window=window))
    held, full = forced_tokens(m, encode), forced_tokens(m, encode, holdback_window=0)
    assert full[: len(held)] == held


# -- the index -----------------------------------------------------------------------------------
def test_index_is_built_once_per_vocabulary(llama3):
    from constrain.specdec import token_spelling

    token_spelling._INDEX_CACHE.pop(llama3.fingerprint, None)
    index = token_index(llama3)
    assert token_index(llama3) is index
    assert len(index.keys) == len(index.ids) == sum(1 for t, b in enumerate(llama3.token_bytes) if b and t not in llama3.special_ids)
    assert index.keys == sorted(index.keys)


def test_a_forced_run_is_spelled_as_the_model_spelled_it_in_earlier_requests(json_grammar, llama3, encode):
    from constrain.specdec.jump_forward import ForcedDrafter, SpellingMemory

    m = Matcher(json_grammar)
    t = lambda s: llama3.token_id(s)
    mine = [t("{"), t('"'), t("name"), t('":'), t('"')]  # SmolLM2's way; the encoder's is '{"' 'name' '":"'
    assert encode('{"name":"') != mine
    memory = SpellingMemory(size=64)
    drafter = ForcedDrafter(encode, memory=memory)
    canonical = drafter.propose([], m, 8, None).tokens
    assert _spell(llama3, canonical) == b'{"name'  # (held back: nothing learned yet)
    memory.add(encode("Sure. ") + mine + encode('Ada","age":36}'))  # an earlier request's output
    assert drafter.propose([], m, 8, None).tokens == mine  # the whole run, as spelled before
    assert drafter.propose(encode("Hi"), m, 8, None).tokens == mine
    # this request's own context comes first
    own = [t('{"'), t("name"), t('":'), t('"')]
    assert drafter.propose(encode("Hi") + own, m, 8, None).tokens == own
    # learn_spelling=False ignores both
    assert ForcedDrafter(encode, memory=memory, learn_spelling=False).propose([], m, 8, None).tokens == canonical
    assert m.num_accepted_tokens == 0


def test_spelling_memory_keeps_the_last_ids():
    from constrain.specdec.jump_forward import SpellingMemory

    memory = SpellingMemory(size=5)
    assert memory.ids() == ()
    memory.add([1, 2, 3])
    memory.add(range(4, 8))
    assert memory.ids() == (3, 4, 5, 6, 7)
    with pytest.raises(ValueError, match="size"):
        SpellingMemory(size=0)
