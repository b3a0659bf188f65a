"""JSON Schema → grammar rules (IR with rule calls), keyword by keyword, with JSON pointers.

Each distinct sub-schema object becomes one rule, so recursion and shared definitions go
through the stack (`$ref`s resolve to the same object). A schema with applicators (allOf,
anyOf, oneOf, not, if/then/else, dependencies) is first expanded into alternatives of plain
schemas (dnf.py); a plain schema is translated per type (strings.py, numbers.py, objects.py,
arrays.py). Keywords we enforce exactly are listed in ENFORCED; annotations are ignored; anything
else is refused with UnsupportedSchemaError (strict) or relaxed and recorded (strict=False).
"""

from __future__ import annotations

from typing import Any, Optional

from ...automata import ir
from ...errors import SchemaError, UnsupportedSchemaError
from . import lexical
from .any_value import json_value_rules
from .arrays import array_node
from .disjointness import branches_disjoint
from .dnf import alternatives, has_applicators
from .keywords import ALL_TYPES, ANNOTATIONS, KNOWN_UNSUPPORTED, NON_INTEGER
from .literals import json_literal
from .numbers import integral_divisor, number_node
from .objects import object_node
from .options import JsonSchemaOptions
from .references import References
from .strings import string_node
from .values import ValueChecker


