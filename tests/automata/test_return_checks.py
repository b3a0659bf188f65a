"""Returns on condition of the byte after the next one: the sets, the CHECK rules, and Lark's lexing."""

from __future__ import annotations

import lark
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constrain.automata import ir
from constrain.automata.refusals import END_OF_TEXT
from constrain.automata.return_checks import CHECK_PREFIX, find_checks, second_byte_checks, with_check_rules
from constrain.automata.rules import _rule_dfa, compile_rules
from constrain.automata.stack_semantics import StackSemantics
from constrain.grammar.lark.translate import lark_rules

DIGIT_BITS = sum(1 << b for b in range(ord("0"), ord("9") + 1))
ALL = (1 << 256) - 1


def _dfa(node: ir.Node):
    return _rule_dfa(node, 10_000, 10_000, 3600.0)[0]


def test_a_number_returns_before_a_dot_only_where_no_digit_follows():
    digits = ir.repeat(ir.chars([(ord("0"), ord("9"))]), 1, None)
    dfa = _dfa(ir.concat(digits, ir.repeat(ir.concat(ir.literal("."), digits), 0, 1)))
    found = second_byte_checks(dfa, lambda q: 0)
    after_digits = int(dfa.table[0, dfa.byte_classes[ord("1")]])
    continuations = sum(1 << b for b in range(0x80, 0xC0))  # (no UTF-8 text holds one after ".")
    assert found == {after_digits: {ord("."): (ALL & ~DIGIT_BITS & ~continuations) | END_OF_TEXT}}  # ("1." needs a digit)


def test_a_lookahead_past_a_byte_gives_its_set_and_a_refusal_blocks_the_return():
    # S: /(?:[^$"]|\$(?!\{))+/ as end_window.py builds it: after "$" a "{" is refused, read or end
    node = lark_rules(r'start: "\"" S "\""' + "\n" + r'S: /(?:[^$"]|\$(?!\{))+/', "start")
    dfa, refused = node.rules["S"].dfa, node.refused["S"]
    found = second_byte_checks(dfa, refused.__getitem__)
    assert found and all(by_byte == {ord("$"): 1 << ord("{")} for by_byte in found.values())
    assert second_byte_checks(dfa, lambda q: ALL) == {}  # (an end that refuses every byte: no return at all)


def test_check_rules_are_one_per_set_and_reused_by_name():
    number = ir.Embedded(_dfa(ir.concat(ir.repeat(ir.literal("1"), 1, None), ir.repeat(ir.literal(".1"), 0, 1))))
    other = ir.Embedded(_dfa(ir.concat(ir.literal("2"), ir.repeat(ir.literal(".2"), 0, 1))))
    names, nodes, greedy, refused = ("start", "A", "B"), (ir.literal("x"), number, other), {"A", "B"}, {}
    found = find_checks(names, nodes, greedy, refused)
    assert sorted(found) == ["A", "B"]
    made = with_check_rules(names, nodes, greedy, refused, found)
    checks = [n for n in made[0] if n.startswith(CHECK_PREFIX)]
    assert len(checks) == 2 and set(checks) <= made[2]  # (C differs: not "1" after A's ".", not "2" after B's)
    again = with_check_rules(*made[:4], found)
    assert again[0] == made[0] and again[4] == made[4]
    assert find_checks(names, nodes, greedy, refused, lambda name, dfa, f: f if name == "A" else {}).keys() == {"A"}
    c = made[0].index(checks[0])
    assert made[3][checks[0]] == (ALL | END_OF_TEXT) & ~int(checks[0][len(CHECK_PREFIX):], 16)
    assert made[1][c].dfa.accepting.tolist() == [True] and (made[1][c].dfa.table < 0).all()


