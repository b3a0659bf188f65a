"""allOf by merging, and the disjointness test that makes oneOf exact."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import ConstrainError, SchemaError
from .keywords import ALL_TYPES, ANNOTATIONS

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
            return types_of(tr.resolve(schema["$ref"], "#")[1], tr, depth + 1)
        except ConstrainError:
            return set(ALL_TYPES)
    if "const" in schema or "enum" in schema:
        values = [schema["const"]] if "const" in schema else schema["enum"]
        return {_type_name(v) for v in values}
    types = schema.get("type", ALL_TYPES)
    out = {"number" if t == "integer" else t for t in ([types] if isinstance(types, str) else types)}
    for key in ("anyOf", "oneOf"):
        if key in schema:
            sub = set().union(*(types_of(b, tr, depth + 1) for b in schema[key]))
            out &= sub
    return out


def _type_name(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(v), "object")


def disjoint(branches: list, tr: "Translator") -> bool:
    """True if no JSON value can satisfy two branches: distinct types, or distinct constants."""
    seen: set[str] = set()
    consts: list = []
    for b in branches:
        if isinstance(b, dict) and ("const" in b or "enum" in b) and not ("anyOf" in b or "oneOf" in b):
            values = [b["const"]] if "const" in b else list(b["enum"])
            for v in values:
                if any(v == c and type(v) is type(c) for c in consts):
                    return False
            consts += values
            continue
        types = types_of(b, tr)
        if types & seen:
            return False
        seen |= types
    const_types = {_type_name(v) for v in consts}
    return not (const_types & seen)


_MERGE_MIN = ("minLength", "minItems", "minProperties")
_MERGE_MAX = ("maxLength", "maxItems", "maxProperties")


def merge(a: Any, b: Any, pointer: str, tr: "Translator") -> Any:
    """One schema equivalent to allOf[a, b] for the keywords we can combine exactly."""
    if a is True:
        return b
    if b is True:
        return a
    if a is False or b is False:
        return False
    if not isinstance(a, dict) or not isinstance(b, dict):
        raise SchemaError("allOf members must be schemas", pointer)
    # `items` means something else next to `prefixItems` (so does `additionalItems` next to a
    # tuple `items`): a keyword must not meet, in the merge, the context it did not have.
    for context, dependent in (("prefixItems", "items"), ("items", "additionalItems")):
        for x, y in ((a, b), (b, a)):
            if dependent in x and context not in x and context in y:
                tr.unsupported("allOf", pointer, f"{dependent!r} and {context!r} from different subschemas")
    out = dict(a)
    for key, bv in b.items():
        if key in ANNOTATIONS:
            continue
        if key not in out:
            out[key] = bv
            continue
        av = out[key]
        if av == bv:
            continue
        if key == "type":
            at = {av} if isinstance(av, str) else set(av)
            bt = {bv} if isinstance(bv, str) else set(bv)
            both = (at & bt) | ({"integer"} if ("integer" in at and "number" in bt) or ("number" in at and "integer" in bt) else set())
            out[key] = sorted(both)
        elif key == "required":
            out[key] = list(dict.fromkeys(list(av) + list(bv)))
        elif key == "properties":
            props = dict(av)
            for k, sub in bv.items():
                props[k] = merge(props[k], sub, f"{pointer}/properties/{k}", tr) if k in props else sub
            out[key] = props
        elif key in _MERGE_MIN or key in ("minimum",):
            out[key] = max(av, bv)
        elif key in _MERGE_MAX or key in ("maximum",):
            out[key] = min(av, bv)
        elif key == "enum":
            out[key] = [v for v in av if v in bv]
        else:
            tr.unsupported("allOf", pointer, f"cannot combine two different {key!r} keywords")
    # additionalProperties is relative to each side's own properties: a side that restricts
    # other keys restricts the properties only the other side names.
    for side, other in ((a, b), (b, a)):
        addl = side.get("additionalProperties", True)
        if addl is not True and isinstance(other.get("properties"), dict):
            own = side.get("properties", {})
            for k in other["properties"]:
                if k not in own:
                    props = dict(out.get("properties", {}))
                    props[k] = merge(props.get(k, True), addl, f"{pointer}/properties/{k}", tr)
                    out["properties"] = props
    if "additionalProperties" in a and "additionalProperties" in b:
        out["additionalProperties"] = merge(a["additionalProperties"], b["additionalProperties"], pointer, tr)
    return out
