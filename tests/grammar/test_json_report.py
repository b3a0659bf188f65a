"""check_schema: every keyword of a schema classified the way the compile treats it."""

from __future__ import annotations

from constrain import check_schema


def test_keywords_are_classified_with_their_pointers():
    report = check_schema({
        "type": "object",
        "title": "x",
        "x-vendor": 1,
        "properties": {
            "a": {"type": "number", "multipleOf": 0.123456789},
            "d": {"type": "string", "format": "iri"},
            "e": {"items": [{"$dynamicRef": "#node"}]},
            "f": {"anyOf": [{"minimum": 1}, {"not": {"const": 2}}]},
        },
    })
    status = {u.pointer: u.status for u in report.uses}
    assert status["#/type"] == "enforced"
    assert status["#/title"] == "annotation"
    assert status["#/x-vendor"] == "ignored"
    assert status["#/properties/a/multipleOf"] == "relaxed"
    assert status["#/properties/d/format"] == "not enforced"
    assert status["#/properties/e/items/0/$dynamicRef"] == "relaxed"
    assert status["#/properties/f/anyOf/1/not/const"] == "enforced"
    assert report.strict_error is not None and "multipleOf" in report.strict_error
    assert "relaxed" in str(report)


def test_a_supported_schema_compiles_strictly():
    report = check_schema({"type": "array", "items": {"enum": ["a", "b"]}, "uniqueItems": True})
    assert report.strict_error is None
    assert report.relaxations == ()
    assert {u.status for u in report.uses} == {"enforced"}


def test_a_keyword_whose_value_a_strict_compile_refuses_is_marked_refused():
    report = check_schema({"type": "string", "pattern": r"(a)\1"})  # a backreference
    status = {u.pointer: u.status for u in report.uses}
    assert status == {"#/type": "enforced", "#/pattern": "refused"}
    assert "backreference" in report.strict_error
