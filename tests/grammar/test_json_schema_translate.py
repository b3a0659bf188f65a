"""JSON Schema → grammar: soundness against the jsonschema library (never accept an invalid
document), valid documents accepted, masked random walks end in valid documents, errors name
the JSON pointer."""

from __future__ import annotations

import json
import random
from typing import Optional

import jsonschema
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from constrain import Compiler, Matcher, UnsupportedSchemaError

from token_choices import short_or_all, text_ids  # tests/support

SCHEMAS = {
    "person": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 8},
            "age": {"type": "integer", "minimum": 0, "maximum": 130},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "maxItems": 2},
        },
        "required": ["name"],
    },
    "closed": {
        "type": "object",
        "properties": {"x": {"type": "number", "minimum": -1, "exclusiveMaximum": 2}, "y": {"type": "boolean"}},
        "additionalProperties": False,
    },
    "typed_extras": {"type": "object", "properties": {"k": {"const": 1}}, "additionalProperties": {"type": "integer"}},
    "tree": {
        "$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}, "required": ["v"], "additionalProperties": False}},
        "$ref": "#/$defs/node",
    },
    "union": {"anyOf": [{"type": "string", "pattern": "^[a-z]+$"}, {"type": "integer", "maximum": 5}, {"type": "null"}]},
    "one_of_types": {"oneOf": [{"type": "string", "format": "date"}, {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": False}]},
    "all_of": {"allOf": [{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}, {"properties": {"b": {"type": "string"}}, "required": ["b"]}]},
    "enum_mix": {"enum": [1, "one", None, [1, 2], {"k": "v"}, True]},
    "any": {},
    "multiple": {"type": "integer", "multipleOf": 7, "minimum": -50, "maximum": 50},
    "not_types": {"not": {"type": ["integer", "boolean"]}},
    "patterns": {
        "type": "object",
        "properties": {"x_id": {"type": "integer"}, "name": {"type": "string"}},
        "patternProperties": {"^x_": {"type": "integer", "minimum": 0}, "^[0-9]+$": {"type": "boolean"}},
        "additionalProperties": {"type": "null"},
    },
    "conditional": {
        "if": {"properties": {"k": {"const": 1}}, "required": ["k"]},
        "then": {"required": ["a"]},
        "else": {"properties": {"a": {"type": "string"}}},
    },
    "not_shape": {"type": "object", "not": {"properties": {"x": {"type": "integer", "minimum": 0}}, "required": ["x"]}},
    "one_of_overlap": {"oneOf": [{"type": "integer", "minimum": 0}, {"type": "number", "maximum": 10}]},
    "dependent": {
        "dependentRequired": {"a": ["b"]},
        "dependentSchemas": {"x": {"properties": {"y": {"const": True}}, "required": ["y"]}},
    },
    "names_and_counts": {"type": "object", "propertyNames": {"maxLength": 2, "pattern": "^[a-z0-9]+$"}, "minProperties": 1, "maxProperties": 3},
    "contains": {"type": "array", "items": {"type": ["integer", "string"]}, "contains": {"type": "string"}, "minContains": 1, "maxContains": 2, "maxItems": 4},
    "unique": {"type": "array", "items": {"enum": ["a", "b", "c", 1, True]}, "uniqueItems": True},
    "overlap_patterns": {"type": "object", "patternProperties": {"^x": {"type": "integer"}, "q$": {"minimum": 5}}, "additionalProperties": False},
    "decimal_multiple": {"type": "number", "multipleOf": 0.25, "maximum": 10},
    "not_values": {"not": {"enum": ["a", 1, None, True]}},
    "unevaluated_props": {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "allOf": [{"properties": {"b": {"type": "string"}}}],
        "anyOf": [{"properties": {"x": {"type": "boolean"}}, "required": ["x"]}, {"properties": {"y": {"type": "null"}}}],
        "unevaluatedProperties": False,
    },
    "unevaluated_items": {
        "type": "array", "prefixItems": [{"type": "string"}], "contains": {"type": "integer", "maximum": 3},
        "unevaluatedItems": {"type": "boolean"},
    },
    "double_not": {
        "properties": {"a": {"type": "integer"}},
        "not": {"not": {"properties": {"b": {"const": 1}}, "required": ["b"]}},
        "unevaluatedProperties": False,
    },
    "two_contains": {"type": "array", "allOf": [{"contains": {"type": "string"}}, {"contains": {"type": "integer"}, "maxContains": 2}]},
    "long_text": {"type": "object", "properties": {"t": {"type": "string", "minLength": 3, "maxLength": 1300}}},
    "closed_union": {
        "type": "object",
        "oneOf": [
            {"properties": {"a": {"type": "integer"}}, "additionalProperties": False},
            {"properties": {"b": {"type": "string"}}, "additionalProperties": False},
        ],
    },
    "tagged_union": {
        "type": "object",
        "oneOf": [
            {"properties": {"k": {"const": "x"}, "a": {"type": "integer"}}, "required": ["k"], "additionalProperties": False},
            {"properties": {"k": {"const": "y"}, "b": {"type": "string"}}, "required": ["k"]},
        ],
    },
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-200, 200) | st.floats(-5, 5, allow_nan=False) | st.sampled_from([2.0, -0.0, 14.0])
    | st.sampled_from(["a", "b", "c", "abc", "ABC", "2024-02-29", "2023-02-29", "", "x" * 9]),
    lambda kids: st.lists(kids, max_size=3)
    | st.dictionaries(st.sampled_from(["name", "age", "tags", "x", "y", "k", "v", "kids", "a", "b", "z", "x_id", "x_q", "12", "7a"]), kids, max_size=4),
    max_leaves=10,
)


@pytest.fixture(scope="module")
def compiler(llama3):
    return Compiler(llama3)


def _compact(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=json_values)
def test_never_accepts_an_invalid_document(name, value, compiler):
    schema = SCHEMAS[name]
    grammar = compiler.compile_json_schema(schema)
    if grammar.accepts(_compact(value)):
        jsonschema.validate(value, schema, format_checker=jsonschema.FormatChecker())


VALID = {
    "person": [{"name": "Ada"}, {"name": "Ada", "age": 36, "tags": ["a", "c"]}, {"name": "Ada", "other": [1, {"z": None}]}],
    "closed": [{}, {"x": -1}, {"x": 1.999, "y": True}, {"y": False}],
    "typed_extras": [{"k": 1, "n": 5}, {"n": -3}],
    "tree": [{"v": 1}, {"v": 1, "kids": [{"v": 2, "kids": [{"v": 3, "kids": []}]}]}],
    "union": ["abc", 5, -7, None],
    "one_of_types": ["2024-02-29", [1, "x"], [1]],
    "all_of": [{"a": 1, "b": "x"}],
    "enum_mix": [1, "one", None, [1, 2], {"k": "v"}, True],
    "any": [[], {"a": [1, {"b": None}]}, "x", 1.5],
    "multiple": [0, 7, -49, 49, 14.0],
    "not_types": [1.5, "x", None, [1], {"a": 1}],
    "patterns": [{}, {"x_id": 3, "x_b": 0, "12": True, "z": None}, {"name": "n", "7": False}],
    "conditional": [{"k": 1, "a": 0}, {"k": 2}, {"a": "s"}, 3],
    "not_shape": [{}, {"x": -1}, {"x": 1.5}, {"x": "s", "y": 2}],
    "one_of_overlap": [11, -3, -2.5, 5.5],
    "dependent": [{}, {"a": 1, "b": 2}, {"b": 1}, {"x": 1, "y": True}, "s"],
    "names_and_counts": [{"a": 1}, {"a": 1, "b2": None, "z": []}],
    "contains": [["a"], [1, "a", 2, "b"], ["a", 3]],
    "unique": [[], ["a", 1, True], ["c", "b", "a"]],
    "overlap_patterns": [{}, {"x": 1}, {"xq": 5}, {"q": 7.5}],
    "decimal_multiple": [0, 0.25, -1.5, 10, 9.75, 2.50],
    "not_values": ["b", 2, False, [], {}],
    "unevaluated_props": [{"a": 1, "b": "s", "x": True}, {"y": None}, {"x": False}, {}],
    "unevaluated_items": [["s", 1], ["s", 1, True], ["s", True, 2]],
    "double_not": ["s", 1],  # b must be 1, but nothing inside a `not` evaluates it
    "two_contains": [["a", 1], ["a", 1, 2], [1, "b"]],
    "closed_union": [{"a": 1}, {"b": "s"}],
    "long_text": [{"t": "abc"}, {"t": "a" * 1300}, {"t": "é" * 700}, {"t": "x" * 256}, {"t": "x" * 1024}],
    "tagged_union": [{"k": "x"}, {"k": "x", "a": 1}, {"k": "y", "b": "s", "z": 1}],
}
INVALID = {
    "person": [{}, {"name": ""}, {"name": "toolongname"}, {"name": "A", "age": 131}, {"name": "A", "tags": ["d"]}],
    "closed": [{"x": 2}, {"x": -1.5}, {"z": 1}],
    "typed_extras": [{"k": 2}, {"n": "s"}],
    "tree": [{"kids": []}, {"v": 1, "kids": [{}]}],
    "union": ["ABC", 6, 1.5, True],
    "one_of_types": ["2023-02-29", [1, 2], [1, "x", 3]],
    "all_of": [{"a": 1}, {"b": "x"}],
    "enum_mix": [2, "two", False, [2, 1]],
    "any": [],
    "multiple": [8, 56, -56, 1.5],
    "not_types": [1, True, -3, 2.0],
    "patterns": [{"x_id": -1}, {"x_b": "s"}, {"12": 1}, {"z": 1}, {"name": 1}],
    "conditional": [{"k": 1}, {"k": 1.0, "b": 2}, {"a": 1}],
    "not_shape": [{"x": 0}, {"x": 3, "y": 1}, "s"],
    "one_of_overlap": [0, 5, 10, 10.0, "s"],
    "dependent": [{"a": 1}, {"x": 1}, {"x": 1, "y": False}],
    "names_and_counts": [{}, {"abc": 1}, {"A": 1}, {"a": 1, "b": 2, "c": 3, "d": 4}],
    "contains": [[], [1, 2], ["a", "b", "c"], [1, "a", 2, 3, 4], [None, "a"]],
    "unique": [["a", "a"], [1, True, 1], [1.0, 1], ["d"]],
    "overlap_patterns": [{"x": 1.5}, {"xq": 4}, {"q": 1}, {"z": 1}],
    "decimal_multiple": [0.1, 10.25, 1.3, "s"],
    "not_values": ["a", 1, 1.0, None, True],
    "unevaluated_props": [{"z": 1}, {"a": 1, "x": 1}, {"b": 1}],
    "unevaluated_items": [[1], ["s"], ["s", 5], ["s", "t", 1]],
    "double_not": [{"a": 1, "b": 1}, {"b": 1}, {"a": 1}, {}],
    "two_contains": [[], ["a"], [1], ["a", 1, 2, 3]],
    "closed_union": [{}, {"a": 1, "b": "s"}, {"a": "s"}, {"z": 1}, "s"],
    "long_text": [{"t": "ab"}, {"t": "a" * 1301}, {"t": "é" * 1301}],
    "tagged_union": [{"k": "z"}, {"k": "x", "b": "s"}, {"a": 1}],
}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_known_documents(name, compiler):
    grammar = compiler.compile_json_schema(SCHEMAS[name])
    for doc in VALID[name]:
        jsonschema.validate(doc, SCHEMAS[name])
        assert grammar.accepts(_compact(doc)), doc
    for doc in INVALID[name]:
        assert not grammar.accepts(_compact(doc)), doc


@pytest.mark.parametrize("name", ["person", "tree", "union", "all_of"])
def test_masked_random_walks_end_in_valid_documents(name, compiler, llama3):
    grammar = compiler.compile_json_schema(SCHEMAS[name])
    rng = random.Random(name)
    eos = llama3.eos_token_ids
    for _ in range(3):
        m = Matcher(grammar)
        out = []
        for _ in range(60):
            allowed = m.allowed_token_ids()
            if m.is_accepting() and (rng.random() < 0.3 or len(allowed) == len(eos)):
                break
            choices = text_ids(allowed, llama3, eos)
            # Prefer short tokens so walks finish; any allowed token is legal.
            short = short_or_all(choices, llama3, 2)
            tid = int(rng.choice(short))
            assert m.accept_token(tid)
            out.append(tid)
        if m.is_accepting():
            doc = llama3.decode(out).decode("utf-8")
            jsonschema.validate(json.loads(doc), SCHEMAS[name])


class Address(BaseModel):
    city: str = Field(max_length=12)
    zip: str = Field(pattern=r"^[0-9]{5}$")


class Person(BaseModel):
    name: str
    age: int = Field(ge=0, le=120)
    address: Optional[Address] = None
    nicknames: list[str] = Field(default_factory=list, max_length=2)


def test_pydantic_models(compiler, llama3):
    grammar = compiler.compile_json_schema(Person)
    doc = Person(name="Ada", age=36, address=Address(city="London", zip="12345"), nicknames=["A"])
    text = doc.model_dump_json()
    assert grammar.accepts(text)
    assert Person.model_validate_json(text) == doc
    assert not grammar.accepts(text.replace("12345", "1234"))
    rng = random.Random(3)
    for _ in range(3):
        m = Matcher(grammar)
        out = []
        while not m.is_accepting() and len(out) < 80:
            choices = text_ids(m.allowed_token_ids(), llama3)
            tid = int(rng.choice(short_or_all(choices, llama3, 2)))
            m.accept_token(tid)
            out.append(tid)
        if m.is_accepting():
            Person.model_validate_json(llama3.decode(out))


def test_property_order_any_and_forbid(compiler):
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a"]}
    any_order = compiler.compile_json_schema(schema, property_order="any")
    assert any_order.accepts('{"b":1,"a":2}') and any_order.accepts('{"z":[],"a":2,"b":1}')
    assert not any_order.accepts('{"b":1}') and not any_order.accepts('{"a":1,"a":2}')
    forbid = compiler.compile_json_schema(schema, additional_properties="forbid")
    assert forbid.accepts('{"a":1,"b":2}') and not forbid.accepts('{"a":1,"z":2}')
    with pytest.raises(ValueError, match="property_order"):
        compiler.compile_json_schema(schema, property_order="sorted")


def test_masks_exclude_special_tokens(compiler, llama3):
    m = Matcher(compiler.compile_json_schema({"type": "object", "properties": {"s": {"type": "string"}}}))
    assert m.accept_tokens([llama3.token_id('{"'), llama3.token_id("s"), llama3.token_id('":"')]) == 3
    allowed = set(m.allowed_token_ids().tolist())
    assert not (llama3.special_ids & allowed)
    assert len(allowed) > 100_000  # inside a free string nearly everything is allowed
    assert np.all(np.array(sorted(allowed)) < llama3.size)


def test_references_across_ids_and_documents(compiler):
    """`$ref`s resolve against the `$id` of their resource; other documents come from
    `resources` (never fetched)."""
    schema = {
        "$id": "https://example.com/schemas/root.json",
        "type": "object",
        "properties": {"a": {"$ref": "item.json"}, "b": {"$ref": "defs.json#/$defs/n"}, "c": {"$ref": "#/$defs/item"}},
        "$defs": {"item": {"$id": "item.json", "type": "integer"}},
    }
    defs = {"$defs": {"n": {"type": "null"}}}
    grammar = compiler.compile_json_schema(schema, resources={"https://example.com/schemas/defs.json": defs})
    assert grammar.accepts('{"a":1,"b":null,"c":2}')
    for bad in ('{"a":"x"}', '{"b":1}', '{"c":null}'):
        assert not grammar.accepts(bad), bad
    with pytest.raises(UnsupportedSchemaError, match="another document"):
        compiler.compile_json_schema(schema)


def test_meta_schema_references_resolve_to_the_shipped_copies(compiler):
    """A schema that holds schemas ($ref to a draft's meta-schema) compiles offline; the
    instances are judged by jsonschema against the same meta-schema."""
    import jsonschema

    for meta in ("http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-04/schema#"):
        schema = {"type": "object", "properties": {"s": {"$ref": meta}}}
        grammar = compiler.compile_json_schema(schema)
        for doc in ({"s": {"minLength": 2, "type": "string"}}, {"s": {"type": 5}}, {"s": {"required": ["a", "a"]}},
                    {"s": {"properties": {"a": {"type": ["string", "null"]}}}}, {"s": True}, {"s": {"enum": []}}):
            text = json.dumps(doc, separators=(",", ":"))
            expected = jsonschema.validators.validator_for(schema)(schema).is_valid(doc)
            assert grammar.accepts(text) == expected, (meta, text)
    with pytest.raises(UnsupportedSchemaError, match="dynamicRef"):  # 2020-12's own meta-schema
        compiler.compile_json_schema({"$ref": "https://json-schema.org/draft/2020-12/schema"})


def test_dependent_required_tracks_presence_without_alternatives(compiler):
    """dependentRequired over many keys stays one automaton (2^8 alternatives before); keys
    that `properties` does not list come in any order."""
    deps = {f"k{i}": [f"k{(i + 1) % 8}"] for i in range(8)}
    schema = {"type": "object", "dependentRequired": deps, "properties": {"x": {"type": "integer"}}}
    grammar = compiler.compile_json_schema(schema)
    assert grammar.accepts('{"x":1}')
    assert grammar.accepts("{" + ",".join(f'"k{i}":{i}' for i in range(8)) + "}")
    assert not grammar.accepts('{"k0":1}')
    assert not grammar.accepts('{"k0":1,"k1":2}')  # k1 needs k2
    assert grammar.accepts('{"x":1,' + ",".join(f'"k{i}":{i}' for i in range(8)) + "}")
    assert grammar.accepts('{"k7":1,"k0":2,"x":1,' + ",".join(f'"k{i}":{i}' for i in range(1, 7)) + "}")
    few = {"type": "object", "dependentRequired": {"a": ["b"], "b": ["c"]}, "properties": {"x": {"type": "integer"}}}
    assert compiler.compile_json_schema(few).accepts('{"c":1,"x":1,"b":2,"a":3}')  # (they float)


def test_pointer_refs_inside_sub_schemas_with_bare_ids(compiler):
    """Draft-4 files give sub-schemas ids like "nullable-path" and still mean the file's own
    "#/definitions/...": resolved there (as validators do) when the sub-schema has no such path."""
    schema = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "definitions": {
            "path": {"type": "string"},
            "nullable-path": {"id": "nullable-path", "oneOf": [{"$ref": "#/definitions/path"}, {"type": "null"}]},
        },
        "type": "object",
        "properties": {"p": {"$ref": "#/definitions/nullable-path"}},
    }
    grammar = compiler.compile_json_schema(schema)
    assert grammar.accepts('{"p":"x"}') and grammar.accepts('{"p":null}')
    assert not grammar.accepts('{"p":1}')


