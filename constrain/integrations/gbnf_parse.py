"""GBNF (llama.cpp's and XGrammar's EBNF dialect) parsed into a small syntax tree: rules of
literals, character classes, rule references, repeats and alternatives, with line/column errors.
gbnf.py writes the tree as Lark text."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

from ..errors import GrammarError

_NAME = re.compile(r"[A-Za-z0-9_.\-]+")
RULE_START = re.compile(r"[A-Za-z0-9_.\-]+[ \t\r\n]*::=")
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"', "'": "'", "[": "[", "]": "]",
            "-": "-", "^": "^", "/": "/", "f": "\f", "v": "\v", "0": "\0"}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


# -- syntax tree -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Lit:
    text: str


@dataclass(frozen=True)
class CharClass:
    ranges: tuple[tuple[int, int], ...]
    negated: bool


@dataclass(frozen=True)
class Ref:
    name: str
    pos: int


@dataclass(frozen=True)
class Repeat:
    item: "Expr"
    low: int
    high: int | None  # None: unbounded


@dataclass(frozen=True)
class Alt:
    options: tuple[tuple["Expr", ...], ...]  # each option a sequence


Expr = Union[Lit, CharClass, Ref, Repeat, Alt]
ANY_CHAR = CharClass(((0, 0x10FFFF),), False)


class Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, what: str, pos: int | None = None) -> GrammarError:
        return GrammarError(f"GBNF: {what} at {where(self.text, self.pos if pos is None else pos)}")

    def parse(self) -> dict[str, tuple[Expr, int]]:
        rules: dict[str, tuple[Expr, int]] = {}
        self.space()
        while self.pos < len(self.text):
            start = self.pos
            m = _NAME.match(self.text, self.pos)
            if m is None:
                raise self.fail("expected a rule name (`name ::= ...`)")
            name = m.group(0)
            self.pos = m.end()
            self.space()
            if not self.text.startswith("::=", self.pos):
                raise self.fail(f"expected `::=` after rule name {name!r}")
            self.pos += 3
            expr = self.alternatives(nested=False)
            if name in rules:
                raise self.fail(f"rule {name!r} is defined twice", start)
            rules[name] = (expr, start)
            self.space()
        if not rules:
            raise GrammarError("GBNF grammar is empty: define at least `root ::= ...`")
        return rules

    def space(self) -> None:
        text, n = self.text, len(self.text)
        while self.pos < n:
            c = text[self.pos]
            if c in " \t\r\n":
                self.pos += 1
            elif c == "#":
                end = text.find("\n", self.pos)
                self.pos = n if end < 0 else end + 1
            else:
                return

    def alternatives(self, nested: bool) -> Expr:
        options = [self.sequence(nested)]
        while self.pos < len(self.text) and self.text[self.pos] == "|":
            self.pos += 1
            options.append(self.sequence(nested))
        if len(options) == 1 and len(options[0]) == 1:
            return options[0][0]
        return Alt(tuple(tuple(o) for o in options))

    def sequence(self, nested: bool) -> list[Expr]:
        items: list[Expr] = []
        while True:
            self.space()
            if self.pos >= len(self.text):
                if nested:
                    raise self.fail("unclosed `(`")
                return items
            c = self.text[self.pos]
            if c == "|":
                return items
            if c == ")":
                if not nested:
                    raise self.fail("unbalanced `)`")
                return items
            if not nested and RULE_START.match(self.text, self.pos):
                return items  # the next rule begins
            items.append(self.quantified(self.primary()))

    def primary(self) -> Expr:
        text, start = self.text, self.pos
        c = text[start]
        if c == '"':
            return Lit(self.string())
        if c == "[":
            return self.char_class()
        if c == ".":
            self.pos += 1
            return ANY_CHAR
        if c == "(":
            self.pos += 1
            self.space()
            if text.startswith("=", self.pos):
                raise self.fail("lookahead assertions `(= ...)` are an XGrammar extension constrain "
                                "does not read; drop the assertion (the language is the same "
                                "without it where the grammar is unambiguous)", start)
            inner = self.alternatives(nested=True)
            self.pos += 1  # the `)`
            return inner
        m = _NAME.match(text, start)
        if m is not None:
            self.pos = m.end()
            if self.pos < len(text) and text[self.pos] == "(":
                raise self.fail(f"`{m.group(0)}(...)` (an XGrammar macro such as TagDispatch) is not "
                                "supported; write the alternatives as rules", start)
            return Ref(m.group(0), start)
        raise self.fail(f"unexpected character {c!r}")

    def quantified(self, item: Expr) -> Expr:
        text = self.text
        while self.pos < len(text):
            c = text[self.pos]
            if c == "*":
                item = Repeat(item, 0, None)
            elif c == "+":
                item = Repeat(item, 1, None)
            elif c == "?":
                item = Repeat(item, 0, 1)
            elif c == "{":
                item = self.braces(item)
                continue
            else:
                return item
            self.pos += 1
        return item

    def braces(self, item: Expr) -> Expr:
        start = self.pos
        end = self.text.find("}", start)
        if end < 0:
            raise self.fail("unclosed `{` repetition")
        body = self.text[start + 1 : end].replace(" ", "")
        m = re.fullmatch(r"(\d*)(,?)(\d*)", body)
        if m is None or (not m.group(1) and not m.group(3)):
            raise self.fail(f"bad repetition {{{body}}}: use {{m}}, {{m,}}, {{m,n}} or {{,n}}", start)
        low = int(m.group(1) or 0)
        high = None if m.group(2) and not m.group(3) else int(m.group(3) or m.group(1))
        if high is not None and high < low:
            raise self.fail(f"repetition {{{body}}} has its maximum below its minimum", start)
        self.pos = end + 1
        return Repeat(item, low, high)

    def string(self) -> str:
        text, n = self.text, len(self.text)
        self.pos += 1
        out = []
        while True:
            if self.pos >= n or text[self.pos] == "\n":
                raise self.fail("unterminated string")
            c = text[self.pos]
            if c == '"':
                self.pos += 1
                return "".join(out)
            out.append(self.char())

    def char(self) -> str:
        """One (possibly escaped) character of a string or class."""
        text = self.text
        c = text[self.pos]
        if c != "\\":
            self.pos += 1
            return c
        if self.pos + 1 >= len(text):
            raise self.fail("a `\\` ends the grammar")
        e = text[self.pos + 1]
        if e in _HEX_ESCAPES:
            digits = text[self.pos + 2 : self.pos + 2 + _HEX_ESCAPES[e]]
            if len(digits) != _HEX_ESCAPES[e] or not all(d in "0123456789abcdefABCDEF" for d in digits):
                raise self.fail(f"`\\{e}` needs {_HEX_ESCAPES[e]} hex digits")
            code = int(digits, 16)
            if code > 0x10FFFF:
                raise self.fail(f"`\\{e}{digits}` is past the last Unicode code point")
            self.pos += 2 + len(digits)
            return chr(code)
        if e not in _ESCAPES:
            raise self.fail(f"unknown escape `\\{e}`")
        self.pos += 2
        return _ESCAPES[e]

    def char_class(self) -> CharClass:
        text, n, start = self.text, len(self.text), self.pos
        self.pos += 1
        negated = self.pos < n and text[self.pos] == "^"
        if negated:
            self.pos += 1
        ranges: list[tuple[int, int]] = []
        while True:
            if self.pos >= n:
                raise self.fail("unclosed character class `[`", start)
            if text[self.pos] == "]":
                self.pos += 1
                break
            low = self.char()
            high = low
            if self.pos + 1 < n and text[self.pos] == "-" and text[self.pos + 1] != "]":
                self.pos += 1
                high = self.char()
            if ord(high) < ord(low):
                raise self.fail(f"class range {low!r}-{high!r} is reversed", start)
            ranges.append((ord(low), ord(high)))
        if not ranges and not negated:
            raise self.fail("empty character class `[]` matches nothing", start)
        return CharClass(tuple(ranges), negated)


def strip_comments(text: str) -> str:
    """`text` without `#` comments outside strings and classes (enough to spot `::=`)."""
    return re.sub(r'"(?:\\.|[^"\\\n])*"|#[^\n]*', lambda m: m.group(0) if m.group(0).startswith('"') else "", text)


def where(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"line {line}, column {col}"
