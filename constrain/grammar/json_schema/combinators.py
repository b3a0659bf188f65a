"""allOf by merging plain schemas, and the disjointness test that makes oneOf cheap."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ...errors import ConstrainError, SchemaError
from .keywords import (
    ALL_TYPES, ANNOTATIONS, DERIVED_OPEN, ENFORCED, NON_INTEGER, NOT_ENUM, NOT_FORMATS, NOT_MULTIPLE_OF, NOT_PATTERNS,
    PATTERNS, REAL_ITEMS, UNEVALUATED_NAMES, CONTAINS_ALL, SOME_OTHER_KEY, KEY_RULES, KEY_FORMULA,
)
from .literals import json_equal, type_name
from .numbers import integer_bounds

if TYPE_CHECKING:  # pragma: no cover
    from .translate import Translator


def types_of(schema: Any, tr: "Translator", depth: int = 0) -> set[str]:
    """The JSON types a schema can produce (over-approximated)."""
    if schema is True or depth > 20:
        return set(ALL_TYPES)
    if schema is False:
        return set()
    if not isinstance(schema, dict):
        return set(ALL_TYPES)
    if "$ref" in schema:
        try:
            return types_of(tr.resolve(schema["$ref"], "#", schema)[1], tr, depth + 1)
        except ConstrainError:
            return set(ALL_TYPES)
    if "const" in schema or "enum" in schema:
        values = [schema["const"]] if "const" in schema else schema["enum"]
        return {type_name(v) for v in values}
    types = schema.get("type", ALL_TYPES)
    out = {"number" if t == "integer" else t for t in ([types] if isinstance(types, str) else types)}
    for key in ("anyOf", "oneOf"):
        if key in schema:
            sub = set().union(*(types_of(b, tr, depth + 1) for b in schema[key]))
            out &= sub
    return out


def disjoint(branches: list, tr: "Translator") -> bool:
    """True if no JSON value can satisfy two branches: distinct types, or distinct constants."""
    seen: set[str] = set()
    consts: list = []
    for b in branches:
        if isinstance(b, dict) and ("const" in b or "enum" in b) and not ("anyOf" in b or "oneOf" in b):
            values = [b["const"]] if "const" in b else list(b["enum"])
            for v in values:
                if any(json_equal(v, c) for c in consts):
                    return False
            consts += values
            continue
        types = types_of(b, tr)
        if types & seen:
            return False
        seen |= types
    const_types = {type_name(v) for v in consts}
    return not (const_types & seen)


_MERGE_MIN = ("minLength", "minItems", "minProperties")
_MERGE_MAX = ("maxLength", "maxItems", "maxProperties")
_CONTAINS = ("contains", "minContains", "maxContains", CONTAINS_ALL)
_SPECIAL = (UNEVALUATED_NAMES, REAL_ITEMS, *_CONTAINS)
_CONCAT = (NOT_ENUM, PATTERNS, NOT_PATTERNS, NOT_FORMATS, NOT_MULTIPLE_OF, SOME_OTHER_KEY, KEY_RULES, KEY_FORMULA)
_BOUNDS = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum")
_ARRAY_POSITIONAL = ("prefixItems", "items", "additionalItems")


def both(x: Any, y: Any) -> Any:
    """allOf[x, y], kept lazy (expanded when the sub-schema is translated) except where it is
    plain constants: discriminators that contradict must show as False right away, or a chain
    of if/then/else multiplies alternatives that can never hold."""
    if x is True or x == {}:
        return y
    if y is True or y == {}:
        return x
    if x is False or y is False:
        return False
    for a, b in ((x, y), (y, x)):
        values = _constants(a)
        if values is None:
            continue
        other = _constants(b)
        if other is not None:
            common = [v for v in values if any(json_equal(v, w) for w in other)]
            return {"enum": common} if common else False
        excluded = _constants(b.get("not")) if isinstance(b, dict) and set(b) == {"not"} else None
        if excluded is not None:
            left = [v for v in values if not any(json_equal(v, w) for w in excluded)]
            return {"enum": left} if left else False
    members = _members(x)
    members += [m for m in _members(y) if not any(m is n for n in members)]
    return members[0] if len(members) == 1 else {"allOf": members}


def _members(s: Any) -> list:
    """The conjuncts of a lazily combined schema (flattened)."""
    if isinstance(s, dict) and set(s) == {"allOf"} and isinstance(s["allOf"], list):
        return [m for sub in s["allOf"] for m in _members(sub)]
    return [s]


def _constants(s: Any) -> "list | None":
    """The values of a schema that is only const/enum (annotations aside), else None."""
    if not isinstance(s, dict) or not ("const" in s or "enum" in s):
        return None
    if any(k not in ("const", "enum") and k not in ANNOTATIONS for k in s):
        return None
    if "const" in s and "enum" in s:
        return [v for v in s["enum"] if json_equal(v, s["const"])] if isinstance(s["enum"], list) else None
    values = [s["const"]] if "const" in s else s["enum"]
    return list(values) if isinstance(values, list) else None


def merge(a: Any, b: Any, pointer: str, tr: "Translator") -> Any:
    """One plain schema equivalent to allOf[a, b] for plain schemas a, b (no applicators at
    their tops); False when they contradict. Sub-schemas that meet are combined lazily."""
    if a is True:
        return b
    if b is True:
        return a
    if a is False or b is False:
        return False
    if not isinstance(a, dict) or not isinstance(b, dict):
        raise SchemaError("allOf members must be schemas", pointer)
    out = dict(a)
    for key, bv in b.items():
        if key in ANNOTATIONS or key in _BOUNDS or key in _ARRAY_POSITIONAL or key in _SPECIAL:
            continue
        if key not in out:
            out[key] = bv
            continue
        av = out[key]
        if av == bv and type(av) is type(bv) and key not in ("enum", "const"):
            continue
        if key == "type":
            at, bt = _types(av), _types(bv)
            common = (at & bt) | ({"integer"} if ("integer" in at and "number" in bt) or ("number" in at and "integer" in bt) else set())
            if not common:
                return False
            out[key] = sorted(common)
        elif key == "required":
            out[key] = list(dict.fromkeys(list(av) + list(bv)))
        elif key in ("properties", "patternProperties"):
            props = dict(av)
            for k, sub in bv.items():
                props[k] = both(props[k], sub) if k in props else sub
            out[key] = props
        elif key in ("additionalProperties", "propertyNames"):
            out[key] = both(av, bv)
        elif key in _MERGE_MIN:
            out[key] = max(av, bv)
        elif key in _MERGE_MAX:
            out[key] = min(av, bv)
        elif key in ("enum", "const"):
            pass  # below: the values both allow
        elif key == "uniqueItems":
            out[key] = bool(av) or bool(bv)
        elif key == "pattern":
            del out[key]
            out[PATTERNS] = list(out.get(PATTERNS, [])) + [av, bv]
        elif key in _CONCAT:
            out[key] = list(av) + list(bv)
        elif key in (NON_INTEGER, DERIVED_OPEN):
            out[key] = bool(av) or bool(bv)
        elif key == "multipleOf" and _integral(av) and _integral(bv):
            out[key] = math.lcm(int(av), int(bv))
        elif key in ENFORCED:
            tr.unsupported("allOf", pointer, f"cannot combine two different {key!r} keywords")
        # unknown keywords constrain nothing: keep one
    if any(out.get("properties", {}).get(k) is False for k in out.get("required", ())):
        return False  # a required key whose value can be nothing
    values = _allowed_values(a, b)
    if values is not None:
        out.pop("const", None)
        if not values:
            return False
        out["enum"] = values
    _merge_contains(a, b, out, tr)
    _merge_unevaluated_names(a, b, out)
    if REAL_ITEMS in a or REAL_ITEMS in b:
        (pa, ra, ca), (pb, rb, cb) = real_items(a), real_items(b)
        out[REAL_ITEMS] = (max(pa, pb), ra or rb, ca or cb)
    _merge_bounds(a, b, out)
    _merge_positional(a, b, out)
    _cross_additional(a, b, out)
    return out


def _types(t: Any) -> set[str]:
    return {t} if isinstance(t, str) else set(t)


def _integral(k: Any) -> bool:
    return isinstance(k, (int, float)) and not isinstance(k, bool) and float(k).is_integer() and k > 0


def _allowed_values(a: dict, b: dict) -> "list | None":
    """The values const/enum of both sides allow (None: neither side lists values)."""
    lists = [([s["const"]] if "const" in s else list(s["enum"])) for s in (a, b) if "const" in s or "enum" in s]
    if not lists:
        return None
    values = lists[0]
    for other in lists[1:]:
        values = [v for v in values if any(json_equal(v, w) for w in other)]
    return values


def _merge_unevaluated_names(a: dict, b: dict, out: dict) -> None:
    """A property is unevaluated if only derived schemas name it (on every side naming it)."""
    names = set()
    for x, y in ((a, b), (b, a)):
        real_y = set(y.get("properties", {})) - set(y.get(UNEVALUATED_NAMES, ()))
        names |= set(x.get(UNEVALUATED_NAMES, ())) - real_y
    if names:
        out[UNEVALUATED_NAMES] = sorted(names)
    else:
        out.pop(UNEVALUATED_NAMES, None)


def contains_list(s: dict, legacy: bool) -> list[tuple[Any, int, Any, bool]]:
    """The `contains` of an array schema as (schema, minContains, maxContains, real) entries."""
    if CONTAINS_ALL in s:
        return list(s[CONTAINS_ALL])
    if "contains" not in s:
        return []
    real = s[REAL_ITEMS][2] if REAL_ITEMS in s else True
    if legacy:  # minContains/maxContains came with 2019-09
        return [(s["contains"], 1, None, real)]
    return [(s["contains"], s.get("minContains", 1), s.get("maxContains"), real)]


def _merge_contains(a: dict, b: dict, out: dict, tr: "Translator") -> None:
    entries = contains_list(a, tr.legacy_refs)
    for e in contains_list(b, tr.legacy_refs):
        if not any(e[0] is f[0] and e[1:] == f[1:] for f in entries):
            entries.append(e)
    for k in _CONTAINS:
        out.pop(k, None)
    if len(entries) == 1:
        c, lo, hi, _ = entries[0]
        out["contains"] = c
        if lo != 1:
            out["minContains"] = lo
        if hi is not None:
            out["maxContains"] = hi
    elif entries:
        out[CONTAINS_ALL] = entries


def real_items(s: dict) -> tuple[int, bool, bool]:
    """(prefix length, explicit rest, contains) that the document's own keywords evaluate."""
    if REAL_ITEMS in s:
        return s[REAL_ITEMS]
    prefix, _ = positional(s)
    items = s.get("items")
    rest = ("items" in s and not isinstance(items, list)) or (isinstance(items, list) and "additionalItems" in s)
    return len(prefix), rest, "contains" in s or any(e[3] for e in s.get(CONTAINS_ALL, ()))


