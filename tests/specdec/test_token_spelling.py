"""Spelling bytes with a vocabulary's tokens (specdec/token_spelling.py) and the model's own
spelling found in the context (jump_forward.spelled_before / forced_tokens(history=)): brute-force
oracles for greedy longest match (highest id among equal bytes), TokenIndex.extensions, the
complete-UTF-8 prefix and the most recent whole-token run; `spell` takes the encoder's tokens
exactly when they spell the bytes. Real tokenizers only (Llama 3 byte-level BPE, Mistral's
SentencePiece with byte fallback)."""

from __future__ import annotations

import re
from typing import Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from constrain import Compiler, Matcher
from constrain.specdec.jump_forward import forced_tokens, spelled_before
from constrain.specdec.token_spelling import as_encode, encoded, greedy, spell, token_index, utf8_prefix
from lookup_oracle import utf8_oracle  # tests/support

FIXTURES = [HealthCheck.function_scoped_fixture]


@pytest.fixture(scope="module")
def hf_llama3(tokenizer_files):
    return Tokenizer.from_file(str(tokenizer_files["llama3"] / "tokenizer.json"))


@pytest.fixture(scope="module")
def encode(hf_llama3):
    return lambda text: hf_llama3.encode(text, add_special_tokens=False).ids


@pytest.fixture(scope="module")
def sp_vocab(load_vocab):
    return load_vocab("sentencepiece")


@pytest.fixture(scope="module")
def sp(tokenizer_files):
    import sentencepiece

    return sentencepiece.SentencePieceProcessor(model_file=str(tokenizer_files["sentencepiece"]))


class Oracle:
    """Brute force over one vocabulary's ordinary (non-special, non-empty) tokens."""

    def __init__(self, vocab) -> None:
        self.vocab = vocab
        self.pairs = [(data, tid) for tid, data in enumerate(vocab.token_bytes) if data and tid not in vocab.special_ids]
        self.best: dict[bytes, int] = {}
        for data, tid in self.pairs:
            self.best[data] = max(tid, self.best.get(data, -1))
        self.width = max(len(b) for b in self.best)

    def longest(self, data: bytes, pos: int) -> Optional[int]:
        for n in range(min(self.width, len(data) - pos), 0, -1):
            tid = self.best.get(data[pos : pos + n])
            if tid is not None:
                return tid
        return None

    def greedy(self, data: bytes, limit: int) -> list[int]:
        out, pos = [], 0
        while pos < len(data) and len(out) < limit:
            tid = self.longest(data, pos)
            if tid is None:
                break
            out.append(tid)
            pos += len(self.vocab.token_bytes[tid])
        return out

    def extensions(self, prefix: bytes) -> set[int]:
        return {tid for data, tid in self.pairs if len(data) > len(prefix) and data.startswith(prefix)}


@pytest.fixture(scope="module")
def oracles(llama3, sp_vocab):
    return {"llama3": Oracle(llama3), "sentencepiece": Oracle(sp_vocab)}


def _spell(vocab, tokens) -> bytes:
    return b"".join(vocab.token_bytes[t] for t in tokens)


ALPHABET = "ab c,.\n\t{}\":_-0129éü中文😀▁"
texts = st.text(alphabet=ALPHABET, max_size=40)


# -- utf8_prefix ---------------------------------------------------------------------------------
@given(text=texts, cut=st.integers(0, 200), junk=st.binary(max_size=3))
def test_utf8_prefix_is_the_longest_complete_prefix(text, cut, junk):
    data = text.encode()
    for sample in (data[:cut], data[:cut] + junk, junk + data):
        assert utf8_prefix(sample) == utf8_oracle(sample)


def test_utf8_prefix_on_cut_multibyte_characters():
    for ch in ("é", "中", "😀"):
        raw = ("x" + ch).encode()
        for k in range(1, len(raw)):
            assert utf8_prefix(raw[:k]) == b"x"
        assert utf8_prefix(raw) == raw
    assert utf8_prefix(b"") == b""
    assert utf8_prefix(b"\xa9abc") == b""  # a continuation byte first: nothing is complete
    assert utf8_prefix(b"ab\xffcd") == b"ab"  # an invalid byte in the middle


