"""A naive oracle for automata tests: the minimal DFA of a byte table by Moore refinement,
numbered breadth-first over bytes 0..255, so two DFAs for one language give equal forms."""

from __future__ import annotations

from typing import Callable

import pytest

Form = tuple[tuple[tuple[int, ...], ...], tuple[bool, ...]]


def minimal_form(rows: list[list[int]], accepting: list[bool]) -> Form:
    """Canonical minimal DFA of `rows[q][byte]` (-1 dead) from state 0; empty language: ((), ())."""
    n = len(rows)
    live = list(accepting)
    changed = True
    while changed:
        changed = False
        for q in range(n):
            if not live[q] and any(t >= 0 and live[t] for t in rows[q]):
                live[q] = changed = True
    if not live[0]:
        return (), ()
    block = [int(a) if live[q] else -1 for q, a in enumerate(accepting)]
    while True:
        sigs: dict[tuple, int] = {}
        new = [
            sigs.setdefault((block[q], tuple(block[t] if t >= 0 else -1 for t in rows[q])), len(sigs))
            if live[q] else -1
            for q in range(n)
        ]
        if len(sigs) == len(set(b for b in block if b >= 0)):
            break
        block = new
    pos = {block[0]: 0}
    order = [0]
    out = []
    for q in order:
        row = []
        for t in rows[q]:
            if t < 0 or block[t] < 0:
                row.append(-1)
                continue
            if block[t] not in pos:
                pos[block[t]] = len(order)
                order.append(t)
            row.append(pos[block[t]])
        out.append(tuple(row))
    return tuple(out), tuple(bool(accepting[q]) for q in order)


def dfa_form(dfa) -> Form:
    """`minimal_form` of a constrain DFA, read byte by byte."""
    return minimal_form(dfa.table[:, dfa.byte_classes].tolist(), dfa.accepting.tolist())


@pytest.fixture(scope="session")
def forms() -> tuple[Callable[..., Form], Callable[..., Form]]:
    return minimal_form, dfa_form
