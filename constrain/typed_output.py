"""A Python return type as a grammar, and generated text back as a validated value of that type.

Most types go through JSON: Pydantic describes the type as a JSON Schema (models, dataclasses,
TypedDict, Enum, Literal, int/float/bool/str, lists, Optional, unions), we compile the schema, and
Pydantic validates the generated JSON into the typed object. Two markers shape strings beyond
JSON Schema: `Regex` (anywhere: at the top the output is the bare text the pattern matches; inside
a model it becomes the field's `pattern`) and `Grammar` (a Lark grammar; top level only, the output
is the bare text). Problems surface when the type is declared, naming the field.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import json
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from .compiled import CompiledGrammar
from .compiler import Compiler
from .errors import ConstrainError, OutputValidationError, TypedOutputError


@dataclass(frozen=True)
class Regex:
    """`Annotated[str, Regex(r"...")]`: the string matches the pattern in full."""

    pattern: str

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        schema = handler(source)
        if schema.get("type") != "str":
            raise TypedOutputError(f"Regex applies to str, not {source!r}")
        return {**schema, "pattern": f"^(?:{self.pattern})$"}


@dataclass(frozen=True)
class Grammar:
    """`Annotated[str, Grammar("sql")]`: the string is a sentence of a Lark grammar — a shipped
    grammar's name (constrain.grammars), a .lark file, or Lark text."""

    source: str
    start: str = "start"

    def lark_text(self) -> str:
        from . import grammars

        if self.source in grammars.NAMES:
            return grammars.load(self.source)
        if self.source.endswith(".lark") and "\n" not in self.source:
            path = Path(self.source).expanduser()
            if not path.is_file():
                raise TypedOutputError(f"Grammar file {self.source!r} does not exist")
            return path.read_text(encoding="utf-8")
        if ":" in self.source:
            return self.source
        raise TypedOutputError(
            f"Grammar({self.source!r}) is neither a shipped grammar ({', '.join(grammars.NAMES)}), "
            "a .lark file, nor Lark text"
        )


@dataclass(frozen=True)
class OutputSpec:
    """How one return type is generated: as JSON under `schema`, or as bare text under a regex or
    a Lark grammar; `parse` turns the text into the typed value."""

    annotation: Any
    kind: str  # "json" | "regex" | "grammar"
    schema: Optional[dict[str, Any]] = None
    regex: Optional[str] = None
    grammar: Optional[Grammar] = None
    whitespace: str = "compact"
    strict: bool = True

    def compile(self, compiler: Compiler) -> CompiledGrammar:
        if self.kind == "regex":
            return compiler.compile_regex(self.regex or "")
        if self.kind == "grammar":
            assert self.grammar is not None
            return compiler.compile_lark(self.grammar.lark_text(), start=self.grammar.start)
        return compiler.compile_json_schema(self.schema, whitespace=self.whitespace, strict=self.strict,
                                            integer_zero_fraction=False)

    def parse(self, text: str) -> Any:
        if self.kind != "json":
            return text
        try:
            return _adapter(self.annotation).validate_json(text)
        except Exception as exc:  # pydantic.ValidationError, or a custom validator's error
            raise OutputValidationError(f"the output does not validate as {_type_name(self.annotation)}: {exc}", text) from None

    def partial(self, value: Any) -> Any:
        """A partially parsed JSON value shown as the type where that is cheap: a Pydantic model
        built (unvalidated) from the fields complete so far; other types as plain JSON values."""
        from pydantic import BaseModel

        tp = _strip_annotated(self.annotation)
        if isinstance(tp, type) and issubclass(tp, BaseModel) and isinstance(value, dict):
            known = {k: v for k, v in value.items() if k in tp.model_fields}
            return tp.model_construct(**known)
        return value