TEMPLATE = r'''
start: (TEXT | tag)*
tag: "{{" NAME "}}"
NAME: /[a-z]+/
TEXT: /([^{]|\{(?!\{))+/
'''
HCL_STRING = r'''
start: "\"" (STRING_CHARS | interpolation)* "\""
interpolation: "${" NAME "}"
NAME: /[a-z]+/
STRING_CHARS: /(?:[^$"]|\$(?!\{))+/
'''
ATTRIBUTES = r'''
start: atom ("." NAME)*
atom: NUMBER | NAME
NUMBER: /[0-9]+(\.[0-9]+)?/
NAME: /[a-z]+/
'''
CASES = {  # grammar -> (alphabet for random texts, texts Lark accepts that need a conditional return)
    "template": (TEMPLATE, "a{} ", ["Hello {{name}}", "x{y{{a}}", "{ {{a}}{", "a{{b}}c{{d}}"]),
    "hcl": (HCL_STRING, '"a${}', ['"a${b}"', '"$${a}"', '"a$b${c}d"']),
    "attributes": (ATTRIBUTES, "1a.", ["1.real", "12.x.y", "10.a.b"]),
}


def _semantics(grammar: str, checks: bool) -> StackSemantics:
    low = lark_rules(grammar, "start")
    return StackSemantics(compile_rules(low.rules, low.start, greedy=low.greedy, refused=low.refused, return_checks=checks))


def _accepts(sem: StackSemantics, text: str) -> bool:
    state = sem.advance(sem.initial(), text.encode())
    return state is not None and sem.is_complete(state)


def _lark_accepts(parser: lark.Lark, text: str) -> bool:
    try:
        parser.parse(text)
    except lark.exceptions.LarkError:
        return False
    return True


@pytest.mark.parametrize("case", sorted(CASES))
def test_texts_before_a_lookahead_are_accepted_with_checks_only(case):
    grammar, _, texts = CASES[case]
    parser, plain, checked = lark.Lark(grammar), _semantics(grammar, False), _semantics(grammar, True)
    for text in texts:
        assert _lark_accepts(parser, text), text
        assert _accepts(checked, text) and not _accepts(plain, text), text


@pytest.mark.parametrize("case", sorted(CASES))
def test_with_checks_the_language_is_lark_s(case):
    grammar, alphabet, _ = CASES[case]
    parser, sem = lark.Lark(grammar), _semantics(grammar, True)

    @settings(max_examples=300, deadline=None, derandomize=True)
    @given(st.text(alphabet=alphabet, max_size=10))
    def check(body: str) -> None:
        text = '"' + body + '"' if case == "hcl" else body
        assert _accepts(sem, text) == _lark_accepts(parser, text), text

    check()


def test_a_rule_with_more_exit_rows_than_the_walks_tell_apart_keeps_no_checks(llama3):
    """270 states each returning on condition before its own pair of bytes: more sets than the
    walks' uint8 exit kinds hold. The rule keeps no checks (it refuses those texts, as before
    checks), and masks work; a review found the first mask raising OverflowError."""
    import itertools

    from constrain import Compiler, Matcher

    pairs = list(itertools.combinations("abcdefghijklmnopqrstuvwxy", 2))[:270]
    alternatives = "|".join(f"k{i:03d}(?:{a}z|{b}z)?" for i, (a, b) in enumerate(pairs))
    grammar = Compiler(llama3).compile_lark(f"start: T W\nT: /(?:{alternatives})/\nW: /[a-z0-9]+/")
    rules = grammar.automaton.rules
    assert not rules.checks[rules.names.index("T")]
    assert not grammar.accepts(b"k000ab")  # (Lark: T k000, W ab; refused here as before checks)
    m = Matcher(grammar)
    assert m.allowed_token_ids().size and m.accept_token(llama3.token_bytes.index(b"k"))
    assert m.allowed_token_ids().size
    few = Compiler(llama3).compile_lark(f"start: T W\nT: /(?:{alternatives.split('|k010')[0]})/\nW: /[a-z0-9]+/")
    assert few.accepts(b"k000ab") and any(few.automaton.rules.checks)  # (ten such states: checks kept)
