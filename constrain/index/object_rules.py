"""What the matcher needs to know of the rule of an object whose keys come in any order.

Such a rule (grammar/json_schema/any_order.py) reads `{`, members `key: value` separated by
commas, and `}`; its keys are named keys (each one spelling) and key languages (patterns, other
keys); values are calls. Its DFA cannot know which keys were used: distinct_keys.py tracks that
around the stack, and needs from the DFA:

  after_value: the states where a value has returned (and whitespace after it): only there are
      `,` and `}` the object's own (elsewhere they are key characters);
  infinite: per state, can infinitely many byte strings follow before the next call (inside a
      key: a key language is still possible there, not only named keys);
  named: the named keys the DFA can read (a key whose value admits nothing is gone), by their
      canonical spelling, sorted; has_keys: can any key open at all; prefix_closed: is a
      named key's prefix one that only named keys complete.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from typing import Iterable

import numpy as np

from ..automata.dfa import DFA

WS = b" \t\n\r"


class ObjectRule:
    """An any-order object rule's DFA facts (see the module docstring) and its key bounds."""

    def __init__(
        self, dfa: DFA, calls: tuple, named: Iterable[str], required: Iterable[str], lo: int, hi: "int | None"
    ) -> None:
        self.infinite = reaches_cycle(dfa).tolist()
        self.after_value = after_value_states(dfa, calls)
        spelled = {canonical(k): k for k in named}
        self.named = sorted(s for s in spelled if dfa.walk(0, b'{"' + s + b'":') >= 0)
        self.decoded = {s: spelled[s] for s in self.named}
        self.required = frozenset(required)
        self.lo, self.hi = lo, hi
        key_open = dfa.walk(0, b'{"')
        self.has_keys = key_open >= 0
        self.has_language = self.has_keys and self.infinite[key_open]
        self._dfa, self._key_open = dfa, key_open
        self._closed: dict[bytes, bool] = {}
        # Can a named key's prefix be where no key language goes on? (else no key text ever
        # has only used completions: additionalProperties true, say)
        self.closed_prefixes = not self.has_language or any(
            self.prefix_closed(s[:j]) for s in self.named for j in range(1, len(s) + 1)
        )

    def prefix_closed(self, text: bytes) -> bool:
        """After a key opens and `text` (a prefix of a named key) is read, can only named keys
        complete it? (The states after every key opening are the same in the minimal DFA.)"""
        hit = self._closed.get(text)
        if hit is None:
            if not self.has_language:
                hit = True
            else:
                q = self._dfa.walk(self._key_open, text)
                hit = q >= 0 and not self.infinite[q]
            self._closed[text] = hit
        return hit

    def unused_with_prefix(self, prefix: bytes, used: frozenset) -> bool:
        """Does a named key outside `used` begin with `prefix` (a canonical spelling)?"""
        named, decoded = self.named, self.decoded
        for i in range(bisect_left(named, prefix), len(named)):
            s = named[i]
            if not s.startswith(prefix):
                return False
            if decoded[s] not in used:
                return True
        return False

    def flags(self, used: frozenset) -> tuple[bool, bool]:
        """(may a comma come, may `}` come) once the keys `used` are the object's members."""
        count = len(used)
        missing = not self.required <= used
        close = count >= self.lo and not missing
        more = self.hi is None or count < self.hi
        comma = missing or (more and (self.has_language or any(self.decoded[s] not in used for s in self.named)))
        return comma, close


def canonical(key: str) -> bytes:
    """The spelling of a key that the grammar's named keys use (as json.dumps writes it)."""
    return json.dumps(key, ensure_ascii=False)[1:-1].encode("utf-8", "surrogatepass")


def reaches_cycle(dfa: DFA) -> np.ndarray:
    """Bool per state: does it reach a cycle over byte transitions (calls are not followed), so
    that infinitely many byte strings can be read from it?"""
    cols = np.unique(dfa.byte_classes)
    sub = dfa.table[:, cols]
    n = dfa.n_states
    succ = [set(row[row >= 0].tolist()) for row in sub]
    pending = [len(s) for s in succ]
    preds: list[list[int]] = [[] for _ in range(n)]
    for q, targets in enumerate(succ):
        for t in targets:
            preds[t].append(q)
    finite = np.zeros(n, dtype=np.bool_)
    todo = [q for q in range(n) if not pending[q]]
    while todo:
        q = todo.pop()
        finite[q] = True
        for p in preds[q]:
            pending[p] -= 1
            if not pending[p]:
                todo.append(p)
    return ~finite


def after_value_states(dfa: DFA, calls: tuple) -> np.ndarray:
    """The states a call returns to, and those whitespace leads to from them."""
    out = {t for edges in calls for _, t in edges}
    todo = list(out)
    ws_cols = {int(dfa.byte_classes[b]) for b in WS}
    while todo:
        q = todo.pop()
        for c in ws_cols:
            t = int(dfa.table[q, c])
            if t >= 0 and t not in out:
                out.add(t)
                todo.append(t)
    return np.asarray(sorted(out), dtype=np.int64)
