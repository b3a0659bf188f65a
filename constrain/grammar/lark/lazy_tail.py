"""Where a lazy terminal's greedy tail begins: `"..."i?` is a lazy string, then an optional `i`.

Python's `re` (Lark's matcher) ends a lazy quantifier at its first chance, but what follows
it keeps its own preference: in lark.lark's `STRING: _STRING "i"?` (the regex
`(?:"(...)*?")(?:i)?`) the match of `"a"i` takes the `i`, and in `REGEXP`'s
`/.../[imslux]*` every flag letter. The terminal's shortest match cuts both off (`"a"` and
`/.../`), so the letters that follow would be read as the next terminal: texts Lark refuses
(`a:""i0`) got through. So a lazy regex that is a sequence of parts is split after its last
part that must read something once the last lazy part is done: the head takes its shortest
match, the tail (parts that may all match nothing) its longest, as a greedy terminal does. A
greedy repeat after the lazy part is first written as its fixed count and its optional rest
(`x+` as `x x*`), so that the rest joins the tail.
Anything this reader does not follow (alternation at the top, backreferences, assertions at
the split, a lookbehind in the tail) is left whole, as before.
"""

from __future__ import annotations

import re
from typing import Callable, Iterator, Optional

_QUANTIFIER = re.compile(r"(?:[*+?]|\{\d*(?:,\d*)?\})[?+]?")
_BOUNDS = re.compile(r"\{(\d*)(,?)(\d*)\}")  # (a greedy {m,n}; a lazy or possessive one ends in ? or +)
_FLAGS_GROUP = re.compile(r"\(\?([a-zA-Z]+):")  # (Lark writes a flagged terminal as (?flags:regex))
_GLOBAL_FLAGS = re.compile(r"\(\?[a-zA-Z]+\)")
_ESCAPE_WIDTH = {"x": 2, "u": 4, "U": 8}


def lazy_head_and_tail(regex: str, is_lazy: Callable[[str], bool], widths: Callable[[str], Optional[tuple[int, int]]]) -> Optional[tuple[str, str]]:
    """(head, tail) regexes whose concatenation reads what `regex` reads, the last lazy
    quantifier in the head and the tail a run of parts that may each match nothing; None where
    there is no such tail or the regex is not read (see the module's docstring)."""
    body, wrap = regex, "{}"
    flagged = _FLAGS_GROUP.match(regex)
    if flagged and _group_end(regex, 0) == len(regex):
        body, wrap = regex[flagged.end() : -1], "(?" + flagged.group(1) + ":{})"
    found = _top_level_parts(body)
    if found is None or "x" in wrap or any(_GLOBAL_FLAGS.fullmatch(atom) for atom, _ in found):
        return None  # (verbose mode's spaces and comments, flags for the whole regex: not split)
    lazy = [k for k, (atom, quantifier) in enumerate(found) if is_lazy(atom + quantifier)]
    if not lazy:
        return None
    parts = [atom + quantifier for atom, quantifier in found[: lazy[-1] + 1]]
    for atom, quantifier in found[lazy[-1] + 1 :]:
        parts.extend(_at_least_then_any(atom, quantifier))
    sizes = [widths(part) for part in parts]
    if None in sizes:
        return None
    j = len(parts)
    while j > lazy[-1] + 1 and sizes[j - 1][0] == 0:
        j -= 1
    if j == len(parts) or not _assertions_stay_inside(parts, sizes, j, widths):
        return None
    return wrap.format("".join(parts[:j])), wrap.format("".join(parts[j:]))


def _assertions_stay_inside(parts: list[str], sizes: list, j: int, widths: Callable) -> bool:
    """Does every assertion see only the text of its own half? None in the tail (a `\\b` or a
    lookbehind there would look into the head); in the head, lookbehinds, and lookaheads
    `(?=X)`/`(?!X)` standing alone whose X is no longer than what the head must still read
    after them; no `\\b`, `^` or `$` anywhere (they look both ways)."""
    for k, part in enumerate(parts):
        kinds = _assertion_kinds(part)
        if kinds is None or (kinds and k >= j) or "edge" in kinds:
            return False
        if "ahead" in kinds:
            if not part.startswith(("(?=", "(?!")) or _group_end(part, 0) != len(part):
                return False
            inner = part[3:-1]
            if _assertion_kinds(inner) != set():
                return False
            reach = widths(inner)
            if reach is None or reach[1] > sum(size[0] for size in sizes[k + 1 : j]):
                return False
    return True


