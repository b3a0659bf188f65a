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
from typing import Callable, Optional

from .regex_text import assertion_kinds, class_end, escape_end, group_end, unwrap_flags

_QUANTIFIER = re.compile(r"(?:[*+?]|\{\d*(?:,\d*)?\})[?+]?")
_BOUNDS = re.compile(r"\{(\d*)(,?)(\d*)\}")  # (a greedy {m,n}; a lazy or possessive one ends in ? or +)
_GLOBAL_FLAGS = re.compile(r"\(\?[a-zA-Z]+\)")


def lazy_head_and_tail(regex: str, is_lazy: Callable[[str], bool], widths: Callable[[str], Optional[tuple[int, int]]]) -> Optional[tuple[str, str]]:
    """(head, tail) regexes whose concatenation reads what `regex` reads, the last lazy
    quantifier in the head and the tail a run of parts that may each match nothing; None where
    there is no such tail or the regex is not read (see the module's docstring)."""
    body, wrap = unwrap_flags(regex)
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
        kinds = assertion_kinds(part)
        if kinds is None or (kinds and k >= j) or "edge" in kinds:
            return False
        if "ahead" in kinds:
            if not part.startswith(("(?=", "(?!")) or group_end(part, 0) != len(part):
                return False
            inner = part[3:-1]
            if assertion_kinds(inner) != set():
                return False
            reach = widths(inner)
            if reach is None or reach[1] > sum(size[0] for size in sizes[k + 1 : j]):
                return False
    return True


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
            end = group_end(regex, i)
        elif c == "[":
            end = class_end(regex, i)
        elif c == "\\":
            end = escape_end(regex, i)
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
