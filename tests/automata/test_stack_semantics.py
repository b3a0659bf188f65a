"""Byte steps over stacks: greedy rules return only before a byte they cannot read."""

from __future__ import annotations

import pytest

from constrain import GrammarError, LimitExceededError
from constrain.automata import ir
from constrain.automata.rules import _rule_dfa, compile_rules
from constrain.automata.stack_semantics import Parents, StackSemantics

LETTERS = ir.chars([(ord("a"), ord("z"))])
DIGITS_OR_HEX = ir.chars([(ord("0"), ord("9")), (ord("a"), ord("f"))])


def _complete(rules, start, greedy, text: str) -> bool:
    sem = StackSemantics(compile_rules(rules, start, greedy=greedy))
    state = sem.advance(sem.initial(), text.encode())
    return state is not None and sem.is_complete(state)


def test_a_greedy_rule_cannot_end_before_a_byte_it_reads():
    # start: A "a" with A = a+ : greedy, A takes every "a" and none is left for the literal
    rules = {"start": ir.concat(ir.RuleRef("A"), ir.literal("a")), "A": ir.repeat(ir.literal("a"), 1, None)}
    assert _complete(rules, "start", (), "aa") and _complete(rules, "start", (), "aaa")
    assert not _complete(rules, "start", ("A",), "aa") and not _complete(rules, "start", ("A",), "aaa")


def test_two_names_need_a_separator_only_when_greedy():
    name = ir.repeat(LETTERS, 1, None)
    rules = {
        "start": ir.concat(ir.RuleRef("NAME"), ir.repeat(ir.literal(" "), 0, None), ir.RuleRef("NAME")),
        "NAME": name,
    }
    assert _complete(rules, "start", ("NAME",), "ab cd")
    assert _complete(rules, "start", (), "abcd")
    assert not _complete(rules, "start", ("NAME",), "abcd")


def test_the_next_terminal_may_not_start_with_a_byte_the_greedy_one_reads():
    # start: NAME HEX with NAME = [a-z]+, HEX = [0-9a-f]+ : after a name, HEX starts with a digit
    rules = {
        "start": ir.concat(ir.RuleRef("NAME"), ir.RuleRef("HEX")),
        "NAME": ir.repeat(LETTERS, 1, None),
        "HEX": ir.repeat(DIGITS_OR_HEX, 1, None),
    }
    greedy = ("NAME", "HEX")
    assert _complete(rules, "start", greedy, "xy1f")
    assert not _complete(rules, "start", greedy, "xyaf")  # "xyaf" is all NAME; no HEX left
    sem = StackSemantics(compile_rules(rules, "start", greedy=greedy))
    after = sem.advance(sem.initial(), b"xy")
    assert set(range(ord("0"), ord("9") + 1)) | set(range(ord("a"), ord("z") + 1)) == sem.next_bytes(after)


def test_greedy_rules_must_be_leaves_that_read_something():
    rules = {"start": ir.concat(ir.RuleRef("A"), ir.literal("b")), "A": ir.repeat(ir.literal("a"), 0, None)}
    with pytest.raises(GrammarError, match="greedy rule 'A'"):
        compile_rules(rules, "start", greedy=("A",))
    with pytest.raises(GrammarError, match="greedy rule 'start'"):
        compile_rules(rules, "start", greedy=("start",))


def _reference_step(sem: StackSemantics, stacks, byte: int) -> frozenset:
    """A byte step over each stack's whole closure (what `step` computes from own levels): a
    top reads unless a restriction layer it is under refuses the byte; a layer that allows it
    on condition pushes its CHECK frame after it."""
    out = set()
    for s in stacks:
        tops, _, layers = sem.closure(s)
        for r, q, parent, depth in tops:
            checks = [
                (conditional or {}).get(byte) for below, refused, conditional in layers or ()
                if refused >> byte & 1 and (r, q, parent, depth) in below
            ]
            if None in checks:
                continue
            t = sem.rules.rule(r).dfa.table[q, sem.rules.rule(r).dfa.byte_classes[byte]]
            if t >= 0:
                after = (r, int(t), parent, depth)
                out.add((checks[-1], 0, after, depth + 1) if checks else after)
    return frozenset(out)


AMBIGUOUS = {  # expr: expr "+" expr | expr "*" expr | NAME | "(" expr ")" (left recursion removed by hand)
    "start": ir.concat(ir.RuleRef("expr"), ir.repeat(ir.literal(" "), 0, None)),
    "expr": ir.concat(
        ir.alt(ir.RuleRef("NAME"), ir.concat(ir.literal("("), ir.RuleRef("expr"), ir.literal(")"))),
        ir.repeat(ir.concat(ir.alt(ir.literal("+"), ir.literal("*")), ir.RuleRef("expr")), 0, None),
    ),
    "NAME": ir.repeat(LETTERS, 1, None),
}


