"""object_rules.py: what the matcher reads off an any-order object's rule DFA."""

from __future__ import annotations

import pytest

from constrain import Compiler
from constrain.automata import regex_to_dfa
from constrain.index.object_rules import after_value_states, canonical, reaches_cycle

KEYS = [f"key{i}" for i in range(11)] + ["kind", "k\"q", "é"]


@pytest.fixture(scope="module")
def compiler(llama3):
    return Compiler(llama3)


def _object(compiler, **extra) -> tuple:
    schema = {"type": "object", "properties": {k: {"type": "integer"} for k in KEYS}, **extra}
    automaton = compiler.compile_json_schema(schema, property_order="any").automaton
    (r,) = automaton.rules.marked
    obj = automaton._object(r)
    return automaton.rules.base.rule(r), obj


def test_reaches_cycle():
    loose = regex_to_dfa('"[a-z]*"')
    assert reaches_cycle(loose).tolist() == [not loose.accepting[q] for q in range(loose.n_states)]
    assert not reaches_cycle(regex_to_dfa('"ab"|"cd"')).any()


def test_canonical_spellings():
    assert canonical("a") == b"a" and canonical('q"') == b'q\\"' and canonical("é") == "é".encode()
    assert canonical("\n/\x01") == b"\\n/\\u0001"


def test_named_keys_the_dfa_reads(compiler):
    rule, obj = _object(compiler, additionalProperties=False)
    assert obj.named == sorted(canonical(k) for k in KEYS)
    assert obj.has_keys and not obj.has_language
    assert obj.prefix_closed(b"key") and obj.prefix_closed(b"k")
    props = {k: {"type": "integer"} for k in KEYS}
    props["key3"] = {"type": "string", "minLength": 3, "maxLength": 1}  # admits nothing: gone
    schema = {"type": "object", "properties": props, "additionalProperties": False}
    automaton = compiler.compile_json_schema(schema, property_order="any").automaton
    (r,) = automaton.rules.marked
    assert b"key3" not in automaton._object(r).named


def test_key_languages_go_on(compiler):
    _, obj = _object(compiler, additionalProperties=True)
    assert obj.has_language and not obj.closed_prefixes
    assert not obj.prefix_closed(b"key1")
    _, obj = _object(compiler, additionalProperties=False, patternProperties={"^x-": {}})
    assert obj.has_language and obj.closed_prefixes
    assert obj.prefix_closed(b"key1") and not obj.prefix_closed(b"x-") and not obj.prefix_closed(b"")


def test_after_value_states_read_the_objects_comma_and_brace(compiler):
    rule, _ = _object(compiler, additionalProperties=False)
    dfa = rule.dfa
    after = set(after_value_states(dfa, rule.calls).tolist())
    comma, brace = dfa.byte_classes[ord(",")], dfa.byte_classes[ord("}")]
    assert after and all(dfa.table[q, comma] >= 0 and dfa.table[q, brace] >= 0 for q in after)
    reads_brace = {q for q in range(dfa.n_states) if dfa.table[q, brace] >= 0}
    assert reads_brace - after == {dfa.walk(0, b"{")}  # and `{}` itself


def test_flags(compiler):
    _, obj = _object(compiler, additionalProperties=False, required=["key1"], minProperties=2, maxProperties=14)
    assert obj.flags(frozenset()) == (True, False)
    assert obj.flags(frozenset({"key2"})) == (True, False)  # key1 missing
    assert obj.flags(frozenset({"key1"})) == (True, False)  # below minProperties
    assert obj.flags(frozenset({"key1", "key2"})) == (True, True)
    assert obj.flags(frozenset(KEYS)) == (False, True)  # every key used (and maxProperties)
    _, obj = _object(compiler, additionalProperties=True, maxProperties=3)
    assert obj.flags(frozenset({"a", "b"})) == (True, True)
    assert obj.flags(frozenset({"a", "b", "c"})) == (False, True)
    assert obj.unused_with_prefix(b"key1", frozenset({"key1"})) is True  # key10
    assert obj.unused_with_prefix(b"key1", frozenset({"key1", "key10"})) is False
