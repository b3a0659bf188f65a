"""GBNF (the EBNF dialect of llama.cpp and XGrammar) read into constrain's Lark dialect.

Why: SGLang's `ebnf` requests and llama.cpp users write `root ::= ...` grammars; constrain
compiles Lark. The translation keeps the language character for character: every GBNF string
becomes a Lark literal and every character class (and `.`) a one-character regex terminal, so
no Lark terminal can end anywhere but where the GBNF element ends (docs/lark.md: a terminal
of fixed length leaves nothing to the lexer), and there is no implicit whitespace in either.

Supported: rules `name ::= ...` (`root` is the start; a rule may span lines, it ends where the
next `name ::=` begins), alternatives `|`, grouping `( )`, strings `"..."` with the escapes
`\\n \\r \\t \\\\ \\" \\' \\[ \\] \\xHH \\uHHHH \\UHHHHHHHH`, classes `[a-z]` and `[^...]`, `.` (any
character), `*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}`, `{,n}`, and `#` comments. XGrammar's
extensions (lookahead assertions `(= ...)`, `TagDispatch`, macros) raise GrammarError naming
the construct and its line and column.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

from ..errors import GrammarError

_NAME = re.compile(r"[A-Za-z0-9_.\-]+")
_RULE_START = re.compile(r"[A-Za-z0-9_.\-]+[ \t\r\n]*::=")
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"', "'": "'", "[": "[", "]": "]",
            "-": "-", "^": "^", "/": "/", "f": "\f", "v": "\v", "0": "\0"}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


def looks_like_gbnf(text: str) -> bool:
    """True when `text` defines rules with `::=` (GBNF) rather than `:` (Lark)."""
    return _RULE_START.search(_strip_comments(text)) is not None


def gbnf_to_lark(text: str, root: str = "root") -> str:
    """The Lark text of the GBNF grammar `text`, whose start rule is `root` (Lark's `start`).
    Raises GrammarError (with line and column) for syntax errors, unknown rules and the
    XGrammar extensions constrain does not read."""
    rules = _Parser(text).parse()
    if root not in rules:
        names = ", ".join(sorted(rules)) or "none"
        raise GrammarError(f"GBNF grammar has no rule {root!r} to start from (rules: {names}); "
                           f"name the start rule {root!r}")
    names = _lark_names(list(rules), root)
    for name, (expr, pos) in rules.items():
        for ref, ref_pos in _refs(expr):
            if ref not in rules:
                raise GrammarError(f"GBNF rule {name!r} refers to undefined rule {ref!r} at "
                                   f"{_where(text, ref_pos)}; define it with `{ref} ::= ...`")
    lines = [f"{names[name]}: {_emit(expr, names)}" for name, (expr, _) in rules.items()]
    return "\n".join(lines) + "\n"


# -- syntax tree -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Lit:
    text: str


@dataclass(frozen=True)
class _Class:
    ranges: tuple[tuple[int, int], ...]
    negated: bool


@dataclass(frozen=True)
class _Ref:
    name: str
    pos: int


@dataclass(frozen=True)
class _Repeat:
    item: "_Expr"
    low: int
    high: int | None  # None: unbounded


@dataclass(frozen=True)
class _Alt:
    options: tuple[tuple["_Expr", ...], ...]  # each option a sequence


_Expr = Union[_Lit, _Class, _Ref, _Repeat, _Alt]
_ANY = _Class(((0, 0x10FFFF),), False)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, what: str, pos: int | None = None) -> GrammarError:
        return GrammarError(f"GBNF: {what} at {_where(self.text, self.pos if pos is None else pos)}")

    def parse(self) -> dict[str, tuple[_Expr, int]]:
        rules: dict[str, tuple[_Expr, int]] = {}
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

    def alternatives(self, nested: bool) -> _Expr:
        options = [self.sequence(nested)]
        while self.pos < len(self.text) and self.text[self.pos] == "|":
            self.pos += 1
            options.append(self.sequence(nested))
        if len(options) == 1 and len(options[0]) == 1:
            return options[0][0]
        return _Alt(tuple(tuple(o) for o in options))

    def sequence(self, nested: bool) -> list[_Expr]:
        items: list[_Expr] = []
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
            if not nested and _RULE_START.match(self.text, self.pos):
                return items  # the next rule begins
            items.append(self.quantified(self.primary()))

    def primary(self) -> _Expr:
        text, start = self.text, self.pos
        c = text[start]
        if c == '"':
            return _Lit(self.string())
        if c == "[":
            return self.char_class()
        if c == ".":
            self.pos += 1
            return _ANY
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
            return _Ref(m.group(0), start)
        raise self.fail(f"unexpected character {c!r}")

    def quantified(self, item: _Expr) -> _Expr:
        text = self.text
        while self.pos < len(text):
            c = text[self.pos]
            if c == "*":
                item = _Repeat(item, 0, None)
            elif c == "+":
                item = _Repeat(item, 1, None)
            elif c == "?":
                item = _Repeat(item, 0, 1)
            elif c == "{":
                item = self.braces(item)
                continue
            else:
                return item
            self.pos += 1
        return item

    def braces(self, item: _Expr) -> _Expr:
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
        return _Repeat(item, low, high)

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

    def char_class(self) -> _Class:
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
        return _Class(tuple(ranges), negated)


# -- Lark text -------------------------------------------------------------------------------------
def _lark_names(names: list[str], root: str) -> dict[str, str]:
    """GBNF names (any case, `-` and `.` allowed) → unique lowercase Lark rule names."""
    out: dict[str, str] = {}
    used = {"start"}
    for name in names:
        if name == root:
            out[name] = "start"
            continue
        base = "g_" + re.sub(r"[^a-z0-9_]", "_", name.lower())
        candidate, k = base, 2
        while candidate in used:
            candidate, k = f"{base}_{k}", k + 1
        used.add(candidate)
        out[name] = candidate
    return out


def _refs(expr: _Expr) -> list[tuple[str, int]]:
    if isinstance(expr, _Ref):
        return [(expr.name, expr.pos)]
    if isinstance(expr, _Repeat):
        return _refs(expr.item)
    if isinstance(expr, _Alt):
        return [r for option in expr.options for item in option for r in _refs(item)]
    return []


def _emit(expr: _Expr, names: dict[str, str]) -> str:
    if isinstance(expr, _Lit):
        return _literal(expr.text)
    if isinstance(expr, _Class):
        return _class(expr)
    if isinstance(expr, _Ref):
        return names[expr.name]
    if isinstance(expr, _Alt):
        return " | ".join(" ".join(_atom(i, names) for i in option) for option in expr.options)
    return _repeat(expr, names)


def _atom(expr: _Expr, names: dict[str, str]) -> str:
    """`expr` as one Lark item (parenthesized unless it already is one)."""
    text = _emit(expr, names)
    if isinstance(expr, _Alt):
        return f"({text})"
    return text


def _repeat(expr: _Repeat, names: dict[str, str]) -> str:
    item = _atom(expr.item, names)
    if isinstance(expr.item, _Repeat):
        item = f"({item})"
    low, high = expr.low, expr.high
    if high is None:
        if low == 0:
            return f"{item}*"
        if low == 1:
            return f"{item}+"
        return f"({item} ~ {low}) {item}*"
    if high == 0:
        return "()"  # {0} and {0,0}: the empty text
    if (low, high) == (0, 1):
        return f"{item}?"
    if low == 0:
        return f"({item} ~ 1..{high})?"
    if low == high:
        return f"{item} ~ {low}"
    return f"{item} ~ {low}..{high}"


def _literal(text: str) -> str:
    if not text:
        return "()"
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _class(cls: _Class) -> str:
    parts = []
    for low, high in cls.ranges:
        parts.append(_class_char(low) if low == high else f"{_class_char(low)}-{_class_char(high)}")
    if cls.negated and not parts:
        return r"/[\s\S]/"  # [^] : any character
    if cls is _ANY:
        return r"/[\s\S]/"
    return "/[" + ("^" if cls.negated else "") + "".join(parts) + "]/"


def _class_char(code: int) -> str:
    ch = chr(code)
    if ch in "\\]^-[/":
        return "\\" + ch
    if code < 0x20 or code == 0x7F:
        return f"\\x{code:02x}"
    if 0xD800 <= code <= 0xDFFF or code > 0xFFFF:
        return f"\\U{code:08x}" if code > 0xFFFF else f"\\u{code:04x}"
    if code > 0x7E:
        return f"\\u{code:04x}"
    return ch


def _strip_comments(text: str) -> str:
    """`text` without `#` comments outside strings and classes (enough to spot `::=`)."""
    return re.sub(r'"(?:\\.|[^"\\\n])*"|#[^\n]*', lambda m: m.group(0) if m.group(0).startswith('"') else "", text)


def _where(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"line {line}, column {col}"