def output_spec(annotation: Any, *, whitespace: str = "compact", strict: bool = True) -> OutputSpec:
    """The OutputSpec of a return annotation; raises TypedOutputError naming the field that cannot
    become a grammar (checked without a model: the schema is translated once here)."""
    if annotation is None or annotation is type(None):
        raise TypedOutputError("the return type is None: annotate the function with the type to generate")
    base, markers = _split_annotated(annotation)
    regexes = [m for m in markers if isinstance(m, Regex)]
    grammars_ = [m for m in markers if isinstance(m, Grammar)]
    if regexes or grammars_:
        if base is not str:
            raise TypedOutputError(f"Regex and Grammar annotate str, not {_type_name(base)}", "return")
        if len(regexes) + len(grammars_) > 1:
            raise TypedOutputError("a return type takes one Regex or one Grammar, not several", "return")
        if grammars_:
            grammars_[0].lark_text()  # a missing file or unknown name is a declaration error
            return OutputSpec(annotation, "grammar", grammar=grammars_[0])
        return OutputSpec(annotation, "regex", regex=regexes[0].pattern)
    _reject_nested_grammars(annotation, "return", set())
    schema = _closed_objects(_schema_of(annotation))
    _translate(schema, whitespace, strict)
    return OutputSpec(annotation, "json", schema=schema, whitespace=whitespace, strict=strict)


def fields_for_prompt(schema: dict[str, Any]) -> str:
    """A one-line description of the output in words: "Answer with a JSON object with the fields
    name (string), age (integer)." Small models fill in better values from this than from the
    schema itself, which they tend to copy (benchmarks/typed_extraction.py)."""
    defs = schema.get("$defs", {})

    def kind(node: Any, depth: int = 0) -> str:
        if not isinstance(node, dict) or depth > 3:
            return "value"
        if "$ref" in node:
            name = str(node["$ref"]).rsplit("/", 1)[-1]
            return kind(defs.get(name, {}), depth + 1) if name in defs else name
        if "enum" in node:
            return "one of " + "/".join(json.dumps(v) for v in node["enum"])
        if "const" in node:
            return json.dumps(node["const"])
        for key in ("anyOf", "oneOf"):
            if key in node:
                return " or ".join(kind(n, depth + 1) for n in node[key])
        if node.get("type") == "array":
            return f"list of {kind(node.get('items', {}), depth + 1)}"
        if node.get("type") == "object" and "properties" in node:
            return "object with " + ", ".join(f"{k} ({kind(v, depth + 1)})" for k, v in node["properties"].items())
        return str(node.get("type", "value"))

    if schema.get("type") == "object" and "properties" in schema:
        fields = ", ".join(f"{k} ({kind(v)})" for k, v in schema["properties"].items())
        return f"Answer with a JSON object with the fields {fields}."
    return f"Answer with a JSON {kind(schema)}."


def schema_for_prompt(schema: dict[str, Any]) -> str:
    """The schema as compact JSON without the titles Pydantic adds (noise to a small model)."""

    def clean(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: clean(v) for k, v in node.items() if k != "title" or not isinstance(v, str)}
        if isinstance(node, list):
            return [clean(v) for v in node]
        return node

    return json.dumps(clean(schema), separators=(",", ":"))


def _adapter(annotation: Any) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(annotation)


def _schema_of(annotation: Any) -> dict[str, Any]:
    try:
        return _adapter(annotation).json_schema()
    except TypedOutputError:
        raise
    except Exception as exc:  # pydantic raises several kinds for types it cannot describe
        where = _locate_failure(annotation, "return", set())
        raise TypedOutputError(f"{_type_name(annotation)} cannot become a JSON Schema: {_first_line(exc)}", where) from None


