"""Applicators over key-local object schemas, kept as a formula over keys (key_formula.py,
key_conditions.py) where alternatives would multiply past the cap: exact against jsonschema."""

from __future__ import annotations

import json

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from constrain.errors import TooManyAlternativesError, UnsupportedSchemaError
from constrain.grammar.json_schema import dnf
from constrain.grammar.json_schema.key_atoms import ANY, _and, _has, _not, _one, _or, _subst
from constrain.grammar.json_schema.keywords import KEY_FORMULA
from constrain.grammar.json_schema.key_formula import holds_for_object, holds_for_type, key_formula, keys_named

KEYS = [f"k{i}" for i in range(8)]

# Each branch requires its own key with an object value; the outer schema names every key.
# Exactly one branch must hold, so an object with two keys holds only if one of them has a
# value that its branch rejects (the case that makes alternatives multiply: 2^7 per branch).
ONE_OF_KEYS = {
    "type": "object",
    "properties": {k: True for k in KEYS},
    "oneOf": [{"required": [k], "properties": {k: {"type": "object", "required": ["x"]}}} for k in KEYS],
}

# An if/then chain on a discriminator that no `if` requires: with it absent every `then` applies.
KINDS = [f"kind{i}" for i in range(9)]
IF_THEN_CHAIN = {
    "type": "object",
    "properties": {"kind": {"enum": KINDS}},
    "allOf": [
        {
            "if": {"properties": {"kind": {"const": kind}}},
            "then": {"properties": {f"p{i % 3}": {"anyOf": [{"type": "integer", "minimum": i}, {"type": "string", "maxLength": i}]}}},
        }
        for i, kind in enumerate(KINDS)
    ],
}

# Branches closed with additionalProperties: false (other keys falsify them), plus a
# dependency and a `not`.
CLOSED_BRANCHES = {
    "oneOf": [
        {"type": "object", "properties": {"name": {"type": "string"}, k: {"type": "string"}}, "required": ["name", k],
         "additionalProperties": False}
        for k in KEYS[:4]
    ] + [
        {"type": "object", "properties": {"name": {"type": "string"}, "bindings": {"type": "array"}},
         "required": ["bindings"], "dependentRequired": {"name": ["k0"]}},
        {"not": {"required": ["name"]}, "properties": {"k1": {"type": "integer"}}, "required": ["k1"]},
        {"type": ["null", "object"], "required": ["k2", "k3"]},
    ]
}


def _order(schema_keys: list[str], doc: dict) -> dict:
    """The document with its keys in the schema's member order (the grammar's default)."""
    rank = {k: i for i, k in enumerate(schema_keys)}
    return dict(sorted(doc.items(), key=lambda kv: rank.get(kv[0], len(rank))))


VALUES = st.sampled_from([{}, {"x": 1}, {"x": {}}, 0, 3, -1, 7, "", "abc", "abcdefghij", [], [1], None, True])


def _documents(keys: list[str]) -> st.SearchStrategy:
    extra = st.dictionaries(st.sampled_from(keys + ["zz", "name"]), VALUES, max_size=5)
    return st.one_of(extra, VALUES)


def _check(grammar, schema, keys, doc) -> None:
    if isinstance(doc, dict):
        doc = _order(keys, doc)
    text = json.dumps(doc, separators=(",", ":"))
    expected = jsonschema.Draft202012Validator(schema).is_valid(doc)
    assert grammar.accepts(text.encode()) == expected, (text, expected)


@pytest.fixture(scope="module")
def compiled(json_compiler):
    """Keys in any order where the members' order is not obvious from the schema (an exact
    oneOf branch lists its own keys first); the if/then chain in schema order."""
    return {
        "one_of_keys": json_compiler.compile_json_schema(ONE_OF_KEYS, property_order="any"),
        "closed": json_compiler.compile_json_schema(CLOSED_BRANCHES, property_order="any"),
        "if_then": json_compiler.compile_json_schema(IF_THEN_CHAIN),
    }


def test_these_schemas_take_the_formula_way():
    """(Their alternatives exceed the cap, here or in an exact oneOf branch's expansion.)"""
    from constrain.grammar.json_schema.options import JsonSchemaOptions
    from constrain.grammar.json_schema.translate import Translator

    for schema in (ONE_OF_KEYS, IF_THEN_CHAIN, CLOSED_BRANCHES):
        alts = dnf.alternatives(schema, "#", Translator(schema, JsonSchemaOptions()))
        assert any(isinstance(a, dict) and KEY_FORMULA in a for a in alts)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=_documents(KEYS))
def test_one_of_over_keys_agrees_with_jsonschema(compiled, doc):
    _check(compiled["one_of_keys"], ONE_OF_KEYS, KEYS, doc)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(KINDS + ["other", None]), doc=st.dictionaries(st.sampled_from(["p0", "p1", "p2", "q"]), VALUES, max_size=4))
