"""The llguidance/vLLM extensions of Lark syntax, found before Lark's own loader sees the text.

- `%llguidance {...}` (options, a JSON object): read and returned; an empty object changes
  nothing, an option we cannot honour raises UnsupportedGrammarError naming it.
- Special tokens by name (`<|eot_id|>`) or id (`<[128009]>`) and `%json {...}` (a JSON Schema
  inside a rule) raise UnsupportedGrammarError naming the construct and its line: Lark's loader
  would only report a syntax error there.
Strings, regexes and `//` comments are skipped, so their text is never mistaken for these.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ...errors import GrammarError, UnsupportedGrammarError

_SPECIAL = re.compile(r"<\|[^|>]*\|>|<\[\d+\]>")


def read_dialect(text: str) -> tuple[str, dict[str, Any]]:
    """(the text with `%llguidance {...}` removed, its options)."""
    out: list[str] = []
    options: dict[str, Any] = {}
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = _string_end(text, i)
            out.append(text[i:j])
            i = j
        elif text.startswith("//", i):
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
        elif text.startswith("%json", i):
            raise UnsupportedGrammarError(
                "%json (a JSON Schema inside a rule)", f"line {_line(text, i)}", "not read yet: compile the schema on its own"
            )
        elif c == "<" and _SPECIAL.match(text, i):
            token = _SPECIAL.match(text, i).group(0)  # type: ignore[union-attr]
            raise UnsupportedGrammarError(
                f"special token {token}", f"line {_line(text, i)}", "special tokens in rules are not supported yet"
            )
        else:
            out.append(c)
            i += 1
    for key in options:
        raise UnsupportedGrammarError(f"%llguidance option {key!r}", "the %llguidance header", "not supported")
    return "".join(out), options


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
