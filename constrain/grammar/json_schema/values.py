"""Is a known JSON value valid under a schema? (to filter `enum`/`const` values and keys)

The `jsonschema` library decides for the standard keywords (with the document's root, so
`$ref`s resolve) where quick_validity.py cannot; our internal keywords (keywords.py) are checked here, with the same regex
engine the grammar uses.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ...automata import DFA, compile_ir, parse_regex
from ...errors import SchemaError
from .formats import FORMATS
from .key_formula import holds_for_object
from .keywords import KEY_FORMULA, KEY_RULES, INTERNAL, NON_INTEGER, NOT_ENUM, NOT_FORMATS, NOT_MULTIPLE_OF, NOT_PATTERNS, PATTERNS
from .literals import json_equal
from .patterns import pattern_dfa
from .presence import rules_hold
from .quick_validity import draft_of, local_refs, quick_valid


class ValueChecker:
    """Judges values against schemas of one document (its root, and the other documents its
    `$ref`s may name: given to jsonschema as a registry, so nothing is fetched)."""

    def __init__(self, root: Any, documents: "dict[str, Any] | None" = None) -> None:
        self.root = root if isinstance(root, dict) else {}
        self.documents = documents or {}
        self._validator: Any = None
        self.draft = draft_of(self.root)
        self.resolve = local_refs(self.root)

    def valid(self, value: Any, schema: Any) -> bool:
        if schema is True or schema is False:
            return schema
        if not _internal_ok(value, schema, self.valid):
            return False
        standard = {k: v for k, v in schema.items() if k not in INTERNAL}
        if not standard:
            return True
        try:
            known = quick_valid(value, standard, self.draft, self.resolve)  # most: `enum` next to `type`
        except RecursionError:  # `$ref`s around a cycle that reads nothing: jsonschema says so
            known = None
        if known is not None:
            return known
        try:
            return self._base().evolve(schema=standard).is_valid(value)
        except Exception as exc:  # an unresolvable $ref, a regex it cannot compile...
            raise SchemaError(f"cannot check a value against this schema: {type(exc).__name__}: {exc}") from None

    def _base(self) -> Any:
        if self._validator is None:
            import jsonschema
            from referencing import Registry, Resource
            from referencing.jsonschema import DRAFT202012

            cls = jsonschema.validators.validator_for(self.root, default=jsonschema.Draft202012Validator)
            registry: Any = Registry()
            if self.documents:
                registry = registry.with_resources(
                    (uri, Resource.from_contents(doc, default_specification=DRAFT202012))
                    for uri, doc in self.documents.items()
                )
            self._validator = cls(self.root, registry=registry)
        return self._validator


def _internal_ok(value: Any, schema: dict, valid: Any) -> bool:
    if any(json_equal(value, v) for v in schema.get(NOT_ENUM, ())):
        return False
    if isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
        if not all(_pattern_dfa(p).accepts(data) for p in schema.get(PATTERNS, ())):
            return False
        if any(_pattern_dfa(p).accepts(data) for p in schema.get(NOT_PATTERNS, ())):
            return False
        if any(f in FORMATS and _format_dfa(f).accepts(data) for f in schema.get(NOT_FORMATS, ())):
            return False
    if isinstance(value, dict):
        if not rules_hold(schema.get(KEY_RULES, ()), set(value)):
            return False
        if not all(holds_for_object(f, value, valid) for f in schema.get(KEY_FORMULA, ())):
            return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        integral = float(value).is_integer()
        if schema.get(NON_INTEGER) and integral:
            return False
        if integral and any(int(value) % int(k) == 0 for k in schema.get(NOT_MULTIPLE_OF, ())):
            return False
    return True


@lru_cache(maxsize=256)
def _pattern_dfa(pattern: str) -> DFA:
    return pattern_dfa(pattern, "#")


@lru_cache(maxsize=64)
def _format_dfa(fmt: str) -> DFA:
    return compile_ir(parse_regex(FORMATS[fmt]))
