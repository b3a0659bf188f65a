"""Schemas with applicators → alternatives of plain schemas (a disjunctive normal form).

allOf merges; anyOf, exact oneOf (each branch and the complement of the others), `not`,
if/then/else and the dependency keywords become alternatives whose union is the schema. Each
alternative is a plain schema (no applicator at its top; sub-schemas are left as they are and
expand when they are translated), so the rest of the translator only ever sees plain schemas.
The number of alternatives is bounded (a product of anyOfs grows fast).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import ConstrainError, SchemaError, TooManyAlternativesError
from .combinators import both, contains_list, merge, positional, real_items
from .key_formula import holds_for_type, key_formula
from .keywords import ANNOTATIONS, APPLICATORS, CONTAINS_ALL, KEY_FORMULA, KEY_RULES, DERIVED_OPEN, NONE_REAL, REAL_ITEMS, KNOWN_UNSUPPORTED, UNEVALUATED, UNEVALUATED_NAMES
from .disjointness import branches_disjoint
from .negation import negate
from .presence import presence_only

if TYPE_CHECKING:  # pragma: no cover
    from .translate import Translator

MAX_ALTERNATIVES = 64
MAX_DEPTH = 100


def has_applicators(schema: Any) -> bool:
    """Does the schema need expanding (applicators, or unevaluated* over what they evaluate)?"""
    return isinstance(schema, dict) and any(k in schema for k in APPLICATORS + UNEVALUATED)


def alternatives(schema: Any, pointer: str, tr: "Translator", depth: int = 0) -> list[Any]:
    """Plain schemas (True or dicts without applicators) whose union is `schema`; unsatisfiable
    ones are dropped (an empty list: nothing is valid)."""
    if depth > MAX_DEPTH:
        raise SchemaError("schema nests too deeply or its $ref/allOf chain loops", pointer)
    if schema is True:
        return [True]
    if schema is False:
        return []
    if not isinstance(schema, dict):
        raise SchemaError(f"a schema must be an object or boolean, not {type(schema).__name__}", pointer)
    if depth > tr.alternatives_depth:
        tr.alternatives_depth = depth
    # A definition that many schemas $ref (or allOf) expands once: every use of it would
    # otherwise expand it, and the uses of the schemas that use it, again. So does the
    # complement of a document schema (an exact oneOf of n branches takes each n - 1 times).
    if tr.is_original(schema):
        ident: Any = id(schema)
    elif len(schema) == 1 and "not" in schema and tr.is_original(schema["not"]):
        ident = ("not", id(schema["not"]))
    else:
        return _alternatives(schema, pointer, tr, depth)
    key = (ident, bool(tr.exact_one_of_depth), tr.per_branch_formulas)
    hit = tr.alternatives_memo.get(key)
    if hit is not None and depth + hit[1] <= MAX_DEPTH:
        tr.alternatives_depth = max(tr.alternatives_depth, depth + hit[1])
        return list(hit[0])
    outer, tr.alternatives_depth = tr.alternatives_depth, depth
    relaxed = len(tr.relaxations)
    try:
        alts = _alternatives(schema, pointer, tr, depth)
    finally:
        deepest = tr.alternatives_depth
        tr.alternatives_depth = max(outer, deepest)
    if len(tr.relaxations) == relaxed:  # (what a relaxation says depends on where it is)
        tr.alternatives_memo[key] = (alts, deepest - depth)
    return list(alts)


def _alternatives(schema: dict, pointer: str, tr: "Translator", depth: int) -> list[Any]:
    """alternatives, for a schema object. The result depends on the schema and the state of an
    exact oneOf's expansion; `pointer` only names places in messages, and `depth` only bounds
    how deep the expansion may go (the memo keeps how deep it went)."""
    values = finite_candidates(schema, tr)
    if values is not None:
        # A finite set of candidates (const/enum here or in an allOf member): keep those the
        # whole schema accepts, judged exactly by jsonschema, whatever keywords it uses.
        try:
            kept = [v for v in values if tr.valid_value(v, schema)]
        except SchemaError:
            pass  # jsonschema cannot judge it: expand as usual
        else:
            return [{"enum": kept}] if kept else []
    closing = {k: schema[k] for k in UNEVALUATED if k in schema}
    if closing and not tr.legacy_refs:  # (drafts before 2019-09 do not know these keywords)
        inner = _without_unevaluated(schema, pointer, tr, depth)
        return [a for a in (close_unevaluated(alt, closing, pointer, tr) for alt in inner) if a is not False]
    return _without_unevaluated(schema, pointer, tr, depth)


def _without_unevaluated(schema: dict, pointer: str, tr: "Translator", depth: int) -> list[Any]:
    for key in schema:
        if key in KNOWN_UNSUPPORTED:
            tr.unsupported(key, f"{pointer}/{key}")
    try:
        return _expanded(schema, pointer, tr, depth)
    except TooManyAlternativesError:
        if tr.exact_one_of_depth and not tr.per_branch_formulas:
            raise  # (the oneOf's own schema takes the formula way, once for all its branches)
        alts = _as_formula(schema, pointer, tr)
        if alts is not None:
            return alts
        if tr.per_branch_formulas:
            raise
        # Not key-local as a whole: each exact oneOf branch may still be one formula.
        tr.per_branch_formulas = True
        try:
            return _expanded(schema, pointer, tr, depth)
        finally:
            tr.per_branch_formulas = False


def _as_formula(schema: dict, pointer: str, tr: "Translator") -> "list[Any] | None":
    """The schema's applicators as one key formula (objects) plus the non-object types it
    admits; None when some part is not key-local (see key_formula.py)."""
    if tr.legacy_refs and "$ref" in schema:
        return None  # its target expands (and falls back) on its own
    combined = {k: v for k, v in schema.items() if k in APPLICATORS or k == "$ref"}
    formula = key_formula(combined, tr)
    if formula is None:
        return None
    plain = {k: v for k, v in schema.items() if k not in APPLICATORS and k not in UNEVALUATED and k != "$ref"}
    out = [merge(plain, {"type": "object", KEY_FORMULA: [formula]}, pointer, tr)]
    held = {t for t in ("null", "boolean", "string", "array", "integer", "number") if holds_for_type(formula, t)}
    if "number" in held and "integer" not in held:
        return None  # non-integral numbers only: rare, left to the alternatives
    types = sorted(held - {"integer"} if "number" in held else held)
    if types:
        out.append(merge(plain, {"type": types}, pointer, tr))
    return [a for a in out if a is not False]


def _expanded(schema: dict, pointer: str, tr: "Translator", depth: int) -> list[Any]:
    if "$ref" in schema:
        target_ptr, target = tr.resolve(schema["$ref"], pointer, schema)
        siblings = {k: v for k, v in schema.items() if k != "$ref" and k not in ANNOTATIONS and k not in UNEVALUATED}
        if tr.legacy_refs or not siblings:  # drafts 4-7 ignore keywords beside $ref
            return alternatives(target, target_ptr, tr, depth + 1)
        # The schema's own keywords first: its own properties come first in schema order.
        return _product(
            alternatives(siblings, pointer, tr, depth + 1), alternatives(target, target_ptr, tr, depth + 1), pointer, tr
        )
    alts: list[Any] = [{k: v for k, v in schema.items() if k not in APPLICATORS and k not in UNEVALUATED}]
    for key, value in schema.items():
        if key not in APPLICATORS or key in ("then", "else"):
            continue
        ptr = f"{pointer}/{key}"
        alts = _product(alts, _expand(key, value, schema, ptr, tr, depth + 1), ptr, tr)
        if not alts:
            break
    return alts


def _as_derived(alt: Any) -> Any:
    """An alternative of a complement: nothing inside a `not` produces annotations, so none of
    its object/array keywords counts as evaluating anything (see close_unevaluated)."""
    if alt is True:
        return True
    out = dict(alt)
    names = set(out.get("properties", {}))
    if names:
        out[UNEVALUATED_NAMES] = sorted(names)
    if "patternProperties" in out or "additionalProperties" in out:
        out[DERIVED_OPEN] = True
    if any(k in out for k in ("prefixItems", "items", "additionalItems", "contains", CONTAINS_ALL)):
        out[REAL_ITEMS] = NONE_REAL
    if CONTAINS_ALL in out:
        out[CONTAINS_ALL] = [(c, lo, hi, False) for c, lo, hi, _ in out[CONTAINS_ALL]]
    return out


def close_unevaluated(alt: Any, closing: dict, pointer: str, tr: "Translator") -> Any:
    """Apply unevaluatedProperties/Items to one alternative: what it evaluates is what its
    `properties`/`patternProperties`/`additionalProperties` (and `prefixItems`/`items`/
    `contains`) name, except what derived schemas put there; the rest must satisfy the
    keyword's schema. Afterwards everything counts as evaluated (outer levels see that)."""
    out = {} if alt is True else dict(alt)
    u = closing.get("unevaluatedProperties")
    if "unevaluatedProperties" in closing and out.get(KEY_FORMULA):
        tr.unsupported("unevaluatedProperties", f"{pointer}/unevaluatedProperties", "next to a formula over keys (oneOf/if over many object branches)")
    if "unevaluatedProperties" in closing and out.get(DERIVED_OPEN):
        tr.unsupported("unevaluatedProperties", f"{pointer}/unevaluatedProperties", "next to the complement of an object keyword")
    if "unevaluatedProperties" in closing and "additionalProperties" not in out:
        derived = out.pop(UNEVALUATED_NAMES, [])
        if derived:
            props = dict(out.get("properties", {}))
            for k in derived:
                props[k] = both(props[k], u)
            out["properties"] = props
        out["additionalProperties"] = u
    if "unevaluatedItems" in closing:
        real_prefix, real_rest, real_contains = real_items(out)
        if not real_rest:
            # Items past what the document's prefixItems evaluate (and that its contains does
            # not match) must satisfy unevaluatedItems, whatever derived keywords say of them.
            u = closing["unevaluatedItems"]
            if real_contains:
                u = {"anyOf": [e[0] for e in contains_list(out, tr.legacy_refs) if e[3]] + [u]}
            prefix, rest = positional(out)
            for k in ("items", "additionalItems"):
                out.pop(k, None)
            prefix = [p if i < real_prefix else both(p, u) for i, p in enumerate(prefix)]
            if prefix:
                out["prefixItems"] = prefix
            out["items"] = both(rest, u)
        out.pop(REAL_ITEMS, None)
    return out


