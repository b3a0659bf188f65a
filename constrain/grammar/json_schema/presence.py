"""Dependencies that only speak of which keys are present ("if `k` is present, `a` or `b` must
be too", "`pattern` excludes `aql`"): kept as boolean rules over key presence and checked by
the object automaton on the keys it tracks, instead of one alternative per case.

A rule is (k, condition): when key k is present, `condition` must hold. A condition is a
presence-only schema: `required`, `not`, `anyOf`, `allOf`, `oneOf` over those, booleans, and
annotations (or `type: object`, which an object satisfies anyway).
"""

from __future__ import annotations

from typing import Any, Iterable

from .keywords import ANNOTATIONS

_LOGIC = ("not", "anyOf", "allOf", "oneOf")


def presence_only(schema: Any, depth: int = 0) -> bool:
    """Is `schema` decided by which keys an object has (and nothing else)?"""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict) or depth > 8:
        return False
    for key, value in schema.items():
        if key in ANNOTATIONS:
            continue
        if key == "required":
            if not (isinstance(value, list) and all(isinstance(k, str) for k in value)):
                return False
        elif key == "type":
            if value != "object" and value != ["object"]:
                return False
        elif key == "not":
            if not presence_only(value, depth + 1):
                return False
        elif key in ("anyOf", "allOf", "oneOf"):
            if not (isinstance(value, list) and value and all(presence_only(v, depth + 1) for v in value)):
                return False
        else:
            return False
    return True


def keys_of(schema: Any) -> list[str]:
    """Every key a presence-only schema mentions."""
    out: list[str] = []
    todo = [schema]
    while todo:
        s = todo.pop()
        if isinstance(s, dict):
            out += [k for k in s.get("required", ()) if k not in out]
            if "not" in s:
                todo.append(s["not"])
            for key in ("anyOf", "allOf", "oneOf"):
                todo.extend(s.get(key, ()))
    return out


def holds(schema: Any, present: "set[str] | frozenset[str]") -> bool:
    """Does a presence-only schema hold for an object with exactly these keys present?"""
    if isinstance(schema, bool):
        return schema
    if not all(k in present for k in schema.get("required", ())):
        return False
    if "not" in schema and holds(schema["not"], present):
        return False
    if "anyOf" in schema and not any(holds(s, present) for s in schema["anyOf"]):
        return False
    if "allOf" in schema and not all(holds(s, present) for s in schema["allOf"]):
        return False
    if "oneOf" in schema and sum(holds(s, present) for s in schema["oneOf"]) != 1:
        return False
    return True


def rules_hold(rules: Iterable[tuple[str, Any]], present: "set[str] | frozenset[str]") -> bool:
    return all(k not in present or holds(condition, present) for k, condition in rules)
