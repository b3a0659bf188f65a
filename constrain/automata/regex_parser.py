"""Regex text → IR, with exact error positions.

The dialect is the common ground of Python's `re` and ECMA-262 that a finite automaton can
enforce, matched against the *whole* output (as `re.fullmatch`). Shorthand classes are ASCII
(`\\d` = [0-9], `\\w` = [A-Za-z0-9_], `\\s` = [ \\t\\n\\r\\f\\v]) as in `re.ASCII` and JSON Schema;
`\\p{..}` takes Unicode general categories. Backreferences and possessive/atomic groups change
what a DFA can express and raise UnsupportedRegexError with the position.

Zero-width assertions (lookarounds, `\\b`/`\\B`, `^`/`$` away from the pattern's edges) parse
into the tree (`parse_tree`), but the IR has no node for them: `parse_regex` drops `^`/`$` at
the edges and refuses the rest; `assertions.regex_language` lowers them to automata.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Optional

from ..errors import UnsupportedRegexError
from . import ir
from .charset import Ranges, case_fold, complement, normalize, union
from .regex_escapes import Anchor, EscapeReader, Flags

MAX_REPEAT_BOUND = 100_000


@dataclass(frozen=True)
class Look:
    """A lookaround: kind "=" / "!" (lookahead, negative) or "<=" / "<!" (lookbehind); `body`
    is a parse tree."""

    kind: str
    body: object
    pos: int


def is_assertion(node: object) -> bool:
    """Does this parse node match the empty string at one position only (anchor, lookaround)?"""
    return isinstance(node, (Anchor, Look))


class _Parser(EscapeReader):
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
            elif c in "au":
                self.flags.unicode = c == "u"  # (shorthand classes: regex_escapes.py)
            # L, m: no effect on a full-match byte DFA.

    def alternation(self) -> object:
        branches = [self.sequence()]
        while self.eat("|"):
            branches.append(self.sequence())
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def sequence(self) -> object:
        items: list[object] = []
        p, n = self.p, len(self.p)
        while self.i < n:
            c = p[self.i]
            if c in "|)":
                break
            # A plain character not followed by a quantifier (most of a keyword list, a
            # literal): one shared leaf, without the general atom/quantifier path.
            if c not in _SPECIAL and (self.i + 1 == n or p[self.i + 1] not in "*+?{"):
                self.i += 1
                items.append(_literal_leaf(ord(c), self.flags.ignore_case))
                continue
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
            if isinstance(atom, Anchor):
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
            return Anchor("^", pos)
        if c == "$":
            self.i += 1
            return Anchor("$", pos)
        if c == "\\":
            return self.escape(in_class=False)
        if c in "*+?":
            raise self.error("nothing to repeat")
        if c == "{" and self._looks_like_quantifier():
            raise self.error("nothing to repeat")
        self.i += 1
        return _literal_leaf(ord(c), self.flags.ignore_case)

    def _looks_like_quantifier(self) -> bool:
        save = self.i
        try:
            return self._brace_bounds() is not None
        finally:
            self.i = save

    def group(self) -> object:
        open_pos = self.i
        self.i += 1
        saved = Flags(self.flags.ignore_case, self.flags.dot_all, self.flags.unicode)
        if self.eat("?"):
            c = self.peek()
            if c == ":":
                self.i += 1
            elif c == "P" and self.peek(1) == "<":
                self._group_name(self.i + 2)
            elif c == "<" and self.peek(1) not in "=!":
                self._group_name(self.i + 1)
            elif c in "=!" or (c == "<" and self.peek(1) in "=!"):
                kind = "<" + self.peek(1) if c == "<" else c
                self.i += len(kind)
                body = self.alternation()
                if not self.eat(")"):
                    raise self.error("missing ), unterminated subpattern", open_pos)
                self.flags = saved
                return Look(kind, body, open_pos)
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


_SPECIAL = frozenset("\\()[]{}|.*+?^$#")  # ('#' only matters with (?x), which is refused)


@lru_cache(maxsize=4096)
def _literal_leaf(cp: int, ignore_case: bool) -> ir.Chars:
    """The leaf of one literal character (with its case partners under `i`), shared."""
    if not ignore_case:
        return ir.Chars(((cp, cp),))  # already normalized
    return ir.Chars(normalize(case_fold(((cp, cp),))))


Assertion = Callable[[object], ir.Node]


def refuse_assertion(node: object) -> ir.Node:
    """The IR has no zero-width assertions: name the construct and its position."""
    if isinstance(node, Look):
        raise UnsupportedRegexError("lookaround assertions are not supported", "", node.pos)
    assert isinstance(node, Anchor)
    if node.kind in "bB":
        raise UnsupportedRegexError(f"word boundary \\{node.kind} is not supported", "", node.pos)
    raise UnsupportedRegexError(f"anchor {node.kind!r} is only supported at the start/end of the pattern", "", node.pos)


def lower(node: object, at_start: bool, at_end: bool, assertion: Assertion = refuse_assertion) -> ir.Node:
    """Parse tree → IR. `^` / `$` where nothing but assertions can come before / after them
    (with `at_start` / `at_end`: the tree sits at the string's start / end) always hold and are
    dropped; every other assertion becomes `assertion(node)`. IR leaves (marker automata of
    assertions.py) pass through."""
    if isinstance(node, (ir.Chars, ir.Embedded)):
        return node
    if isinstance(node, Anchor):
        if (node.kind == "^" and at_start) or (node.kind == "$" and at_end):
            return ir.EMPTY
        return assertion(node)
    if isinstance(node, Look):
        return assertion(node)
    kind = node[0]  # type: ignore[index]
    if kind == "alt":
        return ir.alt(*(lower(b, at_start, at_end, assertion) for b in node[1]))  # type: ignore[index]
    if kind == "seq":
        items = node[1]  # type: ignore[index]
        # Only assertions before item k: k <= first; only assertions after it: k >= last.
        real = [k for k, it in enumerate(items) if not is_assertion(it)]
        first, last = (real[0], real[-1]) if real else (len(items), -1)
        out = [
            it if type(it) is ir.Chars else lower(it, at_start and k <= first, at_end and k >= last, assertion)
            for k, it in enumerate(items)
        ]
        return ir.concat(*out) if out else ir.EMPTY
    if kind == "rep":
        _, inner, lo, hi, _pos = node  # type: ignore[misc]
        return ir.repeat(lower(inner, False, False, assertion), lo, hi)
    raise AssertionError(f"unknown parse node {kind}")


def anchored(node: object, kind: str) -> bool:
    """Does every match of `node` start with `^` (kind "^") / end with `$` (kind "$"), with
    nothing but assertions before / after it? A search for such a pattern needs no padding on
    that side, and `lower` drops those anchors."""
    if isinstance(node, Anchor):
        return node.kind == kind
    if isinstance(node, (Look, ir.Chars, ir.Embedded)):
        return False
    if node[0] == "alt":  # type: ignore[index]
        return all(anchored(b, kind) for b in node[1])  # type: ignore[index]
    if node[0] == "seq":  # type: ignore[index]
        items = node[1] if kind == "^" else node[1][::-1]  # type: ignore[index]
        for it in items:
            if anchored(it, kind):
                return True
            if not is_assertion(it):
                return False
    return False


def parse_tree(pattern: str) -> object:
    """The parse tree of `pattern`: ("alt", [..]), ("seq", [..]), ("rep", node, lo, hi, pos),
    ir.Chars, Anchor and Look leaves. Raises RegexSyntaxError / UnsupportedRegexError. Shared
    between callers (a Lark terminal with assertions is parsed to see how far they read, then to
    build its automaton): never modify one."""
    if not isinstance(pattern, str):
        raise TypeError(f"regex pattern must be str, not {type(pattern).__name__}")
    return _parse_tree(pattern)


@lru_cache(maxsize=256)
def _parse_tree(pattern: str) -> object:
    return _Parser(pattern).parse()


def with_pattern(exc: UnsupportedRegexError, pattern: str) -> UnsupportedRegexError:
    """The error of `lower` (raised without the pattern text) with the pattern and its caret."""
    return UnsupportedRegexError(str(exc).split(" at position")[0], pattern, exc.position)


def parse_regex(pattern: str) -> ir.Node:
    """Parse `pattern` into the IR; raises RegexSyntaxError / UnsupportedRegexError with a position."""
    tree = parse_tree(pattern)
    try:
        return lower(tree, True, True)
    except UnsupportedRegexError as exc:
        raise with_pattern(exc, pattern) from None
