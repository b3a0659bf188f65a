"""NgramDrafter (prompt lookup): exact drafts on hand-written contexts, a brute-force oracle of
"longest suffix n-gram, most recent earlier occurrence, cut where the grammar rejects, else the next
shorter n", the incremental index against a fresh drafter, a real grammar (Llama 3 vocabulary) with
the cut judged by Python's `re` on the tokens' bytes, and argument checks."""

from __future__ import annotations

import re
from typing import Callable, Optional, Sequence

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from constrain import Compiler, Matcher
from constrain.specdec.drafting import Draft
from constrain.specdec.ngram import NgramDrafter


class Banned:
    """A stand-in matcher whose grammar rejects a fixed set of token ids anywhere."""

    def __init__(self, banned: Sequence[int] = ()) -> None:
        self.banned = set(banned)
        self.calls = 0

    def validate_tokens(self, tokens: Sequence[int]) -> int:
        self.calls += 1
        for i, t in enumerate(tokens):
            if t in self.banned:
                return i
        return len(tokens)


def oracle(ctx: Sequence[int], min_n: int, max_n: int, limit: int, validate: Optional[Callable] = None) -> list[int]:
    """Plain-Python brute force of the documented rule."""
    ctx = list(ctx)
    L = len(ctx)
    if limit <= 0:
        return []
    for n in range(max_n, min_n - 1, -1):
        if n >= L:
            continue
        suffix = ctx[L - n :]
        for i in range(L - n - 1, -1, -1):  # most recent earlier occurrence first
            if ctx[i : i + n] == suffix:
                draft = ctx[i + n : i + n + limit]
                cut = len(draft) if validate is None else validate(draft)
                if cut:
                    return draft[:cut]
                break  # only the most recent occurrence of each n is tried
    return []


def propose(drafter: NgramDrafter, ctx, matcher=None, max_tokens: int = 100) -> list[int]:
    d = drafter.propose(ctx, matcher, max_tokens, None)
    assert isinstance(d, Draft) and d.q is None and d.forced == 0
    return d.tokens


# -- hand-written contexts ---------------------------------------------------------------------
def test_kind_and_defaults():
    d = NgramDrafter()
    assert d.kind == "ngram"
    assert (d.max_ngram, d.min_ngram, d.max_tokens) == (3, 1, 10)


def test_echo_of_the_prompt():
    prompt = [1, 2, 3, 4, 5, 6, 7, 8]
    # the output so far repeats the prompt's start: the draft is the rest, running into the output
    assert propose(NgramDrafter(), prompt + [1, 2, 3]) == [4, 5, 6, 7, 8, 1, 2, 3]
    assert propose(NgramDrafter(max_tokens=4), prompt + [1, 2, 3]) == [4, 5, 6, 7]


@pytest.mark.parametrize(
    "ctx, expected",
    [
        ([], []),
        ([4], []),  # the only occurrence is the suffix itself: nothing follows it
        ([1, 2, 3, 4], []),  # no repeat at all
        ([9, 4, 4], [4]),  # the earlier occurrence ends right before the suffix
        ([7, 7, 7, 7], [7]),  # (7, 7, 7) at 0, followed by one token of the suffix
        ([1, 2, 8, 1, 2, 9, 1, 2], [9, 1, 2]),  # most recent earlier occurrence wins
        ([3, 1, 2, 8, 5, 2, 9, 3, 1, 2], [8, 5, 2, 9, 3, 1, 2]),  # longest n wins over recency
        ([5, 6, 1, 2, 9, 9, 5, 6], [1, 2, 9, 9, 5, 6]),
    ],
)
def test_exact_drafts(ctx, expected):
    assert propose(NgramDrafter(), ctx) == expected
    assert oracle(ctx, 1, 3, 100) == expected


def test_min_and_max_ngram_bound_the_match():
    ctx = [1, 2, 3, 9, 5, 3]  # only a 1-gram repeats
    assert propose(NgramDrafter(min_ngram=2), ctx) == []
    assert propose(NgramDrafter(min_ngram=1), ctx) == [9, 5, 3]
    ctx = [1, 2, 3, 7, 0, 2, 3, 8, 1, 2, 3]  # (1, 2, 3) at 0, (2, 3) most recently at 5
    assert propose(NgramDrafter(max_ngram=3), ctx) == [7, 0, 2, 3, 8, 1, 2, 3]
    assert propose(NgramDrafter(max_ngram=2), ctx) == [8, 1, 2, 3]


def test_max_tokens_is_the_smaller_of_the_call_and_the_drafter():
    ctx = list(range(20)) + [0, 1]
    assert propose(NgramDrafter(max_tokens=5), ctx, max_tokens=100) == [2, 3, 4, 5, 6]
    assert propose(NgramDrafter(max_tokens=5), ctx, max_tokens=3) == [2, 3, 4]
    assert propose(NgramDrafter(max_tokens=5), ctx, max_tokens=0) == []
    assert len(propose(NgramDrafter(max_tokens=50), ctx, max_tokens=50)) == 20  # up to the end


