"""TextLookupDrafter (prompt lookup over bytes): a brute-force oracle of "the longest suffix
(min_match..max_match bytes) of the context's bytes that occurs earlier, most recent occurrence;
the bytes after it (complete UTF-8, at most max_bytes) spelled by the encoder or by greedy longest
match, at most max_tokens, cut where the grammar rejects" (a suffix of punctuation alone counting
from min_punctuation_match bytes; without a suffix, the word-start echo; the oracles are in
tests/support/lookup_oracle.py), on random contexts of real Llama 3 token ids; an echo of a
prompt value into a JSON string whose tokens differ from the prompt's; the incremental context bytes against a fresh drafter; argument checks. Real tokenizers only."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from constrain import Compiler, Matcher
from constrain.specdec.drafting import Draft
from constrain.specdec.ngram import NgramDrafter
from constrain.specdec.text_lookup import TextLookupDrafter
from lookup_oracle import draft_oracle, echo_oracle, spell as _spell  # tests/support

FIXTURES = [HealthCheck.function_scoped_fixture]


@pytest.fixture(scope="module")
def compiler(llama3):
    return Compiler(llama3)


@pytest.fixture(scope="module")
def anything(compiler):
    """A grammar that accepts any text: no draft is ever cut."""
    return compiler.compile_regex(r"(.|\n)*")


LOWER = r"[a-z ,]*"  # prefix-closed: a prefix is viable iff it is in the language


@pytest.fixture(scope="module")
def lower(compiler):
    return compiler.compile_regex(LOWER)


@pytest.fixture(scope="module")
def hf_llama3(tokenizer_files):
    return Tokenizer.from_file(str(tokenizer_files["llama3"] / "tokenizer.json"))


@pytest.fixture(scope="module")
def encode(hf_llama3):
    return lambda text: hf_llama3.encode(text, add_special_tokens=False).ids


@pytest.fixture(scope="module")
def longest(llama3):
    """Brute-force greedy longest match over the ordinary tokens (bytes -> highest id)."""
    lookup: dict[bytes, int] = {}
    for tid, data in enumerate(llama3.token_bytes):
        if data and tid not in llama3.special_ids:
            lookup[data] = max(tid, lookup.get(data, -1))
    width = max(len(b) for b in lookup)

    def greedy(data: bytes, limit: int) -> list[int]:
        out, pos = [], 0
        while pos < len(data) and len(out) < limit:
            for n in range(min(width, len(data) - pos), 0, -1):
                tid = lookup.get(data[pos : pos + n])
                if tid is not None:
                    break
            else:
                break
            out.append(tid)
            pos += n
        return out

    return greedy


def _utf8_cut(vocab):
    """For the any-text grammar: the longest prefix of tokens whose bytes are a prefix of valid
    UTF-8 (copied context tokens can be a lone continuation byte)."""
    import codecs

    def cut(tokens):
        for k in range(len(tokens), -1, -1):
            try:
                codecs.getincrementaldecoder("utf-8")().decode(_spell(vocab, tokens[:k]), final=False)
                return k
            except UnicodeDecodeError:
                continue
        return 0

    return cut


def propose(drafter: TextLookupDrafter, ctx, matcher: Matcher, max_tokens: int = 100) -> list[int]:
    before = matcher.num_accepted_tokens
    state = matcher.state
    d = drafter.propose(ctx, matcher, max_tokens, None)
    assert isinstance(d, Draft) and d.q is None and d.forced == 0
    assert all(type(t) is int for t in d.tokens)
    # the draft never advances (nor moves) the matcher it is given
    assert matcher.num_accepted_tokens == before and matcher.state == state
    return d.tokens


# -- the pool random contexts are drawn from: real Llama 3 tokens that overlap in bytes --------------
POOL_TEXT = [" the", "the", "he", "t", "h", " cat", "cat", "at", "c", "a", " ", "  ", ",", "\n", "The", " Cat", "C", '":"',
             " é", "é", "中", "ab", "ba", "aba"]
POOL_BYTES = [b"\xc3", b"\xa9", b"\xe4", b"\xb8", b"\xad"]  # pieces of "é" and "中": contexts cut mid-character


@pytest.fixture(scope="module")
def pool(llama3) -> list[int]:
    ids = [llama3.token_id(t) for t in POOL_TEXT] + [llama3.token_id(b) for b in POOL_BYTES]
    assert None not in ids
    return ids


def _re_cut(vocab, pattern: str):
    def cut(tokens):  # the longest prefix whose bytes `re` still accepts (prefix-closed language)
        text = b""
        for j, t in enumerate(tokens):
            text += vocab.token_bytes[t]
            if not re.fullmatch(pattern.encode(), text):
                return j
        return len(tokens)

    return cut


# -- the oracle ----------------------------------------------------------------------------------
@settings(max_examples=120, deadline=None, suppress_health_check=FIXTURES)
@given(
    data=st.data(),
    mm=st.tuples(st.integers(1, 6), st.integers(0, 12)).map(lambda t: (t[0], t[0] + t[1])),
    max_tokens=st.integers(1, 12),
    max_bytes=st.integers(1, 40),
    limit=st.integers(0, 12),
    with_encode=st.booleans(),
    restrictive=st.booleans(),
    min_punctuation=st.integers(1, 10),
    word_starts=st.booleans(),
)
def test_matches_the_brute_force_oracle(
    llama3, pool, anything, lower, encode, longest, data, mm, max_tokens, max_bytes, limit, with_encode, restrictive,
    min_punctuation, word_starts,
):
    ids = data.draw(st.lists(st.sampled_from(pool), max_size=40), label="context")
    min_match, max_match = mm
    enc = encode if with_encode else None
    m = Matcher(lower if restrictive else anything)
    cut = _re_cut(llama3, LOWER) if restrictive else _utf8_cut(llama3)
    drafter = TextLookupDrafter(enc, min_match=min_match, max_match=max_match, max_tokens=max_tokens, max_bytes=max_bytes,
                                min_punctuation_match=min_punctuation, word_starts=word_starts)
    got = propose(drafter, ids, m, limit)
    want = draft_oracle(
        llama3, ids, min_match=min_match, max_match=max_match, max_tokens=max_tokens, max_bytes=max_bytes,
        limit=limit, encode=enc, greedy=longest, cut=cut, min_punctuation=min_punctuation, word_starts=word_starts,
    )
    assert got == want
    # whatever the rule: the draft spells a prefix of the bytes that followed an earlier echo
    if got:
        whole = _spell(llama3, ids)
        start = echo_oracle(whole, min_match, max_match, min_punctuation, word_starts)
        assert whole[start:].startswith(_spell(llama3, got))


@settings(max_examples=60, deadline=None, suppress_health_check=FIXTURES)
@given(data=st.data(), mm=st.tuples(st.integers(1, 4), st.integers(0, 8)).map(lambda t: (t[0], t[0] + t[1])))
def test_incremental_context_equals_a_fresh_drafter(llama3, pool, anything, encode, data, mm):
    min_match, max_match = mm
    inc = TextLookupDrafter(encode, min_match=min_match, max_match=max_match, max_tokens=6, max_bytes=24)
    fresh = lambda: TextLookupDrafter(encode, min_match=min_match, max_match=max_match, max_tokens=6, max_bytes=24)
    m = Matcher(anything)
    ctx: list[int] = []
    tokens = st.lists(st.sampled_from(pool), max_size=30)
    for _ in range(data.draw(st.integers(1, 12), label="steps")):
        op = data.draw(st.sampled_from(["grow", "grow", "grow", "same", "edit", "shrink", "new", "reset"]), label="op")
        if op == "grow":
            ctx = ctx + data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=4), label="more")
        elif op == "edit" and ctx:  # an unrelated context of the same length or longer, one id changed
            at = data.draw(st.integers(0, len(ctx) - 1), label="at")
            other = data.draw(st.sampled_from([t for t in pool if t != ctx[at]]), label="other")
            ctx = ctx[:at] + [other] + ctx[at + 1 :] + data.draw(tokens, label="tail")
        elif op == "shrink":
            ctx = ctx[: data.draw(st.integers(0, len(ctx)), label="keep")]
        elif op == "new":
            ctx = data.draw(tokens, label="new")
        elif op == "reset":
            inc.reset()
        assert propose(inc, ctx, m, 6) == propose(fresh(), ctx, m, 6)


def test_a_new_context_is_detected_by_hand(llama3, anything, encode):
    m = Matcher(anything)
    d = TextLookupDrafter(encode)
    first = encode("one two three. one two")
    assert _spell(llama3, propose(d, first, m)).startswith(b" three. one two")
    # the same length, its first token changed: nothing of the old bytes may be reused
    other = encode("ten")[:1] + first[1:]
    assert other[0] != first[0]
    assert propose(d, other, m) == propose(TextLookupDrafter(encode), other, m)
    second = encode("alpha beta gamma, alpha beta")
    assert _spell(llama3, propose(d, second, m)).startswith(b" gamma, alpha beta")
    assert propose(d, second[:2], m) == []  # shorter: rebuilt, and no echo in " alpha beta"
    d.reset()
    assert propose(d, first, m) == propose(TextLookupDrafter(encode), first, m)


def test_a_different_vocabulary_is_detected(llama3, load_vocab, anything):
    sp_vocab = load_vocab("sentencepiece")
    sp_any = Matcher(Compiler(sp_vocab).compile_regex(r"(.|\n)*"))
    ids = list(range(300, 330)) + list(range(300, 305))  # the same ids spell other bytes there
    d = TextLookupDrafter()
    got_llama = propose(d, ids, Matcher(anything))
    got_sp = propose(d, ids, sp_any)
    assert got_sp == propose(TextLookupDrafter(), ids, sp_any)
    assert got_llama == propose(TextLookupDrafter(), ids, Matcher(anything))
    assert _spell(sp_vocab, ids[30:]) != _spell(llama3, ids[30:])
    assert got_llama and got_sp


# -- the echo of a prompt value into a JSON string -------------------------------------------------
SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 12}, "age": {"type": "integer"}},
    "required": ["name", "age"],
    "additionalProperties": False,
}
PROMPT = "Extract the person: the computer scientist Grace Hopper, 85 years old, and more."


@pytest.mark.parametrize("with_encode", [False, True])
def test_json_echo_is_drafted_though_its_tokens_differ(compiler, llama3, encode, with_encode):
    grammar = compiler.compile_json_schema(SCHEMA)
    m = Matcher(grammar)
    prompt = encode(PROMPT)
    out = encode('{"name":"Grace')
    assert m.accept_tokens(out) == len(out)
    prompt_pieces = [llama3.token_bytes[t] for t in prompt]
    assert b" Grace" in prompt_pieces and b"Grace" not in prompt_pieces  # " Grace" there, "Grace" here
    assert llama3.token_bytes[out[-1]] == b"Grace"
    ctx = prompt + out
    # token n-grams miss it: the output's last token never occurs in the prompt
    assert NgramDrafter().propose(ctx, m, 10, None).tokens == []

    drafter = TextLookupDrafter(encode if with_encode else None, value_ends=False)
    got = propose(drafter, ctx, m)
    # " Hopper" fills the 12 characters of the name; the grammar cuts the ", 85 years" after it
    assert _spell(llama3, got) == b" Hopper"
    # with value ends (the default) the string is closed there: `"` and the start of the forced
    # `,"age":` (the prompt's comma is a phrase end too)
    closed = propose(TextLookupDrafter(encode if with_encode else None), ctx, m)
    assert closed[:-1] == got and _spell(llama3, closed[-1:]) == b'","'
    free = propose(drafter, ctx, Matcher(compiler.compile_regex(r"(.|\n)*")))
    assert _spell(llama3, free).startswith(b" Hopper, 85 years old")
    assert free[: len(got)] == got
    if with_encode:
        assert free == encode(" Hopper, 85 years old, and more.{\"name\":\"Grace")[:10]
    # the cut is where the grammar must reject: one more token is not accepted
    assert m.validate_tokens(free[: len(got) + 1]) == len(got)

    assert m.num_accepted_tokens == len(out)


def test_regex_echo_is_cut_where_the_grammar_must(compiler, llama3, encode):
    m = Matcher(compiler.compile_regex(r"[0-9]{3}-[0-9]{4}"))
    out = encode("555")
    assert m.accept_tokens(out) == len(out)
    ctx = encode("Call 555-0123 now, please.") + out
    for enc in (None, encode):
        got = propose(TextLookupDrafter(enc), ctx, m)
        assert _spell(llama3, got) == b"-0123"  # " now" is not a digit
        assert m.validate_tokens(got) == len(got)


# -- arguments and bounds ------------------------------------------------------------------------
def test_kind_and_defaults():
    d = TextLookupDrafter()
    assert d.value_ends and d.memory is None
    assert d.kind == "lookup"
    assert (d.min_match, d.max_match, d.max_tokens, d.max_bytes) == (3, 64, 10, 96)


def test_min_match_is_respected(llama3, anything, encode):
    m = Matcher(anything)
    ctx = encode("xy QR zw QR")  # the longest repeated suffix is " QR" (3 bytes)
    data = _spell(llama3, ctx)
    assert echo_oracle(data, 1, 64) == data.index(b" QR") + 3
    for min_match in (1, 2, 3):
        assert _spell(llama3, propose(TextLookupDrafter(min_match=min_match), ctx, m)) == b" zw QR"
    assert propose(TextLookupDrafter(min_match=4, word_starts=False), ctx, m) == []
    assert _spell(llama3, propose(TextLookupDrafter(min_match=4), ctx, m)) == b" zw QR"  # ("QR" after a space)
    assert propose(TextLookupDrafter(min_match=len(data), word_starts=False), ctx, m) == []


def test_max_match_bounds_the_match(llama3, anything, encode):
    m = Matcher(anything)
    ctx = encode("Zabcd-Q bcd-R abcd")  # "abcd" at 1; "bcd" most recently in " bcd-R"
    assert _spell(llama3, propose(TextLookupDrafter(max_match=4), ctx, m)) == b"-Q bcd-R abcd"
    assert _spell(llama3, propose(TextLookupDrafter(max_match=3), ctx, m)) == b"-R abcd"


def test_max_tokens_and_max_bytes_bound_the_draft(llama3, anything, encode):
    m = Matcher(anything)
    ctx = encode("the quick brown fox jumps over the lazy dog. the quick")
    full = propose(TextLookupDrafter(encode, max_tokens=50), ctx, m)
    assert _spell(llama3, full) == b" brown fox jumps over the lazy dog. the quick"
    assert propose(TextLookupDrafter(encode, max_tokens=3), ctx, m) == full[:3]
    assert propose(TextLookupDrafter(encode), ctx, m, max_tokens=2) == full[:2]
    assert propose(TextLookupDrafter(encode), ctx, m, max_tokens=0) == []
    short = propose(TextLookupDrafter(encode, max_bytes=10), ctx, m)
    assert _spell(llama3, short) == b" brown fox"
    # the echo starts on a token boundary, so whole context tokens are copied: a byte cap in the
    # middle of a word stops before that word's token
    assert _spell(llama3, propose(TextLookupDrafter(encode, max_bytes=8), ctx, m)) == b" brown"


def test_incomplete_utf8_after_the_echo_is_not_drafted(llama3, anything, encode):
    m = Matcher(anything)
    c3, a9 = llama3.token_id(b"\xc3"), llama3.token_id(b"\xa9")
    x = llama3.token_id("xyz")
    assert _spell(llama3, propose(TextLookupDrafter(min_match=1), [x, c3, a9, x], m)) == b"\xc3\xa9xyz"
    # the echo ends between the two bytes of "\xe9": what follows starts mid-character
    assert propose(TextLookupDrafter(min_match=1), [c3, a9, x, c3], m) == []
    # max_bytes cuts "\xe9" in two: only the complete part is spelled
    ctx = encode("xyz a\xe9 xyz")
    for enc in (None, encode):
        assert _spell(llama3, propose(TextLookupDrafter(enc, max_bytes=3), ctx, m)) == b" a"


def test_context_types(llama3, anything, encode):
    m = Matcher(anything)
    ids = encode("one two three. one two")
    want = propose(TextLookupDrafter(encode), ids, m)
    assert want
    for ctx in (tuple(ids), np.array(ids, dtype=np.int64), torch.tensor(ids)):
        assert propose(TextLookupDrafter(encode), ctx, m) == want


def test_on_a_token_boundary_the_context_tokens_are_copied(llama3, anything, encode):
    """An echo of the model's own output (or of the prompt) that starts where a context token
    starts is drafted as those very tokens, whatever the encoder would say."""
    m = Matcher(anything)
    ids = encode("foo: bar baz; foo:")
    k = len(encode("foo:"))
    assert propose(TextLookupDrafter(), ids, m) == ids[k:]
    assert propose(TextLookupDrafter(encode), ids, m) == ids[k:]


def test_the_encoder_or_greedy_longest_match(llama3, anything, hf_llama3, encode, tokenizer_files):
    """Mid-token, the bytes after the echo are spelled: by the encoder where its tokens spell
    them exactly, else by greedy longest match."""
    import transformers

    m = Matcher(anything)
    colon = next(t for t in (": ", ":  ", ": (", ":\n") if llama3.token_id(t) is not None)
    tok = lambda text: llama3.token_id(text)  # noqa: E731
    # "foo" + ":<rest>" + ... then the suffix "foo:": the echo ends inside the ":<rest>" token
    ctx = [tok("foo"), tok(colon)] + encode(" indented; ") + [tok("foo"), tok(":")]
    after = _spell(llama3, ctx)[4:].decode()
    greedy = propose(TextLookupDrafter(), ctx, m)
    assert _spell(llama3, greedy) == after.encode()
    hf_fast = transformers.PreTrainedTokenizerFast(tokenizer_file=str(tokenizer_files["llama3"] / "tokenizer.json"))
    for source in (encode, hf_llama3, hf_fast):  # a callable, tokenizers.Tokenizer, transformers
        got = propose(TextLookupDrafter(source), ctx, m)
        assert got == encode(after)
        assert _spell(llama3, got) == after.encode()
    # an encoder whose tokens do not spell the bytes (a BOS in front): greedy longest match
    bos = min(llama3.special_ids)
    assert propose(TextLookupDrafter(lambda s: [bos] + encode(s)), ctx, m) == greedy


@pytest.mark.parametrize("kwargs", [
    dict(min_match=0), dict(max_match=0), dict(max_tokens=0), dict(max_bytes=0), dict(max_bytes=-1),
    dict(min_match=5, max_match=4), dict(min_match=True), dict(max_match=2.0), dict(max_tokens="5"),
    dict(max_bytes=None),
])
def test_invalid_arguments_raise(kwargs):
    with pytest.raises(ValueError):
        TextLookupDrafter(**kwargs)


def test_invalid_encoder_raises():
    with pytest.raises(TypeError):
        TextLookupDrafter(encode=42)
