"""Lark grammars: the texts we accept are the texts Lark's own Earley parser accepts.

Lark is the oracle: random texts over each grammar's characters are complete for us exactly
when `lark.Lark(grammar).parse` succeeds; random masked walks with a real tokenizer end in texts
Lark parses; masks equal the byte-by-byte steps of the same automaton.
"""

from __future__ import annotations

import functools
import random

import lark
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from constrain import Compiler, GrammarError, Matcher, UnsupportedGrammarError

from token_choices import text_ids  # tests/support

JSON = r'''
?start: value
?value: object | array | string | SIGNED_NUMBER -> number | "true" -> true | "false" -> false | "null" -> null
array  : "[" [value ("," value)*] "]"
object : "{" [pair ("," pair)*] "}"
pair   : string ":" value
string : ESCAPED_STRING
%import common.ESCAPED_STRING
%import common.SIGNED_NUMBER
%import common.WS
%ignore WS
'''

CALC = r'''
?start: sum
?sum: product | sum "+" product -> add | sum "-" product -> sub
?product: atom | product "*" atom -> mul | product "/" atom -> div
?atom: NUMBER -> number | "-" atom -> neg | NAME -> var | "(" sum ")"
%import common.CNAME -> NAME
%import common.NUMBER
%import common.WS_INLINE
%ignore WS_INLINE
'''

# Keywords beside names: "if" is a name's prefix; Lark's terminals match on their own, each the
# longest it can ("ifx" is a name, "if x" a keyword and a name); comments are ignored.
KEYWORDS = r'''
start: stmt+
stmt: "if" NAME ":" NAME ";" -> cond
    | NAME "=" (NAME | INT) ";" -> assign
NAME: /[a-z]+/
COMMENT: /#[^\n]*\n/
%import common.INT
%ignore " "
%ignore COMMENT
'''

# An ignored run of spaces that a terminal may start with: the ignored text stays a greedy
# rule of its own (elsewhere it is inlined as a plain regex).
SPACES = r'''
start: (WORD | ARROW)+
WORD: /[a-z]+/
ARROW: / *->/
%ignore / +/
'''

# Lazy terminals with a greedy tail: re ends `.*?` at its first chance but lets what follows take
# all it can: A is "a", the text up to the first "b", and every "c" after it (so B, which starts
# with "c", never follows A directly); STRING takes its "i" wherever one follows the quote
# (lark.lark's string and regex terminals: terminals/lazy_tail.py).
LAZY_TAIL = r'''
start: A B? (" " A B?)*
A: /a.*?bc*/
B: "cd"
'''

FLAGGED = r'''
start: (STRING | NAME) (";" (STRING | NAME))*
STRING: _STRING "i"?
_STRING: /"[^"\n]*?"/
NAME: /[a-z]+/
'''

# Negative lookaheads of one character at a terminal's end see the text after it, as in Lark
# (HCL2's EQ and COLON, lark.lark's OP, Lark's Python DEC_NUMBER; terminals/end_guard.py): a
# branch that refuses (OP's `?`, NUM's `0`) beside one that does not, a flag that folds the
# refused letters, an ignored space that a refused byte may follow, and a positive one (CALL:
# only a parenthesis may follow, not a space).
GUARDED = r'''
start: item (";" item)*
item: NAME EQ value | NAME COLON value | NAME OP NAME? | NUM | KW NAME? | CALL "(" NUM? ")"
value: NAME | NUM | "=" NAME | ">" NAME | ":" NAME
EQ: /[ \t]*=(?!=|>)/
COLON: /[ \t]*:(?!:)/
OP: /[+*]|[?](?![a-z])/
NUM: /[1-9][0-9]*|0(?![1-9])/
KW: /k(?![a-z])/i
CALL: /[a-z]+(?=\()/
NAME: /[a-z]+/
%ignore " "
'''

GRAMMARS = {
    "json": (JSON, '{}[],:"ab\\ 1.-e+tru'),
    "calc": (CALC, "ab1 +-*/().e"),
    "keywords": (KEYWORDS, "ifx: =;1 #\n"),
    "spaces": (SPACES, "ab ->"),
    "lazy_tail": (LAZY_TAIL, "abcd "),
    "flagged": (FLAGGED, '"ai;x'),
    "guarded": (GUARDED, "ak=:>?+01 ;K()"),
}


@pytest.fixture(scope="module")
def compiled(llama3):
    compiler = Compiler(llama3)
    return {name: compiler.compile_lark(text) for name, (text, _) in GRAMMARS.items()}


