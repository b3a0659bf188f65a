"""JSON Schema → grammar rules (IR with rule calls), keyword by keyword, with JSON pointers.

Each distinct sub-schema (by its JSON pointer; `$ref`s resolve to their target's pointer)
becomes one rule, so recursion and shared definitions go through the stack. Keywords we
enforce exactly are listed in ENFORCED; annotations are ignored; anything else is refused with
UnsupportedSchemaError (strict) or relaxed and recorded (strict=False).
"""

from __future__ import annotations

import urllib.parse
from functools import lru_cache
from typing import Any, Optional

from ...automata import compile_ir, ir, parse_regex
from ...automata.algebra import intersect
from ...automata.numeric import multiple_of
from ...errors import EmptyLanguageError, SchemaError, UnsupportedSchemaError
from . import containers, lexical
from .any_value import json_value_rules
from .combinators import disjoint, merge
from .formats import FORMATS
from .key_patterns import KeyPatterns
from .keywords import ALL_TYPES, ANNOTATIONS, KNOWN_UNSUPPORTED, escape_key
from .literals import json_literal
from .patterns import search_pattern
from .numbers import decimal_ir, integer_bounds, integer_ir, is_integral
from .options import JsonSchemaOptions
from .validation import unenforced_format_note


class Translator:
    def __init__(self, root: Any, options: JsonSchemaOptions) -> None:
        self.root = root
        self.opts = options
        self.ws = lexical.whitespace(options.whitespace)
        self.rules: dict[str, ir.Node] = {}
        self.rule_of: dict[str, str] = {}
        self.relaxations: list[str] = []
        self.annotations: list[str] = []
        self._any: Optional[ir.RuleRef] = None
        self._depth = 0
        dialect = root.get("$schema", "") if isinstance(root, dict) else ""
        self.legacy_refs = isinstance(dialect, str) and any(f"draft-0{d}" in dialect for d in "3467")

    # -- entry ---------------------------------------------------------------------------------
    def translate(self) -> tuple[dict[str, ir.Node], str]:
        start = self.rule("#", self.root)
        return self.rules, start.name

    def rule(self, pointer: str, schema: Any) -> ir.RuleRef:
        """The rule of the sub-schema at `pointer` (made once; recursion refers back to it)."""
        name = self.rule_of.get(pointer)
        if name is None:
            name = f"s{len(self.rule_of)}"
            self.rule_of[pointer] = name
            self.rules[name] = ir.NOTHING  # placeholder while translating (recursion)
            self.rules[name] = self.value(schema, pointer)
        return ir.RuleRef(name)

    def any_value(self) -> ir.RuleRef:
        if self._any is None:
            self.rules.update(json_value_rules(self.opts.whitespace, prefix="any_"))
            self._any = ir.RuleRef("any_value")
        return self._any

    # -- helpers -------------------------------------------------------------------------------
    def unsupported(self, keyword: str, pointer: str, why: str = "") -> None:
        if self.opts.strict:
            raise UnsupportedSchemaError(keyword, pointer, why)
        self.relaxations.append(f"{keyword} at {pointer}" + (f": {why}" if why else ""))

    def resolve(self, ref: str, pointer: str) -> tuple[str, Any]:
        if not ref.startswith("#"):
            raise UnsupportedSchemaError("$ref", pointer, f"only local references are supported, not {ref!r}")
        frag = urllib.parse.unquote(ref[1:])
        node = self.root
        if frag and not frag.startswith("/"):
            anchored = self._anchors().get(frag)
            if anchored is None:
                raise SchemaError(f"$ref {ref!r}: no $anchor {frag!r} in this schema", pointer)
            return anchored
        for part in frag.split("/")[1:] if frag else []:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise SchemaError(f"$ref {ref!r} points nowhere", pointer)
        return "#" + frag, node

    def _anchors(self) -> dict[str, tuple[str, Any]]:
        """`$anchor` name -> (pointer, schema), found once in the whole document. Schemas that
        set their own `$id` start another resource: anchors there are not ours to resolve."""
        if not hasattr(self, "_anchor_map"):
            found: dict[str, tuple[str, Any]] = {}
            todo = [("#", self.root)]
            while todo:
                ptr, node = todo.pop()
                if isinstance(node, dict):
                    if isinstance(node.get("$anchor"), str) and ("$id" not in node or ptr == "#"):
                        found.setdefault(node["$anchor"], (ptr, node))
                    for k, v in node.items():
                        if k not in ("enum", "const") and not ("$id" in v if isinstance(v, dict) else False):
                            todo.append((f"{ptr}/{escape_key(k)}", v))
                elif isinstance(node, list):
                    todo.extend((f"{ptr}/{i}", v) for i, v in enumerate(node))
            self._anchor_map = found
        return self._anchor_map

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
        if "$ref" in schema:
            target_ptr, target = self.resolve(schema["$ref"], pointer)
            siblings = {k: v for k, v in schema.items() if k != "$ref" and k not in ANNOTATIONS}
            if not siblings or self.legacy_refs:  # drafts 4-7 ignore keywords beside $ref
                return self.rule(target_ptr, target)
            return self.all_of([target, siblings], [target_ptr, pointer], pointer)
        if "allOf" in schema:
            rest = {k: v for k, v in schema.items() if k != "allOf"}
            parts = list(schema["allOf"]) + ([rest] if rest else [])
            ptrs = [f"{pointer}/allOf/{i}" for i in range(len(schema["allOf"]))] + [pointer]
            return self.all_of(parts, ptrs, pointer)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return self.any_of(schema, key, pointer)
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
        no_integers = False
        if "not" in schema:
            excluded = self.excluded_types(schema["not"], f"{pointer}/not")
            no_integers = "integer" in excluded and "number" not in excluded
            types -= excluded
        if "multipleOf" in schema and "number" in types and _integral_divisor(schema["multipleOf"]):
            types = (types - {"number"}) | {"integer"}  # multiples of an integer are integers
        parts = []
        for t in ALL_TYPES + ("integer",):
            if t in types:
                node = getattr(self, f"t_{t}")(schema, pointer)
                if t == "number" and no_integers:  # numbers that are not integers
                    node = ir.Embedded(intersect(compile_ir(node), _non_integral()))
                parts.append(node)
        return ir.alt(*parts) if parts else ir.NOTHING

    # -- types ---------------------------------------------------------------------------------
    def t_null(self, schema: dict, pointer: str) -> ir.Node:
        return lexical.NULL

    def t_boolean(self, schema: dict, pointer: str) -> ir.Node:
        return ir.alt(lexical.TRUE, lexical.FALSE)

    def excluded_types(self, sub: Any, pointer: str) -> set[str]:
        """`not` is enforced where it only excludes types ({"not": {"type": ...}})."""
        if sub is True or sub == {}:
            return set(ALL_TYPES) | {"integer"}
        if isinstance(sub, dict) and set(sub) - ANNOTATIONS == {"type"}:
            t = sub["type"]
            out = {t} if isinstance(t, str) else set(t)
            return out | ({"integer"} if "number" in out else set())
        self.unsupported("not", pointer, "only type exclusions are enforced")
        return set()

    def t_integer(self, schema: dict, pointer: str) -> ir.Node:
        node = integer_ir(*integer_bounds(schema, True))
        k = schema.get("multipleOf")
        if k is None:
            return node
        if not _integral_divisor(k):
            self.unsupported("multipleOf", f"{pointer}/multipleOf", "only integer divisors up to 10000")
            return node
        try:
            return ir.Embedded(intersect(compile_ir(node), multiple_of(int(k))))
        except EmptyLanguageError:
            return ir.NOTHING

    def t_number(self, schema: dict, pointer: str) -> ir.Node:
        if "multipleOf" in schema:
            self.unsupported("multipleOf", f"{pointer}/multipleOf", "only integer divisors up to 10000")
        lo, lo_ex, hi, hi_ex = integer_bounds(schema, False)
        if lo is None and hi is None:
            return lexical.NUMBER
        if is_integral(lo) and is_integral(hi):
            return decimal_ir(lo, lo_ex, hi, hi_ex)
        self.unsupported("minimum", pointer, "non-integral bounds on numbers")
        return lexical.NUMBER

    def t_string(self, schema: dict, pointer: str) -> ir.Node:
        lo = int(schema.get("minLength", 0))
        hi = schema.get("maxLength")
        hi = None if hi is None else int(hi)
        if hi is not None and hi < lo:
            return ir.NOTHING
        decoded: list[ir.Node] = []
        if "pattern" in schema:
            decoded.append(search_pattern(schema["pattern"], f"{pointer}/pattern"))
        fmt = schema.get("format")
        if fmt is not None:
            if fmt in FORMATS:
                decoded.append(parse_regex(FORMATS[fmt]))
            else:
                self.annotations.append(unenforced_format_note(fmt, pointer))
        if not decoded and hi is None and lo == 0:
            return lexical.quoted(lexical.string_body())  # every spelling: one small loop
        # Lengths and patterns multiply spellings: here strings are spelled canonically.
        body: ir.Node = lexical.string_body(lo, hi, canonical=True)
        if decoded:
            try:
                dfa = compile_ir(body)
                for node in decoded:
                    dfa = intersect(dfa, compile_ir(lexical.encode(node, canonical=True)))
            except EmptyLanguageError:
                return ir.NOTHING  # no string satisfies all of them: this type is impossible
            body = ir.Embedded(dfa)
        return lexical.quoted(body)

    def t_array(self, schema: dict, pointer: str) -> ir.Node:
        items = schema.get("items")
        prefix_schemas: list = []
        prefix_ptr = ""
        if "prefixItems" in schema:
            prefix_schemas, prefix_ptr = schema["prefixItems"], f"{pointer}/prefixItems"
            rest, rest_ptr = items, f"{pointer}/items"
        elif isinstance(items, list):  # drafts before 2020-12: a tuple
            prefix_schemas, prefix_ptr = items, f"{pointer}/items"
            rest, rest_ptr = schema.get("additionalItems"), f"{pointer}/additionalItems"
        else:
            rest, rest_ptr = items, f"{pointer}/items"
        prefix = [self.rule(f"{prefix_ptr}/{i}", s) for i, s in enumerate(prefix_schemas)]
        rest_node: Optional[ir.Node]
        if rest is None or rest is True:
            rest_node = self.any_value()
        elif rest is False:
            rest_node = None
        else:
            rest_node = self.rule(rest_ptr, rest)
        if schema.get("uniqueItems") is True:
            self.unsupported("uniqueItems", f"{pointer}/uniqueItems")
        lo = int(schema.get("minItems", 0))
        hi = schema.get("maxItems")
        return containers.array(prefix, rest_node, lo, None if hi is None else int(hi), self.ws)

    def t_object(self, schema: dict, pointer: str) -> ir.Node:
        props = schema.get("properties", {})
        required = list(schema.get("required", []))
        addl = schema.get("additionalProperties", True)
        if self.opts.additional_properties == "forbid":
            addl = False
        patterns = schema.get("patternProperties") or {}
        keys = KeyPatterns(patterns, f"{pointer}/patternProperties")
        members = []
        for key in list(props) + [k for k in required if k not in props]:
            ptr = f"{pointer}/properties/{escape_key(key)}"
            schemas = ([props[key]] if key in props else []) + [patterns[p] for p in keys.matching(key)]
            if not schemas:  # required, not named: other keys' rules apply
                if addl is False:
                    return ir.NOTHING  # required but forbidden: no object satisfies it
                schemas = [addl]
            value = self.rule(ptr, schemas[0]) if len(schemas) == 1 else self.rule(f"{ptr}#all", {"allOf": schemas})
            members.append((key, value, key in required))
        named = [k for k, _, _ in members]
        base = self.rule_of.get(pointer, pointer)
        extras: list[ir.Node] = []
        for i, (region, pattern) in enumerate(keys.regions(named)):
            name = f"{base}_pattern{i}"
            self.rules[name] = containers.member(region, self.rule(f"{pointer}/patternProperties/{escape_key(pattern)}", patterns[pattern]), self.ws)
            extras.append(ir.RuleRef(name))
        if addl is not False:
            value = self.any_value() if addl is True else self.rule(f"{pointer}/additionalProperties", addl)
            name = f"{base}_other"
            self.rules[name] = containers.member(keys.rest(named), value, self.ws)
            extras.append(ir.RuleRef(name))
        extra = ir.alt(*extras) if extras else None
        if self.opts.property_order == "any":
            if len(members) > self.opts.max_any_order_properties:
                raise UnsupportedSchemaError(
                    "properties", pointer,
                    f"property_order='any' supports up to {self.opts.max_any_order_properties} properties",
                )
            return containers.object_any_order(members, extra, self.ws)
        return containers.object_in_order(members, extra, self.ws)

    # -- enumerations and combinators ----------------------------------------------------------
    def enumerated(self, schema: dict, pointer: str) -> ir.Node:
        values = [schema["const"]] if "const" in schema else list(schema["enum"])
        rest = {k: v for k, v in schema.items() if k not in ("const", "enum") and k not in ANNOTATIONS}
        if rest:
            values = [v for v in values if self._valid(v, rest)]
        return ir.alt(*(json_literal(v) for v in values)) if values else ir.NOTHING

    def _valid(self, value: Any, schema: dict) -> bool:
        import jsonschema

        cls = jsonschema.validators.validator_for(self.root if isinstance(self.root, dict) else {})
        return cls(self.root).evolve(schema=schema).is_valid(value)

    def any_of(self, schema: dict, key: str, pointer: str) -> ir.Node:
        branches = schema[key]
        rest = {k: v for k, v in schema.items() if k != key}
        if key == "oneOf" and not disjoint([_with(rest, b) for b in branches], self):
            self.unsupported("oneOf", f"{pointer}/oneOf", "branches may overlap (only disjoint branches are exact)")
        parts = []
        for i, branch in enumerate(branches):
            ptr = f"{pointer}/{key}/{i}"
            if rest and any(k not in ANNOTATIONS for k in rest):
                parts.append(self.all_of([rest, branch], [pointer + "#rest", ptr], ptr))
            else:
                parts.append(self.rule(ptr, branch))
        return ir.alt(*parts) if parts else ir.NOTHING

    def all_of(self, parts: list, pointers: list[str], pointer: str) -> ir.Node:
        merged: Any = True
        for part, ptr in zip(parts, pointers):
            if isinstance(part, dict) and "$ref" in part and len(part) == 1:
                ptr, part = self.resolve(part["$ref"], ptr)
            merged = merge(merged, part, ptr, self)
        return self.value(merged, pointer)


@lru_cache(maxsize=1)
def _non_integral():
    """Numbers with a non-zero fraction and no exponent: surely not integers (narrower than
    all non-integers, never wider)."""
    return compile_ir(parse_regex(r"-?(0|[1-9][0-9]*)\.[0-9]*[1-9][0-9]*"))


def _integral_divisor(k: Any) -> bool:
    return isinstance(k, (int, float)) and not isinstance(k, bool) and float(k).is_integer() and 0 < k <= 10_000


def _with(rest: dict, branch: Any) -> Any:
    """A oneOf branch seen together with its siblings (for the disjointness check only)."""
    if not rest or not isinstance(branch, dict):
        return branch
    return {**rest, **branch}