def _merge_bounds(a: dict, b: dict, out: dict) -> None:
    """The tighter bounds of both sides, in the 2020-12 spelling (draft-4 flags converted)."""
    if not any(k in s for s in (a, b) for k in _BOUNDS):
        return
    for k in _BOUNDS:
        out.pop(k, None)
    lo = hi = None
    lo_ex = hi_ex = False
    for s in (a, b):
        l, l_ex, h, h_ex = integer_bounds(s, False)
        if l is not None and (lo is None or l > lo or (l == lo and l_ex)):
            lo, lo_ex = l, l_ex
        if h is not None and (hi is None or h < hi or (h == hi and h_ex)):
            hi, hi_ex = h, h_ex
    if lo is not None:
        out["exclusiveMinimum" if lo_ex else "minimum"] = lo
    if hi is not None:
        out["exclusiveMaximum" if hi_ex else "maximum"] = hi


def positional(s: dict) -> tuple[list, Any]:
    """(schemas of the first items, schema of the rest) of an array schema, any draft."""
    items = s.get("items", True)
    if isinstance(items, list):
        return list(items), s.get("additionalItems", True)
    if "prefixItems" in s:
        return list(s["prefixItems"]), items
    return [], items


def _merge_positional(a: dict, b: dict, out: dict) -> None:
    if not any(k in s for s in (a, b) for k in _ARRAY_POSITIONAL):
        return
    for k in _ARRAY_POSITIONAL:
        out.pop(k, None)
    (pa, ra), (pb, rb) = positional(a), positional(b)
    n = max(len(pa), len(pb))
    prefix = [both(pa[i] if i < len(pa) else ra, pb[i] if i < len(pb) else rb) for i in range(n)]
    rest = both(ra, rb)
    if prefix:
        out["prefixItems"] = prefix
    explicit = any(("items" in s and not isinstance(s["items"], list)) or "additionalItems" in s for s in (a, b))
    if rest is not True or explicit:
        out["items"] = rest  # (an explicit `items: true` still evaluates the items: unevaluatedItems)


def _cross_additional(a: dict, b: dict, out: dict) -> None:
    """additionalProperties is relative to its own side's properties and patterns: a side that
    restricts other keys also restricts the keys only the other side names or matches (for a
    key that one of its own patterns matches this is narrower than JSON Schema, never wider)."""
    for side, other in ((a, b), (b, a)):
        addl = side.get("additionalProperties", True)
        if addl is True:
            continue
        own = side.get("properties", {})
        for k in other.get("properties", {}):
            if k not in own:
                props = dict(out.get("properties", {}))
                props[k] = both(props.get(k, True), addl)
                out["properties"] = props
        own_patterns = side.get("patternProperties", {})
        for p in other.get("patternProperties", {}):
            if p not in own_patterns:
                pats = dict(out.get("patternProperties", {}))
                pats[p] = both(pats.get(p, True), addl)
                out["patternProperties"] = pats
