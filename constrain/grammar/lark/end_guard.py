"""A terminal whose regex ends in a one-character lookahead: the bytes its end refuses.

Lark matches a terminal with `re.match` on the whole rest of the text, so a lookahead at the
terminal's end looks at the text after it: HCL2's `EQ: /[ \\t]*=(?!=|>)/` is no `=` before
another `=` or a `>`, lark.lark's `OP: /[+*]|[?](?![a-z])/` no `?` before a letter, and
Lark's Python grammar reads `0` as a number only where no digit 1-9 follows. Read within the
terminal's own text, such a lookahead sees nothing and always holds, so `a==b` got through
where Lark refuses it. Here each top-level branch of the regex that ends in `(?!X)`, X one
character (a class, a literal, alternatives of those), loses the lookahead and keeps the bytes
it refuses next: the terminal's end may not be followed by one (as a greedy rule's return may
not be followed by a byte it reads, automata/stack_semantics.py).

A positive one, `(?=X)`, refuses every byte but X's ASCII characters, and the end of the text
(`END_OF_TEXT`): `CALL: /[a-z]+(?=\\()/` is a name that only a parenthesis may follow. Read
within the terminal, it never held: the branch matched nothing (the whole terminal: an error).

Branches are grouped by what they refuse; groups become rules of their own, so each group's
ends refuse their own bytes. That reads as the whole regex reads only where the groups cannot
start with the same byte (their longest matches are then the whole regex's); where they can,
the regex is left whole, as before. Of a class with characters beyond ASCII only its ASCII
ones are refused (a character of several bytes would need a lookahead of several).
"""

from __future__ import annotations

from typing import Callable, Optional

from ...automata.rules import END_OF_TEXT
from .regex_text import assertion_kinds, group_end, nesting, unwrap_flags

_ALL_BYTES = (1 << 256) - 1

# (a branch's regex, the bytes after its end that its lookahead refuses, one bit each: 0 for none)
Group = tuple[str, int]


def end_guards(
    regex: str, widths: Callable[[str], Optional[tuple[int, int]]], one_char_bytes: Callable[[str], Optional[int]]
) -> Optional[list[Group]]:
    """The regex's branches grouped by the bytes their end refuses (each group's regex without
    the lookaheads, in the regex's flags); None where no branch ends in such a lookahead or the
    text is not read. `widths(regex)`: its fewest and most characters (Python's parser);
    `one_char_bytes(regex)`: the ASCII characters a one-character regex matches, one bit each."""
    body, wrap = unwrap_flags(regex)
    if "x" in wrap:
        return None  # (verbose mode: spaces and comments in the text)
    while (body.startswith("(?:") or body.startswith("(") and not body.startswith("(?")) and group_end(body, 0) == len(body):
        body = body[3:-1] if body.startswith("(?:") else body[1:-1]  # (a group around it all)
    branches = _top_level_branches(body)
    if branches is None:
        return None
    grouped: dict[int, list[str]] = {}
    for branch in branches:
        kept, refused = _strip_guards(branch, wrap, widths, one_char_bytes)
        if kept is None:
            return None
        grouped.setdefault(refused, []).append(kept)
    if set(grouped) == {0}:
        return None
    return [(wrap.format("|".join(parts)), refused) for refused, parts in grouped.items()]


def _top_level_branches(body: str) -> Optional[list[str]]:
    """The body split at its `|` outside groups and classes; None where a class does not close."""
    out: list[str] = []
    start = 0
    for i, c, depth in nesting(body, 0):
        if i is None:
            return None
        if c == "|" and depth == 0:
            out.append(body[start:i])
            start = i + 1
    out.append(body[start:])
    return out


def _strip_guards(
    branch: str, wrap: str, widths: Callable[[str], Optional[tuple[int, int]]], one_char_bytes: Callable[[str], Optional[int]]
) -> tuple[Optional[str], int]:
    """(the branch less the one-character lookaheads it ends in, the bytes they refuse: a negative
    one's ASCII characters, a positive one's every byte but its ASCII characters, and the end
    of the text); (None, 0) where what is left would match nothing."""
    refused = 0
    while True:
        start = _last_group_start(branch)
        if start is None or not branch.startswith(("(?!", "(?="), start):
            break
        inner = branch[start + 3 : -1]
        if assertion_kinds(inner) != set() or widths(wrap.format(inner)) != (1, 1):
            break
        bits = one_char_bytes(wrap.format(inner))
        if bits is None:
            break
        if branch.startswith("(?=", start):  # (what may follow: the rest, and the end, are refused)
            bits = (_ALL_BYTES & ~bits) | END_OF_TEXT
        refused |= bits
        branch = branch[:start]
    if refused and widths(wrap.format(branch)) in (None, (0, 0)):
        return None, 0
    return branch, refused


def _last_group_start(branch: str) -> Optional[int]:
    """Where the group that ends the branch (unquantified) opens; None where none does."""
    if not branch.endswith(")"):
        return None
    opened: list[int] = []
    for i, c, depth in nesting(branch, 0):
        if i is None:
            return None
        if c == "(" and depth == 0:
            opened.append(i)
    if not opened or group_end(branch, opened[-1]) != len(branch):
        return None
    return opened[-1]