@pytest.fixture(scope="module")
def parsers(lark_accepts):
    """Per grammar: does Lark's Earley parser accept a text?"""
    return {name: functools.partial(lark_accepts, lark.Lark(text, parser="earley")) for name, (text, _) in GRAMMARS.items()}




def _we_accept(grammar, text: str) -> bool:
    sem = grammar.automaton.semantics
    state = sem.advance(sem.initial(), text.encode())
    return state is not None and sem.is_complete(state)


EXAMPLES = {
    "json": ['{"a": [1, 2.5, -3e4], "b" : {"c": null}}', ' [true,false , "x\\"y"] ', "12", '"a\\\\"', "[]"],
    "calc": ["1+2*3", "(a - -b) / 4.5e3", "x", " 1 + 2 "],
    "keywords": ["if x: y;", "ifx = 1;", "ifx: y;", "a=b;c=d;", "if x:y; # note\nz = 3;"],
    "spaces": ["ab ->cd", "ab  -> cd", "->", " ab"],
    "lazy_tail": ["ab", "abcc", "a b ab", "adb abc", "ab abcc"],
    "flagged": ['"a"i', '"a";"b"i;x', '"ai"i', "ai;i", '""i'],
    "guarded": ["a=b", "a = >b", "a: :b", "a? b", "a+b", "a?", "0;10", "k b", "K", "a=0", "a =b;x:=y", "f()", "f(1 )"],
}
REJECTED = {
    "json": ['{"a" 1}', "[1 2]", '"abc', "-", "[1,]", '"a"b"', "01x"],
    "calc": ["1+", "()", "1 2", "a b"],
    "keywords": ["ab", "ab cd;", "x = 1", "if xy;", "if x:y z;"],
    "spaces": ["", "a-", "ab - >"],
    "lazy_tail": ["abcd", "a", "abd", "ab cd", "abccd", "abbc"],
    "flagged": ['"a"ix', '"a"ii', '""i0', '"a"x'],
    "guarded": ["a==b", "a=>b", "a::b", "a?b", "01", "kb", "Kb", "kB", "a=01", "a =>b", "f ()", "f"],
}


@pytest.mark.parametrize("name", list(GRAMMARS))
def test_examples_agree_with_lark(name, compiled, parsers):
    for text in EXAMPLES[name]:
        assert parsers[name](text), text
        assert _we_accept(compiled[name], text), text
    for text in REJECTED[name]:
        assert not parsers[name](text), text
        assert not _we_accept(compiled[name], text), text


@pytest.mark.parametrize("name", list(GRAMMARS))
def test_random_texts_agree_with_lark(name, compiled, parsers):
    alphabet = GRAMMARS[name][1]

    @settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(text=st.text(alphabet=alphabet, max_size=12))
    def check(text):
        assert _we_accept(compiled[name], text) == parsers[name](text), repr(text)

    check()


CLOSERS = {b";", b"\n", b"}", b"]", b")", b'"', b"1", b"->", b"b"}


@pytest.mark.parametrize("name", list(GRAMMARS))
def test_random_masked_walks_end_in_texts_lark_parses(name, compiled, parsers, llama3, masked_walk):
    rng = random.Random(3)
    finished = 0
    for _ in range(8):
        m = Matcher(compiled[name])
        tokens = masked_walk(m, llama3, rng, 60, CLOSERS)
        if m.is_accepting():
            finished += 1
            text = b"".join(llama3.token_bytes[t] for t in tokens).decode()
            assert parsers[name](text), repr(text)
    assert finished



@pytest.mark.parametrize("name, prefix", [
    ("json", b'{"a" : [1'), ("keywords", b"if ab"), ("guarded", b"a ="), ("guarded", b"k;0"), ("guarded", b"ab?"),
    ("guarded", b"k;f"),
])
def test_masks_equal_the_byte_steps(name, prefix, compiled, llama3, byte_step_oracle):
    _masks_equal_the_byte_steps(compiled[name], prefix, llama3, byte_step_oracle)


@pytest.mark.parametrize("prefix", [b"x", b"xa", b"xab,", b"x ,", b"xa ,b", b"x,,"])
def test_masks_equal_the_byte_steps_where_terminals_may_match_nothing(prefix, llama3, byte_step_oracle):
    grammar = Compiler(llama3).compile_lark('start: "x" T ("," T)* "y"\nT: /[a-c]*/\n%ignore " "')
    _masks_equal_the_byte_steps(grammar, prefix, llama3, byte_step_oracle)


