"""any_order.py: objects past max_any_order_properties in property_order="any" (what compiles to
a keyed rule, what is refused, what is unsatisfiable); documents checked against jsonschema."""

from __future__ import annotations

import json

import jsonschema
import pytest

from constrain import Compiler
from constrain.errors import UnsatisfiableSchemaError, UnsupportedSchemaError
from constrain.index.distinct_keys import DistinctKeysAutomaton
from constrain.index.stack_index import StackTokenAutomaton

KEYS = [f"p{i}" for i in range(12)]
INT = {"type": "integer"}


def _object(n: int = 12, **extra) -> dict:
    return {"type": "object", "properties": {k: INT for k in KEYS[:n]}, **extra}


@pytest.fixture(scope="module")
def compiler(llama3):
    return Compiler(llama3)


def _agrees(grammar, schema, docs) -> None:
    """Each document accepted exactly when valid; a repeated key (JSON text given as a str)
    is refused whatever jsonschema makes of the last value."""
    for doc in docs:
        text = doc if isinstance(doc, str) else json.dumps(doc, separators=(",", ":"))
        repeated = []
        json.loads(text, object_pairs_hook=lambda pairs: repeated.append(len({k for k, _ in pairs}) < len(pairs)) or {})
        valid = not any(repeated) and jsonschema.Draft202012Validator(schema).is_valid(json.loads(text))
        assert grammar.accepts(text) == valid, text


def test_the_graph_up_to_the_limit_a_keyed_rule_past_it(compiler):
    small = compiler.compile_json_schema(_object(10), property_order="any")
    assert isinstance(small.automaton, StackTokenAutomaton)
    big = compiler.compile_json_schema(_object(11), property_order="any")
    assert isinstance(big.automaton, DistinctKeysAutomaton)
    flexible = compiler.compile_json_schema(_object(7), property_order="any", whitespace="flexible")
    assert isinstance(flexible.automaton, DistinctKeysAutomaton)  # (whitespace runs: too large a graph)
    long_keys = {"type": "object", "properties": {f"{k}_a_rather_long_key": INT for k in KEYS[:9]}}
    assert isinstance(compiler.compile_json_schema(long_keys, property_order="any").automaton, DistinctKeysAutomaton)
    assert isinstance(compiler.compile_json_schema(_object(6), property_order="any", whitespace="flexible").automaton, StackTokenAutomaton)
    assert flexible.accepts('{ "p5" : 2 ,\n "p0":1}') and not flexible.accepts('{"p5":2, "p5":1}')
    ordered = compiler.compile_json_schema(_object(11))  # schema order: as before
    assert isinstance(ordered.automaton, StackTokenAutomaton)
    assert ordered.accepts('{"p0":1,"p5":2}') and not ordered.accepts('{"p5":2,"p0":1}')
    assert big.accepts('{"p5":2,"p0":1}') and not big.accepts('{"p5":2,"p0":1,"p5":3}')


def test_counts_and_required_keys(compiler):
    schema = _object(additionalProperties=False, required=["p3", "p7"], minProperties=3)
    grammar = compiler.compile_json_schema(schema, property_order="any")
    _agrees(grammar, schema, [
        {"p7": 1, "p3": 2}, {"p7": 1, "p3": 2, "p0": 0}, {"p0": 0, "p1": 1, "p7": 1}, {}, "{}",
        {k: 1 for k in reversed(KEYS)}, {"p3": 1, "p7": 2, "zz": 3},
    ])
    schema = _object(maxProperties=2, additionalProperties={"type": "string"})
    grammar = compiler.compile_json_schema(schema, property_order="any")
    _agrees(grammar, schema, [{}, {"a": "x"}, {"a": "x", "p1": 1}, {"a": "x", "p1": 1, "p2": 2}, {"p1": "x"}])
    grammar = compiler.compile_json_schema(_object(maxProperties=0), property_order="any")
    assert grammar.accepts("{}") and not grammar.accepts('{"p1":1}')


def test_patterns_and_other_keys(compiler):
    schema = _object(patternProperties={"^x-": {"type": "boolean"}, "y$": {"type": "null"}}, additionalProperties={"type": "string"})
    grammar = compiler.compile_json_schema(schema, property_order="any")
    _agrees(grammar, schema, [
        {"x-a": True, "p1": 2, "z": "s"}, {"x-a": 1}, {"ay": None, "x-y": True}, {"x-y": None},
        '{"z":"a","\\u007a":"b"}', '{"x-a":true,"x-\\u0061":false}', {"p1": 1, "p\u00e9": "s"},
    ])


