"""`not`, exactly: the complement of a schema, written as a schema.

¬(k1 ∧ k2 ∧ ...) = ¬k1 ∨ ¬k2 ∨ ...: each keyword's complement is itself a schema (often with the
internal keywords of keywords.py). Sub-schemas are negated lazily as `{"not": sub}`, so a
negation only expands as far as a document can go. `if`/`then`/`else`, exact `oneOf` and the
dependency keywords are built on this. Keywords whose complement needs "some member/item
exists" over an open set (additionalProperties, patternProperties, propertyNames, uniqueItems,
contains with both bounds in old drafts...) are refused by name.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ...errors import SchemaError
from .formats import FORMATS
from .keywords import (
    ANNOTATIONS, DERIVED_OPEN, INTERNAL, KNOWN_UNSUPPORTED, NON_INTEGER, NOT_ENUM, NOT_FORMATS, NOT_MULTIPLE_OF,
    NOT_PATTERNS, NONE_REAL, REAL_ITEMS, SOME_OTHER_KEY, UNEVALUATED_NAMES,
)
from .literals import type_name
from .numbers import integer_bounds, integral_divisor

if TYPE_CHECKING:  # pragma: no cover
    from .translate import Translator

_OTHER = ("object", "array", "string", "number", "boolean", "null")


def _types(t: Any) -> set[str]:
    return {t} if isinstance(t, str) else set(t)


def _complement_types(types: set[str]) -> list[Any]:
    """Schemas for every value whose type is outside `types` ("integer" ⊂ "number")."""
    out: list[Any] = []
    rest = [t for t in _OTHER if t not in types]
    if "integer" in types and "number" not in types:
        rest.remove("number")
        out.append({"type": "number", NON_INTEGER: True})
    if rest:
        out.append({"type": rest})
    return out


def negate(schema: Any, pointer: str, tr: "Translator") -> Any:
    """A schema valid exactly where `schema` is not (unsupported parts: tr.unsupported)."""
    if schema is True:
        return False
    if schema is False:
        return True
    if not isinstance(schema, dict):
        raise SchemaError(f"a schema must be an object or boolean, not {type(schema).__name__}", pointer)
    if "$ref" in schema:
        target_ptr, target = tr.resolve(schema["$ref"], pointer, schema)
        siblings = {k: v for k, v in schema.items() if k != "$ref" and k not in ANNOTATIONS}
        if not siblings or tr.legacy_refs:
            return {"not": target}
        return {"anyOf": [{"not": target}, {"not": siblings}]}
    parts: list[Any] = _not_bounds(schema) if any(k in schema for k in _BOUNDS) else []
    for key, value in schema.items():
        ptr = f"{pointer}/{key}" if isinstance(key, str) else pointer
        if key in ANNOTATIONS:
            continue
        parts += _negate_keyword(key, value, schema, ptr, tr)
    if any(p is True for p in parts):
        return True
    parts = [p for p in parts if p is not False]
    if not parts:
        return False
    return parts[0] if len(parts) == 1 else {"anyOf": parts}


def _negate_keyword(key: Any, value: Any, schema: dict, ptr: str, tr: "Translator") -> list[Any]:
    """The schemas whose union is the complement of keyword `key` (in context `schema`)."""
    if key == "type":
        return _complement_types(_types(value))
    if key in ("enum", "const"):
        return _not_values([value] if key == "const" else list(value), ptr, tr)
    if key == NOT_ENUM:
        return [{"enum": list(value)}]
    if key == NON_INTEGER:
        return [{"type": "integer"}, {"type": [t for t in _OTHER if t != "number"]}] if value else []
    if key in (NOT_PATTERNS, NOT_FORMATS):
        if key == NOT_PATTERNS:
            return [{"type": "string", "pattern": p} for p in value]
        return [{"type": "string", "format": f} for f in value]
    if key in (UNEVALUATED_NAMES, REAL_ITEMS, DERIVED_OPEN):
        return []  # markers, not constraints
    if key in INTERNAL:
        tr.unsupported("not", ptr, "the complement of a derived constraint")
        return [True]
    # -- strings
    if key == "minLength":
        return [{"type": "string", "maxLength": int(value) - 1}] if value > 0 else []
    if key == "maxLength":
        return [{"type": "string", "minLength": int(value) + 1}]
    if key == "pattern":
        return [{"type": "string", NOT_PATTERNS: [value]}]
    if key == "format":
        return [{"type": "string", NOT_FORMATS: [value]}] if value in FORMATS else []  # else: annotation
    # -- numbers
    if key in _BOUNDS:
        return []  # negated together (negate calls _not_bounds once)
    if key == "multipleOf":
        if integral_divisor(value):
            return [{"type": "number", NOT_MULTIPLE_OF: [value]}]
        tr.unsupported("not", ptr, "the complement of a non-integer multipleOf")
        return [True]
    # -- objects
    if key == "properties":
        return [
            {"type": "object", "required": [k], "properties": {k: {"not": sub}}, UNEVALUATED_NAMES: [k]}
            for k, sub in value.items() if sub is not True
        ]
    if key == "required":
        return [{"type": "object", "properties": {k: False}, UNEVALUATED_NAMES: [k]} for k in dict.fromkeys(value)]
    if key == "minProperties":
        return [{"type": "object", "maxProperties": int(value) - 1}] if value > 0 else []
    if key == "maxProperties":
        return [{"type": "object", "minProperties": int(value) + 1}]
    if key in ("additionalProperties", "patternProperties", "propertyNames"):
        if value is True or value == {}:
            return []
        if key == "additionalProperties" and value is False:
            names = tuple(schema.get("properties", {}))
            patterns = tuple(schema.get("patternProperties", {}))
            return [{"type": "object", SOME_OTHER_KEY: [(names, patterns)]}]
        tr.unsupported("not", ptr, f"the complement of {key} (some member outside it)")
        return [True]
    # -- arrays
    if key in ("minItems", "maxItems"):
        if key == "minItems":
            return [{"type": "array", "maxItems": int(value) - 1}] if value > 0 else []
        return [{"type": "array", "minItems": int(value) + 1}]
    if key in ("prefixItems", "items", "additionalItems"):
        return _not_items(key, value, schema, ptr, tr)
    if key == "contains":
        return _not_contains(value, schema, ptr, tr)
    if key in ("minContains", "maxContains"):
        return []  # negated together with contains
    if key == "uniqueItems":
        if value is not True:
            return []
        tr.unsupported("not", ptr, "the complement of uniqueItems (arrays with a duplicate)")
        return [True]
    # -- applicators: their complements are schemas too
    if key == "not":
        return [value]
    if key == "anyOf":
        return [{"allOf": [{"not": b} for b in value]}]
    if key == "allOf":
        return [{"not": b} for b in value]
    if key == "oneOf":
        none = {"allOf": [{"not": b} for b in value]}
        two = [{"allOf": [value[i], value[j]]} for i in range(len(value)) for j in range(i)]
        return [none, *two]
    if key == "if":
        then, else_ = schema.get("then", True), schema.get("else", True)
        return [{"allOf": [value, {"not": then}]}, {"allOf": [{"not": value}, {"not": else_}]}]
    if key in ("then", "else"):
        return []  # negated with `if` (alone they mean nothing)
    if key in ("dependentRequired", "dependentSchemas", "dependencies"):
        out: list[Any] = []
        for k, dep in value.items():
            if isinstance(dep, list):
                out += [{"type": "object", "required": [k], "properties": {d: False}, UNEVALUATED_NAMES: [d]} for d in dep]
            else:
                out.append({"type": "object", "required": [k], "not": dep})
        return out
    if key == "$ref":
        return []  # handled by the caller
    if key in ("unevaluatedProperties", "unevaluatedItems"):
        if value is True or tr.legacy_refs:
            return []
        tr.unsupported("not", ptr, f"the complement of {key}")
        return [True]
    if key in KNOWN_UNSUPPORTED:
        tr.unsupported(key, ptr)
        return [True]
    return []  # unknown keywords constrain nothing


def _not_values(values: list, ptr: str, tr: "Translator") -> list[Any]:
    """Every value but these: other types whole, and the listed types minus the values."""
    by_type: dict[str, list] = {}
    for v in values:
        by_type.setdefault(type_name(v), []).append(v)
    out = _complement_types(set(by_type)) if len(by_type) < len(_OTHER) else []
    for t, vs in by_type.items():
        if t == "null":
            continue
        if t == "boolean":
            left = [b for b in (True, False) if not any(v is b for v in vs)]
            if left:
                out.append({"enum": left})
        elif t in ("string", "number"):
            out.append({"type": t, NOT_ENUM: vs})
        else:
            tr.unsupported("not", ptr, f"the complement of {t} constants")
            out.append(True)
    return out


_BOUNDS = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum")


def _not_bounds(schema: dict) -> list[Any]:
    """Numbers below the lower bound or above the upper one (any draft's spelling)."""
    lo, lo_ex, hi, hi_ex = integer_bounds(schema, False)
    out: list[Any] = []
    if _is_number(lo):
        out.append({"type": "number", ("maximum" if lo_ex else "exclusiveMaximum"): lo})
    if _is_number(hi):
        out.append({"type": "number", ("minimum" if hi_ex else "exclusiveMinimum"): hi})
    return out


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _not_items(key: str, value: Any, schema: dict, ptr: str, tr: "Translator") -> list[Any]:
    """Arrays with some item outside its schema."""
    if key == "prefixItems" or (key == "items" and isinstance(value, list)):
        return [
            {"type": "array", "minItems": i + 1, "prefixItems": [True] * i + [{"not": sub}], REAL_ITEMS: NONE_REAL}
            for i, sub in enumerate(value) if sub is not True
        ]
    # `items` after prefixItems, or additionalItems after a tuple `items`: from position p on.
    if key == "additionalItems":
        tuple_items = schema.get("items")
        if not isinstance(tuple_items, list):
            return []  # additionalItems without a tuple means nothing
        p = len(tuple_items)
    else:
        p = len(schema.get("prefixItems", [])) if "prefixItems" in schema else 0
    if value is True:
        return []
    if value is False:
        return [{"type": "array", "minItems": p + 1}]
    if p == 0:
        return [{"type": "array", "contains": {"not": value}, REAL_ITEMS: NONE_REAL}]
    tr.unsupported("not", ptr, "the complement of items after a tuple")
    return [True]


def _not_contains(value: Any, schema: dict, ptr: str, tr: "Translator") -> list[Any]:
    """Arrays whose count of matching items is outside [minContains, maxContains]."""
    lo = schema.get("minContains", 1) if not tr.legacy_refs else 1
    hi = schema.get("maxContains") if not tr.legacy_refs else None
    out: list[Any] = []
    if lo > 0:
        if lo == 1 or tr.legacy_refs:
            out.append({"type": "array", "items": {"not": value}, REAL_ITEMS: NONE_REAL})
        else:
            out.append({"type": "array", "contains": value, "minContains": 0, "maxContains": int(lo) - 1, REAL_ITEMS: NONE_REAL})
    if hi is not None:
        out.append({"type": "array", "contains": value, "minContains": int(hi) + 1, REAL_ITEMS: NONE_REAL})
    return out