JUXTAPOSED = {  # expr: atom expr*, atom: NAME | DIGITS | "(" expr ")": "a1b" nests either way; after
    "start": ir.RuleRef("expr"),  # a greedy NAME the frames below may not read a letter first
    "expr": ir.concat(ir.RuleRef("atom"), ir.repeat(ir.RuleRef("expr"), 0, None)),
    "atom": ir.alt(ir.RuleRef("NAME"), ir.RuleRef("DIGITS"), ir.concat(ir.literal("("), ir.RuleRef("expr"), ir.literal(")"))),
    "NAME": ir.repeat(LETTERS, 1, None),
    "DIGITS": ir.repeat(ir.chars([(ord("0"), ord("9"))]), 1, None),
}


def _embedded(node: ir.Node) -> ir.Embedded:
    """(Built at collection, maybe a process's first DFA: numba compiles the subset kernel
    then, which on a cold CI machine took over the default 10 s limit.)"""
    return ir.Embedded(_rule_dfa(node, 10_000, 10_000, 3600.0)[0])


DIGITS = ir.repeat(ir.chars([(ord("0"), ord("9"))]), 1, None)
DOTTED = {  # expr: (NAME | NUMBER | "(" expr ")") (("+" | ".") expr)*: after a NUMBER's digits,
    "start": ir.concat(ir.RuleRef("expr"), ir.repeat(ir.literal(" "), 0, None)),  # "." ends it
    "expr": ir.concat(  # only where no digit follows (a return on condition: return_checks.py)
        ir.alt(ir.RuleRef("NAME"), ir.RuleRef("NUMBER"), ir.concat(ir.literal("("), ir.RuleRef("expr"), ir.literal(")"))),
        ir.repeat(ir.concat(ir.alt(ir.literal("+"), ir.literal(".")), ir.RuleRef("expr")), 0, None),
    ),
    "NAME": ir.repeat(LETTERS, 1, None),
    "NUMBER": _embedded(ir.concat(DIGITS, ir.repeat(ir.concat(ir.literal("."), DIGITS), 0, 1))),
}  # (return checks need a greedy rule's DFA at hand, as a Lark terminal's is)


@pytest.mark.parametrize("grammar,greedy", [
    (AMBIGUOUS, ()), (AMBIGUOUS, ("NAME",)), (JUXTAPOSED, ("NAME", "DIGITS")), (DOTTED, ("NAME", "NUMBER"))])
def test_steps_over_own_levels_equal_steps_over_whole_closures(grammar, greedy):
    import random

    rules = compile_rules(grammar, "start", greedy=greedy, return_checks=grammar is DOTTED)
    assert any(rules.checks) == (grammar is DOTTED)
    rng = random.Random(7)
    for _ in range(30):
        sem, ref = StackSemantics(rules, merge=False), StackSemantics(rules, merge=False)
        merged = StackSemantics(rules)  # (and with stacks merged, the same readings)
        stacks = mine = sem.initial()
        for _ in range(40):
            assert sem.is_complete(stacks) == any(ref.closure(s)[1] for s in stacks) == merged.is_complete(mine)
            assert sem.next_bytes(stacks) == set().union(*(ref.next_bytes(frozenset({s})) for s in stacks))
            assert merged.next_bytes(mine) == sem.next_bytes(stacks)
            options = sorted(ref.next_bytes(stacks))
            if not options:
                break
            b = rng.choice(options + [ord(" "), ord("+"), ord(".")])
            expected = _reference_step(ref, stacks, b)
            assert sem.step(stacks, b) == expected
            mine = merged.step(mine, b)
            assert _readings(mine) == _readings(expected)
            if not expected:
                break
            stacks = expected
    if grammar is DOTTED:
        for text, complete in ((b"1.a", True), (b"1.5", True), (b"(1.5.a+2).3.b", True), (b"1.5.6", True),
                               (b"1..2", False), (b"1.", False)):
            state = sem.advance(sem.initial(), text)
            assert (state is not None and sem.is_complete(state)) == complete, text
    if grammar is AMBIGUOUS:
        deep = sem.advance(sem.initial(), b"+".join([b"a"] * 60))  # (a stack per nesting depth)
        assert len(deep) >= 59 and sem.is_complete(deep)
        few = merged.advance(merged.initial(), b"+".join([b"a"] * 60))  # (their tops merged)
        assert len(few) <= 3 and merged.is_complete(few) and _readings(few) == _readings(deep)


def _readings(stacks) -> set[tuple]:
    """The plain stacks a set of stacks stands for, merged frames' Parents unfolded, each as its
    (rule, state) pairs from the top (a merged frame's depth is its deepest stack's)."""
    memo: dict[int, frozenset] = {}

    def down(frame) -> frozenset:  # (the readings from `frame` down, each frame's once: merged
        if frame is None:  # frames share their parents, and paths through them multiply)
            return frozenset({()})
        hit = memo.get(id(frame))
        if hit is None:
            if type(frame) is Parents:
                hit = frozenset().union(*(down(f) for f in frame))
            else:
                hit = frozenset(((frame[0], frame[1]), *rest) for rest in down(frame[2]))
            memo[id(frame)] = hit
        return hit

    return set().union(*(down(s) for s in stacks))


