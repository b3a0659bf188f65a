"""Valid instances are accepted token by token through a Matcher with the real Llama 3 tokenizer.

Instances come from hypothesis strategies read off each schema's types, enums, properties and
bounds (`candidates`, deliberately naive), kept only where the `jsonschema` library says they
are valid: the oracle decides, the strategies only aim. (hypothesis-jsonschema would be the
natural generator, but 0.23.1 breaks on current hypothesis internals.) Keys come in any order,
so the grammar is compiled with property_order="any", the option that promises to accept every
valid instance."""

from __future__ import annotations

import json

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from constrain import Compiler, Matcher

SCHEMAS = {
    "person": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 20},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "email": {"type": "string", "format": "email"},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True, "maxItems": 4},
        },
        "required": ["name", "age"],
        "additionalProperties": False,
    },
    "tagged_union": {
        "oneOf": [
            {"type": "object", "properties": {"kind": {"const": "circle"}, "r": {"type": "number", "exclusiveMinimum": 0}}, "required": ["kind", "r"], "additionalProperties": False},
            {"type": "object", "properties": {"kind": {"const": "rect"}, "w": {"type": "integer"}, "h": {"type": "integer"}}, "required": ["kind", "w", "h"], "additionalProperties": False},
        ]
    },
    "numbers": {
        "type": "array",
        "maxItems": 4,
        "items": {"anyOf": [{"type": "integer", "multipleOf": 7, "minimum": -100}, {"type": "number", "minimum": 1.5, "maximum": 9.25}]},
    },
    "patterns": {
        "type": "object",
        "patternProperties": {"^x-[a-z]+$": {"type": "string", "pattern": "^[A-Z][0-9]{2}$"}},
        "properties": {"id": {"type": "string", "pattern": "^[a-f0-9]{8}$"}, "date": {"type": "string", "format": "date"}},
        "additionalProperties": False,
        "maxProperties": 3,
    },
    "recursive": {
        "$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "maxItems": 2, "items": {"$ref": "#/$defs/node"}}}, "required": ["v"], "additionalProperties": False}},
        "$ref": "#/$defs/node",
    },
    "conditional": {
        "type": "object",
        "properties": {"country": {"enum": ["US", "CA"]}, "zip": {"type": "string"}},
        "required": ["country", "zip"],
        "if": {"properties": {"country": {"const": "US"}}},
        "then": {"properties": {"zip": {"pattern": "^[0-9]{5}$"}}},
        "else": {"properties": {"zip": {"pattern": "^[A-Z][0-9][A-Z] [0-9][A-Z][0-9]$"}}},
    },
    "dependent": {
        "type": "object",
        "properties": {"card": {"type": "string", "maxLength": 4}, "cvc": {"type": "string", "maxLength": 4}, "note": {"type": "string", "maxLength": 4}},
        "dependentRequired": {"card": ["cvc"]},
        "additionalProperties": False,
    },
    "unique_objects": {
        "type": "array",
        "maxItems": 4,
        "uniqueItems": True,
        "items": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "boolean"}}, "additionalProperties": False},
    },
    "free_form": {"type": "object", "maxProperties": 3},
}


