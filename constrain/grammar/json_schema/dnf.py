"""Schemas with applicators → alternatives of plain schemas (a disjunctive normal form).

allOf merges; anyOf, exact oneOf (each branch and the complement of the others), `not`,
if/then/else and the dependency keywords become alternatives whose union is the schema. Each
alternative is a plain schema (no applicator at its top; sub-schemas are left as they are and
expand when they are translated), so the rest of the translator only ever sees plain schemas.
The number of alternatives is bounded (a product of anyOfs grows fast).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import ConstrainError, SchemaError, UnsupportedSchemaError
from .combinators import disjoint, merge
from .keywords import ANNOTATIONS, APPLICATORS, KNOWN_UNSUPPORTED
from .negation import negate

if TYPE_CHECKING:  # pragma: no cover
    from .translate import Translator

MAX_ALTERNATIVES = 64
MAX_DEPTH = 100


def has_applicators(schema: Any) -> bool:
    return isinstance(schema, dict) and any(k in schema for k in APPLICATORS)


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
    for key in schema:
        if key in KNOWN_UNSUPPORTED:
            tr.unsupported(key, f"{pointer}/{key}")
    if "$ref" in schema:
        target_ptr, target = tr.resolve(schema["$ref"], pointer, schema)
        siblings = {k: v for k, v in schema.items() if k != "$ref" and k not in ANNOTATIONS}
        if tr.legacy_refs or not siblings:  # drafts 4-7 ignore keywords beside $ref
            return alternatives(target, target_ptr, tr, depth + 1)
        return _product(
            alternatives(target, target_ptr, tr, depth + 1), alternatives(siblings, pointer, tr, depth + 1), pointer, tr
        )
    alts: list[Any] = [{k: v for k, v in schema.items() if k not in APPLICATORS}]
    for key, value in schema.items():
        if key not in APPLICATORS or key in ("then", "else"):
            continue
        ptr = f"{pointer}/{key}"
        alts = _product(alts, _expand(key, value, schema, ptr, tr, depth + 1), ptr, tr)
        if not alts:
            break
    return alts


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
        if disjoint(branches, tr):
            return _union([alternatives(b, f"{ptr}/{i}", tr, depth) for i, b in enumerate(branches)], ptr)
        exact = [
            {"allOf": [b] + [{"not": c} for j, c in enumerate(branches) if j != i]} for i, b in enumerate(branches)
        ]
        return _union([alternatives(e, f"{ptr}/{i}", tr, depth) for i, e in enumerate(exact)], ptr)
    if key == "not":
        return alternatives(negate(value, ptr, tr), ptr, tr, depth)
    if key == "if":
        then, else_ = schema.get("then", True), schema.get("else", True)
        both = {"anyOf": [{"allOf": [value, then]}, {"allOf": [{"not": value}, else_]}]}
        return alternatives(both, ptr, tr, depth)
    # dependentRequired / dependentSchemas / dependencies: per key, absent or present-and-more.
    if not isinstance(value, dict):
        raise SchemaError(f"{key} must be an object", ptr)
    out = [True]
    for k, dep in value.items():
        if isinstance(dep, list):
            present: Any = {"required": [k, *dep]}
        else:
            present = {"allOf": [{"required": [k]}, dep]}
        either = alternatives({"properties": {k: False}}, ptr, tr, depth) + alternatives(present, ptr, tr, depth)
        out = _product(out, either, ptr, tr)
    return out


def _list(value: Any, ptr: str) -> list:
    if not isinstance(value, list):
        raise SchemaError("expected a list of schemas", ptr)
    return value


def _union(groups: list[list[Any]], ptr: str) -> list[Any]:
    out = [a for g in groups for a in g]
    if any(a is True for a in out):
        return [True]
    _check_size(out, ptr)
    return out


def _product(xs: list[Any], ys: list[Any], ptr: str, tr: "Translator") -> list[Any]:
    out = []
    for x in xs:
        for y in ys:
            m = merge(x, y, ptr, tr)
            if m is not False:
                out.append(m)
    _check_size(out, ptr)
    return out


def _check_size(alts: list, ptr: str) -> None:
    if len(alts) > MAX_ALTERNATIVES:
        keyword = ptr.rsplit("/", 1)[-1]
        raise UnsupportedSchemaError(
            keyword, ptr, f"expands to more than {MAX_ALTERNATIVES} alternatives (combinations of anyOf/oneOf/not/if)"
        )
