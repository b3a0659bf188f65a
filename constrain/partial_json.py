"""The value a prefix of a JSON document already settles, for streaming typed objects.

A member or item appears once its value is complete (a string's closing quote, a number's
delimiter, a literal's last letter); an open object or array appears with what it holds so far,
so a list grows item by item. Text that is not a JSON prefix raises ValueError (under a grammar
it never happens; the check keeps a bug from streaming garbage).
"""

from __future__ import annotations

import json
from typing import Any

_MISSING = object()
_WS = " \t\n\r"
_NUMBER = set("+-0123456789.eE")
_LITERALS = {"true": True, "false": False, "null": None}


def parse_partial(text: str) -> Any:
    """The settled part of `text` (a prefix of one JSON value); None where nothing is settled yet."""
    value, _ = _Parser(text).value(0)
    return None if value is _MISSING else value


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.n = len(text)

    def skip(self, i: int) -> int:
        while i < self.n and self.text[i] in _WS:
            i += 1
        return i

    def value(self, i: int) -> tuple[Any, int]:
        """(value or _MISSING, end); end == n means the text ran out inside or right after it."""
        i = self.skip(i)
        if i >= self.n:
            return _MISSING, self.n
        c = self.text[i]
        if c == "{":
            return self.obj(i + 1)
        if c == "[":
            return self.arr(i + 1)
        if c == '"':
            return self.string(i)
        if c in _NUMBER:
            return self.number(i)
        for word, val in _LITERALS.items():
            if self.text.startswith(word, i):
                return val, i + len(word)
            if word.startswith(self.text[i:]):
                return _MISSING, self.n
        raise ValueError(f"not a JSON prefix at offset {i}: {self.text[i:i + 20]!r}")

    def string(self, i: int) -> tuple[Any, int]:
        j = i + 1
        while j < self.n:
            c = self.text[j]
            if c == "\\":
                j += 2
                continue
            if c == '"':
                return json.loads(self.text[i : j + 1]), j + 1
            j += 1
        return _MISSING, self.n

    def number(self, i: int) -> tuple[Any, int]:
        j = i
        while j < self.n and self.text[j] in _NUMBER:
            j += 1
        if j == self.n:
            return _MISSING, self.n  # more digits may follow
        return json.loads(self.text[i:j]), j

    def obj(self, i: int) -> tuple[Any, int]:
        out: dict[str, Any] = {}
        i = self.skip(i)
        if i < self.n and self.text[i] == "}":
            return out, i + 1
        while True:
            i = self.skip(i)
            if i >= self.n:
                return out, self.n
            if self.text[i] != '"':
                raise ValueError(f"not a JSON prefix at offset {i}: expected a key")
            key, i = self.string(i)
            i = self.skip(i)
            if key is _MISSING or i >= self.n:
                return out, self.n
            if self.text[i] != ":":
                raise ValueError(f"not a JSON prefix at offset {i}: expected ':'")
            val, i = self.value(i + 1)
            if val is not _MISSING:
                out[key] = val
            i = self.skip(i)
            if i >= self.n:
                return out, self.n
            if self.text[i] == "}":
                return out, i + 1
            if self.text[i] != ",":
                raise ValueError(f"not a JSON prefix at offset {i}: expected ',' or '}}'")
            i += 1

    def arr(self, i: int) -> tuple[Any, int]:
        out: list[Any] = []
        i = self.skip(i)
        if i < self.n and self.text[i] == "]":
            return out, i + 1
        while True:
            val, i = self.value(i)
            if val is not _MISSING:
                out.append(val)
            i = self.skip(i)
            if i >= self.n:
                return out, self.n
            if self.text[i] == "]":
                return out, i + 1
            if self.text[i] != ",":
                raise ValueError(f"not a JSON prefix at offset {i}: expected ',' or ']'")
            i += 1
