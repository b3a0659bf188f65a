"""Regex → DFA agrees with Python's `re` (ASCII shorthands) on membership and on prefixes."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from constrain import GrammarError, LimitExceededError, Limits
from constrain.automata import regex_to_dfa

PATTERNS = [
    r"[0-9]+",
    r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?",
    r"(ab|a)*b?c{2,4}",
    r'"([^"\\]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"',
    r"(?i)hello|world",
    r"[a-zé中😀]{0,5}x",
    r"\w+@\w+\.(com|org)",
    r"(a|b)*a(a|b){6}",
    r".{2,8}",
    r"\d{3}-\d{3}-\d{4}",
    r"(?s:.)\s\S",
]

alphabet = st.sampled_from(list("ab0c9-.eE+\"\\/uFx@hellowrdHEL é中😀\n\t_"))


def _fullmatch(dfa, text: str) -> bool:
    s = dfa.walk(0, text.encode("utf-8"))
    return s >= 0 and dfa.is_accepting(s)


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_membership_matches_python_re(pattern, data):
    dfa = regex_to_dfa(pattern)
    rx = re.compile(pattern, re.ASCII)
    text = data.draw(st.one_of(st.from_regex(rx, fullmatch=True), st.text(alphabet, max_size=12)))
    assert _fullmatch(dfa, text) == bool(rx.fullmatch(text)), text


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_every_prefix_of_a_match_is_alive(pattern, data):
    dfa = regex_to_dfa(pattern)
    text = data.draw(st.from_regex(re.compile(pattern, re.ASCII), fullmatch=True))
    encoded = text.encode("utf-8")
    for k in range(len(encoded) + 1):
        assert dfa.walk(0, encoded[:k]) >= 0


def test_dfa_is_minimal_on_known_sizes():
    assert regex_to_dfa("a{1000}").n_states == 1001
    assert regex_to_dfa("(a|b)*a(a|b){8}").n_states == 512
    assert regex_to_dfa("abc|abd").n_states == 4


def test_forced_bytes_follow_single_paths():
    dfa = regex_to_dfa(r'\{"name": "[a-z]+"\}')
    assert dfa.forced_bytes(0) == b'{"name": "'
    end = dfa.walk(0, b'{"name": "x')
    assert dfa.forced_bytes(end) == b""  # another letter or the closing quote
    s = dfa.walk(0, b'{"name": "x"')
    assert dfa.forced_bytes(s) == b"}"
    accept = dfa.walk(0, b'{"name": "x"}')
    assert dfa.forced_bytes(accept) == b""


def test_forced_bytes_include_multibyte_characters():
    dfa = regex_to_dfa("é!")
    assert dfa.forced_bytes(0) == "é!".encode()


def test_state_limit_names_the_knob():
    with pytest.raises(LimitExceededError) as info:
        regex_to_dfa("(a|b)*a(a|b){12}", Limits(max_dfa_states=1000))
    assert "max_dfa_states" in str(info.value)


def test_nfa_limit_stops_blowups():
    with pytest.raises(LimitExceededError) as info:
        regex_to_dfa("((a{1000}){1000}){1000}")
    assert "max_nfa_states" in str(info.value)


def test_time_limit_is_enforced():
    with pytest.raises(LimitExceededError) as info:
        regex_to_dfa("(a|b)*a(a|b){15}", Limits(max_compile_seconds=0.01))
    assert "max_compile_seconds" in str(info.value)


def test_empty_language_is_an_error():
    with pytest.raises(GrammarError, match="matches no string"):
        regex_to_dfa(r"[^\x00-\U0010FFFF]")


_atoms = st.sampled_from(["a", "b", "[ab]", "[^a]", "é", ".", "[a-z]"])
regexes = st.recursive(
    _atoms,
    lambda sub: st.one_of(
        st.tuples(sub, sub).map("".join),
        st.tuples(sub, sub).map(lambda t: f"({t[0]}|{t[1]})"),
        sub.map(lambda s: f"({s})*"),
        sub.map(lambda s: f"({s})?"),
        sub.map(lambda s: f"({s}){{1,3}}"),
    ),
    max_leaves=6,
)


def _naive_dfa(pattern: str) -> tuple[list[list[int]], list[bool]]:
    """Subset construction over single bytes straight from the Thompson NFA, with frozensets."""
    from constrain.automata.nfa import build_nfa
    from constrain.automata.regex_parser import parse_regex

    nfa = build_nfa(parse_regex(pattern), 100_000)
    eps: dict[int, list[int]] = {}
    for u, v in nfa.eps_array().tolist():
        eps.setdefault(u, []).append(v)
    edges: dict[int, list[tuple[int, int, int]]] = {}
    for u, lo, hi, v in nfa.edge_array().tolist():
        edges.setdefault(u, []).append((lo, hi, v))

    def closure(seeds) -> frozenset:
        out, todo = set(seeds), list(seeds)
        while todo:
            for v in eps.get(todo.pop(), []):
                if v not in out:
                    out.add(v)
                    todo.append(v)
        return frozenset(out)

    index = {closure([nfa.start]): 0}
    order = list(index)
    rows = []
    for s in order:
        row = []
        for byte in range(256):
            t = closure([v for u in s for lo, hi, v in edges.get(u, []) if lo <= byte <= hi])
            if not t:
                row.append(-1)
                continue
            if t not in index:
                index[t] = len(order)
                order.append(t)
            row.append(index[t])
        rows.append(row)
    return rows, [nfa.final in s for s in order]


@settings(max_examples=120, deadline=None)
@given(regexes)
def test_determinize_and_minimize_match_a_naive_construction(forms, pattern):
    """The numba subset construction and minimization give exactly the minimal DFA that
    frozenset subsets over single bytes and Moore refinement give."""
    minimal_form, dfa_form = forms
    expected = minimal_form(*_naive_dfa(pattern))
    try:
        dfa = regex_to_dfa(pattern)
    except GrammarError:
        assert expected == ((), ())
        return
    assert dfa_form(dfa) == expected
    assert dfa.n_states == len(expected[0])  # already minimal


def test_accepts_reads_from_the_start_state():
    from constrain.automata import regex_to_dfa

    dfa = regex_to_dfa("ab+")
    assert dfa.accepts(b"abb") and not dfa.accepts(b"a") and not dfa.accepts(b"abc") and not dfa.accepts(b"")


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 30), st.integers(1, 4), st.randoms(use_true_random=False))
def test_acyclic_blocks_equal_partition_refinement(n, k, rnd):
    """Finite languages take the one-pass minimization (minimize._acyclic_blocks): the same
    partition of the states as Hopcroft-style refinement; a cycle sends them to refinement."""
    import numpy as np

    from constrain.automata.canonical import trim
    from constrain.automata.minimize import _acyclic_blocks, equivalence_blocks

    table = np.array([[rnd.choice([-1, rnd.randrange(q + 1, n)]) if q + 1 < n else -1 for _ in range(k)] for q in range(n)],
                     dtype=np.int32).reshape(n, k)
    accepting = np.array([rnd.random() < 0.4 for _ in range(n)], dtype=np.bool_)
    trimmed, _ = trim(table, accepting)
    blocks, acyclic = _acyclic_blocks(trimmed, accepting, int((trimmed >= 0).sum()))
    assert acyclic
    expected = equivalence_blocks(trimmed, accepting)
    pairs = {(int(a), int(b)) for a, b in zip(blocks, expected)}
    assert len(pairs) == len(set(blocks.tolist())) == len(set(expected.tolist()))  # a bijection
    trimmed[0, 0] = 0  # a loop
    assert not _acyclic_blocks(trimmed, accepting, int((trimmed >= 0).sum()))[1]