def test_grammar_cut_and_fallback_to_a_shorter_ngram():
    ctx = [3, 1, 2, 8, 5, 2, 9, 3, 1, 2]
    d = NgramDrafter()
    assert propose(d, ctx, Banned([3])) == [8, 5, 2, 9]  # cut before the first rejected token
    assert propose(d, ctx, Banned([5])) == [8]
    # 8 rejected first: (1, 2) most recently at 1 gives the same draft (skipped without asking
    # the grammar again); (2,) most recently at 5 gives [9, 3, 1, 2]
    m = Banned([8])
    assert propose(d, ctx, m) == [9, 3, 1, 2]
    assert m.calls == 2
    assert propose(d, ctx, Banned([8, 9])) == []
    assert propose(d, ctx, Banned([8, 9]), max_tokens=0) == []


def test_context_types_and_rng_unused():
    ctx = [1, 2, 8, 1, 2, 9, 1, 2]
    expected = [9, 1, 2]
    for c in (ctx, tuple(ctx), np.array(ctx, dtype=np.int64), torch.tensor(ctx), range(3)):
        got = NgramDrafter().propose(c, None, 10, rng=object())
        assert got.tokens == (expected if not isinstance(c, range) else [])
        assert all(type(t) is int for t in got.tokens)


def test_new_request_is_detected():
    d = NgramDrafter()
    assert propose(d, [1, 2, 3, 4, 5, 1, 2]) == [3, 4, 5, 1, 2]
    assert propose(d, [1, 2]) == []  # shorter: rebuilt
    assert propose(d, [6, 2, 7, 6]) == [2, 7, 6]  # differs at the first position
    # same first and last stored tokens, different middle: the spot check takes it for an
    # extension, the stale hit (2,) -> 1 is caught against the context, and the index rebuilt
    d = NgramDrafter()
    assert propose(d, [1, 2, 3, 4, 5]) == []
    assert propose(d, [1, 7, 7, 7, 5, 6, 2]) == [] == oracle([1, 7, 7, 7, 5, 6, 2], 1, 3, 100)
    assert propose(d, [1, 7, 7, 7, 5, 6, 2, 7]) == [5, 6, 2, 7]  # needs the rebuilt (7,) -> 3
    d.reset()
    assert propose(d, [4, 4]) == [4]


def test_the_given_matcher_is_never_advanced(lower_grammar, hf_llama3):
    cat, sat, dot = (hf_llama3.encode(w, add_special_tokens=False).ids for w in (" cat", " sat", "."))
    assert len(cat) == len(sat) == len(dot) == 1
    m = Matcher(lower_grammar)
    assert m.accept_tokens(cat) == 1
    ctx = cat + sat + dot + cat
    assert propose(NgramDrafter(), ctx, m) == sat  # " sat. cat" cut where the grammar rejects "."
    assert propose(NgramDrafter(), ctx + sat, m) == []  # "." first: rejected, nothing shorter
    assert m.num_accepted_tokens == 1


@pytest.mark.parametrize("kwargs", [
    dict(max_ngram=0), dict(min_ngram=0), dict(min_ngram=-1), dict(max_ngram=2, min_ngram=3),
    dict(max_tokens=0), dict(max_tokens=-3), dict(max_ngram=2.0), dict(max_tokens="5"),
    dict(min_ngram=True), dict(max_ngram=None),
])
def test_invalid_arguments_raise(kwargs):
    with pytest.raises(ValueError):
        NgramDrafter(**kwargs)


@pytest.mark.parametrize("max_tokens", [-1, 2.5, True, None])
def test_invalid_max_tokens_in_propose_raises(max_tokens):
    with pytest.raises(ValueError, match="max_tokens"):
        NgramDrafter().propose([1, 2, 1], None, max_tokens, None)


# -- the oracle ----------------------------------------------------------------------------------
tokens = st.lists(st.integers(0, 4), max_size=40)
sizes = st.tuples(st.integers(1, 4), st.integers(0, 3)).map(lambda t: (t[0], t[0] + t[1]))


