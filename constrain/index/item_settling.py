"""When an item's value is settled, for distinct_calls.py: the bytes after which nothing inside
an item can read more (a string's closing quote, an object's `}`), the bytes an array reads
after an item (`,` `]`), and how far an open string item's text is known."""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Optional

import numpy as np


class ReadingStates:
    """Per rule, per state: can it read a byte (asked late: rules are built on first use)."""

    def __init__(self, rules: Any) -> None:
        self.rules = rules
        self._rows: dict[int, list[bool]] = {}

    def __call__(self, r: int) -> list[bool]:
        hit = self._rows.get(r)
        if hit is None:
            d = self.rules.dfas[r]
            hit = self._rows[r] = (d.table[:, : int(d.byte_classes.max()) + 1] >= 0).any(axis=1).tolist()
        return hit


def after_item_bytes(rules: Any, marked: Iterable[int]) -> frozenset:
    """Bytes a marked rule reads right after an item returns (`,` `]` whitespace)."""
    out = np.zeros(256, dtype=np.bool_)
    for u in marked:
        dfa = rules.dfas[u]
        returns = [t for q in range(dfa.n_states) for _, t in rules.calls[u][q]]
        if returns:
            out |= (dfa.table[np.array(returns)][:, dfa.byte_classes] >= 0).any(axis=0)
    return frozenset(np.flatnonzero(out).tolist())


def settling_bytes(rules: Any, marked: Iterable[int], reads: ReadingStates) -> frozenset:
    """Bytes that enter a state with nothing left to read, in rules an item ends in (the items
    and, transitively, rules they call last): a value is settled right after one."""
    tails = {k for u in marked for q in range(rules.dfas[u].n_states) for k, _ in rules.calls[u][q]}
    todo = list(tails)
    while todo:
        r = todo.pop()
        dfa = rules.dfas[r]
        for q in range(dfa.n_states):
            for k, t in rules.calls[r][q]:
                if not reads(r)[t] and not rules.calls[r][t] and k not in tails:
                    tails.add(k)
                    todo.append(k)
    out = np.zeros(256, dtype=np.bool_)
    for r in tails:
        dfa = rules.dfas[r]
        closed = np.array([not reads(r)[t] and not rules.calls[r][t] for t in range(dfa.n_states)] + [False])
        out |= closed[dfa.table[:, dfa.byte_classes]].any(axis=0)  # (-1: the appended False)
    return frozenset(np.flatnonzero(out).tolist())


QUOTE = frozenset(b'"')
ESCAPE_OR_CONTROL = re.compile(rb"[\x00-\x1f\\]")


def settled_text(item: bytes) -> Optional[str]:
    """The text of an open string item whose next unescaped `"` would close it exactly there
    (None if `item` is not an open string, or ends inside an escape or a UTF-8 character)."""
    if item[:1] != b'"':
        return None
    try:
        value = json.loads(item + b'"')
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def open_string(item: bytes) -> bool:
    """Is `item` a JSON string not closed yet?"""
    if item[:1] != b'"':
        return False
    try:
        json.loads(item)
    except ValueError:
        return True
    return False
