"""quick_validity.py judges simple schemas exactly as the `jsonschema` library does, or abstains."""

from __future__ import annotations

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from constrain.grammar.json_schema.quick_validity import DRAFT4, MODERN, OLDER, draft_of, local_refs, quick_valid

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from([0.0, 1.0, -2.0, 2.5, 1e300]),
    st.text(alphabet="ab\u00e9\U0001f600", max_size=4),
)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("ab", max_size=2), inner, max_size=2), max_leaves=6)
type_names = st.sampled_from(["null", "boolean", "integer", "number", "string", "array", "object", "bogus"])
numbers = st.one_of(st.integers(-3, 3), st.sampled_from([0.5, 2.0, -1.5]), st.booleans())


def schemas(depth: int = 2):
    leaf = st.fixed_dictionaries({}, optional={
        "type": type_names | st.lists(type_names, min_size=1, max_size=3, unique=True),
        "enum": st.lists(values, min_size=1, max_size=3),
        "const": values,
        "minimum": numbers, "maximum": numbers, "exclusiveMinimum": numbers, "exclusiveMaximum": numbers,
        "multipleOf": st.sampled_from([1, 2, 3, 0.5]),
        "minLength": st.integers(0, 3), "maxLength": st.integers(0, 3),
        "minItems": st.integers(0, 2), "maxItems": st.integers(0, 2),
        "pattern": st.just("^a"), "format": st.just("date"),
        "description": st.just("ignored"), "x-vendor": st.just({"type": "string"}),
    })
    if depth == 0:
        return leaf | st.booleans()
    sub = schemas(depth - 1)
    return leaf | st.fixed_dictionaries({}, optional={
        "allOf": st.lists(sub, min_size=1, max_size=2), "anyOf": st.lists(sub, min_size=1, max_size=2),
        "oneOf": st.lists(sub, min_size=1, max_size=2), "not": sub, "items": sub,
        "properties": st.dictionaries(st.text("ab", max_size=2), sub, max_size=2),
        "required": st.lists(st.text("ab", max_size=2), max_size=2) | st.just(True),
        "type": type_names,
    })


@settings(max_examples=1500, deadline=None)
@given(schemas(), values)
def test_agrees_with_jsonschema_where_it_answers(schema, value):
    for cls, draft in ((jsonschema.Draft202012Validator, MODERN), (jsonschema.Draft7Validator, MODERN),
                       (jsonschema.Draft4Validator, DRAFT4), (jsonschema.Draft3Validator, OLDER)):
        known = quick_valid(value, schema, draft)
        if known is not None:
            assert known == cls(schema).is_valid(value), (cls.__name__, schema, value)


def test_answers_the_common_shapes():
    """The point of the module: enum/const next to type, bounds and annotations need no jsonschema."""
    assert quick_valid("a", {"type": "string", "enum": ["a", "b"], "description": "x"}) is True
    assert quick_valid(1, {"const": 1, "standsFor": "miter"}) is True
    assert quick_valid(True, {"enum": [1]}) is False
    assert quick_valid(3, {"type": "integer", "minimum": 0, "maximum": 2}) is False
    assert quick_valid(1.0, {"type": "integer"}) is True
    assert quick_valid(1.0, {"type": "integer"}, DRAFT4) is None  # draft 4: not an integer
    assert quick_valid(["a"], {"items": {"enum": ["a"]}, "minItems": 1}, DRAFT4) is True
    assert quick_valid(1, {"minimum": 1, "exclusiveMinimum": True}, DRAFT4) is None
    assert quick_valid(["a"], {"type": "array", "items": {"enum": ["a"]}, "minItems": 1}) is True
    assert quick_valid({"a": 1}, {"properties": {"a": {"minLength": 4}}, "required": ["a"]}) is True
    assert quick_valid({}, {"not": {"not": {"required": ["a"]}}}) is False
    assert quick_valid("a", {"$ref": "#/x"}) is None
    assert quick_valid("a", {"format": "date"}) is None


def test_draft_of():
    assert draft_of({}) == MODERN
    assert draft_of({"$schema": "http://json-schema.org/draft-07/schema#"}) == MODERN
    assert draft_of({"$schema": "https://json-schema.org/draft/2020-12/schema"}) == MODERN
    assert draft_of({"$schema": "http://json-schema.org/draft-04/schema#"}) == DRAFT4
    assert draft_of({"$schema": "http://json-schema.org/schema#"}) == OLDER
    assert draft_of({"$schema": 7}) == OLDER


def test_local_refs():
    root = {"definitions": {"small": {"maximum": 3}, "a/b": {"type": "string"}}, "items": [{"type": "null"}]}
    resolve = local_refs(root)
    assert quick_valid(2, {"$ref": "#/definitions/small"}, MODERN, resolve) is True
    assert quick_valid(4, {"$ref": "#/definitions/small", "description": "d"}, MODERN, resolve) is False
    assert quick_valid("x", {"$ref": "#/definitions/a~1b"}, MODERN, resolve) is True
    assert quick_valid(None, {"$ref": "#/items/0"}, MODERN, resolve) is True
    assert quick_valid(2, {"$ref": "#/definitions/small", "minimum": 5}, MODERN, resolve) is None  # drafts differ
    assert quick_valid(2, {"$ref": "#/nowhere"}, MODERN, resolve) is None
    assert quick_valid(2, {"$ref": "other.json#/x"}, MODERN, resolve) is None
    assert quick_valid(2, {"$ref": "#/definitions/small"}) is None  # no resolver
    assert local_refs({"definitions": {"x": {"$id": "x.json", "type": "string"}}}) is None  # a new base


def test_ref_cycles_go_to_jsonschema():
    from constrain.errors import SchemaError
    from constrain.grammar.json_schema.values import ValueChecker

    checker = ValueChecker({"allOf": [{"$ref": "#"}]})
    try:
        checker.valid(1, {"$ref": "#"})
    except SchemaError:
        pass  # jsonschema finds the cycle too: a clear error, not a crash


@settings(max_examples=500, deadline=None)
@given(schemas(1), schemas(1), values, st.booleans())
def test_local_refs_agree_with_jsonschema(target, schema, value, wrap):
    """A document whose schema refers to its definitions: the same verdicts as jsonschema."""
    ref = {"$ref": "#/definitions/d"}
    body = {"allOf": [ref, schema]} if wrap else {"anyOf": [ref, schema]}
    root = {"definitions": {"d": target}, **body}
    for cls, draft in ((jsonschema.Draft202012Validator, MODERN), (jsonschema.Draft7Validator, MODERN)):
        known = quick_valid(value, root, draft, local_refs(root))
        if known is not None:
            assert known == cls(root).is_valid(value), (cls.__name__, root, value)