# -- greedy longest match, TokenIndex ------------------------------------------------------------
@settings(max_examples=80, deadline=None, suppress_health_check=FIXTURES)
@given(name=st.sampled_from(["llama3", "sentencepiece"]), text=texts, raw=st.binary(max_size=12), limit=st.integers(0, 50))
def test_greedy_is_longest_match(load_vocab, oracles, name, text, raw, limit):
    vocab, oracle = load_vocab(name), oracles[name]
    index = token_index(vocab)
    for data in (text.encode(), raw, text.encode()[1:] + raw):
        assert greedy(index, data, limit) == oracle.greedy(data, limit)
        for pos in range(len(data)):
            k = index.longest_prefix(data, pos)
            want = oracle.longest(data, pos)
            assert (int(index.ids[k]) if k >= 0 else None) == want
            if k >= 0:
                assert index.keys[k] == vocab.token_bytes[want]


def test_greedy_prefers_the_highest_id_among_equal_bytes(sp_vocab):
    """SentencePiece's byte-fallback pieces (<0x01>...) duplicate some ordinary pieces."""
    index = token_index(sp_vocab)
    dup = {}
    for tid, data in enumerate(sp_vocab.token_bytes):
        if data and tid not in sp_vocab.special_ids:
            dup.setdefault(data, []).append(tid)
    dup = {data: ids for data, ids in dup.items() if len(ids) > 1}
    assert dup
    for data, ids in dup.items():
        assert greedy(index, data, 1) == [max(ids)]


@settings(max_examples=60, deadline=None, suppress_health_check=FIXTURES)
@given(
    name=st.sampled_from(["llama3", "sentencepiece"]),
    data=st.data(),
    kind=st.sampled_from(["token", "token", "token", "raw", "ff"]),
)
def test_extensions_are_the_tokens_with_that_proper_prefix(load_vocab, oracles, name, data, kind):
    vocab, oracle = load_vocab(name), oracles[name]
    if kind == "token":  # a prefix of a real token's bytes: usually many extensions
        tid = data.draw(st.integers(0, vocab.size - 1), label="token")
        piece = vocab.token_bytes[tid]
        prefix = piece[: data.draw(st.integers(0, min(len(piece), 4)), label="cut")]
    elif kind == "raw":
        prefix = data.draw(st.binary(max_size=3), label="raw")
    else:  # trailing 0xff bytes: the successor bound is the tricky part
        prefix = data.draw(st.binary(max_size=2), label="head") + b"\xff" * data.draw(st.integers(1, 2), label="ff")
    got = token_index(vocab).extensions(prefix)
    assert len(set(got.tolist())) == len(got)
    assert set(got.tolist()) == oracle.extensions(prefix)


def test_extensions_by_hand(llama3):
    index = token_index(llama3)
    ordinary = sum(1 for t, b in enumerate(llama3.token_bytes) if b and t not in llama3.special_ids)
    assert len(index.extensions(b"")) == ordinary  # every token extends the empty prefix
    name = set(index.extensions(b"name").tolist())
    assert llama3.token_id("names") in name and llama3.token_id("name") not in name  # proper prefix only
    assert all(llama3.token_bytes[t].startswith(b"name") for t in name)
    assert index.extensions(b"\xff").size == 0


# -- spell -----------------------------------------------------------------------------------------
@settings(max_examples=80, deadline=None, suppress_health_check=FIXTURES)
@given(text=texts, cut=st.integers(0, 200), limit=st.integers(0, 40), with_encode=st.booleans())
def test_spell_spells_the_complete_utf8_prefix(llama3, oracles, encode, text, cut, limit, with_encode):
    data = text.encode()[:cut]
    complete = utf8_oracle(data)
    tokens = spell(llama3, data, encode if with_encode else None, limit)
    assert all(type(t) is int for t in tokens)
    assert not set(tokens) & llama3.special_ids
    assert len(tokens) <= limit
    spelled = _spell(llama3, tokens)
    assert complete.startswith(spelled)
    if len(tokens) < limit:
        assert spelled == complete  # a byte-level vocabulary spells everything
    if with_encode:  # byte-level BPE spells every text exactly: its own tokens are used
        assert tokens == (encode(complete.decode()) if complete else [])[:limit]
    else:
        assert tokens == oracles["llama3"].greedy(complete, limit)


def test_spell_uses_the_encoder_only_where_it_spells_exactly(llama3, encode):
    text = "  indented;"  # BPE: ' ', ' ind', 'ented', ';'; greedy longest match: '  ', 'indent', 'ed', ';'
    data = text.encode()
    by_greedy = greedy(token_index(llama3), data, 100)
    assert spell(llama3, data, None, 100) == by_greedy
    assert spell(llama3, data, encode, 100) == encode(text) != by_greedy
    assert spell(llama3, data, encode, 2) == encode(text)[:2]
    assert spell(llama3, data, encode, 0) == [] == spell(llama3, b"", encode, 5)
    bos = min(llama3.special_ids)
    # a special token in front, an id out of range, tokens of another text: greedy longest match
    for wrong in (lambda s: [bos] + encode(s), lambda s: encode(s) + [llama3.size], lambda s: encode(s + "x"), lambda s: []):
        assert encoded(wrong, text, data, llama3) is None
        assert spell(llama3, data, wrong, 100) == by_greedy
    assert encoded(encode, text, data, llama3) == encode(text)