def candidates(schema, root, depth: int = 0) -> st.SearchStrategy:
    """Values shaped like `schema` (often valid; the test filters with jsonschema)."""
    if schema is True or schema == {}:
        return _any_json
    if "$ref" in schema:
        target = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target[part]
        return candidates(target, root, depth + 1) if depth < 3 else st.nothing()
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    base = {k: v for k, v in schema.items() if k not in ("oneOf", "anyOf", "allOf", "if", "then", "else")}
    for key in ("oneOf", "anyOf"):
        if key in schema:
            return st.one_of([candidates({**base, **branch}, root, depth) for branch in schema[key]])
    if "if" in schema:
        return st.one_of([candidates(_merged(base, schema.get(k, {})), root, depth) for k in ("then", "else")])
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        patterns = schema.get("patternProperties", {})
        pattern_keys = st.just({})
        if patterns:
            pattern_keys = st.dictionaries(
                st.one_of([st.from_regex(p, fullmatch=True) for p in patterns]),
                st.one_of([candidates(v, root, depth) for v in patterns.values()]),
                max_size=2,
            )
        required = [k for k in schema.get("required", []) if k in props]
        named = st.fixed_dictionaries(
            {k: candidates(props[k], root, depth) for k in required},
            optional={k: candidates(v, root, depth) for k, v in props.items() if k not in required},
        )
        extra = st.dictionaries(st.sampled_from(["x", "y", "other"]), _any_json, max_size=2)
        return st.tuples(named, pattern_keys, extra).map(lambda parts: {**parts[2], **parts[1], **parts[0]})
    if kind == "array":
        if depth >= 3:
            return st.just([])
        items = candidates(schema.get("items", True), root, depth)
        return st.lists(items, min_size=schema.get("minItems", 0), max_size=min(schema.get("maxItems", 4), 4),
                        unique_by=(lambda v: json.dumps(v, sort_keys=True)) if schema.get("uniqueItems") else None)
    if kind == "string":
        if "pattern" in schema:
            return st.from_regex(schema["pattern"], fullmatch=True)
        if schema.get("format") == "email":
            return st.from_regex(r"[a-z]{1,6}(\.[a-z]{1,3})?@[a-z]{1,5}\.(com|org|io)", fullmatch=True)
        if schema.get("format") == "date":
            return st.dates().map(lambda d: d.isoformat())
        return st.text(st.sampled_from("ab é\"\\\n/🙂"), min_size=schema.get("minLength", 0), max_size=min(schema.get("maxLength", 8), 8))
    if kind == "integer":
        step = schema.get("multipleOf", 1)
        return st.integers(-30, 30).map(lambda k: k * step) | st.integers(schema.get("minimum", -10**6), schema.get("maximum", 10**6))
    if kind == "number":
        # (Documented narrowings: numbers bounded away from 0 take no exponent, those bounded
        # by 0 none below e-299. Python writes floats under 1e-4 with one; the schemas here
        # bound away from 0 only above 1e-4.)
        floats = st.floats(schema.get("minimum", -1e6), schema.get("maximum", 1e6), allow_nan=False)
        return floats.filter(lambda x: x == 0 or abs(x) >= 1e-299) | st.integers(-100, 100)
    if kind == "boolean":
        return st.booleans()
    return _any_json


def _merged(base: dict, more: dict) -> dict:
    """`more`'s keywords over `base`'s, each property's keywords merged too."""
    out = {**base, **more}
    props = dict(base.get("properties", {}))
    for k, v in more.get("properties", {}).items():
        props[k] = {**props.get(k, {}), **v}
    out["properties"] = props
    return out


_any_json = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=3), kids, max_size=3),
    max_leaves=6,
)


@pytest.fixture(scope="module")
def compiler(llama3):
    return Compiler(llama3)


class _Encoder:
    """The Llama 3 tokenizer with a short repr (hypothesis prints its arguments)."""

    def __init__(self, path: str) -> None:
        self.tok = Tokenizer.from_file(path)

    def __call__(self, text: str) -> list[int]:
        return self.tok.encode(text, add_special_tokens=False).ids

    def __repr__(self) -> str:
        return "llama3-encoder"


@pytest.fixture(scope="module")
def encode(tokenizer_files):
    return _Encoder(str(tokenizer_files["llama3"] / "tokenizer.json"))


@pytest.mark.parametrize("name", sorted(SCHEMAS))
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_generated_valid_instances_are_accepted_token_by_token(name, data, compiler, encode):
    schema = SCHEMAS[name]
    value = data.draw(candidates(schema, schema))
    assume(jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).is_valid(value))
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    grammar = compiler.compile_json_schema(schema, property_order="any")
    ids = encode(text)
    m = Matcher(grammar)
    accepted = m.accept_tokens(ids)
    assert accepted == len(ids), (text, encode.tok.decode(ids[: accepted + 1]))
    assert m.is_accepting(), text
