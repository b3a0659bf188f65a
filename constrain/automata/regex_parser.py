"""Regex text → IR, with exact error positions.

The dialect is the common ground of Python's `re` and ECMA-262 that a finite automaton can
enforce, matched against the *whole* output (as `re.fullmatch`). Shorthand classes are ASCII
(`\\d` = [0-9], `\\w` = [A-Za-z0-9_], `\\s` = [ \\t\\n\\r\\f\\v]) as in `re.ASCII` and JSON Schema;
`\\p{..}` takes Unicode general categories. Backreferences, lookaround, word boundaries and
possessive/atomic groups change what a DFA can express and raise UnsupportedRegexError with the
position; `^`/`$` are accepted only at the edges of the pattern.
"""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass
from typing import Optional

from ..errors import RegexSyntaxError, UnsupportedRegexError
from . import ir
from .charset import MAX_CODE_POINT, Ranges, case_fold, complement, normalize, union

MAX_REPEAT_BOUND = 100_000

_DIGIT: Ranges = ((0x30, 0x39),)
_WORD: Ranges = normalize([(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)])
_SPACE: Ranges = normalize([(0x09, 0x0D), (0x20, 0x20)])
_SIMPLE_ESCAPES = {"n": 0x0A, "t": 0x09, "r": 0x0D, "f": 0x0C, "v": 0x0B, "a": 0x07, "0": 0x00}
_CLASS_ESCAPES = {
    "d": _DIGIT,
    "D": complement(_DIGIT),
    "w": _WORD,
    "W": complement(_WORD),
    "s": _SPACE,
    "S": complement(_SPACE),
}


@functools.lru_cache(maxsize=64)
def unicode_category(name: str) -> Ranges:
    """Code point ranges of a general category ('L', 'Lu', 'Nd', ...); computed once per name."""
    ranges: list[tuple[int, int]] = []
    start = -1
    for cp in range(MAX_CODE_POINT + 1):
        hit = unicodedata.category(chr(cp)).startswith(name)
        if hit and start < 0:
            start = cp
        elif not hit and start >= 0:
            ranges.append((start, cp - 1))
            start = -1
    if start >= 0:
        ranges.append((start, MAX_CODE_POINT))
    return normalize(ranges)


_CATEGORY_NAMES = {
    "Letter": "L", "Uppercase_Letter": "Lu", "Lowercase_Letter": "Ll", "Number": "N",
    "Decimal_Number": "Nd", "Punctuation": "P", "Symbol": "S", "Separator": "Z",
    "Mark": "M", "Other": "C",
}
_KNOWN_CATEGORIES = {
    "L", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "Mn", "Mc", "Me", "N", "Nd", "Nl", "No",
    "P", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "S", "Sm", "Sc", "Sk", "So",
    "Z", "Zs", "Zl", "Zp", "C", "Cc", "Cf", "Co", "Cn",
}


@dataclass(frozen=True)
class _Anchor:
    kind: str  # "^" or "$"
    pos: int


@dataclass
class _Flags:
    ignore_case: bool = False
    dot_all: bool = False


