"""Rule facts read from IR (derives something, nullable, first calls) equal what the rule DFAs
say, and compile_rules builds a rule's DFA only when it is first used."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from constrain import GrammarError, LimitExceededError
from constrain.automata import ir
from constrain.automata.dfa import minimize
from constrain.automata.nfa import nfa_states
from constrain.automata.rule_facts import callees, first_calls, nullable_rules, productive_rules, without_calls
from constrain.automata.rules import _rule_dfa, compile_rules
from constrain.errors import EmptyLanguageError
from constrain.limits import Limits

NAMES = ["r0", "r1", "r2", "r3"]


def _node(depth: int):
    leaf = st.one_of(
        st.sampled_from([ir.literal("a"), ir.literal("bc"), ir.EMPTY, ir.NOTHING]),
        st.sampled_from(NAMES).map(ir.RuleRef),
    )
    if depth == 0:
        return leaf
    sub = _node(depth - 1)
    return st.one_of(
        leaf,
        st.lists(sub, min_size=2, max_size=3).map(lambda xs: ir.Concat(tuple(xs))),
        st.lists(sub, min_size=2, max_size=3).map(lambda xs: ir.Alt(tuple(xs))),
        st.tuples(sub, st.integers(0, 2), st.sampled_from([0, 1, 2, None])).map(
            lambda t: ir.Repeat(t[0], t[1], None if t[2] is None else t[1] + t[2])),
        st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), sub), max_size=4).map(
            lambda es: ir.Graph(3, 0, (2,), tuple(es))),
    )


grammars = st.lists(_node(2), min_size=4, max_size=4).map(lambda nodes: dict(zip(NAMES, nodes)))


def _dfa(node):
    lim = Limits()
    return _rule_dfa(node, lim.max_nfa_states, lim.max_dfa_states, lim.max_compile_seconds)


def _reach(dfa, cols) -> set[int]:
    seen, todo = {0}, [0]
    while todo:
        q = todo.pop()
        for col in cols:
            t = int(dfa.table[q, col])
            if t >= 0 and t not in seen:
                seen.add(t)
                todo.append(t)
    return seen


def _fixpoint(dfas, with_bytes: bool) -> set[str]:
    """Rules whose DFA reaches acceptance over (bytes and) calls of rules already found."""
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, (dfa, cs) in dfas.items():
            cols = set(dfa.byte_classes.tolist()) if with_bytes else set()
            cols |= {int(dfa.call_classes[k]) for k, c in enumerate(cs) if c in found}
            if name not in found and any(dfa.accepting[q] for q in _reach(dfa, cols)):
                found.add(name)
                changed = True
    return found


def _callers(rules):
    out: dict[str, set[str]] = {}
    for name, node in rules.items():
        for c in callees(node):
            out.setdefault(c, set()).add(name)
    return out


@settings(max_examples=200, deadline=None)
@given(grammars)
def test_productive_and_nullable_equal_the_dfa_view(rules):
    dfas = {name: _dfa(node) for name, node in rules.items()}
    assert productive_rules(rules, _callers(rules)) == _fixpoint(dfas, True)
    assert nullable_rules(rules, _callers(rules)) == _fixpoint(dfas, False)


@settings(max_examples=200, deadline=None)
@given(grammars)
@example({  # (a call of a rule that derives nothing whose column a byte shares)
    "r2": ir.alt(ir.literal("bc"), ir.concat(ir.RuleRef("r2"), ir.literal("a")), ir.concat(ir.RuleRef("r2"), ir.RuleRef("r3"))),
    "r3": ir.Chars(()),
})
def test_first_calls_equal_the_trimmed_dfa_view(rules):
    """The calls before any byte, as a rule's DFA shows them once the columns of calls that
    derive nothing are cut and the states only they kept alive are trimmed."""
    dfas = {name: _dfa(node) for name, node in rules.items()}
    prod, null = _fixpoint(dfas, True), _fixpoint(dfas, False)
    for name in prod:
        dfa, cs = dfas[name]
        table = dfa.table.copy()
        dead_cols = {int(dfa.call_classes[k]) for k, c in enumerate(cs) if c not in prod}
        dead_cols -= {int(dfa.call_classes[k]) for k, c in enumerate(cs) if c in prod}
        dead_cols -= set(dfa.byte_classes.tolist())  # (a column a byte shares keeps its edges: `r3: []` after
        # `r2` moves as an "a" does there, and cutting it cut the "a" too: found 2026-12-07)
        table[:, sorted(dead_cols)] = -1
        try:
            trimmed = minimize(list(dfa.byte_classes) + list(dfa.call_classes), table, dfa.accepting, len(cs))
        except EmptyLanguageError:
            continue
        expected = set()
        for q in _reach(trimmed, {int(trimmed.call_classes[k]) for k, c in enumerate(cs) if c in null}):
            expected |= {c for k, c in enumerate(cs) if c in prod and trimmed.table[q, trimmed.call_classes[k]] >= 0}
        assert first_calls(rules[name], prod.__contains__, null) == expected


def test_rule_dfas_are_built_on_first_use():
    rules = {
        "start": ir.alt(ir.literal("x"), ir.concat(ir.literal("y"), ir.RuleRef("later"))),
        "later": ir.concat(ir.literal("z"), ir.RuleRef("more")),
        "more": ir.literal("w"),
        "again": ir.concat(ir.literal("z"), ir.RuleRef("more")),  # the same IR as "later"
    }
    rs = compile_rules(rules, "start")
    assert rs.n_built == 0
    assert rs.dfas[rs.start].accepts(b"x")
    assert rs.n_built == 1
    later, again = rs.names.index("later"), rs.names.index("again")
    assert rs.rule(later) is rs.rule(again)  # equal IR: one DFA, one set of calls
    assert not rs.dfas[later].table.flags.writeable  # shared between grammars: read-only


def test_rules_nearest_the_start_are_built_within_a_budget():
    """Breadth first from the start rule, while the NFAs add up to at most the budget."""
    rules = {
        "start": ir.concat(ir.literal("a"), ir.RuleRef("near"), ir.RuleRef("other")),
        "near": ir.concat(ir.literal("b"), ir.RuleRef("far")),
        "other": ir.literal("c"),
        "far": ir.repeat(ir.literal("d"), 0, 50),
        "unused": ir.literal("e"),
    }
    sizes = {name: nfa_states(node) for name, node in rules.items()}
    rs = compile_rules(rules, "start")
    rs.build_near_start(sizes["start"] + sizes["near"] + sizes["other"])
    assert {rs.names[r] for r in range(rs.n_rules) if rs.built(r)} == {"start", "near", "other"}
    rs.build_near_start(10**9)
    assert {rs.names[r] for r in range(rs.n_rules) if rs.built(r)} == {"start", "near", "other", "far"}
    rs = compile_rules(rules, "start")
    rs.build_near_start(0)
    assert rs.n_built == 0


def test_limits_and_errors_stay_at_compile_time():
    big = ir.repeat(ir.literal("abcdefgh"), 1000, 1000)
    with pytest.raises(LimitExceededError, match="NFA size"):
        compile_rules({"s": ir.concat(ir.literal("a"), ir.RuleRef("big")), "big": big}, "s", Limits(max_nfa_states=5000))
    with pytest.raises(LimitExceededError, match="max_dfa_states"):  # large rules meet their limits at once
        compile_rules({"s": ir.literal("x" * 11_000)}, "s", Limits(max_dfa_states=1000))
    small = compile_rules({"s": ir.literal("x" * 900)}, "s", Limits(max_dfa_states=100))
    with pytest.raises(LimitExceededError, match="max_dfa_states"):  # small ones on first use
        small.rule(small.start)
    with pytest.raises(GrammarError, match="left-recursive"):  # even in a rule that derives nothing
        compile_rules({"s": ir.alt(ir.literal("a"), ir.RuleRef("loop")), "loop": ir.RuleRef("loop")}, "s")
    rs = compile_rules({"s": ir.alt(ir.literal("a"), ir.concat(ir.literal("b"), ir.RuleRef("dead"))),
                        "dead": ir.concat(ir.literal("c"), ir.RuleRef("dead"))}, "s")
    assert rs.calls[rs.start] == ((),) * rs.dfas[rs.start].n_states  # the dead call is gone
    assert not rs.dfas[rs.start].accepts(b"b")


def test_deferred_dfas_wait_for_their_rule():
    """compile_rules settles a rule with a Deferred DFA from its contract (non-empty, no empty
    string, a size bound); the DFA is built when the rule is, once."""
    from constrain.automata import regex_to_dfa

    built = []

    def make():
        built.append(1)
        return regex_to_dfa('"[a-z]+"')

    key = ir.Deferred(make, 10)
    rules = {"start": ir.alt(ir.literal("{}"), ir.RuleRef("member")), "member": ir.concat(key, ir.literal(":1"))}
    rs = compile_rules(rules, "start")
    assert built == []
    with pytest.raises(LimitExceededError, match="NFA size"):  # the bound counts, not the DFA
        compile_rules(rules, "start", Limits(max_nfa_states=12))
    assert built == []
    member = rs.names.index("member")
    assert rs.dfas[member].accepts(b'"ab":1') and not rs.dfas[member].accepts(b'"":1')
    assert rs.dfas[member] is rs.dfas[member] and built == [1]
    assert key.dfa is key.dfa and built == [1]


def test_large_rules_meet_their_limits_and_wait_for_their_first_use():
    """A rule over EAGER_NFA_STATES meets its limits in compile_rules (a subset construction,
    or nothing where its parts glue), and its DFA is built on first use, not near the start."""
    from constrain.automata import regex_to_dfa
    from constrain.automata.rules import EAGER_NFA_STATES, NEAR_START_NFA_STATES

    body = regex_to_dfa("[a-z]{0,%d}" % EAGER_NFA_STATES)  # a chain of states: glued
    glued = ir.concat(ir.literal('"'), ir.Embedded(body), ir.literal('"'))
    subsets = ir.alt(ir.literal("x" * EAGER_NFA_STATES), ir.literal("x" * (EAGER_NFA_STATES - 1) + "y"))
    rules = {"start": ir.concat(ir.literal("["), ir.RuleRef("glued"), ir.RuleRef("subsets"), ir.literal("]")),
             "glued": glued, "subsets": subsets}
    assert nfa_states(glued) > EAGER_NFA_STATES and nfa_states(subsets) > EAGER_NFA_STATES
    _rule_dfa.cache_clear()
    rs = compile_rules(rules, "start")
    rs.build_near_start(NEAR_START_NFA_STATES)
    assert _rule_dfa.cache_info().currsize == 1  # only the start rule's DFA
    assert [rs.names[r] for r in range(rs.n_rules) if rs.built(r)] == ["start"]
    assert rs.dfas[rs.names.index("glued")].accepts(b'"abc"')
    assert rs.dfas[rs.names.index("subsets")].accepts(b"x" * (EAGER_NFA_STATES - 1) + b"y")
    with pytest.raises(LimitExceededError, match="max_dfa_states"):
        compile_rules(rules, "start", Limits(max_dfa_states=EAGER_NFA_STATES // 2))


def _substituted(node, dead):
    """Calls of `dead` rules replaced by NOTHING, nothing else changed (the plain reading)."""
    if isinstance(node, ir.RuleRef):
        return ir.NOTHING if node.name in dead else node
    if isinstance(node, (ir.Concat, ir.Alt)):
        return type(node)(tuple(_substituted(m, dead) for m in node.items))
    if isinstance(node, ir.Repeat):
        return ir.Repeat(_substituted(node.item, dead), node.min, node.max)
    if isinstance(node, ir.Graph):
        return ir.Graph(node.n_states, node.start, node.finals, tuple((a, b, _substituted(m, dead)) for a, b, m in node.edges))
    return node


def _same_language(a, b) -> bool:
    """Product walk of two rule DFAs over bytes and calls by name."""
    (da, ca), (db, cb) = a, b
    symbols = [("byte", x) for x in range(256)] + [("call", c) for c in sorted(set(ca) | set(cb))]

    def step(dfa, cs, q, sym):
        if q < 0:
            return -1
        kind, x = sym
        if kind == "byte":
            return int(dfa.table[q, dfa.byte_classes[x]])
        return int(dfa.table[q, dfa.call_classes[cs.index(x)]]) if x in cs else -1

    seen, todo = {(0, 0)}, [(0, 0)]
    while todo:
        p, q = todo.pop()
        if (p >= 0 and da.accepting[p]) != (q >= 0 and db.accepting[q]):
            return False
        for sym in symbols:
            nxt = (step(da, ca, p, sym), step(db, cb, q, sym))
            if nxt != (-1, -1) and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return True


@settings(max_examples=200, deadline=None)
@given(_node(3), st.sets(st.sampled_from(NAMES), min_size=1))
def test_without_calls_prunes_to_the_same_language(node, dead):
    """Dropping the sequences, alternatives and graph edges that a dead call leaves empty keeps
    the language (and leaves object graphs of fixed words, see word_graph)."""
    pruned = without_calls(node, frozenset(dead))
    assert _same_language(_dfa(_substituted(node, dead)), _dfa(pruned))


def test_a_dead_member_leaves_an_object_of_words():
    member = ir.concat(ir.literal(',"a":'), ir.RuleRef("dead"))
    graph = ir.Graph(2, 0, (0, 1), ((0, 1, ir.concat(ir.literal('"b":'), ir.RuleRef("v"))), (1, 1, member)))
    pruned = without_calls(ir.concat(ir.literal("{"), graph, ir.literal("}")), frozenset({"dead"}))
    assert pruned.items[1].edges == graph.edges[:1]


def test_a_deferred_key_member_under_the_limit_waits_for_first_use():
    """A member of an object's other keys (a Deferred key language, `:`, a call) over the
    eager size: its DFA provably meets the state limit, so compile_rules does not build it to
    check; under a lower limit it does."""
    from constrain.automata import compile_ir

    made: list[int] = []
    keys = compile_ir(ir.alt(ir.literal('"a"'), ir.literal('"bc"')))
    deferred = ir.Deferred(lambda: made.append(1) or keys, 20_000)
    rules = {
        "start": ir.concat(ir.literal("{"), ir.RuleRef("member"), ir.literal("}")),
        "member": ir.concat(deferred, ir.literal(":"), ir.RuleRef("value")),
        "value": ir.literal("1"),
    }
    assert nfa_states(rules["member"]) > 10_000  # (rules.EAGER_NFA_STATES: checked at compile)
    rs = compile_rules(rules, "start")
    assert not made
    assert rs.n_built == 0
    compile_rules(rules, "start", Limits(max_dfa_states=15_000))
    assert made == [1]


def test_replaced_calls_keeps_what_has_no_call_and_rebuilds_the_rest():
    from constrain.automata.rule_facts import replaced_calls

    plain = ir.literal("xyz")
    node = ir.concat(plain, ir.repeat(ir.alt(ir.RuleRef("a"), ir.RuleRef("b")), 0, None),
                     ir.Graph(2, 0, (1,), ((0, 1, ir.RuleRef("a")),)))
    out = replaced_calls(node, lambda call: ir.literal("A") if call.name == "a" else call)
    assert callees(out) == ("b",)
    assert all(a is b for a, b in zip(out.items[:3], node.items[:3]))  # the literal, untouched
    assert replaced_calls(node, lambda call: call) is node  # nothing replaced: the same tree
