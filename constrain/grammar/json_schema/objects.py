"""Objects: named properties, patternProperties, other keys, propertyNames, member counts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from ...automata import DFA, compile_ir, ir
from ...automata.algebra import difference, intersect
from ...errors import EmptyLanguageError, UnsupportedSchemaError
from . import containers, lexical
from .any_order import any_order_object, keyed as keyed_object
from .key_patterns import KeyPatterns, quoted_spellings
from .key_conditions import KeyConditions, MemberConditions
from .key_formula import key_formula, keys_named
from .keywords import KEY_FORMULA, KEY_RULES, SOME_OTHER_KEY, escape_key
from .presence import keys_of, rules_hold
from .patterns import pattern_dfa
from .strings import canonical_key, key_language

if TYPE_CHECKING:  # pragma: no cover
    from .translate import Translator

MAX_FLOATING = 4  # required keys outside `properties` that may come anywhere (2^k states)
MAX_FORMULA_FLOATING = 8  # floating members in all, with keys a key formula names
MAX_TRACKED = 4  # keys whose presence the dependency rules track as floating members (2^k
# states); past that the rules join the key formula, whose keys keep their places in the order
MAX_WITNESSES = 4  # "some other key exists" conditions per object (2^k states)


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

    witnesses = [Witness(names, pats) for names, pats in schema.get(SOME_OTHER_KEY, [])]
    if len(witnesses) > MAX_WITNESSES:
        raise UnsupportedSchemaError("not", pointer, f"more than {MAX_WITNESSES} complements of additionalProperties on one object")

    dependencies = list(schema.get(KEY_RULES, ()))
    formulas = list(schema.get(KEY_FORMULA, ()))
    tracked = list(dict.fromkeys(k for key, condition in dependencies for k in (key, *keys_of(condition))))
    if len(tracked) > MAX_TRACKED or (formulas and dependencies):
        for key, condition in dependencies:
            formulas.append(("or", (("in", key, False, True), key_formula(condition, tr))))
        dependencies, tracked = [], []

    raw = ("and", tuple(formulas)) if formulas else None
    formula_keys = keys_named(raw) if raw is not None else []
    bases: dict[str, tuple[list, str]] = {}

    named = list(dict.fromkeys([*props, *required, *tracked, *formula_keys]))
    members: list[containers.Member] = []
    for key in named:
        if allowed_keys is None or not allowed_keys.accepts(canonical_key(key)):
            if key in required:
                return ir.NOTHING  # a required key that propertyNames forbids
            continue
        ptr = f"{pointer}/properties/{escape_key(key)}"
        schemas = ([props[key]] if key in props else []) + [patterns[p] for p in keys.matching(key)]
        if not schemas:  # required, not named: other keys' rules apply
            if addl is False:
                if key in required:
                    return ir.NOTHING  # required but forbidden: no object satisfies it
                continue  # forbidden: its dependency can only hold with it absent
            schemas = [addl]
        value = tr.rule(ptr, schemas[0]) if len(schemas) == 1 else tr.rule(f"{ptr}#all", {"allOf": schemas})
        bases[key] = (schemas, ptr)
        bits = sum(1 << e for e, w in enumerate(witnesses) if w.counts_key(key))
        members.append(containers.Member(key, value, key in required, bits))
    # Required keys that `properties` does not list have no place in its order: in schema
    # order they may come anywhere (a few of them; beyond that, after the listed ones).
    ordered, floating = members, []
    named_by_formula: list[containers.Member] = []
    keyed = tr.opts.property_order == "any" and keyed_object(tr, pointer, members, bool(witnesses or dependencies or raw))
    if tr.opts.property_order == "any":
        ordered, floating = [], members
    else:
        unlisted = [m for m in members if m.key not in props and m.key not in tracked and m.key not in formula_keys]
        moved = [m for m in members if m.key in tracked] + (unlisted if len(unlisted) <= MAX_FLOATING else [])
        # Keys only a key formula names have no place in the order either: they float too
        # while few (a formula's listed keys keep their places, whatever their number).
        named_by_formula = [m for m in members if m.key in formula_keys and m.key not in props]
        if len(moved) + len(named_by_formula) > MAX_FORMULA_FLOATING:
            named_by_formula = []
        ordered, floating = [m for m in members if m not in moved + named_by_formula], moved + named_by_formula
    floating_ok = _dependencies_ok(dependencies, [m.key for m in floating])

    extras: list[tuple[ir.Node, int]] = []
    languages: list[tuple[ir.Node, ir.RuleRef]] = []  # (keyed objects: key language, value)
    if allowed_keys is not None:
        for region, matched in keys.regions(named):
            region = _restrict(region, allowed_keys)
            if region is not None:
                ptr = f"{pointer}/patternProperties/{escape_key(matched[0])}"
                subs = [patterns[p] for p in matched]
                value = tr.rule(ptr, subs[0]) if len(subs) == 1 else tr.rule(ptr, {"allOf": subs})
                for piece, bits in _split_by_witnesses(region, witnesses):
                    if keyed:
                        languages.append((piece, value))
                    else:
                        extras.append((_member_rule(tr, piece, value), bits))
        if addl is not False:
            value = tr.any_value() if addl is True else tr.rule(f"{pointer}/additionalProperties", addl)
            region = _restrict(keys.rest(named), allowed_keys)
            if region is not None:
                for piece, bits in _split_by_witnesses(region, witnesses):
                    if keyed:
                        languages.append((piece, value))
                    else:
                        extras.append((_member_rule(tr, piece, value), bits))
    if keyed:
        every_other_key = (addl is True or addl == {}) and allowed_keys is _any_key()
        return any_order_object(tr, pointer, members, languages, lo, hi, every_other_key)
    counts = containers.Counts(lo, hi)
    if counts.n > tr.opts.max_property_count + 1:
        raise UnsupportedSchemaError(
            "minProperties" if hi is None else "maxProperties", pointer,
            f"member counts are tracked up to {tr.opts.max_property_count}",
        )
    if raw is None:
        return containers.object_graph(ordered, floating, extras, tr.ws, counts, len(witnesses), floating_ok)
    try:
        conditions = MemberConditions(KeyConditions(raw, tr, pointer), bases, tr)
        return containers.object_graph(ordered, floating, extras, tr.ws, counts, len(witnesses), floating_ok, conditions)
    except UnsupportedSchemaError:
        if not named_by_formula:
            raise
        # Floating, those keys may come before the ones that settle which branch holds (a
        # discriminator), and every branch's conditions meet at once: keep their order.
        ordered = [m for m in members if m not in floating or m in named_by_formula]
        floating = [m for m in floating if m not in named_by_formula]
        floating_ok = _dependencies_ok(dependencies, [m.key for m in floating])
        conditions = MemberConditions(KeyConditions(raw, tr, pointer), bases, tr)
        return containers.object_graph(ordered, floating, extras, tr.ws, counts, len(witnesses), floating_ok, conditions)


def _member_rule(tr: "Translator", keys: ir.Node, value: ir.RuleRef) -> ir.RuleRef:
    """The rule of `keys: value` members, one per translation for equal ones: the alternatives
    of an anyOf or oneOf over objects mostly share their other-keys member, and one callee lets
    the alternatives' automaton merge its calls (one stack after `{"` instead of one per
    alternative, each walked at every mask)."""
    return tr.shared_rule(("member", keys, value), lambda: containers.member(keys, value, tr.ws))


def _dependencies_ok(dependencies: list, floating: list[str]):
    """The final check on the floating members used: the presence rules hold (tracked keys are
    all floating; a key missing from the members can never be present)."""
    if not dependencies:
        return lambda used: True
    names = list(floating)

    def ok(used: int) -> bool:
        return rules_hold(dependencies, {k for i, k in enumerate(names) if used >> i & 1})

    return ok


class Witness:
    """"Some key outside `names` and `patterns` exists" (the complement of
    additionalProperties: false next to those properties and patternProperties)."""

    def __init__(self, names: tuple, patterns: tuple) -> None:
        self.names = set(names)
        self.patterns = [pattern_dfa(p, "#") for p in patterns]
        inside = [lexical.string_literal(k) for k in names]
        inside += [ir.Embedded(pattern_dfa(p, "#", quoted_spellings)) for p in patterns]
        self.inside: Optional[DFA] = _try_dfa(ir.alt(*inside)) if inside else None  # keys that do not count

    def counts_key(self, key: str) -> bool:
        return key not in self.names and not any(d.accepts(key.encode("utf-8", "surrogatepass")) for d in self.patterns)


def _split_by_witnesses(region: ir.Node, witnesses: list[Witness]) -> list[tuple[ir.Node, int]]:
    """The region's keys split by which witness conditions they satisfy (empty pieces dropped)."""
    if not witnesses:
        return [(region, 0)]
    dfa = region.dfa if isinstance(region, ir.Embedded) else _try_dfa(region)
    pieces: list[tuple[DFA, int]] = [] if dfa is None else [(dfa, 0)]
    for e, w in enumerate(witnesses):
        refined = []
        for piece, bits in pieces:
            if w.inside is None:
                refined.append((piece, bits | 1 << e))
                continue
            for part, now in ((_try(intersect, piece, w.inside), bits), (_try(difference, piece, w.inside), bits | 1 << e)):
                if part is not None:
                    refined.append((part, now))
        pieces = refined
    return [(ir.Embedded(d), bits) for d, bits in pieces]


def _try(op, a: DFA, b: DFA) -> Optional[DFA]:
    try:
        return op(a, b)
    except EmptyLanguageError:
        return None


def _try_dfa(node: ir.Node) -> Optional[DFA]:
    try:
        return compile_ir(node)
    except EmptyLanguageError:
        return None


def _any_key() -> DFA:
    return containers._any_string_dfa()


def _restrict(region: ir.Node, allowed: DFA) -> Optional[ir.Node]:
    """Keys of `region` that propertyNames allows (None: none)."""
    if type(region) is ir.Chars and not region.ranges:  # type: ignore[union-attr]
        return None
    if allowed is _any_key():
        return region
    try:
        dfa = region.dfa if isinstance(region, ir.Embedded) else compile_ir(region)
        return ir.Embedded(intersect(dfa, allowed))
    except EmptyLanguageError:
        return None
