"""A greedy rule's returns before a byte it reads, on condition of the byte after that one.

Lark ends a terminal where no longer match exists (`re.match`), and with a lookahead in the
terminal that can depend on more than the next byte. HCL2's string text before `${`:
`S: /(?:[^$"]|\\$(?!\\{))+/` reads `$` after `a` (`a$` is a match where no `{` follows), yet
Lark ends S before a `$` that a `{` follows. A greedy rule (stack_semantics.py) returns only
before a byte it cannot read, so that text was refused. Here, per accepting state q and byte
b1 that q reads and its end does not refuse: the set C of *second bytes* b2 after which the
match cannot go on from q1 = δ(q, b1) (q1 cannot read b2, and q1 is no end or its end refuses
b2), with END_OF_TEXT where the text may not end after b1 either. Lark's match then ends in q
before b1 exactly where the byte after b1 is in C (one byte of lookahead or backtracking: also
python's NUMBER before `.` in `1.real`, where `1.` needs a digit). C holds only second bytes
valid UTF-8 can have after b1 (Lark reads text). A deeper failure (q1 reads b2 and dies later)
is not seen: we may refuse a text Lark accepts there, never accept one it refuses.

The check runs as a frame of a rule of its own (rules.py, CHECK rules): one state, accepting,
reading nothing, greedy, its end refusing every byte outside C (and the end of the text where
END_OF_TEXT is not in C). The conditional return pops the greedy frame, lets the frames below
read b1, and pushes that frame: at the next byte it returns only where the byte is in C
(docs/design/two-byte-returns.md).
"""

from __future__ import annotations

from typing import Callable, Collection, Mapping, Optional, Sequence

import numpy as np

from . import ir
from .dfa import DFA
from .refusals import END_OF_TEXT, bits_of, byte_row, refusals

ALL_BYTES = (1 << 256) - 1
CHECK_PREFIX = "\x00check:"  # a CHECK rule's name: this, then its set C in hex (no front end names a rule so)


SecondBytes = Mapping[str, Mapping[int, Mapping[int, int]]]  # rule name -> {q: {b1: C}}
Confirm = Callable[[str, DFA, dict[int, dict[int, int]]], dict[int, dict[int, int]]]


def find_checks(names: Sequence[str], nodes: Sequence[ir.Node], greedy: Collection[str], refused: Mapping[str, "int | tuple"],
                confirm: Optional[Confirm] = None) -> dict[str, dict[int, dict[int, int]]]:
    """Per greedy rule whose DFA is at hand (a Lark terminal's), its second-byte sets (only
    rules that have some). `confirm(name, dfa, found)` keeps of them what the rule's own
    matcher agrees with (a regex engine's: grammar/lark/return_confirm.py)."""
    out: dict[str, dict[int, dict[int, int]]] = {}
    wanted = getattr(confirm, "names", None)  # (a confirm may say up front which rules it keeps none of)
    for name, node in zip(names, nodes):
        dfa = getattr(node, "dfa", None) if type(node) is ir.Embedded else None
        if name not in greedy or name.startswith(CHECK_PREFIX) or not isinstance(dfa, DFA):
            continue
        if wanted is not None and name not in wanted:
            continue
        bits = refusals(refused.get(name, 0))
        at = (lambda q: bits) if type(bits) is int else bits.__getitem__  # type: ignore[union-attr]
        found = second_byte_checks(dfa, at)
        if found and confirm is not None:
            found = confirm(name, dfa, found)
        if found and _exit_rows(dfa, at, found) <= MAX_EXIT_ROWS:  # (beyond: no checks, refused as before)
            out[name] = found
    return out


MAX_EXIT_ROWS = 254  # a greedy rule's sets of refused and of checked bytes: the walks tell them apart by a uint8


def _exit_rows(dfa: DFA, refused_at: Callable[[int], int], found: dict[int, dict[int, int]]) -> int:
    """How many rows the walks' exit table (index/follow.py) gives the rule at most: one per
    distinct set of bytes its ends refuse, one per distinct set of bytes a state returns
    before on condition."""
    refusals = {refused_at(q) & ALL_BYTES for q in np.flatnonzero(dfa.accepting).tolist()} - {0}
    return len(refusals) + len({frozenset(by_byte) for by_byte in found.values()})


