"""Is a value valid under a simple schema? Decided without the `jsonschema` library, or not at all.

Translating `enum`/`const` asks, value by value, whether each constant also satisfies the
schema around it. Most of those schemas are a `type`, an `enum` or a few bounds, and importing
`jsonschema` alone costs the first compile that needs it most of a second (its format checkers
build grammars on import). Here those keywords are judged directly; anything else (`$ref`,
`format`, `pattern`, object and tuple keywords, keywords that differ between drafts) returns
None and jsonschema decides, so the answers equal jsonschema's (a property test checks that).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from .literals import json_equal
from .references import follow_pointer

# Keywords of some draft that constrain values: a schema holding one we do not judge here goes
# to jsonschema. Other keys (title, description, vendor extensions) are ignored, as there.
VALIDATION_KEYWORDS = frozenset({
    "type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "multipleOf", "minLength", "maxLength", "pattern", "format", "items", "prefixItems",
    "additionalItems", "minItems", "maxItems", "uniqueItems", "contains", "minContains",
    "maxContains", "unevaluatedItems", "properties", "patternProperties", "additionalProperties",
    "required", "minProperties", "maxProperties", "propertyNames", "dependencies",
    "dependentRequired", "dependentSchemas", "unevaluatedProperties", "allOf", "anyOf", "oneOf",
    "not", "if", "then", "else", "$dynamicRef", "$recursiveRef", "extends", "disallow",
    "divisibleBy", "$id", "id", "$schema", "$anchor", "$dynamicAnchor", "$recursiveAnchor",
})

# Drafts whose `const`, number-valued `exclusive*` and integer rule (1.0 is an integer) hold.
_MODERN = ("draft-06", "draft-07", "2019-09", "2020-12")
MODERN, DRAFT4, OLDER = 6, 4, 3

_TYPES: dict[str, Callable[[Any], bool]] = {
    "null": lambda v: v is None,
    "boolean": lambda v: isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
}


def draft_of(root: Any) -> int:
    """MODERN for documents of draft 6 or later (or without `$schema`), DRAFT4, or OLDER for
    draft 3 and `$schema`s not recognized here (then only `type` and `enum` are judged)."""
    uri = root.get("$schema", "") if isinstance(root, dict) else ""
    if uri == "" or isinstance(uri, str) and any(d in uri for d in _MODERN):
        return MODERN
    return DRAFT4 if isinstance(uri, str) and "draft-04" in uri else OLDER


# What every draft judges alike (but floats as integers, see _type), and what draft 4 changes:
# no `const`, boolean `exclusive*` that modify `minimum`/`maximum`.
_ANY_DRAFT = frozenset({"type", "enum"})
_DRAFT4_DIFFERS = frozenset({"const", "exclusiveMinimum", "exclusiveMaximum"})


Resolve = Callable[[str], Any]  # a local `$ref` -> the schema it names (None: unknown)


def quick_valid(value: Any, schema: Any, draft: int = MODERN, resolve: Optional[Resolve] = None) -> Optional[bool]:
    """True/False where this module can judge `value` against `schema` exactly, else None.
    `draft`: what draft_of says of the document; `resolve`: follows the document's local
    `$ref`s (see local_refs), which are otherwise left to jsonschema."""
    if schema is True or schema is False:
        # Draft 6 made booleans schemas; jsonschema judges them so from draft 4 on (draft 3
        # has no allOf/anyOf/oneOf/not to hold one), and our translation writes them there.
        return schema if draft >= DRAFT4 else None
    if not isinstance(schema, dict):
        return None
    if "$ref" in schema:
        return _ref(value, schema, draft, resolve)
    verdict = True
    for key, arg in schema.items():
        if key not in VALIDATION_KEYWORDS:
            continue
        if draft < MODERN and _differs(key, value, schema, draft):
            return None
        check = _CHECKS.get(key)
        if check is None:
            return None
        ok = check(value, arg, draft, resolve)
        if ok is None:
            return None
        verdict = verdict and ok
    return verdict


def _ref(value: Any, schema: dict, draft: int, resolve: Optional[Resolve]) -> Optional[bool]:
    """A `$ref` alone (with annotations): the schema it names. Next to other keywords drafts
    differ (before 2019-09 they are ignored), so jsonschema decides."""
    ref = schema["$ref"]
    if resolve is None or not isinstance(ref, str) or any(k in VALIDATION_KEYWORDS for k in schema if k != "$ref"):
        return None
    target = resolve(ref)
    return None if target is None else quick_valid(value, target, draft, resolve)


def local_refs(root: Any) -> Optional[Resolve]:
    """A resolver of `#` and `#/json/pointer` refs in a document without `$id`s below its root
    (where an `$id` sets a new base, `#/...` would name a part of that resource instead); None
    for other documents. Refs it cannot follow resolve to None."""
    if not isinstance(root, dict) or _has_inner_id(root, top=True):
        return None

    def resolve(ref: str) -> Any:
        if not (ref == "#" or ref.startswith("#/")) or "%" in ref:
            return None  # (anchors, other documents, percent-encoded pointers: jsonschema)
        found = follow_pointer("#", root, ref[1:])
        return None if found is None else found[1]

    return resolve


def _has_inner_id(node: Any, top: bool = False) -> bool:
    if isinstance(node, dict):
        if not top and isinstance(node.get("$id", node.get("id")), str):
            return True
        return any(_has_inner_id(v) for k, v in node.items() if k not in ("enum", "const", "default", "examples"))
    if isinstance(node, list):
        return any(_has_inner_id(v) for v in node)
    return False


def _differs(key: str, value: Any, schema: dict, draft: int) -> bool:
    if key == "type" and isinstance(value, float):
        return True  # 1.0 is no integer before draft 6
    if draft < DRAFT4:
        return key not in _ANY_DRAFT
    return key in _DRAFT4_DIFFERS or key in ("minimum", "maximum") and not _DRAFT4_DIFFERS.isdisjoint(schema)


def _type(value: Any, arg: Any, draft: int = MODERN, resolve: Optional[Resolve] = None) -> Optional[bool]:
    names = [arg] if isinstance(arg, str) else arg
    if not isinstance(names, list) or not all(isinstance(t, str) and t in _TYPES for t in names):
        return None
    if isinstance(value, float) and "integer" in names:
        return value.is_integer() or any(_TYPES[t](value) for t in names)
    return any(_TYPES[t](value) for t in names)


def _enum(value: Any, arg: Any, draft: int = MODERN, resolve: Optional[Resolve] = None) -> Optional[bool]:
    if not isinstance(arg, list):
        return None
    if type(value) is str:  # (most enums: found by list.index in C, each value of a long
        try:                # enum being checked against the enum itself)
            if type(arg[arg.index(value)]) is str:
                return True
        except ValueError:
            return False  # (json_equal(value, v) implies value == v)
    return any(json_equal(value, v) for v in arg)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _bound(compare: Callable[[Any, Any], bool]) -> Callable[..., Optional[bool]]:
    def check(value: Any, arg: Any, draft: int = MODERN, resolve: Optional[Resolve] = None) -> Optional[bool]:
        if not _number(arg):
            return None  # draft 4's boolean exclusive*, or malformed
        return compare(value, arg) if _number(value) else True

    return check


def _multiple_of(value: Any, arg: Any, draft: int = MODERN, resolve: Optional[Resolve] = None) -> Optional[bool]:
    if not isinstance(arg, int) or isinstance(arg, bool) or arg <= 0:
        return None  # float divisors: jsonschema's float arithmetic decides
    if not _number(value):
        return True
    if isinstance(value, float):
        return None
    return value % arg == 0


def _length(compare: Callable[[int, int], bool], kind: type) -> Callable[..., Optional[bool]]:
    def check(value: Any, arg: Any, draft: int = MODERN, resolve: Optional[Resolve] = None) -> Optional[bool]:
        if not isinstance(arg, int) or isinstance(arg, bool):
            return None
        return compare(len(value), arg) if isinstance(value, kind) else True

    return check


def _every(pairs: Any, draft: int, resolve: Optional[Resolve]) -> Optional[bool]:
    """Is every (value, schema) pair valid? None as soon as one cannot be judged here."""
    verdict = True
    for value, schema in pairs:
        ok = quick_valid(value, schema, draft, resolve)
        if ok is None:
            return None
        verdict = verdict and ok
    return verdict


def _all_of(value: Any, arg: Any, draft: int, resolve: Optional[Resolve] = None) -> Optional[bool]:
    if not isinstance(arg, list):
        return None
    return _every(((value, sub) for sub in arg), draft, resolve)


def _any_of(value: Any, arg: Any, draft: int, resolve: Optional[Resolve] = None) -> Optional[bool]:
    counts = _branches(value, arg, draft, resolve)
    return None if counts is None else counts > 0


def _one_of(value: Any, arg: Any, draft: int, resolve: Optional[Resolve] = None) -> Optional[bool]:
    counts = _branches(value, arg, draft, resolve)
    return None if counts is None else counts == 1


def _branches(value: Any, arg: Any, draft: int, resolve: Optional[Resolve] = None) -> Optional[int]:
    if not isinstance(arg, list) or not arg:
        return None
    oks = [quick_valid(value, sub, draft, resolve) for sub in arg]
    return None if None in oks else sum(map(bool, oks))


def _not(value: Any, arg: Any, draft: int, resolve: Optional[Resolve] = None) -> Optional[bool]:
    ok = quick_valid(value, arg, draft, resolve)
    return None if ok is None else not ok


def _items(value: Any, arg: Any, draft: int, resolve: Optional[Resolve] = None) -> Optional[bool]:
    if not isinstance(arg, (dict, bool)) or isinstance(arg, bool) and draft < MODERN:
        return None  # the tuple form differs between drafts; no boolean schemas before draft 6
    if not isinstance(value, list):
        return True
    return _every(((item, arg) for item in value), draft, resolve)


def _properties(value: Any, arg: Any, draft: int, resolve: Optional[Resolve] = None) -> Optional[bool]:
    if not isinstance(arg, dict):
        return None
    if not isinstance(value, dict):
        return True
    return _every(((value[key], sub) for key, sub in arg.items() if key in value), draft, resolve)


def _required(value: Any, arg: Any, draft: int, resolve: Optional[Resolve] = None) -> Optional[bool]:
    if not isinstance(arg, list) or not all(isinstance(k, str) for k in arg):
        return None  # (draft 3's boolean form among them)
    return all(k in value for k in arg) if isinstance(value, dict) else True


_CHECKS: dict[str, Callable[..., Optional[bool]]] = {
    "type": _type,
    "enum": _enum,
    "const": lambda value, arg, draft, resolve: json_equal(value, arg),
    "minimum": _bound(lambda v, a: v >= a),
    "maximum": _bound(lambda v, a: v <= a),
    "exclusiveMinimum": _bound(lambda v, a: v > a),
    "exclusiveMaximum": _bound(lambda v, a: v < a),
    "multipleOf": _multiple_of,
    "minLength": _length(lambda n, a: n >= a, str),
    "maxLength": _length(lambda n, a: n <= a, str),
    "minItems": _length(lambda n, a: n >= a, list),
    "maxItems": _length(lambda n, a: n <= a, list),
    "allOf": _all_of,
    "anyOf": _any_of,
    "oneOf": _one_of,
    "not": _not,
    "items": _items,
    "properties": _properties,
    "required": _required,
}
