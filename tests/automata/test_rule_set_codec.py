"""rule_set_codec: a RuleSet read back from its record is the same grammar, built or not."""

from __future__ import annotations

import json

import numpy as np
import pytest

from constrain.automata import ir
from constrain.automata.rule_set_codec import decode_rule_set, encode_rule_set
from constrain.automata.rules import NEAR_START_NFA_STATES, compile_rules
from constrain.grammar.lark.translate import lark_rules
from constrain.grammars import NAMES, load
from constrain.limits import Limits


def _lark_rule_set(name: str):
    return _lark_text_rule_set(load(name))


def _lark_text_rule_set(text: str):
    lowered = lark_rules(text)
    return compile_rules(lowered.rules, lowered.start, Limits(), lowered.greedy, lowered.refused)


def _schema_rule_set(schema: dict):
    from constrain.grammar.json_schema.options import JsonSchemaOptions
    from constrain.grammar.json_schema.translate import Translator

    rules, start = Translator(schema, JsonSchemaOptions("compact", "schema", "schema", True)).translate()
    return compile_rules(rules, start, Limits())


def _round_trip(rules):
    header, arrays = encode_rule_set(rules)
    # (as the disk cache stores it: JSON text, arrays of integers and booleans only)
    header = json.loads(json.dumps(header))
    assert all(a.dtype.kind in "iub" for a in arrays.values())
    return decode_rule_set(header, arrays, Limits())


def _assert_same(a, b) -> None:
    assert (a.names, a.greedy, a.refused, a.start, a.callees, a.same) == (b.names, b.greedy, b.refused, b.start, b.callees, b.same)
    pairs: dict[int, int] = {}
    for x, y in zip(a.nodes, b.nodes):
        _assert_same_ir(x, y, pairs)
    for r in range(a.n_rules):
        da, db = a.dfas[r], b.dfas[r]  # (built on first use where neither was)
        for field in ("byte_classes", "table", "accepting", "call_classes"):
            assert np.array_equal(getattr(da, field), getattr(db, field)), (a.names[r], field)
        assert da.minimal == db.minimal
        assert a.calls[r] == b.calls[r]
        assert np.array_equal(a.exits[r], b.exits[r])


def _assert_same_ir(x, y, pairs: dict[int, int]) -> None:
    """x and y are the same tree, with an Embedded node's DFA compared by its arrays, and one
    node shared by x's trees where one is shared by y's (Embedded nodes compare by identity). A
    Deferred DFA is read back built: an Embedded one."""
    assert type(y) is (ir.Embedded if isinstance(x, ir.Embedded) else type(x))
    if pairs.setdefault(id(x), id(y)) != id(y):
        raise AssertionError(f"a node shared on one side is two nodes on the other: {x!r}")
    if isinstance(x, ir.Embedded):
        for field in ("byte_classes", "table", "accepting", "call_classes"):
            assert np.array_equal(getattr(x.dfa, field), getattr(y.dfa, field))
    elif isinstance(x, (ir.Concat, ir.Alt)):
        assert len(x.items) == len(y.items)
        for u, v in zip(x.items, y.items):
            _assert_same_ir(u, v, pairs)
    elif isinstance(x, ir.Repeat):
        assert (x.min, x.max) == (y.min, y.max)
        _assert_same_ir(x.item, y.item, pairs)
    elif isinstance(x, ir.Graph):
        assert (x.n_states, x.start, x.finals) == (y.n_states, y.start, y.finals)
        assert [e[:2] for e in x.edges] == [e[:2] for e in y.edges]
        for (_, _, u), (_, _, v) in zip(x.edges, y.edges):
            _assert_same_ir(u, v, pairs)
    else:
        assert x == y


@pytest.mark.parametrize("name", NAMES)
def test_shipped_grammars_round_trip_before_and_after_their_rules_are_built(name):
    unbuilt = _lark_rule_set(name)
    back = _round_trip(unbuilt)
    assert back.n_built == unbuilt.n_built
    _assert_same(unbuilt, back)  # (builds every rule of both)
    assert back.n_built == back.n_rules
    _assert_same(unbuilt, _round_trip(unbuilt))  # (now from a record of built rules)


def test_the_bytes_terminal_ends_refuse_round_trip():
    """End lookaheads (grammar/lark/end_guard.py): per greedy rule, up to 256 bits."""
    rules = _lark_text_rule_set('start: A B | C | D "("\nA: /[a-z]+(?![0-9\\x7f])/\nB: /[0-9]|x/\nC: /[+*]|[?](?!=)/\nD: /f(?=\\()/')
    assert sorted(bits for bits in rules.refused if bits) == [
        1 << ord("="), sum(1 << b for b in (*range(48, 58), 127)), (1 << 257) - 1 - (1 << ord("(")),  # (the end: bit 256)
    ]
    _assert_same(rules, _round_trip(rules))
    per_state = _lark_text_rule_set('start: E "b"?\nE: /a(?!b)|ab?c/')  # (end_window.py: one int per state)
    (ends,) = [bits for bits in per_state.refused if type(bits) is tuple]
    assert sorted(set(ends)) == [0, 1 << ord("b")]
    _assert_same(per_state, _round_trip(per_state))


