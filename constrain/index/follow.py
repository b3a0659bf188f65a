"""Bytes that can follow a rule's return: the boundaries a walk need not record.

A walk records a boundary where a rule state can call or return: there the rest of the stack may
read the node's byte (stack_index.py expands it). Where a state can only return (accepting, no
call), the readers are the callers at their return states, the rules those call there, and
where a return state can return too, the callers' callers. A string's content rule accepts
after every character, so every node of its walk was a boundary while its caller only reads
the closing quote there. Recording only nodes whose byte some reader can read changes no mask
(the expansion keeps exactly those nodes) and cuts a string value's boundaries from thousands to
the tokens with a quote. Unknown (a caller not built yet, recursion): every byte, as before.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..automata.refusals import byte_row
from ..automata.rules import RuleSet
from ..errors import GrammarError
from .follow_sets import follow_sets

ALWAYS, IF_FOLLOWS, IF_UNREAD, IF_UNREAD_ALLOWED = 1, 2, 3, 4  # a state's exit kind: it can call;
# it can only return (where follow row 0 allows the byte); it is a greedy rule's accepting state
# (it returns only before a byte it cannot read), and also one its end does not refuse: kind
# IF_UNREAD_ALLOWED + j reads follow row 1 + j, one per distinct set of refused bytes (end_guard.py,
# automata/end_window.py: a terminal's ends may refuse different bytes)
MIN_RETURN_STATES = 16  # rules with fewer return-only states keep every exit
MAX_REFUSAL_ROWS = 255 - IF_UNREAD_ALLOWED  # (kinds are uint8)


def follow_row(kind: int) -> int:
    """The row of the follow table that filters exits of `kind` (0 where none or row 0 does)."""
    return kind - IF_UNREAD if kind >= IF_UNREAD_ALLOWED else 0


class ExitFilter:
    """Per rule class (rules.same), the walk's exit kinds per state and its follow bytes."""

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        self._callers: Optional[list[list[int]]] = None
        self._members: dict[int, list[int]] = {}  # class representative -> its rules
        self._returns: dict[int, dict[int, list[int]]] = {}  # caller -> callee -> return states
        self._follow: dict[int, Optional[np.ndarray]] = {}
        self._kinds: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._checks: dict[int, np.ndarray] = {}  # greedy rule class -> its check rows (see checks)
        self._follow_sets: Optional[list[np.ndarray]] = None

    def kinds(self, rep: int) -> tuple[np.ndarray, np.ndarray]:
        """(uint8 exit kind per state of rule class `rep`, the follow table: bool per row and
        byte, may it follow a return; see follow_row)."""
        hit = self._kinds.get(rep)
        if hit is None:
            rule = self.rules.rule(rep)
            if getattr(self.rules, "any_greedy", False) and self.rules.greedy[rep]:
                return self._kinds.setdefault(rep, self._greedy_kinds(rep, rule.dfa.accepting))
            calls = np.fromiter(map(bool, rule.calls), dtype=np.bool_, count=rule.dfa.n_states)
            returns_only = rule.dfa.accepting & ~calls
            # (few such states meet few boundaries: not worth the callers' analysis)
            follow = None
            if np.count_nonzero(returns_only) >= MIN_RETURN_STATES:
                follow = self._return_follow(rep, set())
            if follow is None:
                kinds = rule.exits.astype(np.uint8)  # ALWAYS wherever it exits
                follow = np.zeros(256, dtype=np.bool_)
            else:
                kinds = np.where(calls, ALWAYS, np.where(returns_only, IF_FOLLOWS, 0)).astype(np.uint8)
            hit = self._kinds.setdefault(rep, (kinds, follow[None, :]))
        return hit

    def checks(self, rep: int, n_states: int) -> np.ndarray:
        """uint8 per state of rule class `rep`: the row of its follow table (kinds) holding the
        bytes it reads there before which it may also return on condition of the byte after
        them (automata/return_checks.py), those no rule can read after its return left out; 0
        for none."""
        hit = self._checks.get(rep)
        if hit is None:
            self.kinds(rep)
            hit = self._checks.get(rep)
            if hit is None:
                hit = self._checks.setdefault(rep, np.zeros(n_states, dtype=np.uint8))
        return hit

    def checked_bytes(self, rep: int, q: int, n_states: int) -> np.ndarray:
        """Bool per byte: may greedy rule class `rep` return before it in state q on condition
        of the byte after it, where some rule can read it after the return (its check row)."""
        return self.kinds(rep)[1][self.checks(rep, n_states)[q]]

    def _greedy_kinds(self, rep: int, accepting: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A greedy rule's exits: IF_UNREAD where its end refuses nothing more, else one kind
        per distinct set of refused bytes, each with its follow row; rows for its checks after."""
        kinds = np.zeros(accepting.size, dtype=np.uint8)
        rows: dict[int, int] = {}
        for q in np.flatnonzero(accepting).tolist():
            refused = self.rules.refused_at(rep, q) & ((1 << 256) - 1)
            if not refused:
                kinds[q] = IF_UNREAD
                continue
            if refused not in rows:
                if len(rows) == MAX_REFUSAL_ROWS:
                    name = self.rules.names[rep]
                    raise GrammarError(f"rule {name!r}: over {MAX_REFUSAL_ROWS} sets of bytes refused after its end")
                rows[refused] = len(rows)
            kinds[q] = IF_UNREAD_ALLOWED + rows[refused]
        checked = self.rules.checks[rep] if getattr(self.rules, "return_checks", False) else {}
        if checked and self._follow_sets is None:
            self._follow_sets = follow_sets(self.rules)
        after = self._follow_sets[rep] if checked else None  # (follow_sets.py: it knows recursion)
        check_rows: dict[bytes, int] = {}
        per_state = np.zeros(accepting.size, dtype=np.uint8)
        for q, by_byte in checked.items():
            row = np.zeros(256, dtype=np.bool_)
            row[list(by_byte)] = True
            if after is not None:
                row &= after
            if row.any():
                j = check_rows.setdefault(row.tobytes(), 1 + len(rows) + len(check_rows))
                if j > 255:  # (return_checks.find_checks keeps no checks for such a rule: a bug if met)
                    raise GrammarError(f"rule {self.rules.names[rep]!r}: over 254 sets of bytes refused or checked after its end")
                per_state[q] = j
        self._checks[rep] = per_state
        follow = np.zeros((1 + len(rows) + len(check_rows), 256), dtype=np.bool_)
        for refused, j in rows.items():
            follow[1 + j] = ~byte_row(refused)
        for row_bytes, j in check_rows.items():
            follow[j] = np.frombuffer(row_bytes, dtype=np.bool_)
        return kinds, follow

    def _return_follow(self, rep: int, busy: set[int]) -> Optional[np.ndarray]:
        if rep in self._follow:
            return self._follow[rep]
        if rep in busy:
            return None  # recursion: give up (not remembered: the outer call decides)
        busy.add(rep)
        out: Optional[np.ndarray] = np.zeros(256, dtype=np.bool_)
        rules = self.rules
        for m in self._class(rep):
            for c in self._callers_of(m):
                if not rules.built(c):
                    out = None
                    break
                crule = rules.rule(c)
                for t in self._return_states(c).get(m, ()):
                    out |= _reads(rules, c, t)
                    for k, _ in crule.calls[t]:
                        first = self._first(k)
                        if first is None:
                            out = None
                            break
                        out |= first
                    if out is not None and crule.dfa.accepting[t]:
                        up = self._return_follow(rules.same[c], busy)
                        out = None if up is None else out | up
                    if out is None:
                        break
                if out is None:
                    break
            if out is None:
                break
        busy.discard(rep)
        self._follow[rep] = out
        return out

    def _first(self, k: int) -> Optional[np.ndarray]:
        """Bytes rule k reads first, where its start neither calls nor returns (else None)."""
        rules = self.rules
        if not rules.built(k):
            return None
        rule = rules.rule(k)
        if rule.calls[0] or rule.dfa.accepting[0]:
            return None
        return _reads(rules, k, 0)

    def _class(self, rep: int) -> list[int]:
        if not self._members:
            for r, s in enumerate(self.rules.same):
                self._members.setdefault(s, []).append(r)
        return self._members[rep]

    def _callers_of(self, r: int) -> list[int]:
        if self._callers is None:
            callers: list[list[int]] = [[] for _ in range(self.rules.n_rules)]
            for c, callees in enumerate(self.rules.callees):
                for k in set(callees):
                    callers[k].append(c)
            self._callers = callers
        return self._callers[r]

    def _return_states(self, c: int) -> dict[int, list[int]]:
        hit = self._returns.get(c)
        if hit is None:
            hit = {}
            for edges in self.rules.rule(c).calls:
                for k, t in edges:
                    hit.setdefault(k, []).append(t)
            self._returns[c] = hit
        return hit


def _reads(rules: RuleSet, r: int, q: int) -> np.ndarray:
    dfa = rules.rule(r).dfa
    return dfa.table[q, dfa.byte_classes] >= 0