def with_check_rules(
    names: tuple[str, ...], nodes: tuple[ir.Node, ...], greedy: Collection[str], refused: Mapping[str, "int | tuple"],
    second_bytes: SecondBytes,
) -> tuple[tuple[str, ...], tuple[ir.Node, ...], frozenset, dict, tuple[dict[int, dict[int, int]], ...]]:
    """(names, nodes, greedy, refused) with a CHECK rule for each second-byte set of
    `second_bytes` (find_checks; one named so already is reused), and per rule
    {q: {b1: CHECK rule}}."""
    names, nodes = list(names), list(nodes)
    greedy, refused = set(greedy), dict(refused)
    ids = {name: k for k, name in enumerate(names)}
    checks: list[dict[int, dict[int, int]]] = [{} for _ in names]
    for name, per_state in second_bytes.items():
        found = checks[ids[name]]
        for q, by_byte in per_state.items():
            row = found[q] = {}
            for b1, c in by_byte.items():
                check = CHECK_PREFIX + format(c, "x")
                k = ids.get(check)
                if k is None:
                    k = ids[check] = len(names)
                    names.append(check)
                    nodes.append(ir.Embedded(_CHECK_DFA))
                    greedy.add(check)
                    refused[check] = (ALL_BYTES | END_OF_TEXT) & ~c
                    checks.append({})
                row[b1] = k
    return tuple(names), tuple(nodes), frozenset(greedy), refused, tuple(checks)


def _check_dfa() -> DFA:
    """A CHECK rule's DFA: one state, accepting, reading nothing."""
    dfa = DFA(np.zeros(256, dtype=np.int32), np.full((1, 1), -1, dtype=np.int32), np.ones(1, dtype=np.bool_))
    dfa.minimal = True
    return dfa


_CHECK_DFA = _check_dfa()


def second_byte_checks(dfa: DFA, refused_at: Callable[[int], int]) -> dict[int, dict[int, int]]:
    """Per accepting state q of a greedy rule's DFA: {b1: C} for each byte b1 that q reads, its
    end in q does not refuse, and whose second-byte set C (one bit per byte, END_OF_TEXT) is not
    empty; states without such bytes are left out. `refused_at(q)`: the bytes (and
    END_OF_TEXT) the rule's end in q refuses next beyond those it reads."""
    rows = dfa.table[:, dfa.byte_classes]  # (states, 256)
    n = dfa.n_states
    refused = np.zeros((n, 257), dtype=np.bool_)  # per state: the bytes its end refuses, the end last
    for q in range(n):
        bits = refused_at(q)
        if bits:
            refused[q, :256] = byte_row(bits)
            refused[q, 256] = bool(bits & END_OF_TEXT)
    unread = np.concatenate([rows < 0, np.ones((n, 1), dtype=np.bool_)], axis=1)
    # per state q1: C as bools, the bytes (and the end) after which no match goes on from q1
    after = unread & np.where(dfa.accepting[:, None], refused, True)
    live = after.any(axis=1)
    out: dict[int, dict[int, int]] = {}
    packed: dict[tuple[int, int], int] = {}  # (q1, b1's successor kind) -> C as bits
    for q in np.flatnonzero(dfa.accepting).tolist():
        targets = rows[q]
        candidates = np.flatnonzero((targets >= 0) & ~refused[q, :256])
        candidates = candidates[live[targets[candidates]]]
        found = {}
        for b1, q1 in zip(candidates.tolist(), targets[candidates].tolist()):
            key = (q1, _KIND[b1])
            c = packed.get(key)
            if c is None:
                row = after[q1] & _SUCCESSOR_ROWS[b1]
                c = packed[key] = bits_of(row[:256]) | (END_OF_TEXT if row[256] else 0)
            if c:
                found[b1] = c
        if found:
            out[q] = found
    return out


def _successors(b1: int) -> int:
    """The second bytes that valid UTF-8 text (all Lark reads) can hold after byte b1, and
    END_OF_TEXT: after a lead byte a continuation only, after an ASCII byte no continuation;
    after a continuation, anything. Without this every character of two or more bytes gave
    a return before its lead byte on condition of what no UTF-8 text holds next."""
    continuation = sum(1 << b for b in range(0x80, 0xC0))
    if 0xC2 <= b1 <= 0xF4:  # (the second byte's narrower ranges: no overlong form, surrogate, past U+10FFFF)
        low, high = {0xE0: (0xA0, 0xBF), 0xED: (0x80, 0x9F), 0xF0: (0x90, 0xBF), 0xF4: (0x80, 0x8F)}.get(b1, (0x80, 0xBF))
        return sum(1 << b for b in range(low, high + 1))
    if b1 < 0x80:
        return (ALL_BYTES | END_OF_TEXT) & ~continuation
    return ALL_BYTES | END_OF_TEXT


_KIND = tuple(0 if b < 0x80 else 1 if b < 0xC2 or b > 0xF4 else b for b in range(256))  # (what _successors depends on)
_SUCCESSOR_ROWS = np.array([np.append(byte_row(s), bool(s & END_OF_TEXT)) for s in map(_successors, range(256))])