def test_if_then_chain_agrees_with_jsonschema(compiled, kind, doc):
    if kind is not None:
        doc = {"kind": kind, **doc}
    _check(compiled["if_then"], IF_THEN_CHAIN, ["kind", "p0", "p1", "p2"], doc)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=_documents(["name", *KEYS[:4], "bindings"]))
def test_closed_branches_agree_with_jsonschema(compiled, doc):
    _check(compiled["closed"], CLOSED_BRANCHES, ["name", *KEYS[:4], "bindings", "k1", "k2", "k3"], doc)


# More keys in presence rules than the object tracks as floating members (2^12 states).
DEPENDENCIES = {
    "type": "object",
    "properties": {f"d{i}": {"type": "integer"} for i in range(16)},
    "dependentRequired": {f"d{i}": [f"d{(i + 3) % 16}"] for i in range(0, 16, 2)},
    "dependentSchemas": {"d1": {"not": {"required": ["d5"]}}},
}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=st.dictionaries(st.sampled_from([f"d{i}" for i in range(16)]), st.sampled_from([0, "x"]), max_size=8))
def test_many_presence_rules_agree_with_jsonschema(json_compiler, doc):
    grammar = json_compiler.compile_json_schema(DEPENDENCIES)  # (cached after the first example)
    _check(grammar, DEPENDENCIES, [f"d{i}" for i in range(16)], doc)


# A discriminator by pattern (package URLs): 2^11 sign combinations, all but 12 without a string.
KINDS_BY_PATTERN = ["cargo", "gem", "npm", "pypi", "go", "nuget", "github", "gitlab", "luarocks", "opam", "generic"]
PATTERN_ONE_OF = {
    "oneOf": [
        {"type": "object", "additionalProperties": False, "required": ["id"],
         "properties": {"id": {"type": "string", "pattern": f"^pkg:{kind}/.+@.+"}, f"{kind}_opts": {"type": "array"}}}
        for kind in KINDS_BY_PATTERN
    ]
}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(KINDS_BY_PATTERN + ["other"]), name=st.sampled_from(["a@1", "a", "x/y@2"]),
       extra=st.dictionaries(st.sampled_from([f"{k}_opts" for k in KINDS_BY_PATTERN[:3]] + ["z"]), st.sampled_from([[], 0]), max_size=2))
def test_pattern_discriminator_agrees_with_jsonschema(json_compiler, kind, name, extra):
    grammar = json_compiler.compile_json_schema(PATTERN_ONE_OF)
    _check(grammar, PATTERN_ONE_OF, ["id", *(f"{k}_opts" for k in KINDS_BY_PATTERN)], {"id": f"pkg:{kind}/{name}", **extra})


def test_non_objects_follow_the_branch_types(compiled):
    assert compiled["closed"].accepts(b"null") == jsonschema.Draft202012Validator(CLOSED_BRANCHES).is_valid(None)
    assert not compiled["one_of_keys"].accepts(b"3")


def test_unevaluated_properties_next_to_a_formula_is_refused(json_compiler):
    schema = dict(ONE_OF_KEYS, unevaluatedProperties=False)
    with pytest.raises(UnsupportedSchemaError, match="unevaluatedProperties"):
        json_compiler.compile_json_schema(schema)


def test_not_key_local_schemas_still_report_the_cap(json_compiler):
    schema = {"oneOf": [{"required": [k], "minProperties": 1, "properties": {k: {"type": "object"}}} for k in KEYS]}
    with pytest.raises(TooManyAlternativesError, match="more than 64 alternatives"):
        json_compiler.compile_json_schema(schema)


# -- the formula itself ------------------------------------------------------------------------


class _Refs:
    legacy_refs = False

    def resolve(self, ref, pointer, holder):
        raise AssertionError("no refs here")


def test_key_formula_reads_key_local_keywords():
    f = key_formula({"type": "object", "required": ["a"], "properties": {"b": {"type": "string"}},
                     "oneOf": [{"required": ["c"]}, {"not": {"required": ["d"]}}], "title": "x"}, _Refs())
    assert keys_named(f) == ["a", "b", "c", "d"]
    assert holds_for_object(f, {"a": 1, "c": 2, "d": 3}, lambda v, s: isinstance(v, str))
    assert not holds_for_object(f, {"a": 1, "c": 2}, lambda v, s: True)  # both branches hold
    assert not holds_for_type(f, "string")  # type: object
    assert key_formula({"minProperties": 1}, _Refs()) is None
    assert key_formula({"additionalProperties": {"type": "string"}}, _Refs()) is None


def test_exactly_one_simplifies():
    a, b, c = (_has(k, 0, False) for k in "abc")
    assert _one([a, True]) == _not(a)
    assert _one([True, True, a]) is False
    assert _one([a, a, b]) == _and([_not(a), b])  # a repeated part must be false
    f = _one([a, b, c])
    assert _subst(f, "a", 0, True) == _and([_not(b), _not(c)])
    assert _subst(f, "a", ANY, True) == f  # present, value not judged yet
    assert _subst(_subst(f, "a", None, False), "b", None, False) == c  # both absent
    assert _or([a, _or([b, False])]) == _or([b, a])