class _Parser:
    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0
        self.flags = _Flags()

    # -- helpers -------------------------------------------------------------------------
    def error(self, msg: str, pos: Optional[int] = None) -> RegexSyntaxError:
        return RegexSyntaxError(msg, self.p, self.i if pos is None else pos)

    def unsupported(self, msg: str, pos: int) -> UnsupportedRegexError:
        return UnsupportedRegexError(msg, self.p, pos)

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.p[j] if j < len(self.p) else ""

    def eat(self, s: str) -> bool:
        if self.p.startswith(s, self.i):
            self.i += len(s)
            return True
        return False

    def chars(self, ranges: Ranges) -> ir.Chars:
        if self.flags.ignore_case:
            ranges = case_fold(ranges)
        return ir.Chars(normalize(ranges))

    # -- grammar -------------------------------------------------------------------------
    def parse(self) -> object:
        self._leading_flags()
        node = self.alternation()
        if self.i < len(self.p):
            if self.peek() == ")":
                raise self.error("unbalanced parenthesis ')'")
            raise self.error(f"unexpected {self.peek()!r}")
        return node

    def _leading_flags(self) -> None:
        # (?i) / (?s) at the very start apply to the whole pattern.
        while self.p.startswith("(?", self.i):
            j = self.i + 2
            k = j
            while k < len(self.p) and self.p[k] in "aiLmsux":
                k += 1
            if k == j or k >= len(self.p) or self.p[k] != ")":
                return
            self._apply_flags(self.p[j:k], j)
            self.i = k + 1

    def _apply_flags(self, letters: str, pos: int) -> None:
        for off, c in enumerate(letters):
            if c == "i":
                self.flags.ignore_case = True
            elif c == "s":
                self.flags.dot_all = True
            elif c == "x":
                raise self.unsupported("verbose flag (?x) is not supported", pos + off)
            # a, u, L, m: no effect on a full-match byte DFA with ASCII shorthands.

    def alternation(self) -> object:
        branches = [self.sequence()]
        while self.eat("|"):
            branches.append(self.sequence())
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def sequence(self) -> object:
        items: list[object] = []
        while self.i < len(self.p) and self.peek() not in "|)":
            items.append(self.quantified())
        return ("seq", items)

    def quantified(self) -> object:
        start = self.i
        atom = self.atom()
        while True:
            q_pos = self.i
            c = self.peek()
            if c == "*":
                self.i += 1
                lo, hi = 0, None
            elif c == "+":
                self.i += 1
                lo, hi = 1, None
            elif c == "?":
                self.i += 1
                lo, hi = 0, 1
            elif c == "{":
                bounds = self._brace_bounds()
                if bounds is None:
                    return atom
                lo, hi = bounds
            else:
                return atom
            if isinstance(atom, _Anchor):
                raise self.error("nothing to repeat", q_pos)
            if self.eat("+"):
                raise self.unsupported("possessive quantifier", self.i - 1)
            self.eat("?")  # lazy: same language
            atom = ("rep", atom, lo, hi, start)
            if self.peek() in ("*", "+", "?") or (self.peek() == "{" and self._looks_like_quantifier()):
                raise self.error("multiple repeat", self.i)

    def _brace_bounds(self) -> Optional[tuple[int, Optional[int]]]:
        j = self.p.find("}", self.i)
        if j < 0:
            return None
        body = self.p[self.i + 1 : j]
        lo_s, comma, hi_s = body.partition(",")
        if not (lo_s.isdigit() or (lo_s == "" and comma)) or not (hi_s == "" or hi_s.isdigit()):
            return None  # Python treats a non-quantifier brace as a literal
        if lo_s == "" and hi_s == "" and comma:
            return None
        lo = int(lo_s) if lo_s else 0
        hi = (int(hi_s) if hi_s else None) if comma else lo
        if lo > MAX_REPEAT_BOUND or (hi is not None and hi > MAX_REPEAT_BOUND):
            raise self.error(f"repeat bound over {MAX_REPEAT_BOUND}", self.i)
        if hi is not None and hi < lo:
            raise self.error("min repeat greater than max repeat", self.i)
        self.i = j + 1
        return lo, hi

    def atom(self) -> object:
        pos = self.i
        c = self.peek()
        if c == "(":
            return self.group()
        if c == "[":
            return self.char_class()
        if c == ".":
            self.i += 1
            return ir.Chars(complement(()) if self.flags.dot_all else complement(((0x0A, 0x0A),)))
        if c == "^":
            self.i += 1
            return _Anchor("^", pos)
        if c == "$":
            self.i += 1
            return _Anchor("$", pos)
        if c == "\\":
            return self.escape(in_class=False)
        if c in "*+?":
            raise self.error("nothing to repeat")
        if c == "{" and self._looks_like_quantifier():
            raise self.error("nothing to repeat")
        self.i += 1
        cp = ord(c)
        if not self.flags.ignore_case:
            return ir.Chars(((cp, cp),))  # already normalized: skip the general path
        return self.chars(((cp, cp),))

    def _looks_like_quantifier(self) -> bool:
        save = self.i
        try:
            return self._brace_bounds() is not None
        finally:
            self.i = save

    def group(self) -> object:
        open_pos = self.i
        self.i += 1
        saved = _Flags(self.flags.ignore_case, self.flags.dot_all)
        if self.eat("?"):
            c = self.peek()
            if c == ":":
                self.i += 1
            elif c == "P" and self.peek(1) == "<":
                self._group_name(self.i + 2)
            elif c == "<" and self.peek(1) not in "=!":
                self._group_name(self.i + 1)
            elif c in "=!" or (c == "<" and self.peek(1) in "=!"):
                raise self.unsupported("lookaround assertions are not supported", open_pos)
            elif c == ">":
                raise self.unsupported("atomic groups are not supported", open_pos)
            elif c == "P" and self.peek(1) == "=":
                raise self.unsupported("backreferences are not supported", open_pos)
            elif c == "#":
                end = self.p.find(")", self.i)
                if end < 0:
                    raise self.error("missing ), unterminated comment", open_pos)
                self.i = end + 1
                return ("seq", [])
            elif c == "(":
                raise self.unsupported("conditional groups are not supported", open_pos)
            else:
                j = self.i
                while self.peek() and self.peek() in "aiLmsux-":
                    self.i += 1
                letters = self.p[j : self.i]
                if not letters or self.peek() not in ":)":
                    raise self.error("unknown extension ?" + (self.peek() or ""), open_pos + 1)
                if self.peek() == ")":
                    raise self.error("global flags not at the start of the expression", open_pos)
                on, _, off = letters.partition("-")
                self._apply_flags(on, j)
                if "i" in off:
                    self.flags.ignore_case = False
                if "s" in off:
                    self.flags.dot_all = False
                self.i += 1
        node = self.alternation()
        if not self.eat(")"):
            raise self.error("missing ), unterminated subpattern", open_pos)
        self.flags = saved
        return node

    def _group_name(self, start: int) -> None:
        end = self.p.find(">", start)
        if end < 0 or not self.p[start:end].isidentifier():
            raise self.error("bad group name", start)
        self.i = end + 1

    def char_class(self) -> object:
        open_pos = self.i
        self.i += 1
        negate = self.eat("^")
        parts: list[Ranges] = []
        first = True
        while True:
            c = self.peek()
            if c == "":
                raise self.error("unterminated character set", open_pos)
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            lo_pos = self.i
            lo = self._class_atom()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.i += 1
                hi_pos = self.i
                hi = self._class_atom()
                if not isinstance(lo, int) or not isinstance(hi, int):
                    raise self.error("bad character range", lo_pos)
                if hi < lo:
                    raise self.error(f"bad character range {chr(lo)}-{chr(hi)}", hi_pos)
                parts.append(((lo, hi),))
            elif isinstance(lo, int):
                parts.append(((lo, lo),))
            else:
                parts.append(lo)
        ranges = union(*parts) if parts else ()
        if self.flags.ignore_case:
            ranges = case_fold(ranges)
        if negate:
            ranges = complement(ranges)
        return ir.Chars(normalize(ranges))

    def _class_atom(self) -> "int | Ranges":
        c = self.peek()
        if c == "\\":
            node = self.escape(in_class=True)
            if isinstance(node, ir.Chars) and len(node.ranges) == 1 and node.ranges[0][0] == node.ranges[0][1]:
                return node.ranges[0][0]
            assert isinstance(node, ir.Chars)
            return node.ranges
        if c == "[" and self.peek(1) == ":":
            raise self.unsupported("POSIX classes like [:alpha:] are not supported", self.i)
        self.i += 1
        return ord(c)

    def escape(self, in_class: bool) -> object:
        pos = self.i
        self.i += 1
        c = self.peek()
        if c == "":
            raise self.error("bad escape (end of pattern)", pos)
        self.i += 1
        if c in _CLASS_ESCAPES:
            return ir.Chars(_CLASS_ESCAPES[c])
        if c == "b" and in_class:
            return self._char(0x08, in_class)
        if c in "bB":
            raise self.unsupported(f"word boundary \\{c} is not supported", pos)
        if c in "AZz" and not in_class:
            return _Anchor("^" if c == "A" else "$", pos)
        if c in _SIMPLE_ESCAPES and not (c == "0" and self.peek().isdigit()):
            return self._char(_SIMPLE_ESCAPES[c], in_class)
        if c == "x":
            return self._char(self._hex(2, pos), in_class)
        if c == "u":
            if self.peek() == "{":
                end = self.p.find("}", self.i)
                if end < 0:
                    raise self.error("bad escape \\u{", pos)
                digits = self.p[self.i + 1 : end]
                self.i = end + 1
                return self._char(self._hex_value(digits, pos), in_class)
            cp = self._hex(4, pos)
            if 0xD800 <= cp <= 0xDBFF and self.p.startswith("\\u", self.i):
                save = self.i
                self.i += 2
                low = self._hex(4, pos)
                if 0xDC00 <= low <= 0xDFFF:
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
                else:
                    self.i = save
            return self._char(cp, in_class)
        if c == "U":
            return self._char(self._hex(8, pos), in_class)
        if c == "N" and self.peek() == "{":
            end = self.p.find("}", self.i)
            name = self.p[self.i + 1 : end] if end > 0 else ""
            try:
                cp = ord(unicodedata.lookup(name))
            except KeyError:
                raise self.error(f"undefined character name {name!r}", pos) from None
            self.i = end + 1
            return self._char(cp, in_class)
        if c in "pP":
            return ir.Chars(self._property(c == "P", pos))
        if c == "c" and self.peek().isalpha():
            cp = ord(self.peek().upper()) - 64
            self.i += 1
            return self._char(cp, in_class)
        if c.isdigit():
            if c == "0" or (in_class and c in "01234567"):
                j = self.i
                while self.i < len(self.p) and self.i - j < 2 and self.peek() in "01234567":
                    self.i += 1
                return self._char(int(self.p[j - 1 : self.i], 8), in_class)
            raise self.unsupported("backreferences are not supported", pos)
        if c == "k" and self.peek() == "<":
            raise self.unsupported("backreferences are not supported", pos)
        if c.isascii() and c.isalnum():
            raise self.error(f"bad escape \\{c}", pos)
        return self._char(ord(c), in_class)

    def _char(self, cp: int, in_class: bool) -> ir.Chars:
        if cp > MAX_CODE_POINT:
            raise self.error("code point out of range", self.i - 1)
        return ir.Chars(((cp, cp),)) if in_class else self.chars(((cp, cp),))

    def _hex(self, n: int, pos: int) -> int:
        digits = self.p[self.i : self.i + n]
        self.i += n
        return self._hex_value(digits, pos, n)

    def _hex_value(self, digits: str, pos: int, n: Optional[int] = None) -> int:
        if not digits or (n is not None and len(digits) != n) or any(d not in "0123456789abcdefABCDEF" for d in digits):
            raise self.error("bad hexadecimal escape", pos)
        return int(digits, 16)

    def _property(self, negate: bool, pos: int) -> Ranges:
        if self.peek() != "{":
            raise self.error("\\p needs a {Category}", pos)
        end = self.p.find("}", self.i)
        if end < 0:
            raise self.error("unterminated \\p{...}", pos)
        name = self.p[self.i + 1 : end].removeprefix("General_Category=").removeprefix("gc=")
        self.i = end + 1
        name = _CATEGORY_NAMES.get(name, name)
        if name not in _KNOWN_CATEGORIES:
            raise self.unsupported(f"unknown or unsupported Unicode property {name!r}", pos)
        ranges = unicode_category(name)
        return complement(ranges) if negate else ranges