def _closed_objects(node: Any) -> Any:
    """Objects with declared properties get `additionalProperties: false` unless they say
    otherwise: Pydantic drops unknown keys, so a model that invents them wastes its tokens (and
    a small model, shown the schema, will happily write the schema itself as the object)."""
    if isinstance(node, list):
        return [_closed_objects(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _closed_objects(sub) for name, sub in value.items()}
        elif key in ("enum", "const", "default", "examples"):
            out[key] = value  # values, not schemas
        else:
            out[key] = _closed_objects(value)
    if "properties" in out and "additionalProperties" not in out and "patternProperties" not in out:
        out["additionalProperties"] = False
    return out


_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")


def _translate(schema: dict[str, Any], whitespace: str, strict: bool) -> None:
    from .grammar.json_schema.options import JsonSchemaOptions
    from .grammar.json_schema.translate import Translator

    try:
        Translator(schema, JsonSchemaOptions(whitespace, "schema", "schema", strict, integer_zero_fraction=False)).translate()
    except ConstrainError as exc:
        pointer = getattr(exc, "pointer", "")
        raise TypedOutputError(f"the return type's schema cannot be enforced: {exc}", _field_of_pointer(pointer)) from None


def _field_of_pointer(pointer: str) -> str:
    """'#/$defs/Person/properties/age/minimum' -> 'Person.age' (the field a user recognizes)."""
    parts = [p for p in pointer.lstrip("#").split("/") if p]
    names: list[str] = []
    i = 0
    while i < len(parts):
        if parts[i] in ("$defs", "definitions", "properties") and i + 1 < len(parts):
            names.append(parts[i + 1])
            i += 2
        elif parts[i] == "items":
            names.append("[]")
            i += 1
        else:
            i += 1
    return ".".join(names).replace(".[]", "[]") or "return"


def _split_annotated(tp: Any) -> tuple[Any, list[Any]]:
    if typing.get_origin(tp) is typing.Annotated:
        args = typing.get_args(tp)
        return args[0], list(args[1:])
    return tp, []


def _strip_annotated(tp: Any) -> Any:
    return _split_annotated(tp)[0]


def _children(tp: Any) -> list[tuple[str, Any]]:
    """The annotated parts of a type, each with the name a user would give its place."""
    from pydantic import BaseModel

    base = _strip_annotated(tp)
    origin = typing.get_origin(base)
    if origin is not None:
        args = [a for a in typing.get_args(base) if a is not Ellipsis]
        if origin in _SEQUENCES:
            return [("[]", a) for a in args]
        if origin in (dict, collections.abc.Mapping, collections.abc.MutableMapping):
            return [("{}", args[1])] if len(args) == 2 else []
        if origin is typing.Union or origin is getattr(__import__("types"), "UnionType", None):
            return [("", a) for a in args]
        return []  # Literal (values), Callable, and other forms with no fields
    if isinstance(base, type) and (issubclass(base, BaseModel) or dataclasses.is_dataclass(base) or typing.is_typeddict(base)):
        try:
            hints = typing.get_type_hints(base, include_extras=True)
        except Exception:
            return []
        if issubclass(base, BaseModel):
            hints = {k: v for k, v in hints.items() if k in base.model_fields}
        return [(f"{base.__name__}.{name}", hint) for name, hint in hints.items()]
    return []


_SEQUENCES = (list, set, frozenset, tuple, collections.abc.Sequence, collections.abc.MutableSequence,
              collections.abc.Set, collections.abc.MutableSet, collections.abc.Iterable)


def _join(path: str, name: str) -> str:
    """A model's field is named `Model.field` (the place a user can find); containers add [] / {}."""
    if not name:
        return path
    if name in ("[]", "{}"):
        return path + name
    return name


def _reject_nested_grammars(tp: Any, path: str, seen: set[int]) -> None:
    if id(tp) in seen:
        return
    seen.add(id(tp))
    for name, child in _children(tp):
        where = _join(path, name)
        if any(isinstance(m, Grammar) for m in _split_annotated(child)[1]):
            raise TypedOutputError(
                "Grammar(...) is supported on the return type itself, not inside a structure "
                "(a JSON field cannot hold a Lark sentence); use Regex for fields", where)
        _reject_nested_grammars(child, where, seen)


def _locate_failure(tp: Any, path: str, seen: set[int]) -> str:
    """The deepest field whose type Pydantic cannot describe."""
    if id(tp) in seen:
        return path
    seen.add(id(tp))
    for name, child in _children(tp):
        if isinstance(child, (str, int, float, bool)) or child is None:
            continue  # Literal values
        try:
            _adapter(child).json_schema()
        except Exception:
            return _locate_failure(child, _join(path, name), seen)
    return path


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or repr(tp)


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
