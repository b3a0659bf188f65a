"""Applicators over "key-local" object schemas as one boolean formula, instead of alternatives.

A key-local schema says only, per key, whether it must be present and what its value must
satisfy (`properties`, `required`, `type: object`, `additionalProperties: false`, and
anyOf/oneOf/allOf/not/if over such schemas). Exact oneOfs and if/then chains over them are
where alternatives multiply (26 oneOf branches each requiring its own key: 2^25 combinations),
yet the formula over "key k absent / present with a value in S" stays the size of the schema,
and the object automaton evaluates it member by member (key_conditions.py).

Raw formulas are nested tuples (schemas inside stay the document's objects):
- ("in", key, S, absent_ok): key absent (when absent_ok) or present with a value valid under S
- ("closed", names): no key outside `names` is present (additionalProperties: false)
- ("type", types): the schema's `type` (an object satisfies it when "object" is listed)
- ("and", parts), ("or", parts), ("one", parts) (exactly one), ("not", part), True, False
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from .keywords import ANNOTATIONS, ENFORCED, KNOWN_UNSUPPORTED

if TYPE_CHECKING:  # pragma: no cover
    from .translate import Translator

Formula = Any
MAX_DEPTH = 40

# Formula keywords that only make sense with others: `then`/`else` go with `if`.
_WITH_IF = ("then", "else")


def key_formula(schema: Any, tr: "Translator", depth: int = 0, refs: tuple = ()) -> Optional[Formula]:
    """The raw formula of a key-local schema; None when some keyword is not key-local."""
    if isinstance(schema, bool):
        return schema
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return None
    if "$ref" in schema and tr.legacy_refs:  # drafts 4-7 ignore $ref's siblings
        schema = {"$ref": schema["$ref"]}
    parts: list[Formula] = []
    for key, value in schema.items():
        if key in ANNOTATIONS or key in _WITH_IF or (isinstance(key, str) and key not in ENFORCED and key not in KNOWN_UNSUPPORTED):
            continue  # (unknown keywords are ignored, as everywhere)
        part = _keyword(key, value, schema, tr, depth, refs)
        if part is None:
            return None
        parts.append(part)
    return ("and", tuple(parts))


def _keyword(key: str, value: Any, schema: dict, tr: "Translator", depth: int, refs: tuple) -> Optional[Formula]:
    sub = lambda s: key_formula(s, tr, depth + 1, refs)  # noqa: E731
    if key == "type":
        types = [value] if isinstance(value, str) else value
        return ("type", tuple(sorted(types))) if isinstance(types, list) else None
    if key == "properties":
        if not isinstance(value, dict):
            return None
        return ("and", tuple(("in", k, s, True) for k, s in value.items() if s is not True and s != {}))
    if key == "required":
        if not (isinstance(value, list) and all(isinstance(k, str) for k in value)):
            return None
        return ("and", tuple(("in", k, True, False) for k in value))
    if key == "additionalProperties":
        if value is True or value == {}:
            return True
        if value is False and "patternProperties" not in schema:
            return ("closed", tuple(schema.get("properties", {})))
        return None
    if key == "$ref":
        if value in refs or not isinstance(value, str):
            return None  # recursion: the alternatives' way (rules on the stack) handles it
        try:
            _, target = tr.resolve(value, "#", schema)
        except Exception:  # noqa: BLE001 - reported by the alternatives' way
            return None
        return key_formula(target, tr, depth + 1, refs + (value,))
    if key in ("allOf", "anyOf", "oneOf"):
        if not isinstance(value, list):
            return None
        parts = [sub(b) for b in value]
        if any(p is None for p in parts):
            return None
        return ({"allOf": "and", "anyOf": "or", "oneOf": "one"}[key], tuple(parts))
    if key == "not":
        part = sub(value)
        return None if part is None else ("not", part)
    if key == "if":
        cond, then, else_ = sub(value), sub(schema.get("then", True)), sub(schema.get("else", True))
        if cond is None or then is None or else_ is None:
            return None
        return ("or", (("and", (cond, then)), ("and", (("not", cond), else_))))
    if key in ("dependentRequired", "dependentSchemas", "dependencies") and isinstance(value, dict):
        parts = []
        for k, dep in value.items():
            then = ("and", tuple(("in", d, True, False) for d in dep)) if isinstance(dep, list) else sub(dep)
            if then is None:
                return None
            parts.append(("or", (("in", k, False, True), then)))
        return ("and", tuple(parts))
    return None


def keys_named(formula: Formula) -> list[str]:
    """The keys a raw formula speaks of, in an order that keeps each `properties`' own order
    where the branches agree (so that documents in their branch's schema order fit one object
    automaton); otherwise by first mention."""
    first: dict[str, int] = {}
    after: dict[str, set[str]] = {}
    todo = [formula]
    while todo:
        f = todo.pop()
        if isinstance(f, bool):
            continue
        tag = f[0]
        if tag == "in":
            first.setdefault(f[1], len(first))
        elif tag == "closed":
            for k in f[1]:
                first.setdefault(k, len(first))
        elif tag in ("and", "or", "one"):
            # (`properties` give orders: their atoms allow absence; `required` lists do not)
            listed = [p[1] for p in f[1] if not isinstance(p, bool) and p[0] == "in" and p[3]]
            for a, b in zip(listed, listed[1:]):
                if a != b:
                    after.setdefault(a, set()).add(b)
            todo.extend(reversed(f[1]))
        elif tag == "not":
            todo.append(f[1])
    return _ordered(first, after)


def _ordered(first: dict[str, int], after: dict[str, set[str]]) -> list[str]:
    """Keys topologically by `after` (a before each of after[a]), earliest first mention first;
    a cycle (branches that disagree) is broken at its earliest key."""
    before: dict[str, int] = {k: 0 for k in first}
    for a, bs in after.items():
        for b in bs:
            before[b] += 1
    out: list[str] = []
    left = sorted(first, key=first.__getitem__)
    while left:
        ready = [k for k in left if before[k] == 0] or left[:1]
        k = ready[0]
        out.append(k)
        left.remove(k)
        for b in after.get(k, ()):
            before[b] -= 1
    return out


def holds_for_type(formula: Formula, probe: str) -> bool:
    """The formula's value for a non-object value of JSON type `probe` ("integer" for integral
    numbers, "number" for the others): object keywords hold vacuously, `type` decides."""
    if isinstance(formula, bool):
        return formula
    tag = formula[0]
    if tag in ("in", "closed"):
        return True
    if tag == "type":
        types = formula[1]
        return probe in types or (probe == "integer" and "number" in types)
    if tag == "not":
        return not holds_for_type(formula[1], probe)
    values = [holds_for_type(p, probe) for p in formula[1]]
    if tag == "and":
        return all(values)
    if tag == "or":
        return any(values)
    return sum(values) == 1


def holds_for_object(formula: Formula, value: dict, valid: Any) -> bool:
    """The formula's value for an object (valid(v, S): is v valid under S)."""
    if isinstance(formula, bool):
        return formula
    tag = formula[0]
    if tag == "in":
        _, key, schema, absent_ok = formula
        if key not in value:
            return absent_ok
        return schema if isinstance(schema, bool) else valid(value[key], schema)
    if tag == "closed":
        return all(k in formula[1] for k in value)
    if tag == "type":
        return "object" in formula[1]
    if tag == "not":
        return not holds_for_object(formula[1], value, valid)
    values = [holds_for_object(p, value, valid) for p in formula[1]]
    if tag == "and":
        return all(values)
    if tag == "or":
        return any(values)
    return sum(values) == 1
