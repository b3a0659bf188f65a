"""Grammar sources named on the command line: a JSON Schema file (or stdin), a shipped Lark
grammar by name, a .lark file, or a regex. Each is read and checked for what can be checked
without a vocabulary (the file exists, the JSON parses) before any model is loaded, and compiles
with its origin in every error message."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from typing import Any, Optional

from .. import grammars
from ..compiled import CompiledGrammar
from ..errors import CommandLineError, ConstrainError
from ..grammar.json_schema.sources import schema_to_dict
from .output import fail, flag_names, one_line, read_text


@dataclass(frozen=True)
class GrammarSource:
    kind: str  # "json_schema", "lark" or "regex"
    label: str  # where it came from, first in error messages: a path, "grammar 'sql'", "--regex"
    text: str
    start: str = "start"
    import_paths: tuple[str, ...] = ()
    strict: bool = True

    @property
    def description(self) -> str:
        if self.kind == "regex":
            return f"regex {self.text!r}" if len(self.text) <= 60 else f"regex {self.text[:57]!r}..."
        kind = {"json_schema": "JSON Schema", "lark": "Lark grammar"}[self.kind]
        extra = f", start {self.start}" if self.kind == "lark" and self.start != "start" else ""
        extra += "" if self.kind != "json_schema" else (", strict" if self.strict else ", not strict")
        return f"{self.label} ({kind}{extra})"

    def compile(self, compiler: Any) -> CompiledGrammar:
        """Compile with `compiler`; a constrain error becomes one line naming this source."""
        try:
            if self.kind == "json_schema":
                return compiler.compile_json_schema(self.text, strict=self.strict)
            if self.kind == "lark":
                return compiler.compile_lark(self.text, self.start, import_paths=self.import_paths)
            return compiler.compile_regex(self.text)
        except ConstrainError as exc:
            message = flag_names(one_line(str(exc))).replace("Lark grammar <grammar>: ", "")
            raise CommandLineError(f"{self.label}: {message}") from exc


def schema_source(path: str, strict: bool = True) -> GrammarSource:
    """A JSON Schema file ("-": stdin); invalid JSON fails here with its line and column."""
    text = read_text(path, "schema")
    label = "<stdin>" if path == "-" else path
    try:
        schema_to_dict(text)
    except ConstrainError as exc:
        raise CommandLineError(f"{label}: {one_line(str(exc))}") from exc
    return GrammarSource("json_schema", label, text, strict=strict)


def grammar_source(name: str, start: Optional[str] = None) -> GrammarSource:
    """A .lark file, or a grammar that ships with constrain by name (`sql`, `json`, ...)."""
    if os.path.isfile(name) or name.endswith(".lark") or os.sep in name:
        return lark_file_source(name, start)
    if name in grammars.NAMES:
        return GrammarSource("lark", f"grammar {name!r}", grammars.load(name), start or "start")
    fail(f"unknown grammar {name!r}: no such file, and the shipped grammars are {', '.join(grammars.NAMES)}")


def lark_file_source(path: str, start: Optional[str] = None) -> GrammarSource:
    """A Lark grammar file; its folder is searched by `%import`."""
    if path.lower().endswith(".json"):
        fail(f"{path} looks like a JSON Schema: pass it with --schema, not as a Lark grammar", 2)
    text = read_text(path, "grammar")
    folder = os.path.dirname(os.path.abspath(path))
    return GrammarSource("lark", path, text, start or "start", (folder,))


def regex_source(pattern: str) -> GrammarSource:
    if not pattern:
        fail("--regex: the pattern is empty (it would match only the empty string)", 2)
    return GrammarSource("regex", f"--regex {shlex.quote(pattern)}" if len(pattern) <= 40 else "--regex", pattern)


def file_source(path: str, start: Optional[str] = None, strict: bool = True) -> GrammarSource:
    """A grammar file by its suffix: .json (JSON Schema) or .lark (Lark grammar)."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix == ".json" or path == "-":
        return schema_source(path, strict)
    if suffix == ".lark":
        return lark_file_source(path, start)
    if not os.path.exists(path) and path in grammars.NAMES:
        return grammar_source(path, start)
    if not os.path.exists(path):
        fail(f"grammar file not found: {path}")
    fail(f"{path}: unknown grammar file type {suffix or '(none)'!r}; expected .json (JSON Schema) or .lark "
         "(Lark grammar); for a regex use --regex", 2)