def _masks_equal_the_byte_steps(grammar, prefix: bytes, llama3, byte_step_oracle) -> None:
    m = Matcher(grammar)
    assert m.accept_tokens([llama3.token_bytes.index(bytes([b])) for b in prefix]) == len(prefix)
    bm = np.zeros((llama3.size + 31) // 32, dtype=np.int32)
    rng = random.Random(7)
    for step in range(3):
        m.fill_next_token_bitmask(bm)
        ours = np.unpackbits(bm.view(np.uint8), bitorder="little")[: llama3.size].astype(bool)
        theirs = byte_step_oracle(grammar, m._history[-1], llama3)
        diff = np.flatnonzero(ours != theirs)
        assert not diff.size, (step, [(llama3.token_bytes[t], ours[t]) for t in diff[:5]])
        assert m.accept_token(int(rng.choice(text_ids(np.flatnonzero(ours), llama3))))


def test_bad_grammars_raise_clear_errors(llama3):
    compiler = Compiler(llama3)
    with pytest.raises(GrammarError, match="line 1"):
        compiler.compile_lark("start: (")
    with pytest.raises(GrammarError, match="no rule 'begin'"):
        compiler.compile_lark('start: "a"', start="begin")
    with pytest.raises(GrammarError, match="not defined"):
        compiler.compile_lark("start: other")
    with pytest.raises(UnsupportedGrammarError, match="%declare") as info:
        compiler.compile_lark("%declare INDENT\nstart: INDENT \"a\"")
    assert info.value.where == "rule start"
    for crashes_lark in ('start: A\nA: "a" [ B.2C | "d" ]*\nB: "b"\nC: "c"\n',  # (Lark: TypeError in its message)
                         'start: "f" NUMBER\n%import common.INT -> NUMBER\n%import common.WS\n%ignore%json {} WS\n'):
        with pytest.raises(GrammarError, match="Lark's loader fails on it"):  # (an AssertionError, just above)
            compiler.compile_lark(crashes_lark)
    ignores_declared = compiler.compile_lark('start: "a"\n%declare B\n%ignore B\n')  # (it never matches: no effect)
    assert _we_accept(ignores_declared, "a") and not _we_accept(ignores_declared, "aa")
    with pytest.raises(UnsupportedGrammarError, match="empty string"):
        compiler.compile_lark("start: A \"b\"\nA: /a*?/")  # (lazy: its shortest match is always empty)
    with pytest.raises(TypeError):
        compiler.compile_lark(b"start: \"a\"")  # type: ignore[arg-type]


def test_compile_grammar_file_imports_from_its_folder(tmp_path, llama3):
    (tmp_path / "words.lark").write_text('WORD: /[a-z]+/\n')
    (tmp_path / "main.lark").write_text('start: WORD ("," WORD)*\n%import .words.WORD\n')
    grammar = Compiler(llama3).compile_grammar_file(tmp_path / "main.lark")
    assert _we_accept(grammar, "ab,cd") and not _we_accept(grammar, "ab,")
    with pytest.raises(GrammarError, match="unknown grammar file type"):
        Compiler(llama3).compile_grammar_file(tmp_path / "words.txt")


def test_ignored_whitespace_is_inlined_unless_a_terminal_starts_with_it(compiled):
    """JSON's ignored WS is a plain regex (no rule, no frames); in SPACES a terminal may start
    with a space, so the ignored run stays a greedy rule (the random-text test checks both)."""
    assert "WS" not in compiled["json"].automaton.rules.names
    spaces = compiled["spaces"].automaton.rules
    assert any(g for g in spaces.greedy) and len([n for n, g in zip(spaces.names, spaces.greedy) if g]) == 2


def test_a_greedy_terminal_s_rule_is_the_automaton_its_terminal_built():
    """A terminal that can read on (SQL's NAME, a string, a comment) becomes a rule whose DFA is
    the one lower_terminal built, used as it is (no NFA copied in and determinized again)."""
    from constrain.automata.rules import compile_rules
    from constrain.grammar.lark.terminals import lower_terminal
    from constrain.grammar.lark.translate import lark_rules
    from constrain.grammars import load
    from constrain.limits import Limits

    lowered = lark_rules(load("sql"), "start")
    rule_set = compile_rules(lowered.rules, lowered.start, Limits(), lowered.greedy)
    assert {"NAME", "STRING", "NUMBER"} <= set(lowered.greedy)
    for name in lowered.greedy:
        dfa = lowered.rules[name].dfa
        assert rule_set.dfas[rule_set.names.index(name)] is dfa
    name_pattern = lark.Lark(load("sql"), start="start").get_terminal("NAME").pattern
    fresh = lower_terminal("NAME", name_pattern, Limits()).dfa
    assert (fresh.table.shape, fresh.accepting.tolist()) == (lowered.rules["NAME"].dfa.table.shape, lowered.rules["NAME"].dfa.accepting.tolist())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.tuples(st.sampled_from(["accept", "accept", "accept", "rollback", "fork"]), st.integers(0, 10**6)), max_size=14))