@settings(max_examples=40, deadline=None, suppress_health_check=FIXTURES)
@given(text=texts.filter(bool), limit=st.integers(1, 40))
def test_sentencepiece_encoder_falls_back_to_greedy(sp_vocab, sp, oracles, text, limit):
    data = text.encode()
    ids = sp.encode(text)
    got = spell(sp_vocab, data, as_encode(sp), limit)
    if _spell(sp_vocab, ids) == data:  # (never: SentencePiece adds a leading "▁")
        assert got == ids[:limit]
    else:
        assert got == oracles["sentencepiece"].greedy(data, limit)
    assert data.startswith(_spell(sp_vocab, got))


def test_as_encode_turns_off_special_tokens(llama3, hf_llama3, encode, tokenizer_files, sp, sp_vocab):
    import transformers

    text = "  indented;"
    hf_fast = transformers.PreTrainedTokenizerFast(tokenizer_file=str(tokenizer_files["llama3"] / "tokenizer.json"))
    hf_fast.add_bos_token = True
    for source in (hf_llama3, hf_fast, encode):
        assert spell(llama3, text.encode(), as_encode(source), 100) == encode(text)
    assert as_encode(None) is None
    assert as_encode(encode) is encode
    assert as_encode(sp)("ab") == sp.encode("ab")  # no add_special_tokens keyword there
    with pytest.raises(TypeError):
        as_encode(3)


# -- spelled_before ------------------------------------------------------------------------------
def spelled_before_oracle(history, data: bytes, table, window: int) -> Optional[list[int]]:
    """The run history[i:j] of non-empty pieces spelling exactly `data`, i in the last `window`
    positions, with the largest i."""
    n = len(history)
    for i in range(n - 1, max(0, n - window) - 1, -1):
        for j in range(i + 1, n + 1):
            pieces = [table[t] for t in history[i:j]]
            if all(pieces) and b"".join(pieces) == data:
                return list(history[i:j])
    return None


HISTORY_TEXT = ["a", "b", "ab", "ba", "aba", " a", ":", '":', '":"', '"', "name", "na", "me", " name", "é", "\n"]


@pytest.fixture(scope="module")
def history_pool(llama3) -> list[int]:
    ids = [llama3.token_id(t) for t in HISTORY_TEXT] + [llama3.token_id(b"\xc3"), llama3.token_id(b"\xa9")]
    assert None not in ids
    return ids + [min(llama3.eos_token_ids)]  # a special token too (its table entry is its text)


@settings(max_examples=150, deadline=None, suppress_health_check=FIXTURES)
@given(data=st.data(), window=st.integers(1, 40), kind=st.sampled_from(["slice", "slice", "trimmed", "random"]))
def test_spelled_before_is_the_most_recent_whole_token_run(llama3, history_pool, data, window, kind):
    table = llama3.token_bytes
    history = data.draw(st.lists(st.sampled_from(history_pool), max_size=30), label="history")
    if kind == "random" or not history:
        target = b"".join(table[t] for t in data.draw(st.lists(st.sampled_from(history_pool), min_size=1, max_size=5), label="ids"))
    else:
        i = data.draw(st.integers(0, len(history) - 1), label="i")
        j = data.draw(st.integers(i + 1, len(history)), label="j")
        target = b"".join(table[t] for t in history[i:j])
        if kind == "trimmed" and len(target) > 1:  # not aligned with the tokens any more
            a = data.draw(st.integers(0, len(target) - 1), label="a")
            target = target[a : data.draw(st.integers(a + 1, len(target)), label="b")]
    got = spelled_before(history, target, table, window)
    assert got == spelled_before_oracle(history, target, table, window)
    if window >= 512:
        assert got == spelled_before(history, target, table)


def test_spelled_before_by_hand(llama3, encode):
    table = llama3.token_bytes
    t = lambda s: llama3.token_id(s)
    history = [t("name"), t('":"'), t("x"), t('"'), t("name"), t('":'), t('"'), t("y")]
    assert spelled_before(history, b'name":"', table) == [t("name"), t('":'), t('"')]  # the most recent
    assert spelled_before(history, b'name":"', table, window=4) == [t("name"), t('":'), t('"')]
    assert spelled_before(history, b'name":"', table, window=3) is None  # it starts 4 from the end
    assert spelled_before(history, b'":"x', table) == [t('":"'), t("x")]
    assert spelled_before(history, b'ame":"', table) is None  # not at a token boundary
    assert spelled_before(history, b'name":"y!', table) is None  # runs past the end
    assert spelled_before(history, b"", table) is None
    assert spelled_before([], b"name", table) is None
    # a long history: only the last `window` ids are searched (512 by default)
    long = [t("name")] + encode(" filler") * 600
    assert spelled_before(long, b"name", table) is None
    assert spelled_before(long, b"name", table, window=len(long)) == [t("name")]