@settings(max_examples=300, deadline=None)
@given(ctx=tokens, nm=sizes, cap=st.integers(1, 12), limit=st.integers(0, 12), banned=st.sets(st.integers(0, 4), max_size=3))
def test_matches_the_brute_force_oracle(ctx, nm, cap, limit, banned):
    min_n, max_n = nm
    d = NgramDrafter(max_ngram=max_n, min_ngram=min_n, max_tokens=cap)
    m = Banned(banned)
    assert propose(d, ctx, m, limit) == oracle(ctx, min_n, max_n, min(cap, limit), m.validate_tokens)


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    nm=sizes,
    banned=st.sets(st.integers(0, 4), max_size=2),
)
def test_incremental_index_equals_a_fresh_drafter(data, nm, banned):
    min_n, max_n = nm
    inc = NgramDrafter(max_ngram=max_n, min_ngram=min_n, max_tokens=6)
    m = Banned(banned)
    ctx: list[int] = []
    for _ in range(data.draw(st.integers(1, 25), label="steps")):
        op = data.draw(st.sampled_from(["grow", "grow", "grow", "same", "new", "reset"]), label="op")
        if op == "grow":
            ctx = ctx + data.draw(st.lists(st.integers(0, 4), min_size=1, max_size=4), label="more")
        elif op == "new":  # a new request the length/spot check must notice: shorter or not
            # equal at the last stored position
            new = data.draw(st.lists(st.integers(0, 4), max_size=30), label="new")
            if len(new) >= len(ctx) and ctx:
                new[len(ctx) - 1] = (ctx[-1] + 1) % 5
            ctx = new
        elif op == "reset":
            inc.reset()
            ctx = data.draw(st.lists(st.integers(0, 4), max_size=30), label="fresh")
        expected = oracle(ctx, min_n, max_n, 6, m.validate_tokens)
        assert propose(inc, ctx, m) == expected
        assert propose(NgramDrafter(max_ngram=max_n, min_ngram=min_n, max_tokens=6), ctx, m) == expected


@settings(max_examples=100, deadline=None)
@given(old=st.lists(st.integers(0, 2), min_size=1, max_size=25), new=st.lists(st.integers(0, 2), max_size=30))
def test_any_context_switch_gives_a_genuine_lookup_draft(old, new):
    """Without reset, a new context the spot check mistakes for an extension may miss matches,
    but a draft is always the tokens after an earlier occurrence of a suffix n-gram."""
    d = NgramDrafter(max_ngram=3, min_ngram=1, max_tokens=8)
    propose(d, old)
    got = propose(d, new)
    L = len(new)
    if got:
        assert any(
            new[i : i + n] == new[L - n :] and new[i + n : i + n + len(got)] == got
            and (len(got) == 8 or i + n + len(got) == L)
            for n in range(1, 4) if n < L for i in range(L - n)
        )
    d.reset()
    assert propose(d, new) == oracle(new, 1, 3, 8)


# -- a real grammar ------------------------------------------------------------------------------
GRAMMAR = r"[a-z ]{0,60}"  # prefix-closed: a prefix is viable iff it is in the language


@pytest.fixture(scope="module")
def lower_grammar(llama3):
    return Compiler(llama3).compile_regex(GRAMMAR)


@pytest.fixture(scope="module")
def hf_llama3(tokenizer_files):
    return Tokenizer.from_file(str(tokenizer_files["llama3"] / "tokenizer.json"))


WORDS = [" the", " cat", " sat", " on", " mat", ".", ",", "!", " Dog", " 42", " a"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    prompt=st.lists(st.sampled_from(WORDS), min_size=1, max_size=25),
    output=st.lists(st.sampled_from([w for w in WORDS if re.fullmatch(GRAMMAR, w)]), max_size=6),
    limit=st.integers(1, 10),
)
def test_real_grammar_cut_where_re_rejects(prompt, output, limit, lower_grammar, hf_llama3, llama3):
    ids = lambda text: hf_llama3.encode(text, add_special_tokens=False).ids
    out_ids = ids("".join(output))
    m = Matcher(lower_grammar)
    assert m.accept_tokens(out_ids) == len(out_ids)
    out_bytes = b"".join(llama3.token_bytes[t] for t in out_ids)

    def re_validate(draft):  # the longest prefix whose text `re` still accepts
        text = out_bytes
        for j, t in enumerate(draft):
            text += llama3.token_bytes[t]
            if not re.fullmatch(GRAMMAR.encode(), text):
                return j
        return len(draft)

    ctx = ids("".join(prompt)) + out_ids
    got = propose(NgramDrafter(max_tokens=10), ctx, m, limit)
    assert got == oracle(ctx, 1, 3, limit, re_validate)
    assert m.num_accepted_tokens == len(out_ids)


def test_real_grammar_cut_by_hand(lower_grammar, hf_llama3, llama3):
    ids = lambda text: hf_llama3.encode(text, add_special_tokens=False).ids
    prompt = ids(" the cat sat on the mat. the dog")
    out = ids(" the cat")
    m = Matcher(lower_grammar)
    assert m.accept_tokens(out) == len(out)
    got = propose(NgramDrafter(), prompt + out, m)
    # the copy " sat on the mat" stops where the grammar rejects "."
    assert b"".join(llama3.token_bytes[t] for t in got) == b" sat on the mat"
    free = propose(NgramDrafter(), prompt + out, None)
    assert b"".join(llama3.token_bytes[t] for t in free).startswith(b" sat on the mat.")
