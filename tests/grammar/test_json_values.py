"""`type` decided without jsonschema agrees with jsonschema in every draft (or defers to it)."""

from __future__ import annotations

import jsonschema
import pytest

from constrain.grammar.json_schema.values import _has_type

VALUES = [None, True, False, 0, 1, -3, 1.5, 2.0, "a", "", [], [1], {}, {"a": 1}]
TYPES = ["null", "boolean", "string", "array", "object", "number", "integer", ["string", "null"],
         ["integer", "boolean"], [], "float", 3]


@pytest.mark.parametrize("cls", [jsonschema.Draft4Validator, jsonschema.Draft7Validator, jsonschema.Draft202012Validator])
def test_type_agrees_with_jsonschema(cls):
    for value in VALUES:
        for types in TYPES:
            ours = _has_type(value, types)
            if ours is not None:
                assert cls({"type": types}).is_valid(value) == ours, (value, types)
    assert _has_type(2.0, "integer") is None  # drafts disagree: jsonschema decides
    assert _has_type("a", "float") is None  # not a type: jsonschema reports it