# -- forced_tokens(history=): the model's own spelling of the forced run ---------------------------
SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 12}, "age": {"type": "integer"}},
    "required": ["name", "age"],
    "additionalProperties": False,
}


def test_forced_run_spelled_as_in_the_history(llama3, encode):
    m = Matcher(Compiler(llama3).compile_json_schema(SCHEMA))
    assert m.forced_bytes() == b'{"name":"'
    t = lambda s: llama3.token_id(s)
    plain = forced_tokens(m, encode)
    assert _spell(llama3, plain) == b'{"name'  # '":"' is held back: '":""'-style tokens cross it
    assert forced_tokens(m, encode, history=encode("no such run here")) == plain

    # the whole run spelled earlier, in other tokens than the encoder's: drafted as it was, all of it
    mine = [t('{"'), t("name"), t('":'), t('"')]
    assert encode('{"name":"') != mine
    got = forced_tokens(m, encode, history=encode("Hello") + mine + encode(" Bob"))
    assert got == mine and m.validate_tokens(got) == len(got)
    assert forced_tokens(m, encode, history=mine, max_tokens=2) == mine[:2]

    # only the tail after a canonical token boundary spelled earlier: canonical head + that spelling
    head = encode('{"name":"')[:1]
    assert _spell(llama3, head) == b'{"'
    tail = [t("name"), t('":'), t('"')]
    got = forced_tokens(m, encode, history=encode("Hello") + tail)
    assert got == head + tail and m.validate_tokens(got) == len(got)
    assert _spell(llama3, got) == m.forced_bytes()
    assert m.num_accepted_tokens == 0


def test_forced_run_spelled_by_a_special_token_in_the_history(llama3, encode):
    """A special token whose text is the forced run (the grammar judges it by its virtual
    spelling, and rejects it): the run is still drafted, in ordinary tokens."""
    special = next(t for t in sorted(llama3.special_ids) if llama3.token_bytes[t].startswith(b"<|reserved"))
    text = llama3.token_bytes[special].decode()
    m = Matcher(Compiler(llama3).compile_regex(re.escape(text) + "[0-9]"))
    assert m.forced_bytes() == text.encode()
    assert spelled_before([special], text.encode(), llama3.token_bytes) == [special]
    got = forced_tokens(m, encode, history=[special])
    assert got and special not in got and m.validate_tokens(got) == len(got)
    assert got == forced_tokens(m, encode)


def test_history_of_any_sequence_type(llama3, encode):
    import numpy as np
    import torch

    from constrain.specdec.jump_forward import ForcedDrafter

    m = Matcher(Compiler(llama3).compile_json_schema(SCHEMA))
    t = lambda s: llama3.token_id(s)
    history = encode("Hello") + [t('{"'), t("name"), t('":'), t('"')]
    want = forced_tokens(m, encode, history=history)
    assert want == history[-4:]
    for h in (tuple(history), np.array(history, dtype=np.int64), torch.tensor(history)):
        assert forced_tokens(m, encode, history=h) == want
        assert ForcedDrafter(encode).propose(h, m, 8, None).tokens == want
    assert forced_tokens(m, encode, history=np.array([], dtype=np.int64)) == forced_tokens(m, encode)


@given(head=st.binary(max_size=3), ff=st.integers(0, 2), other=st.binary(max_size=6))
def test_successor_bounds_exactly_the_strings_with_the_prefix(head, ff, other):
    """The least byte string above every string starting with `prefix` (None: no bound): every
    string above `prefix` is below it iff it starts with `prefix`."""
    from constrain.specdec.token_spelling import _successor

    prefix = head + b"\xff" * ff  # trailing 0xff bytes: no real token extends them, so only here
    succ = _successor(prefix)
    for s in (other, prefix + other, prefix[:-1] + other, prefix + b"\xff" * 3):
        if s.startswith(prefix):
            assert succ is None or s < succ
        elif s > prefix:
            assert succ is not None and s >= succ
    if prefix.rstrip(b"\xff"):
        assert succ is not None and not succ.startswith(prefix) and succ > prefix