def test_objects_nested_and_in_arrays(compiler):
    inner = _object(additionalProperties=False, required=["p0"])
    schema = {"type": "array", "items": {"type": "object", "properties": {k: inner for k in KEYS}, "additionalProperties": False}}
    grammar = compiler.compile_json_schema(schema, property_order="any")
    _agrees(grammar, schema, [
        [{"p1": {"p0": 1}, "p0": {"p0": 2, "p1": 1}}, {}],
        [{"p1": {"p0": 1}}, {"p1": {"p0": 1}}],  # the same keys in two objects
        '[{"p1":{"p0":1,"p0":2}}]',
        '[{"p1":{"p0":1},"p1":{"p0":1}}]',
        '[{"p1":{"p1":1}}]',
    ])


def test_refused_past_the_limit(compiler):
    refused = {
        "dependentRequired": _object(dependentRequired={"p1": ["p2"]}),
        "dependentSchemas": _object(dependentSchemas={"p1": {"required": ["p3"]}}),
        "some other key": _object(**{"not": {"additionalProperties": False}}),
        "finite pattern": _object(additionalProperties=False, patternProperties={"^[ab]$": INT}),
        "bounded names": _object(propertyNames={"maxLength": 3}),
        "maxProperties with required": _object(required=["p1"], maxProperties=5),
    }
    for name, schema in refused.items():
        with pytest.raises(UnsupportedSchemaError) as info:
            compiler.compile_json_schema(schema, property_order="any")
        assert "property_order='any' with more than 10 properties" in str(info.value), name
        assert info.value.pointer.startswith("#"), name
        compiler.compile_json_schema(schema)  # schema order still compiles
    relaxed = compiler.compile_json_schema(refused["maxProperties with required"], property_order="any", strict=False)
    assert relaxed.relaxations and relaxed.relaxations[0].startswith("maxProperties at #/maxProperties")
    assert relaxed.accepts(json.dumps({k: 1 for k in KEYS}, separators=(",", ":")))


@pytest.mark.parametrize(
    "extra",
    [
        {"if": {"required": ["p1"]}, "then": {"required": ["p2"]}},
        {"not": {"required": ["p1", "p2"]}},
        {"oneOf": [{"required": ["p1"]}, {"required": ["p2"]}]},
        {"patternProperties": {"^[ab]$": {"type": "string"}}},  # finite, but next to every other key
        {"additionalProperties": False, "required": ["p1"], "maxProperties": 12},
    ],
)
def test_allowed_past_the_limit(extra, compiler):
    """Conditions on keys that applicators expand into alternatives of plain objects (each a
    keyed rule of its own), finite key patterns next to every other key, a maxProperties that
    every named key fits."""
    schema = _object(**extra)
    grammar = compiler.compile_json_schema(schema, property_order="any")
    assert isinstance(grammar.automaton, DistinctKeysAutomaton)
    _agrees(grammar, schema, [
        {}, {"p1": 1}, {"p2": 1}, {"p2": 1, "p1": 2}, {"p3": 1, "p1": 2}, {"a": "s", "p1": 1}, {"a": 1},
        {k: 1 for k in reversed(KEYS)}, '{"p2":1,"p1":2,"p2":3}',
    ])


def test_distinct_items_alongside(compiler):
    """uniqueItems arrays inside and around keyed objects: both kept."""
    tags = {"type": "array", "items": {"type": "string"}, "uniqueItems": True}
    schema = {"type": "array", "uniqueItems": True, "items": _object(properties={**{k: INT for k in KEYS}, "tags": tags})}
    grammar = compiler.compile_json_schema(schema, property_order="any")
    assert isinstance(grammar.automaton, DistinctKeysAutomaton) and grammar.automaton.items is not None
    _agrees(grammar, schema, [
        [], [{"tags": ["a", "b"], "p1": 1}], [{"tags": ["a", "a"]}], [{"p1": 1, "tags": []}, {"tags": [], "p1": 1}],
        [{"p1": 1}, {"p2": 1}], '[{"tags":[],"tags":["x"]}]', [{"tags": ["a"], "p3": 2}, {"p3": 2, "tags": ["b"]}],
    ])


def test_unsatisfiable_objects(compiler):
    never = {"type": "string", "minLength": 3, "maxLength": 1}
    required_never = _object(required=["p1"])
    required_never["properties"]["p1"] = never
    with pytest.raises(UnsatisfiableSchemaError, match="#/properties/p1"):
        compiler.compile_json_schema(required_never, property_order="any")
    with pytest.raises(UnsatisfiableSchemaError):
        compiler.compile_json_schema(_object(additionalProperties=False, minProperties=13), property_order="any")
    either = {"anyOf": [required_never, {"type": "integer"}]}
    grammar = compiler.compile_json_schema(either, property_order="any")
    assert grammar.accepts("12") and not grammar.accepts('{"p1":"ab"}') and not grammar.accepts("{}")
    optional_never = _object(additionalProperties=False, minProperties=12)
    optional_never["properties"]["p1"] = never
    with pytest.raises(UnsatisfiableSchemaError):  # eleven keys can be written, twelve are needed
        compiler.compile_json_schema(optional_never, property_order="any")