def _assertion_kinds(part: str) -> Optional[set[str]]:
    """The assertions in a part, outside its classes: "ahead" (`(?=`, `(?!`), "behind" (`(?<=`,
    `(?<!`), "edge" (`\\b`, `\\B`, `\\A`, `\\Z`, `^`, `$`); None where a class does not close."""
    kinds: set[str] = set()
    for i, c in _syntax(part, 0):
        if i is None:
            return None
        if c == "\\":
            if part[i + 1 : i + 2] in ("b", "B", "A", "Z"):
                kinds.add("edge")
        elif part.startswith(("(?=", "(?!"), i):
            kinds.add("ahead")
        elif part.startswith(("(?<=", "(?<!"), i):
            kinds.add("behind")
        elif c in "^$":
            kinds.add("edge")
    return kinds


def _at_least_then_any(atom: str, quantifier: str) -> list[str]:
    """A greedy repeat as its fixed count, then its optional rest (`x+` as `x`, `x*`): the same
    strings and the same preference, and its optional rest may join the tail (`".*?"x+` takes
    its shortest match up to the first `x` after a quote, then every `x`)."""
    if "(?P<" in atom:  # (a named group written twice would be a second definition of its name)
        return [atom + quantifier]
    if quantifier == "+":
        return [atom, atom + "*"]
    bounds = _BOUNDS.fullmatch(quantifier)
    if bounds is None:
        return [atom + quantifier]
    low, comma, high = bounds.groups()
    m = int(low or 0)
    if not comma or m == 0 or (high and int(high) <= m):
        return [atom + quantifier]
    rest = "*" if not high else "{0,%d}" % (int(high) - m)
    return [atom + ("{%d}" % m if m > 1 else ""), atom + rest]


def _top_level_parts(regex: str) -> Optional[list[tuple[str, str]]]:
    """The regex as a sequence of (atom, quantifier) (`\\/`, `(?!x)`, `[^/]` `*?`, `(?:i)` `?`);
    None at a top-level `|`, a backreference or anything this reader does not follow."""
    parts: list[tuple[str, str]] = []
    i, n = 0, len(regex)
    while i < n:
        c = regex[i]
        if c == "(":
            end = _group_end(regex, i)
        elif c == "[":
            end = _class_end(regex, i)
        elif c == "\\":
            end = _escape_end(regex, i)
        elif c in "|)*+?{":
            return None  # (alternation, a stray parenthesis or quantifier: left whole)
        else:
            end = i + 1
        if end is None:
            return None
        quantified = _QUANTIFIER.match(regex, end)
        quantifier = quantified.group() if quantified else ""
        parts.append((regex[i:end], quantifier))
        i = end + len(quantifier)
    return parts


def _escape_end(regex: str, i: int) -> Optional[int]:
    if i + 1 >= len(regex):
        return None
    c = regex[i + 1]
    if c.isdigit() or c in "gkN":  # (backreferences, named escapes: not followed here)
        return None
    return i + 2 + _ESCAPE_WIDTH.get(c, 0)


def _class_end(regex: str, i: int) -> Optional[int]:
    """One past the `]` closing the class opened at i (a `]` first in it is a member)."""
    j = i + 1
    if j < len(regex) and regex[j] == "^":
        j += 1
    if j < len(regex) and regex[j] == "]":
        j += 1
    while j < len(regex):
        if regex[j] == "\\":
            j += 2
            continue
        if regex[j] == "]":
            return j + 1
        j += 1
    return None


def _group_end(regex: str, i: int) -> Optional[int]:
    """One past the `)` closing the group opened at i."""
    depth = 0
    for j, c in _syntax(regex, i):
        if j is None:
            return None
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return j + 1
    return None


def _syntax(regex: str, i: int) -> Iterator[tuple[Optional[int], str]]:
    """(position, character) of what lies outside classes from i on: an escape as its backslash
    (the escaped character skipped), a class as its `[` (the rest skipped); position None where
    a class does not close (and nothing after it)."""
    while i < len(regex):
        c = regex[i]
        if c == "[":
            end = _class_end(regex, i)
            yield (None if end is None else i), c
            if end is None:
                return
            i = end
            continue
        yield i, c
        i += 2 if c == "\\" else 1