def test_presence_only_dependencies(compiler):
    """Dependencies that only say which keys may or must come along are checked on presence."""
    schema = {
        "type": "object",
        "dependencies": {
            "begin": {"anyOf": [{"required": ["end"]}, {"required": ["while"]}]},
            "aql": {"not": {"required": ["pattern"]}},
            "end": ["begin"],
        },
    }
    grammar = compiler.compile_json_schema(schema)
    for doc in ({}, {"begin": 1, "end": 2}, {"while": 1, "begin": 2}, {"aql": 1}, {"pattern": 1}):
        jsonschema.validate(doc, schema)
        assert grammar.accepts(_compact(doc)), doc
    for doc in ({"begin": 1}, {"end": 1}, {"aql": 1, "pattern": 2}, {"pattern": 2, "aql": 1}):
        assert not jsonschema.Draft7Validator(schema).is_valid(doc)
        assert not grammar.accepts(_compact(doc)), doc


def test_plain_leaf_schemas_share_one_node():
    """Plain strings, booleans and integers recur hundreds of times in large schemas: each is one
    IR node, so what the compiler learns about it (hash, callees, rule DFA) is learned once."""
    from constrain.grammar.json_schema.options import JsonSchemaOptions
    from constrain.grammar.json_schema.translate import Translator

    leaves = {"s": {"type": "string"}, "b": {"type": "boolean"}, "i": {"type": "integer"}}
    schema = {"type": "object", "properties": {
        **{f"{k}1": v for k, v in leaves.items()},
        **{f"{k}2": {**v, "description": "another sub-schema"} for k, v in leaves.items()},
    }}
    translator = Translator(schema, JsonSchemaOptions("compact", "schema", "schema", True))
    translator.translate()
    for k in leaves:
        first, second = (translator.rules[translator.rule_of[id(schema["properties"][f"{k}{n}"])]] for n in (1, 2))
        assert first is second, k
