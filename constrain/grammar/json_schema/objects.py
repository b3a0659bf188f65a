"""Objects: named properties, patternProperties, other keys, propertyNames, member counts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from ...automata import DFA, compile_ir, ir
from ...automata.algebra import intersect
from ...errors import EmptyLanguageError, UnsupportedSchemaError
from . import containers
from .key_patterns import KeyPatterns
from .keywords import escape_key
from .strings import canonical_key, dfa_accepts, key_language

if TYPE_CHECKING:  # pragma: no cover
    from .translate import Translator

MAX_FLOATING = 4  # required keys outside `properties` that may come anywhere (2^k states)


def object_node(tr: "Translator", schema: dict, pointer: str) -> ir.Node:
    props = schema.get("properties", {})
    required = list(schema.get("required", []))
    addl = schema.get("additionalProperties", True)
    if tr.opts.additional_properties == "forbid":
        addl = False
    patterns = schema.get("patternProperties") or {}
    keys = KeyPatterns(patterns, f"{pointer}/patternProperties")
    allowed_keys: Optional[DFA] = _any_key()
    if "propertyNames" in schema and schema["propertyNames"] is not True:
        allowed_keys = key_language(tr, schema["propertyNames"], f"{pointer}/propertyNames")
    lo = int(schema.get("minProperties", 0))
    hi = schema.get("maxProperties")
    hi = None if hi is None else int(hi)
    if hi is not None and (hi < lo or hi < len(set(required))):
        return ir.NOTHING

    members = []
    for key in list(props) + [k for k in required if k not in props]:
        if allowed_keys is None or not dfa_accepts(allowed_keys, canonical_key(key)):
            if key in required:
                return ir.NOTHING  # a required key that propertyNames forbids
            continue
        ptr = f"{pointer}/properties/{escape_key(key)}"
        schemas = ([props[key]] if key in props else []) + [patterns[p] for p in keys.matching(key)]
        if not schemas:  # required, not named: other keys' rules apply
            if addl is False:
                return ir.NOTHING  # required but forbidden: no object satisfies it
            schemas = [addl]
        value = tr.rule(ptr, schemas[0]) if len(schemas) == 1 else tr.rule(f"{ptr}#all", {"allOf": schemas})
        members.append((key, value, key in required))
    # Required keys that `properties` does not list have no place in its order: in schema
    # order they may come anywhere (a few of them; beyond that, after the listed ones).
    floating: list[tuple[str, ir.Node]] = []
    if tr.opts.property_order == "schema":
        unlisted = [m for m in members if m[0] not in props]
        if 0 < len(unlisted) <= MAX_FLOATING:
            members = [m for m in members if m[0] in props]
            floating = [(k, v) for k, v, _ in unlisted]
    named = list(props) + [k for k in required if k not in props]

    extras: list[ir.Node] = []
    if allowed_keys is not None:
        for region, matched in keys.regions(named):
            region = _restrict(region, allowed_keys)
            if region is not None:
                ptr = f"{pointer}/patternProperties/{escape_key(matched[0])}"
                subs = [patterns[p] for p in matched]
                value = tr.rule(ptr, subs[0]) if len(subs) == 1 else tr.rule(ptr, {"allOf": subs})
                extras.append(tr.helper_rule("pattern", containers.member(region, value, tr.ws)))
        if addl is not False:
            value = tr.any_value() if addl is True else tr.rule(f"{pointer}/additionalProperties", addl)
            region = _restrict(keys.rest(named), allowed_keys)
            if region is not None:
                extras.append(tr.helper_rule("other", containers.member(region, value, tr.ws)))
    extra = ir.alt(*extras) if extras else None
    counts = containers.Counts(lo, hi)
    if counts.n > tr.opts.max_property_count + 1:
        raise UnsupportedSchemaError(
            "minProperties" if hi is None else "maxProperties", pointer,
            f"member counts are tracked up to {tr.opts.max_property_count}",
        )
    if tr.opts.property_order == "any":
        if len(members) > tr.opts.max_any_order_properties:
            raise UnsupportedSchemaError(
                "properties", pointer,
                f"property_order='any' supports up to {tr.opts.max_any_order_properties} properties",
            )
        return containers.object_any_order(members, extra, tr.ws, counts)
    return containers.object_in_order(members, extra, tr.ws, counts, floating)


def _any_key() -> DFA:
    return containers._any_string_dfa()


def _restrict(region: ir.Node, allowed: DFA) -> Optional[ir.Node]:
    """Keys of `region` that propertyNames allows (None: none)."""
    if allowed is _any_key():
        return region
    if region is ir.NOTHING:
        return None
    try:
        dfa = region.dfa if isinstance(region, ir.Embedded) else compile_ir(region)
        return ir.Embedded(intersect(dfa, allowed))
    except EmptyLanguageError:
        return None
