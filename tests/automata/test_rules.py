"""automata/rules.py, where a RuleSet judges its own call edges: a call of a greedy rule that
nothing may follow is dropped (RuleSet._live_calls)."""

from __future__ import annotations

import pytest

from constrain import Compiler, Matcher


@pytest.mark.parametrize("text, offered, not_offered", [
    ('start: A "b" | "c"\nA: /a(?!b)/', [b"c"], [b"a"]),  # A's end refuses the b that alone may follow it
    ('start: A "a" | "b"\nA: /a+/', [b"b"], [b"a", b"aa"]),  # A would read the a that alone may follow it
    ('start: (A "b" | "c") ";"\nA: /a(?!b)/', [b"c"], [b"a"]),
    ('start: A "b"?\nA: /a(?!b)/', [b"a"], [b"ab"]),  # kept: the text may end after A
    ('start: A N | "c"\nA: /a(?!b)/\nN: /[0-9]+/', [b"a", b"c"], [b"ab"]),  # kept: a terminal N may follow A
    ('start: A N | "c"\nA: /a(?![0-9])/\nN: /[0-9]+/', [b"c"], [b"a", b"a1"]),  # N starts with what A refuses
    ('start: A n | "c"\nn: "1" | n "2"\nA: /a(?![0-9])/', [b"c"], [b"a", b"a1"]),  # n inlined into start
    ('start: A e | "c"\ne: "1" | "(" e ")"\nA: /a(?![0-9])/', [b"a", b"c"], [b"a1"]),  # kept: a rule call (e), not judged
    ('start: A "b" | "c"\nA: /ab?c|a(?!b)/', [b"a", b"ac", b"c"], [b"abb"]),  # kept: A's end after ac lets b follow
    ('start: A "b" | "c"\nA: /ab(?!b)|a(?![bd])|ac(?!b)/', [b"c"], [b"a", b"ab"]),  # every end refuses b (one per state)
])
def test_a_terminal_that_nothing_may_follow_is_not_offered(llama3, text, offered, not_offered):
    """Such a call is dropped: its text would leave a mask of no token, EOS included, and Lark
    accepts no text through it either."""
    m = Matcher(Compiler(llama3).compile_lark(text))
    allowed = {llama3.token_bytes[t] for t in m.allowed_token_ids().tolist()}
    assert set(offered) <= allowed and not set(not_offered) & allowed
    assert all(t[:1] in (b"a", b"b", b"c") for t in allowed if t)