CATALAN = {  # expr: ("a" | "(" expr ")") expr? expr?: n a's nest every way, so their readings
    "start": ir.RuleRef("expr"),  # grow as the Catalan numbers do
    "expr": ir.concat(
        ir.alt(ir.literal("a"), ir.concat(ir.literal("("), ir.RuleRef("expr"), ir.literal(")"))),
        ir.repeat(ir.RuleRef("expr"), 0, 2),
    ),
}


def test_merged_stacks_stay_few_where_the_readings_grow_without_bound():
    """Stacks with the same top merge (a graph-structured stack): a grammar whose readings grow
    without bound keeps a few stacks, and they stand for exactly the readings kept apart."""
    rules = compile_rules(CATALAN, "start")
    merged, apart = StackSemantics(rules), StackSemantics(rules, merge=False, max_stacks=10**6)
    mine, theirs = merged.initial(), apart.initial()
    for n, b in enumerate(b"aaaaaaaaaaa(aa)aaa", 1):
        mine, theirs = merged.step(mine, b), apart.step(theirs, b)
        assert _readings(mine) == _readings(theirs), n
        assert merged.is_complete(mine) == apart.is_complete(theirs)
        assert merged.next_bytes(mine) == apart.next_bytes(theirs)
        assert len(mine) <= 2
    assert len(theirs) > 1000
    long = merged.advance(merged.initial(), b"a" * 300)  # (kept apart: far past max_stacks)
    assert long is not None and len(long) <= 4 and merged.is_complete(long)
    with pytest.raises(LimitExceededError, match="max_stacks"):
        StackSemantics(rules, merge=False).advance(apart.initial(), b"a" * 300)


def test_deep_stacks_keep_hashes_every_so_often_and_equal_plain_tuples():
    """A frame's hash walks its parents: every KEPT_HASH_EVERY-th one keeps its hash, so a memo
    lookup of a deep stack costs O(that), not O(depth); such frames equal their plain tuples."""
    import pickle

    from constrain.automata.stack_semantics import KEPT_HASH_EVERY, KeptHash

    rules = compile_rules(AMBIGUOUS, "start", greedy=("NAME",))
    sem = StackSemantics(rules)
    deep = sem.advance(sem.initial(), b"(" * 100 + b"a")
    (top,) = deep
    kept, frame = [], top
    while frame is not None:
        if isinstance(frame, KeptHash):
            kept.append(frame[3])
            plain = tuple(frame)
            assert plain == frame and hash(plain) == hash(frame)
        frame = frame[2]
    assert kept and all(d % KEPT_HASH_EVERY == 0 for d in kept) and len(kept) >= 100 // KEPT_HASH_EVERY
    assert pickle.loads(pickle.dumps(top)) == top and hash(pickle.loads(pickle.dumps(top))) == hash(top)
    again = sem.advance(sem.initial(), b"(" * 100 + b"a")
    assert again == deep and sem.advance(deep, b")" * 100) is not None


def test_a_step_over_many_stacks_stops_at_its_deadline():
    """An ambiguous grammar's step over hundreds of deep stacks can take seconds (each stack's
    hash walks its frames): the deadline is looked at inside the step, not only between bytes."""
    import time

    from constrain.errors import LimitExceededError

    rules = compile_rules(AMBIGUOUS, "start", greedy=("NAME",))
    sem = StackSemantics(rules, merge=False)
    deep = sem.advance(sem.initial(), b"+".join([b"a"] * 100))
    assert len(deep) >= 99
    assert sem.step(deep, ord("+"), time.perf_counter() + 60)
    with pytest.raises(LimitExceededError, match="max_accept_seconds"):
        sem.step(deep, ord("+"), time.perf_counter() - 1)
    with pytest.raises(LimitExceededError, match="max_accept_seconds"):
        StackSemantics(rules, max_seconds=1e-9).advance(sem.initial(), b"a")


@pytest.mark.parametrize("grammar,greedy", [
    (AMBIGUOUS, ("NAME",)), (JUXTAPOSED, ("NAME", "DIGITS")), (DOTTED, ("NAME", "NUMBER"))])
def test_forgotten_memos_give_the_same_steps(grammar, greedy, monkeypatch):
    import random

    import constrain.automata.stack_semantics as stack_semantics

    rules = compile_rules(grammar, "start", greedy=greedy, return_checks=grammar is DOTTED)

    def walk(seed: int) -> list:
        rng, sem = random.Random(seed), StackSemantics(rules)
        stacks, seen = sem.initial(), []
        for _ in range(40):
            options = sorted(sem.next_bytes(stacks))
            seen.append((stacks, sem.is_complete(stacks), options))
            if not options:
                break
            stacks = sem.step(stacks, rng.choice(options + [ord(" ")]))
            if not stacks:
                break
        return seen, sem

    want = [walk(seed)[0] for seed in range(12)]
    monkeypatch.setattr(stack_semantics, "MAX_MEMO", 2)
    for seed in range(12):
        got, sem = walk(seed)
        assert got == want[seed], seed
        assert len(sem._closure) <= 2 and len(sem._levels) <= 2
