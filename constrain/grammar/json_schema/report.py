"""What a compile would do with each keyword of a schema: enforced, annotation, ignored, relaxed
(strict=False widens it), or a format that is not enforced. The Python side of
`constrain check schema.json`; it needs no vocabulary (translation is vocabulary-free)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from ...errors import ConstrainError
from .keywords import ANNOTATIONS, ENFORCED, KNOWN_UNSUPPORTED, escape_key
from .options import JsonSchemaOptions
from .sources import schema_to_dict

_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_VALUES = (
    "not", "if", "then", "else", "contains", "additionalProperties", "additionalItems", "propertyNames",
    "unevaluatedProperties", "unevaluatedItems", "items",
)
_RELAXED = re.compile(r"^(\S+) at (#\S*?)(?::|$)")
_AT_POINTER = re.compile(r"\(at (#[^)]*)\)\s*$")
_FORMAT_NOTE = re.compile(r"^format '([^']*)' at (#\S*) is not enforced")


@dataclass(frozen=True)
class KeywordUse:
    pointer: str  # JSON pointer of the keyword itself
    keyword: str
    status: str  # "enforced", "annotation", "ignored" (unknown keyword), "relaxed", "not enforced", "refused"


@dataclass(frozen=True)
class SchemaReport:
    uses: tuple[KeywordUse, ...]
    relaxations: tuple[str, ...]  # what strict=False widens, with reasons
    strict_error: Optional[str]  # why a strict compile refuses the schema (None: it compiles)

    def __str__(self) -> str:
        lines = [f"{u.status:13s} {u.keyword:24s} {u.pointer}" for u in self.uses]
        lines.append("strict compile: " + ("ok" if self.strict_error is None else f"refused: {self.strict_error}"))
        lines += [f"relaxed with strict=False: {r}" for r in self.relaxations]
        return "\n".join(lines)


def check_schema(schema: Any, **options: Any) -> SchemaReport:
    """Report on every keyword of `schema` (options as for compile_json_schema)."""
    from .translate import Translator

    root = schema_to_dict(schema)
    uses = list(_walk(root, "#"))
    strict_error = None
    try:
        Translator(root, JsonSchemaOptions(**{**options, "strict": True})).translate()
    except ConstrainError as exc:
        strict_error = str(exc)
    relaxed = Translator(root, JsonSchemaOptions(**{**options, "strict": False}))
    try:
        relaxed.translate()
    except ConstrainError as exc:
        strict_error = strict_error or str(exc)
    marks: dict[str, str] = {}  # keyword pointer -> status
    for note in relaxed.relaxations:
        m = _RELAXED.match(note)
        if m:
            keyword, pointer = m.groups()
            marks[pointer] = marks[f"{pointer}/{keyword}"] = "relaxed"
    for note in relaxed.annotations:
        m = _FORMAT_NOTE.match(note)
        if m:
            marks[f"{m.group(2)}/format"] = "not enforced"
    # the keyword walk knows which keywords are enforced in general, not that this value of one (a
    # pattern with a backreference, say) cannot be: the strict error names the place it refused
    found = _AT_POINTER.search(strict_error or "")
    if found and marks.get(found.group(1), "enforced") == "enforced":
        marks[found.group(1)] = "refused"
    out = [KeywordUse(u.pointer, u.keyword, marks.get(u.pointer, u.status)) for u in uses]
    return SchemaReport(tuple(out), tuple(relaxed.relaxations), strict_error)


def _walk(node: Any, pointer: str):
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        ptr = f"{pointer}/{escape_key(key)}"
        if key in ANNOTATIONS:
            status = "annotation"
        elif key in KNOWN_UNSUPPORTED:
            status = "refused"
        elif key in ENFORCED:
            status = "enforced"
        else:
            status = "ignored"
        yield KeywordUse(ptr, key, status)
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            for k, sub in value.items():
                yield from _walk(sub, f"{ptr}/{escape_key(k)}")
        elif key in _SCHEMA_LISTS and isinstance(value, list) or key == "items" and isinstance(value, list):
            for i, sub in enumerate(value):
                yield from _walk(sub, f"{ptr}/{i}")
        elif key in _SCHEMA_VALUES:
            yield from _walk(value, ptr)
        elif key == "dependencies" and isinstance(value, dict):
            for k, sub in value.items():
                yield from _walk(sub, f"{ptr}/{escape_key(k)}")
