"""Reading a regex's text where Python's parser gives no positions: its groups, classes, escapes
and assertions outside classes (lazy_tail.py and end_guard.py split terminals' regexes by text,
so that each part is still the regex text `re` and our regex parser read)."""

from __future__ import annotations

import re
from typing import Iterator, Optional

FLAGS_GROUP = re.compile(r"\(\?([a-zA-Z]+):")  # (Lark writes a flagged terminal as (?flags:regex))
_ESCAPE_WIDTH = {"x": 2, "u": 4, "U": 8}


def unwrap_flags(regex: str) -> tuple[str, str]:
    """(body, wrap): a regex that is one flags group `(?i:body)` as its body and "(?i:{})"; any
    other as itself and "{}"."""
    flagged = FLAGS_GROUP.match(regex)
    if flagged and group_end(regex, 0) == len(regex):
        return regex[flagged.end() : -1], "(?" + flagged.group(1) + ":{})"
    return regex, "{}"


def assertion_kinds(part: str) -> Optional[set[str]]:
    """The assertions in a part, outside its classes: "ahead" (`(?=`, `(?!`), "behind" (`(?<=`,
    `(?<!`), "edge" (`\\b`, `\\B`, `\\A`, `\\Z`, `^`, `$`); None where a class does not close."""
    kinds: set[str] = set()
    for i, c in syntax(part, 0):
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


def escape_end(regex: str, i: int) -> Optional[int]:
    if i + 1 >= len(regex):
        return None
    c = regex[i + 1]
    if c.isdigit() or c in "gkN":  # (backreferences, named escapes: not followed here)
        return None
    return i + 2 + _ESCAPE_WIDTH.get(c, 0)


def class_end(regex: str, i: int) -> Optional[int]:
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


def group_end(regex: str, i: int) -> Optional[int]:
    """One past the `)` closing the group opened at i."""
    for j, c, depth in nesting(regex, i):
        if j is None:
            return None
        if c == ")" and depth == 0:
            return j + 1
    return None


def nesting(regex: str, i: int) -> Iterator[tuple[Optional[int], str, int]]:
    """syntax() with the number of groups open around each character since i (a group's own
    parentheses are outside it)."""
    depth = 0
    for j, c in syntax(regex, i):
        if c == ")":
            depth -= 1
        yield j, c, depth
        if c == "(":
            depth += 1


def syntax(regex: str, i: int) -> Iterator[tuple[Optional[int], str]]:
    """(position, character) of what lies outside classes from i on: an escape as its backslash
    (the escaped character skipped), a class as its `[` (the rest skipped); position None where
    a class does not close (and nothing after it)."""
    while i < len(regex):
        c = regex[i]
        if c == "[":
            end = class_end(regex, i)
            yield (None if end is None else i), c
            if end is None:
                return
            i = end
            continue
        yield i, c
        i += 2 if c == "\\" else 1