def test_return_checks_and_their_rules_round_trip():
    """CHECK rules (return_checks.py) are stored as rules and reused by name, not made again."""
    lowered = lark_rules('start: NUMBER ("." NAME)*\nNUMBER: /[0-9]+(\\.[0-9]+)?/\nNAME: /[a-z]+/')
    rules = compile_rules(lowered.rules, lowered.start, Limits(), lowered.greedy, lowered.refused, return_checks=True)
    assert rules.n_rules == len(lowered.rules) + 1 and any(rules.checks)
    back = _round_trip(rules)
    _assert_same(rules, back)
    assert back.return_checks and back.checks == rules.checks
    assert not _round_trip(_lark_rule_set("json")).return_checks


def test_embedded_dfas_shared_in_memory_stay_shared():
    """Embedded nodes compare by identity: rules that shared one must still have equal IR (so
    that they share one DFA), and rules with distinct ones must not."""
    schema = {"type": "object", "properties": {
        "a": {"type": "string", "minLength": 2}, "b": {"type": "string", "minLength": 2},
        "c": {"type": "string", "pattern": "^x+$"}, "d": {"type": "array", "items": {"type": "string", "minLength": 2}},
    }}
    rules = _schema_rule_set(schema)
    for r in range(rules.n_rules):
        rules.dfas[r]  # (builds the deferred parts: an unbuilt one is not stored, see below)
    embedded = [n for n in _walk(rules.nodes) if isinstance(n, ir.Embedded)]
    assert embedded, "the schema should lower to Embedded DFAs"
    back = _round_trip(rules)
    _assert_same(rules, back)
    assert len({id(n) for n in _walk(back.nodes) if isinstance(n, ir.Embedded)}) == len({id(n) for n in embedded})


def _walk(roots):
    seen, todo = set(), list(roots)
    while todo:
        n = todo.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        yield n
        if isinstance(n, (ir.Concat, ir.Alt)):
            todo.extend(n.items)
        elif isinstance(n, ir.Repeat):
            todo.append(n.item)
        elif isinstance(n, ir.Graph):
            todo.extend(e for _, _, e in n.edges)


@pytest.mark.parametrize("damage", [
    lambda h, a: h.update(format=99),
    lambda h, a: h.pop("nodes"),
    lambda h, a: h["nodes"].append(["?", 1]),
    lambda h, a: h["nodes"].append(["s", [0, -1]]),  # (a reference must point to an earlier node)
    lambda h, a: h["nodes"].append(["s", [0, len(h["nodes"])]]),
    lambda h, a: h["roots"].append(10**6),
    lambda h, a: h["roots"].__setitem__(0, -1),
    lambda h, a: h["roots"].pop(),
    lambda h, a: a.update(tables=a["tables"][:-1]),
    lambda h, a: a.update(layout=a["layout"][:, :2]),
    lambda h, a: h["built"].append([0, 10**6]),
    lambda h, a: h.update(refused=[]),  # (per rule name: a mapping)
    lambda h, a: h.update(refused={"x": "not hex"}),
])
def test_a_damaged_record_is_refused_with_value_error(damage):
    rules = _lark_rule_set("arithmetic")
    rules.build_near_start(NEAR_START_NFA_STATES)
    header, arrays = encode_rule_set(rules)
    assert arrays["tables"].size
    header = json.loads(json.dumps(header))
    damage(header, arrays)
    with pytest.raises(ValueError):
        decode_rule_set(header, arrays, Limits())


def test_a_deferred_automaton_is_stored_only_once_built():
    """Encoding must not build what the compile deferred (that is the cost deferring saved)."""
    from constrain.automata import regex_to_dfa

    deferred = ir.Deferred(lambda: regex_to_dfa("ab|cd"), 10)
    rules = compile_rules({"s": ir.concat(ir.literal("x"), deferred)}, "s", Limits())
    with pytest.raises(ValueError, match="not built yet"):
        encode_rule_set(rules)
    assert "_dfa" not in deferred.__dict__
    rules.dfas[0]  # (building the rule builds its Deferred part)
    back = _round_trip(rules)
    _assert_same(rules, back)


@pytest.mark.parametrize("damage", [
    lambda h, n: h["second_bytes"][n].update({"99": {"46": "1"}}),  # (no such state: a review found it decoded)
    lambda h, n: h["second_bytes"][n].update({"-1": {"46": "1"}}),
    lambda h, n: h["second_bytes"][n].update({"0": {"46": "1"}}),  # (no accepting state: nothing read yet)
    lambda h, n: h["second_bytes"][n][next(iter(h["second_bytes"][n]))].update({"300": "1"}),
    lambda h, n: h["second_bytes"][n][next(iter(h["second_bytes"][n]))].update({"46": "0"}),
    lambda h, n: h["second_bytes"].update({"start": {"0": {"46": "1"}}}),  # (no greedy rule)
])
def test_a_record_with_damaged_second_bytes_is_refused_with_value_error(damage):
    lowered = lark_rules('start: NUMBER ("." NAME)*\nNUMBER: /[0-9]+(\\.[0-9]+)?/\nNAME: /[a-z]+/')
    rules = compile_rules(lowered.rules, lowered.start, Limits(), lowered.greedy, lowered.refused, return_checks=True)
    header, arrays = encode_rule_set(rules)
    header = json.loads(json.dumps(header))
    (name,) = header["second_bytes"]
    damage(header, name)
    with pytest.raises(ValueError):
        decode_rule_set(header, arrays, Limits())
