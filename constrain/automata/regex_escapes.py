"""The cursor over a regex pattern, and the backslash escapes of both dialects (Python, ECMA).

Shorthand classes are ASCII, as with `re.ASCII` and in JSON Schema, unless the pattern sets the
`(?u)` flag: then `\\d \\w \\s` (and their negations) are exactly Python's own Unicode classes
(Lark terminals are read so, as Lark's `re` reads them), and `\\b` `\\B` look at Unicode `\\w`.
`\\p{..}` takes Unicode general categories.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from ..errors import RegexSyntaxError, UnsupportedRegexError
from . import ir
from .charset import MAX_CODE_POINT, Ranges, case_fold, complement, normalize
from .unicode_props import CATEGORY_ALIASES, KNOWN_CATEGORIES, unicode_category

DIGIT: Ranges = ((0x30, 0x39),)
WORD: Ranges = normalize([(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)])
SPACE: Ranges = normalize([(0x09, 0x0D), (0x20, 0x20)])
SIMPLE_ESCAPES = {"n": 0x0A, "t": 0x09, "r": 0x0D, "f": 0x0C, "v": 0x0B, "a": 0x07, "0": 0x00}
CLASS_ESCAPES = {
    "d": DIGIT,
    "D": complement(DIGIT),
    "w": WORD,
    "W": complement(WORD),
    "s": SPACE,
    "S": complement(SPACE),
}


@dataclass(frozen=True)
class Anchor:
    """A zero-width assertion on the characters around a position: "^" (start), "$" (end),
    "b" (word boundary \\b: \\w on one side only, ASCII \\w unless `unicode`, the ends count as non-word) or
    "B" (\\B: not a word boundary)."""

    kind: str
    pos: int
    unicode: bool = False  # \\b, \\B under (?u): Python's Unicode \\w on either side


@lru_cache(maxsize=None)
def unicode_class(letter: str) -> Ranges:
    """The code points Python's `re` matches with `\\<letter>` in a str pattern (Unicode): read
    off `re` itself, once per process, over every code point but the surrogates."""
    if letter.isupper():
        return complement(unicode_class(letter.lower()))
    text = _every_code_point()
    out = []
    for m in re.finditer("\\" + letter + "+", text):  # (index i is code point i below 0xD800, i + 0x800 above)
        lo, hi = m.start(), m.end() - 1
        if lo < 0xD800 <= hi:
            out += [(lo, 0xD7FF), (0xE000, hi + 0x800)]
        else:
            out.append((lo, hi) if hi < 0xD800 else (lo + 0x800, hi + 0x800))
    return normalize(out)


@lru_cache(maxsize=1)
def _every_code_point() -> str:
    """Every code point but the surrogates, ascending, as one str (built as UTF-32: fast)."""
    import numpy as np

    points = np.concatenate((np.arange(0xD800), np.arange(0xE000, MAX_CODE_POINT + 1))).astype("<u4")
    return points.tobytes().decode("utf-32-le")


@dataclass
class Flags:
    ignore_case: bool = False
    dot_all: bool = False
    unicode: bool = False  # (?u): Python's Unicode shorthand classes



class PatternCursor:
    """Position in the pattern, flags in force, and errors that carry the position."""

    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0
        self.flags = Flags()

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

class EscapeReader(PatternCursor):
    """Reads one backslash escape: a character, a class, or an anchor (`\\A`, `\\Z`, `\\b`, `\\B`)."""

    def escape(self, in_class: bool) -> object:
        pos = self.i
        self.i += 1
        c = self.peek()
        if c == "":
            raise self.error("bad escape (end of pattern)", pos)
        self.i += 1
        if c in CLASS_ESCAPES:
            return ir.Chars(unicode_class(c) if self.flags.unicode else CLASS_ESCAPES[c])
        if c == "b" and in_class:
            return self._char(0x08, in_class)
        if c in "bB":
            return Anchor(c, pos, self.flags.unicode)
        if c in "AZz" and not in_class:
            return Anchor("^" if c == "A" else "$", pos)
        if c in SIMPLE_ESCAPES and not (c == "0" and self.peek().isdigit()):
            return self._char(SIMPLE_ESCAPES[c], in_class)
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
        name = CATEGORY_ALIASES.get(name, name)
        if name not in KNOWN_CATEGORIES:
            raise self.unsupported(f"unknown or unsupported Unicode property {name!r}", pos)
        ranges = unicode_category(name)
        return complement(ranges) if negate else ranges