def test_accept_rollback_and_fork_leave_a_fresh_matcher_s_state(ops, compiled, llama3):
    """Any sequence of accepts, rollbacks and forks (on a Lark grammar with greedy terminals and
    ignored text) leaves the matcher as a fresh one fed the tokens it holds."""
    grammar = compiled["keywords"]
    m = Matcher(grammar)
    held: list[int] = []
    bm = np.zeros((llama3.size + 31) // 32, dtype=np.int32)
    for op, r in ops:
        if op == "accept":
            m.fill_next_token_bitmask(bm)
            allowed = [t for t in np.flatnonzero(np.unpackbits(bm.view(np.uint8), bitorder="little")[: llama3.size])
                       if t not in llama3.eos_token_ids]
            if allowed:
                tid = int(allowed[r % len(allowed)])
                assert m.accept_token(tid)
                held.append(tid)
        elif op == "rollback" and held:
            k = r % (len(held) + 1)
            m.rollback(k)
            del held[len(held) - k:]
        elif op == "fork":
            m = m.fork()
    fresh = Matcher(grammar)
    assert fresh.accept_tokens(held) == len(held)
    ours, theirs = np.zeros_like(bm), np.zeros_like(bm)
    m.fill_next_token_bitmask(ours)
    fresh.fill_next_token_bitmask(theirs)
    assert np.array_equal(ours, theirs) and m.is_accepting() == fresh.is_accepting()
    assert m.forced_bytes() == fresh.forced_bytes()


def test_ambiguity_and_depth_meet_their_limits(llama3):
    """A grammar with ever more readings, and text nested ever deeper, stop at their limits
    with an error naming the knob, not a hang."""
    from constrain import LimitExceededError, Limits

    ambiguous = Compiler(llama3, limits=Limits(max_stacks=4)).compile_lark('start: e\ne: e e | "x"')
    sem = ambiguous.automaton.semantics
    assert len(sem.advance(sem.initial(), b"x" * 12)) <= 2  # (its readings' stacks merged: few)
    sem.merge = False  # (kept apart, as the matchers of uniqueItems keep them)
    with pytest.raises(LimitExceededError, match="max_stacks"):
        sem.advance(sem.initial(), b"x" * 12)
    nested = Compiler(llama3, limits=Limits(max_stack_depth=8)).compile_lark(JSON)
    sem = nested.automaton.semantics
    assert sem.advance(sem.initial(), b"[[1]]") is not None
    with pytest.raises(LimitExceededError, match="max_stack_depth"):
        sem.advance(sem.initial(), b"[" * 12)
    from constrain.grammars import load

    hurried = Compiler(llama3, limits=Limits(max_mask_seconds=1e-9)).compile_lark(load("sql"))
    m = Matcher(hurried)
    assert m.accept_tokens([llama3.token_bytes.index(t) for t in (b"SELECT", b" a")]) == 2
    with pytest.raises(LimitExceededError, match="max_mask_seconds"):
        m.allowed_token_ids()
    slow = Matcher(Compiler(llama3, limits=Limits(max_accept_seconds=1e-9)).compile_lark(load("sql")))
    with pytest.raises(LimitExceededError, match="max_accept_seconds"):
        slow.accept_token(llama3.token_bytes.index(b"SELECT"))
    assert slow.num_accepted_tokens == 0  # (refused whole: the matcher is as before)


def test_lark_s_own_grammar_takes_string_and_regex_flags_as_re_does(llama3, lark_accepts):
    """lark.lark (shipped in the lark package): `"a"i` is one string, `/a/i` one regex, so a
    digit right after either is refused, by Lark and by us alike (the fuzz that found this:
    lazy_tail.py)."""
    import os

    text = open(os.path.join(os.path.dirname(lark.__file__), "grammars", "lark.lark")).read()
    ours = Compiler(llama3).compile_lark(text)
    theirs = functools.partial(lark_accepts, lark.Lark(text, parser="earley"))
    for doc, ok in (('a:""i0', False), ("a:/a/i0", False), ('a:"x"i0\n', False), ('a:"a"i.."b"', True),
                    ("a:/a/ix\n", True), ('a:"b"i\n', True)):
        assert theirs(doc) is ok, doc
        assert _we_accept(ours, doc) is ok, doc