class Translator:
    def __init__(self, root: Any, options: JsonSchemaOptions, resources: Optional[dict[str, Any]] = None) -> None:
        self.root = root
        self.resources = resources or {}
        self.opts = options
        self.ws = lexical.whitespace(options.whitespace)
        self.rules: dict[str, ir.Node] = {}
        self.rule_of: dict[Any, str] = {}  # schema key (see _key) -> rule name
        self._alive: list[Any] = []  # the sub-schemas of rule_of, kept alive so ids stay unique
        self._originals: Optional[set[int]] = None
        self._shared: dict[Any, str] = {}
        self.pointer_of: dict[str, str] = {}  # rule name -> where its schema is
        self.relaxations: list[str] = []
        self.annotations: list[str] = []
        self.distinct: list[str] = []  # rules whose calls (array items) must differ: uniqueItems
        self.keyed: dict[str, Any] = {}  # any-order object rules -> any_order.KeyedObject
        self._any: Optional[ir.RuleRef] = None
        self._depth = 0
        self.exact_one_of_depth = 0  # inside the expansion of an exact oneOf (dnf.py)
        self.per_branch_formulas = False  # (dnf.py: a whole oneOf was not key-local)
        self.string_languages: dict[Any, Any] = {}  # semantic key -> quoted-strings DFA (key_conditions)
        dialect = root.get("$schema", "") if isinstance(root, dict) else ""
        self.legacy_refs = isinstance(dialect, str) and any(f"draft-0{d}" in dialect for d in "3467")
        self._refs: Optional[References] = None
        self._values: Optional[ValueChecker] = None
        self.alternatives_memo: dict[Any, tuple[list, int]] = {}  # (dnf.py)
        self.alternatives_depth = 0  # the deepest dnf.alternatives call so far (dnf.py)

    # -- entry ---------------------------------------------------------------------------------
    def translate(self) -> tuple[dict[str, ir.Node], str]:
        start = self.rule("#", self.root)
        return self.rules, start.name

    def rule(self, pointer: str, schema: Any) -> ir.RuleRef:
        """The rule of a sub-schema, made once per schema; recursion refers back to it.
        `pointer` says where it is, for messages."""
        key = self._key(schema)
        name = self.rule_of.get(key)
        if name is None:
            name = f"s{len(self.rule_of)}"
            self.rule_of[key] = name
            self.pointer_of[name] = pointer
            self._alive.append(schema)
            self.rules[name] = ir.NOTHING  # placeholder while translating (recursion)
            self.rules[name] = self.value(schema, pointer)
        return ir.call(name)

    def is_original(self, schema: Any) -> bool:
        """Is `schema` a node of the documents (alive as long as the translator, so its id is
        unique), not one the translator derived?"""
        if self._originals is None:
            self._originals = set()
            extra = self._refs.meta_schemas.values() if self._refs is not None else ()
            todo = [self.root, *self.resources.values(), *extra]
            while todo:
                node = todo.pop()
                if isinstance(node, (dict, list)):
                    self._originals.add(id(node))
                    todo.extend(node.values() if isinstance(node, dict) else node)
        return id(schema) in self._originals

    def _key(self, schema: Any) -> Any:
        """A schema of the documents is itself (its id); one the translator derived (merges,
        complements) is its structure over document schemas, so deriving the same thing again
        (as recursion through a merge or a `not` does) finds the same rule instead of looping."""
        if self.is_original(schema):
            return id(schema)
        if isinstance(schema, dict) and set(schema) == {"allOf"} and isinstance(schema["allOf"], list):
            # allOf is a set: nesting and repeats do not matter (merges through recursion
            # otherwise wrap the same members deeper at every level).
            members: set = set()
            todo = list(schema["allOf"])
            while todo:
                m = todo.pop()
                if isinstance(m, dict) and set(m) == {"allOf"} and isinstance(m["allOf"], list) and not self.is_original(m):
                    todo.extend(m["allOf"])
                elif m is not True:
                    members.add(self._key(m))
            return ("all", frozenset(members))
        if isinstance(schema, dict):
            return ("d", tuple(sorted(((repr(k), self._key(v)) for k, v in schema.items()), key=lambda kv: kv[0])))
        if isinstance(schema, (list, tuple)):
            return ("l", tuple(self._key(v) for v in schema))
        return ("v", type(schema).__name__, repr(schema))

    def shared_rule(self, key: Any, make: Any) -> ir.RuleRef:
        """A helper rule made once per translation for `key` (make() builds its IR)."""
        name = self._shared.get(key)
        if name is None:
            name = self._shared[key] = self.helper_rule("shared", make()).name
        return ir.call(name)

    def helper_rule(self, kind: str, node: ir.Node) -> ir.RuleRef:
        """A rule of its own for a part of a schema (e.g. an object's other members)."""
        name = f"h{len(self.rules)}_{kind}"
        self.rules[name] = node
        return ir.call(name)

    def distinct_items(self, array: ir.Node) -> ir.RuleRef:
        """`array` (whose only calls are its items) as a rule whose items must be distinct."""
        ref = self.helper_rule("unique", array)
        self.distinct.append(ref.name)
        return ref

    def keyed_object(self, node: ir.Node, spec: Any) -> ir.RuleRef:
        """`node`, an object whose keys the matcher keeps distinct (any_order.py), as a rule."""
        ref = self.helper_rule("keys", node)
        self.keyed[ref.name] = spec
        return ref

    def any_value(self) -> ir.RuleRef:
        if self._any is None:
            self.rules.update(json_value_rules(self.opts.whitespace, prefix="any_"))
            self._any = ir.call("any_value")
        return self._any

    # -- helpers -------------------------------------------------------------------------------
    def unsupported(self, keyword: str, pointer: str, why: str = "") -> None:
        if self.opts.strict:
            raise UnsupportedSchemaError(keyword, pointer, why, relaxable=True)
        self.relaxations.append(f"{keyword} at {pointer}" + (f": {why}" if why else ""))

    def resolve(self, ref: Any, pointer: str, holder: Optional[dict] = None) -> tuple[str, Any]:
        """(JSON pointer, schema) that `ref` (the `$ref` of `holder`) refers to."""
        if not isinstance(ref, str):
            raise SchemaError("$ref must be a string", pointer)
        if self._refs is None:
            self._refs = References(self.root, self.legacy_refs, self.resources)
            if self._originals is not None and self._refs.meta_schemas:
                self._originals = None  # (recomputed with the meta-schemas' sub-schemas)
        return self._refs.resolve(ref, pointer, holder)

    # -- a schema ------------------------------------------------------------------------------
    def value(self, schema: Any, pointer: str) -> ir.Node:
        self._depth += 1
        try:
            if self._depth > 200:
                raise SchemaError("schema nests too deeply or its $ref/allOf chain loops", pointer)
            return self._value(schema, pointer)
        finally:
            self._depth -= 1

    def _value(self, schema: Any, pointer: str) -> ir.Node:
        if schema is True:
            return self.any_value()
        if schema is False:
            return ir.NOTHING
        if not isinstance(schema, dict):
            raise SchemaError(f"a schema must be an object or boolean, not {type(schema).__name__}", pointer)
        for key in schema:
            if key in KNOWN_UNSUPPORTED:
                self.unsupported(key, f"{pointer}/{key}")
        siblings = [k for k in schema if k not in ANNOTATIONS and k != "$ref"]
        if "$ref" in schema and (self.legacy_refs or not siblings):  # drafts 4-7 ignore $ref's siblings
            target_ptr, target = self.resolve(schema["$ref"], pointer, schema)
            return self.rule(target_ptr, target)
        if len(siblings) == 1 and "$ref" not in schema and siblings[0] in ("anyOf", "oneOf"):
            # A plain union: each branch its own shared rule (recursion stays on the stack).
            key = siblings[0]
            branches = schema[key]
            if isinstance(branches, list) and (key == "anyOf" or branches_disjoint(branches, self)):
                return ir.alt(*(self.rule(f"{pointer}/{key}/{i}", b) for i, b in enumerate(branches)))
        if "$ref" in schema or has_applicators(schema):
            return ir.alt(*(self.plain(alt, pointer) for alt in alternatives(schema, pointer, self)))
        return self.plain(schema, pointer)

    def plain(self, schema: Any, pointer: str) -> ir.Node:
        """A schema without applicators at its top."""
        if schema is True:
            return self.any_value()
        if "const" in schema or "enum" in schema:
            return self.enumerated(schema, pointer)
        return self.typed(schema, pointer)

    def typed(self, schema: dict, pointer: str) -> ir.Node:
        types = schema.get("type", ALL_TYPES)
        if isinstance(types, str):
            types = [types]
        unknown = [t for t in types if t not in ALL_TYPES + ("integer",)]
        if unknown:
            raise SchemaError(f"unknown type {unknown[0]!r}", f"{pointer}/type")
        types = set(types)
        if schema.get(NON_INTEGER):
            types.discard("integer")
        if "multipleOf" in schema and "number" in types and integral_divisor(schema["multipleOf"]):
            types = (types - {"number"}) | {"integer"}  # multiples of an integer are integers
        if "number" in types:
            types.discard("integer")  # numbers include the integers
        parts = []
        for t in ALL_TYPES + ("integer",):
            if t in types:
                parts.append(self.type_node(t, schema, pointer))
        return ir.alt(*parts) if parts else ir.NOTHING

    def type_node(self, t: str, schema: dict, pointer: str) -> ir.Node:
        if t == "null":
            return lexical.NULL
        if t == "boolean":
            return lexical.BOOLEAN
        if t == "string":
            return string_node(self, schema, pointer)
        if t in ("number", "integer"):
            return number_node(self, schema, pointer, integer=t == "integer")
        if t == "array":
            return array_node(self, schema, pointer)
        return object_node(self, schema, pointer)

    # -- enumerations --------------------------------------------------------------------------
    def enumerated(self, schema: dict, pointer: str) -> ir.Node:
        values = [schema["const"]] if "const" in schema else schema["enum"]
        if not isinstance(values, list):
            raise SchemaError("enum must be a list", f"{pointer}/enum")
        rest = {k: v for k, v in schema.items() if k not in ("const", "enum") and k not in ANNOTATIONS}
        if rest:
            values = [v for v in values if self.valid_value(v, rest)]
        return ir.alt(*(json_literal(v) for v in values)) if values else ir.NOTHING

    def valid_value(self, value: Any, schema: Any) -> bool:
        """Is a known value valid under a (plain or derived) schema? jsonschema decides, with
        our internal keywords checked here."""
        if self._values is None:
            self._values = ValueChecker(self.root, self.resources)
        return self._values.valid(value, schema)