def finite_candidates(schema: Any, tr: "Translator", depth: int = 0) -> "list | None":
    """Values that include every value valid under `schema`, when its top (or an allOf member,
    through $refs) lists them with const/enum; None otherwise or when derived keywords are
    nested (jsonschema could not judge those)."""
    if not isinstance(schema, dict) or depth > 20:
        return None
    if "const" in schema or "enum" in schema:
        values = [schema["const"]] if "const" in schema else schema["enum"]
        return list(values) if isinstance(values, list) and not _derived_inside(schema) else None
    if "$ref" in schema and len(schema) == 1:
        try:
            return finite_candidates(tr.resolve(schema["$ref"], "#", schema)[1], tr, depth + 1)
        except ConstrainError:
            return None
    for member in schema.get("allOf", []) if isinstance(schema.get("allOf"), list) else []:
        values = finite_candidates(member, tr, depth + 1)
        if values is not None:
            return values if not _derived_inside(schema) else None
    return None


def _derived_inside(node: Any) -> bool:
    """Does `node` hold one of our internal (tuple) keywords below its top?"""
    todo = list(node.values()) if isinstance(node, dict) else []
    while todo:
        n = todo.pop()
        if isinstance(n, dict):
            if any(isinstance(k, tuple) for k in n):
                return True
            todo.extend(n.values())
        elif isinstance(n, list):
            todo.extend(n)
    return False


