"""A regex whose assertions look past the end of its match: its DFA and what each end refuses.

Lark matches a terminal with `re.match` on the rest of the text, so an assertion near the
terminal's end reads the text after it: a lookahead inside a repeat (`(?:[^$]|\\$(?!\\{))+`: a `$`
is no part of the match where a `{` follows it), `\\b` or `$` at the end, a lookahead of several
characters, or branches that end alike but refuse different things next. Read within the
terminal's own text, such an assertion sees the end of the text, and text Lark refuses got
through.

Here the regex is compiled followed by an end marker E (a byte UTF-8 never holds, passed over by
every assertion like their own markers: assertions.py) and a *window*: up to k characters, then
the end of the text, where k is how far past the match an assertion can look (`reach_past_end`).
In that automaton the state after a prefix s tells, through its E edge, which windows may follow
s where the match ends there. The terminal's DFA is the automaton before E (accepting where E can
be read), minimized with what its ends refuse kept apart. An end refuses END_OF_TEXT where the
empty window is not accepted, and a byte where some window that starts with it is not: exact
for one ASCII character; otherwise more than Lark refuses (we may refuse a text Lark accepts,
never accept one it refuses). What an end refuses *surely* (every window that starts with the
byte is refused: `windowed_ends`) is what a return on condition may count on
(grammar/lark/return_confirm.py). Assertions that look further than MAX_WINDOW characters past the
end, or whose reach is unbounded, are not handled here (the caller reads them within the
terminal, as documented).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..limits import Limits
from . import ir
from .assertions import ANY, MARKERS, marked_language, marker_leaf
from .dfa import DFA, minimize, trusted_dfa
from .regex_escapes import Anchor
from .regex_parser import Look, parse_tree
from .refusals import END_OF_TEXT, bits_of

MAX_WINDOW = 3  # characters past a match's end an assertion may read here
END_MARK = MARKERS[-1]
_NONE = -(1 << 30)  # reach_past_end of a subtree without assertions


def reach_past_end(pattern: str) -> Optional[int]:
    """How many characters past the end of a match the pattern's assertions may read (at
    most; 0: none); None where that is unbounded or not known."""
    found = _past(parse_tree(pattern), 0)
    return None if found is None else max(found, 0)


def windowed(pattern: str, limits: Limits) -> Optional[tuple[DFA, tuple[int, ...]]]:
    """(the pattern's DFA, per state the bytes its end there refuses next, one bit each, and
    END_OF_TEXT) where its assertions read past the end of its match by at most MAX_WINDOW
    characters; None where they read nothing past it, further, or the pattern matches nothing."""
    found = windowed_ends(pattern, limits)
    return None if found is None else found[:2]


def windowed_ends(pattern: str, limits: Limits) -> Optional[tuple[DFA, tuple[int, ...], tuple[int, ...]]]:
    """windowed's answer and, per state, what its end refuses surely: the bytes every window
    starting with them is refused after (and END_OF_TEXT where refused)."""
    tree = parse_tree(pattern)
    k = _past(tree, 0)
    if k is None or k <= 0 or k > MAX_WINDOW:
        return None
    window = ("rep", ANY, 0, k, -1)
    marked = marked_language(("seq", [tree, marker_leaf(END_MARK), window]), (END_MARK,), limits)
    if marked is None:
        return None
    marked = minimize(marked.byte_classes, marked.table, marked.accepting)
    return _before_end(marked, *_refusals(marked, _window_dfa(k, limits)))


def _widths(node: object) -> tuple[int, Optional[int]]:
    """The fewest and most characters a parse tree matches (None: no bound)."""
    if isinstance(node, ir.Chars):
        return 1, 1
    if isinstance(node, (Anchor, Look)):
        return 0, 0
    if isinstance(node, ir.Embedded):
        return 0, None
    kind = node[0]  # type: ignore[index]
    if kind == "rep":
        lo, hi = _widths(node[1])  # type: ignore[index]
        n_lo, n_hi = node[2], node[3]  # type: ignore[index]
        return lo * n_lo, None if hi is None or n_hi is None else hi * n_hi
    parts = [_widths(item) for item in node[1]]  # type: ignore[index]
    if kind == "seq":
        his = [hi for _, hi in parts]
        return sum(lo for lo, _ in parts), None if None in his else sum(his)  # type: ignore[arg-type]
    if not parts:
        return 0, 0
    his = [hi for _, hi in parts]
    return min(lo for lo, _ in parts), None if None in his else max(his)  # type: ignore[type-var]


def _decisive(node: object) -> Optional[int]:
    """The most characters a lookahead body without assertions reads before it is decided: the
    longest of its matches no shorter match is a prefix of (a trailing `x+` counts once, a
    trailing `x*` not at all); None where that is unbounded."""
    if isinstance(node, (ir.Chars, ir.Embedded, Anchor, Look)):
        return _widths(node)[1]
    kind = node[0]  # type: ignore[index]
    if kind == "rep":
        item, lo = node[1], node[2]  # type: ignore[index]
        if lo == 0:
            return 0
        first, last = _widths(item)[1], _decisive(item)
        return None if first is None or last is None else (lo - 1) * first + last
    items = node[1]  # type: ignore[index]
    if kind == "alt":
        found = [_decisive(item) for item in items]
        return None if None in found else max(found, default=0)  # type: ignore[type-var]
    if not items:
        return 0
    head = [_widths(item)[1] for item in items[:-1]]
    last = _decisive(items[-1])
    return None if None in head or last is None else sum(head) + last  # type: ignore[arg-type]


def _past(node: object, after: int) -> Optional[int]:
    """How far past the match's end the assertions of `node` may read, where at least `after`
    characters of the match follow it (_NONE: no assertion; None: unbounded or not known)."""
    if isinstance(node, (ir.Chars, ir.Embedded)):
        return _NONE
    if isinstance(node, Anchor):
        return (1 if node.kind in "$bB" else 0) - after  # ($: is there a character after?)
    if isinstance(node, Look):
        inner = _past(node.body, 0)
        if node.kind in ("<=", "<!"):
            return -after if inner == _NONE else None
        # (without assertions inside, the body's shortest matches decide: `(?!a+)` reads one)
        most = _decisive(node.body) if inner == _NONE else _widths(node.body)[1]
        if inner is None or most is None:
            return None
        return most + max(inner, 0) - after
    kind = node[0]  # type: ignore[index]
    if kind == "rep":  # (the last pass: only what follows the repeat comes after it)
        return _past(node[1], after)  # type: ignore[index]
    items = node[1]  # type: ignore[index]
    found = _NONE
    if kind == "alt":
        for item in items:
            sub = _past(item, after)
            if sub is None:
                return None
            found = max(found, sub)
        return found
    for item in reversed(items):
        sub = _past(item, after)
        if sub is None:
            return None
        found = max(found, sub)
        after += _widths(item)[0]
    return found


def _window_dfa(k: int, limits: Limits) -> DFA:
    from . import compile_ir

    return compile_ir(ir.repeat(ANY, 0, k), limits)


def _refusals(marked: DFA, window: DFA) -> tuple[np.ndarray, np.ndarray]:
    """Per state of `marked` whose E edge leads on: what its end refuses, and what it refuses
    surely (Python ints in object arrays; 0 elsewhere)."""
    n = marked.n_states
    dead = n
    table = np.vstack((marked.table, np.full((1, marked.n_classes), -1, dtype=np.int32)))
    table[table < 0] = dead
    accepting = np.append(marked.accepting, False)
    # bad[d, a]: from marked state d (or dead) and window state a, some rest of a window is refused
    bad = window.accepting[None, :] & ~accepting[:, None]
    reps: dict[tuple[int, int], int] = {}
    for b in range(256):
        reps.setdefault((int(marked.byte_classes[b]), int(window.byte_classes[b])), b)
    moves = []
    for mc, wc in reps:
        nxt_w = window.table[:, wc]
        live = np.flatnonzero(nxt_w >= 0)
        if live.size:
            moves.append((table[:, mc], live, nxt_w[live]))
    bad = _some_rest(bad, moves)
    good = _some_rest(window.accepting[None, :] & accepting[:, None], moves)  # (some rest is accepted)
    out = np.zeros(n, dtype=object)
    sure = np.zeros(n, dtype=object)
    first_w = window.table[0, window.byte_classes]  # (256,): -1 where no character starts with the byte
    starts = first_w >= 0
    after_e = marked.table[:, marked.byte_classes[END_MARK]]
    for q in np.flatnonzero(after_e >= 0).tolist():
        p = int(after_e[q])
        first_m = table[p, marked.byte_classes]
        end = 0 if marked.accepting[p] else END_OF_TEXT
        out[q] = bits_of(starts & bad[first_m, np.where(starts, first_w, 0)]) | end
        sure[q] = bits_of(starts & ~good[first_m, np.where(starts, first_w, 0)]) | end
    return out, sure


def _some_rest(found: np.ndarray, moves: list) -> np.ndarray:
    """found[d, a] grown to every (marked state, window state) from which some rest of a window
    reaches a pair where it holds (a least fixpoint over the character moves)."""
    while True:
        grown = found.copy()
        for nxt_m, live, nxt_w in moves:
            grown[:, live] |= found[nxt_m[:, None], nxt_w[None, :]]
        if np.array_equal(grown, found):
            return found
        found = grown


def _before_end(marked: DFA, refusals: np.ndarray, sure: np.ndarray) -> Optional[tuple[DFA, tuple[int, ...], tuple[int, ...]]]:
    """The automaton of `marked` before its E edges (accepting where one leads on), minimized with
    ends that refuse differently kept apart (each kind of end reads a label of its own, a call
    column, into one final state; labels and final state are dropped after)."""
    n, e_class = marked.n_states, int(marked.byte_classes[END_MARK])
    ends = marked.table[:, e_class] >= 0
    kinds: dict[tuple[int, int], int] = {}
    for q in np.flatnonzero(ends).tolist():
        kinds.setdefault((int(refusals[q]), int(sure[q])), len(kinds))
    width = marked.n_classes
    table = np.full((n + 1, width + len(kinds)), -1, dtype=np.int32)
    table[:n, :width] = marked.table
    table[:, e_class] = -1
    for q in np.flatnonzero(ends).tolist():
        table[q, width + kinds[int(refusals[q]), int(sure[q])]] = n
    classes = np.concatenate((marked.byte_classes, np.arange(width, width + len(kinds)))).astype(np.int32)
    accepting = np.zeros(n + 1, dtype=np.bool_)
    accepting[n] = True
    labelled = minimize(classes, table, accepting, n_calls=len(kinds))
    final = int(np.flatnonzero(labelled.accepting)[0])
    label_cols = labelled.call_classes
    label_of = {col: bits for bits, col in zip(kinds, label_cols.tolist())}
    keep = np.array([s for s in range(labelled.n_states) if s != final])
    renumber = np.full(labelled.n_states, -1, dtype=np.int32)
    renumber[keep] = np.arange(keep.size)
    byte_cols = np.unique(labelled.byte_classes)
    col_of = np.zeros(labelled.n_classes, dtype=np.int32)
    col_of[byte_cols] = np.arange(byte_cols.size)
    sub = labelled.table[keep][:, byte_cols]
    new_table = np.where(sub >= 0, renumber[np.maximum(sub, 0)], -1).astype(np.int32)
    new_accepting = np.zeros(keep.size, dtype=np.bool_)
    refused, surely = [0] * keep.size, [0] * keep.size
    for col in label_cols.tolist():
        hits = np.flatnonzero(labelled.table[keep, col] >= 0)
        new_accepting[hits] = True
        for s in hits.tolist():
            refused[s], surely[s] = label_of[col]
    dfa = trusted_dfa(col_of[labelled.byte_classes], np.zeros(0, dtype=np.int32), new_table, new_accepting, minimal=True)
    return dfa, tuple(refused), tuple(surely)
