"""The llguidance/vLLM extensions of Lark syntax, found before Lark's own loader sees the text.

- `%llguidance {...}` (options, a JSON object): read and returned; an empty object and
  `no_forcing` change nothing (our masks allow every tokenization of forced text), an option we
  cannot honour raises UnsupportedGrammarError naming it.
- Special tokens by name (`<|eot_id|>`) or id (`<[128009]>`; llguidance's lists and ranges,
  `<[128000-128255]>`, and `<[^...]>`, `<[*]>`, which name normal tokens and are refused) become
  declared terminals that translate.py spells for the vocabulary (vocab/special_bytes.py).
- `%json {...}` (a JSON Schema inside a rule) becomes a declared terminal that translate.py
  replaces by the schema's rules (json_embed.py).
Strings, regexes and comments are skipped, so their text is never mistaken for these.
llguidance's `%regex {...}` and `@grammar` references raise UnsupportedGrammarError by name.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from ...errors import GrammarError, UnsupportedGrammarError

# by name; by ids: one, lists and ranges, `^` (all but) and `*` (all)
_SPECIAL = re.compile(r"<\|[^|>]*\|>|<\[(?:\*|\^?\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*)\]>")


_OPTION_REFUSALS = {
    "allow_invalid_utf8": "constrain's grammars read UTF-8 text (its regexes are Unicode)",
    "skip_repetition": "an %ignore pattern may repeat between terminals, as in Lark",
}
SPECIAL_PREFIX = "CONSTRAIN_SPECIAL_"
JSON_PREFIX = "CONSTRAIN_JSON_"


@dataclass
class Dialect:
    """The plain Lark text, the %llguidance options, and the declared terminals that stand for
    special tokens (-> the token as written) and for %json schemas (-> the schema)."""

    text: str
    options: dict[str, Any] = field(default_factory=dict)
    specials: dict[str, str] = field(default_factory=dict)
    schemas: dict[str, Any] = field(default_factory=dict)


def read_dialect(text: str) -> Dialect:
    """The text with `%llguidance {...}` removed and each special token and `%json {...}`
    replaced by a declared terminal."""
    if not any(mark in text for mark in ("%llguidance", "%json", "<|", "<[", "%regex", "@")):
        return Dialect(text)  # (nothing to find: the scan below, ~1 ms for SQL, would copy it)
    out: list[str] = []
    options: dict[str, Any] = {}
    specials: dict[str, str] = {}
    schemas: dict[str, Any] = {}
    names: dict[str, str] = {}
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = _string_end(text, i)
            out.append(text[i:j])
            i = j
        elif text.startswith("//", i) or c == "#":  # (both are comments in Lark)
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(text[i:j])
            i = j
        elif c == "/":
            j = _regex_end(text, i)
            out.append(text[i:j])
            i = j
        elif text.startswith("%llguidance", i):
            value, j = _json_after(text, i + len("%llguidance"), "%llguidance")
            if not isinstance(value, dict):
                raise GrammarError(f"%llguidance at line {_line(text, i)}: its options must be a JSON object")
            options.update(value)
            i = j
        elif text.startswith("%regex", i):
            raise UnsupportedGrammarError("llguidance's %regex", f"line {_line(text, i)}",
                                          "its structured regexes (substrings of a text) are not read; write a regex")
        elif c == "@" and i + 1 < n and (text[i + 1].isalnum() or text[i + 1] == "_"):
            raise UnsupportedGrammarError("llguidance's @name (a reference to another grammar)",
                                          f"line {_line(text, i)}",
                                          "a request holds one grammar here; write the other's rules in this one")
        elif text.startswith("%json", i):
            schema, j = _json_after(text, i + len("%json"), "%json")
            name = f"{JSON_PREFIX}{len(schemas)}"
            schemas[name] = schema
            out.append(f" {name} ")
            i = j
        elif c == "<" and _SPECIAL.match(text, i):
            token = _SPECIAL.match(text, i).group(0)  # type: ignore[union-attr]
            name = names.get(token)
            if name is None:
                name = names[token] = f"{SPECIAL_PREFIX}{len(names)}"
                specials[name] = token
            out.append(f" {name} ")
            i += len(token)
        else:
            out.append(c)
            i += 1
    for key, value in options.items():
        if key == "no_forcing" and isinstance(value, bool):
            continue  # (our masks allow every tokenization of forced text already: nothing to change)
        why = _OPTION_REFUSALS.get(key, "not supported")
        raise UnsupportedGrammarError(f"%llguidance option {key!r}", "the %llguidance header", why)
    declared = "".join(f"\n%declare {name}" for name in [*specials, *schemas])
    return Dialect("".join(out) + declared, options, specials, schemas)


def _string_end(text: str, i: int) -> int:
    j = i + 1
    while j < len(text) and text[j] != '"':
        j += 2 if text[j] == "\\" else 1
    return min(j + 1, len(text))


def _regex_end(text: str, i: int) -> int:
    j = i + 1
    while j < len(text) and text[j] != "/" and text[j] != "\n":
        j += 2 if text[j] == "\\" else 1
    return min(j + 1, len(text))


def _json_after(text: str, i: int, what: str) -> tuple[Any, int]:
    """The JSON value after position i (whitespace first) and where it ends."""
    start = len(text) - len(text[i:].lstrip())
    try:
        value, end = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise GrammarError(f"{what} at line {_line(text, i)}: not followed by JSON ({exc.msg})") from None
    return value, end


def _line(text: str, i: int) -> int:
    return text.count("\n", 0, i) + 1


_IMPORT = re.compile(r"^[ \t]*%import[ \t]+([\w.]+)", re.M)
LARK_BUILTIN_GRAMMARS = frozenset({"common", "unicode", "python", "lark"})


def imports_anything(text: str) -> bool:
    """Has the grammar an `%import` (of a file or of one of Lark's own grammars)?"""
    return _IMPORT.search(text) is not None


def imports_files(text: str, import_paths: Sequence[str] = ()) -> bool:
    """Can the grammar's `%import`s read files: a relative import, a module other than Lark's
    built-in grammars, or a built-in's name that a file in `import_paths` (searched first)
    holds? A cache keyed by the text alone would miss an edit of those files."""
    for m in _IMPORT.finditer(text):
        parts = m.group(1).split(".")
        if not parts[0] or parts[0] not in LARK_BUILTIN_GRAMMARS:
            return True
        for module in (parts, parts[:-1]):  # (`%import a.b (X, Y)` and `%import a.b.X`)
            if module and any(os.path.isfile(os.path.join(p, *module) + ".lark") for p in import_paths):
                return True
    return False
