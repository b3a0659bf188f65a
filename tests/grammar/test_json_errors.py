"""Bad and unsupported schemas: errors name the JSON pointer, and say whether strict=False helps."""

from __future__ import annotations

import pytest

from constrain import SchemaError, UnsatisfiableSchemaError, UnsupportedSchemaError


def test_errors_name_the_pointer(json_compiler):
    with pytest.raises(UnsupportedSchemaError) as info:
        json_compiler.compile_json_schema({"type": "object", "properties": {"a": {"$dynamicRef": "#node"}}})
    assert info.value.pointer == "#/properties/a/$dynamicRef"
    with pytest.raises(UnsupportedSchemaError, match="another document") as info:
        json_compiler.compile_json_schema({"properties": {"a": {"$ref": "other.json#/x"}}})
    assert info.value.pointer == "#/properties/a"
    with pytest.raises(UnsupportedSchemaError) as info:
        json_compiler.compile_json_schema({"type": "object", "properties": {"a": {"type": "integer", "multipleOf": 0.123456789}}})
    assert info.value.pointer == "#/properties/a/multipleOf"
    with pytest.raises(SchemaError, match="points nowhere"):
        json_compiler.compile_json_schema({"$ref": "#/$defs/missing"})
    with pytest.raises(SchemaError, match="not valid JSON"):
        json_compiler.compile_json_schema('{"type": ')
    with pytest.raises(SchemaError, match="unknown type"):
        json_compiler.compile_json_schema({"type": "strnig"})
    relaxed = json_compiler.compile_json_schema({"type": "integer", "multipleOf": 0.123456789}, strict=False)
    assert relaxed.relaxations == (
        "multipleOf at #/multipleOf: only integer divisors up to 10000 and decimals m/10^d with m*(d+2) up to 60000",
    )
    with pytest.raises(UnsatisfiableSchemaError):
        json_compiler.compile_json_schema({"allOf": [{"type": "string"}, {"not": {"type": "string"}}]})
    with pytest.raises(UnsatisfiableSchemaError, match="admit no value: #/properties/a"):  # contradictory bounds
        json_compiler.compile_json_schema(
            {"type": "object", "properties": {"a": {"type": "integer", "minimum": 5, "maximum": 3}}, "required": ["a"]}
        )


def test_errors_say_whether_strict_false_relaxes(json_compiler):
    """Only keywords the translation can widen suggest strict=False; limits of the translation
    itself (here a pattern with a backreference) say that it does not help."""
    schema = {"type": "integer", "multipleOf": 0.123456789}
    with pytest.raises(UnsupportedSchemaError, match="compile with strict=False to relax it") as info:
        json_compiler.compile_json_schema(schema)
    assert info.value.relaxable
    assert json_compiler.compile_json_schema(schema, strict=False).relaxations
    schema = {"type": "string", "pattern": "^(a)\\1$"}
    for strict in (True, False):
        with pytest.raises(UnsupportedSchemaError, match="strict=False does not relax it") as info:
            json_compiler.compile_json_schema(schema, strict=strict)
        assert not info.value.relaxable