def _lower(node: object, at_start: bool, at_end: bool) -> ir.Node:
    """Parse tree → IR; anchors are checked to sit at the pattern's edges and dropped."""
    if isinstance(node, ir.Chars):
        return node
    if isinstance(node, _Anchor):
        ok = at_start if node.kind == "^" else at_end
        if not ok:
            raise UnsupportedRegexError(
                f"anchor {node.kind!r} is only supported at the start/end of the pattern", "", node.pos
            )
        return ir.EMPTY
    kind = node[0]  # type: ignore[index]
    if kind == "alt":
        return ir.alt(*(_lower(b, at_start, at_end) for b in node[1]))  # type: ignore[index]
    if kind == "seq":
        items = node[1]  # type: ignore[index]
        out = []
        for k, it in enumerate(items):
            before_empty = all(isinstance(x, _Anchor) for x in items[:k])
            after_empty = all(isinstance(x, _Anchor) for x in items[k + 1 :])
            out.append(_lower(it, at_start and before_empty, at_end and after_empty))
        return ir.concat(*out) if out else ir.EMPTY
    if kind == "rep":
        _, inner, lo, hi, _pos = node  # type: ignore[misc]
        return ir.repeat(_lower(inner, False, False), lo, hi)
    raise AssertionError(f"unknown parse node {kind}")


def parse_regex(pattern: str) -> ir.Node:
    """Parse `pattern` into the IR; raises RegexSyntaxError / UnsupportedRegexError with a position."""
    if not isinstance(pattern, str):
        raise TypeError(f"regex pattern must be str, not {type(pattern).__name__}")
    tree = _Parser(pattern).parse()
    try:
        return _lower(tree, True, True)
    except UnsupportedRegexError as exc:
        raise UnsupportedRegexError(str(exc).split(" at position")[0], pattern, exc.position) from None