def _expand(key: str, value: Any, schema: dict, ptr: str, tr: "Translator", depth: int) -> list[Any]:
    """The alternatives of one applicator keyword on its own."""
    if key == "allOf":
        out: list[Any] = [True]
        for i, sub in enumerate(_list(value, ptr)):
            out = _product(out, alternatives(sub, f"{ptr}/{i}", tr, depth), ptr, tr)
        return out
    if key == "anyOf":
        return _union([alternatives(b, f"{ptr}/{i}", tr, depth) for i, b in enumerate(_list(value, ptr))], ptr)
    if key == "oneOf":
        branches = _list(value, ptr)
        context = {k: v for k, v in schema.items() if k not in APPLICATORS and k not in UNEVALUATED and k != "$ref"}
        if branches_disjoint(branches, tr, context):
            return _union([alternatives(b, f"{ptr}/{i}", tr, depth) for i, b in enumerate(branches)], ptr)
        exact = [
            {"allOf": [b] + [{"not": c} for j, c in enumerate(branches) if j != i]} for i, b in enumerate(branches)
        ]
        tr.exact_one_of_depth += 1  # too many alternatives: one formula for the whole oneOf
        try:
            return _union([alternatives(e, f"{ptr}/{i}", tr, depth) for i, e in enumerate(exact)], ptr)
        finally:
            tr.exact_one_of_depth -= 1
    if key == "not":
        return [_as_derived(a) for a in alternatives(negate(value, ptr, tr), ptr, tr, depth)]
    if key == "if":
        then, else_ = schema.get("then", True), schema.get("else", True)
        both = {"anyOf": [{"allOf": [value, then]}, {"allOf": [{"not": value}, else_]}]}
        return alternatives(both, ptr, tr, depth)
    # dependentRequired / dependentSchemas / dependencies: per key, absent or present-and-more.
    if not isinstance(value, dict):
        raise SchemaError(f"{key} must be an object", ptr)
    out = [True]
    # "k present => these keys present / absent": tracked by the object automaton.
    rules = [(k, {"required": list(dep)} if isinstance(dep, list) else dep) for k, dep in value.items()]
    rules = [(k, c) for k, c in rules if c is not True and c != {"required": []} and presence_only(c)]
    if rules:
        out = [{KEY_RULES: rules}]
    handled = {k for k, _ in rules}
    for k, dep in value.items():
        if k in handled or isinstance(dep, list) or dep is True:
            continue
        present = {"allOf": [{"required": [k]}, dep]}
        absent = {"properties": {k: False}, UNEVALUATED_NAMES: [k]}
        either = alternatives(absent, ptr, tr, depth) + alternatives(present, ptr, tr, depth)
        out = _product(out, either, ptr, tr)
    return out


def _list(value: Any, ptr: str) -> list:
    if not isinstance(value, list):
        raise SchemaError("expected a list of schemas", ptr)
    return value


def _union(groups: list[list[Any]], ptr: str) -> list[Any]:
    out = [a for g in groups for a in g]  # (a True among them still leaves the others their
    _check_size(out, ptr)  # annotations, which unevaluated* sees)
    return out


def _product(xs: list[Any], ys: list[Any], ptr: str, tr: "Translator") -> list[Any]:
    out = []
    for x in xs:
        for y in ys:
            m = merge(x, y, ptr, tr)
            if m is not False and not any(m == o for o in out):
                out.append(m)
    _check_size(out, ptr)
    return out


def _check_size(alts: list, ptr: str) -> None:
    if len(alts) > MAX_ALTERNATIVES:
        keyword = ptr.rsplit("/", 1)[-1]
        raise TooManyAlternativesError(
            keyword, ptr, f"expands to more than {MAX_ALTERNATIVES} alternatives (combinations of anyOf/oneOf/not/if)"
        )
