"""A grammar of rules flattened into arrays for the numba pushdown walk (pushdown_walk.py).

Every rule class (rules.same) gets its states a range of *global* state ids. Per global state:
its rule class, where its row starts in the flat transition table (`row_off`), whether it
accepts, whether its rule is greedy (a Lark terminal's longest match; the bytes its end there
refuses next, those it reads included but those it may return before on condition of the byte
after them, automata/return_checks.py, `refused`: 4 uint64 words), whether it reads any run
of name bytes (name_runs.py), its call edges
(`call_ptr` into `call_rule` / `call_ret`: the callee's class and the global return state), and
a greedy state's returns on condition (`chk_ptr` into `chk_pairs`: the class of the CHECK rule pushed
after it << 8 | the byte it may return before).
`cls[rule, byte]` is the rule's byte class. Table entries are global ids (-1: dead), so the
walk never needs a rule's offset. `start[rule]` is the global id of the rule's state 0, or -1
while the rule is not flattened yet: rules are built lazily (rules.RuleSet), so a walk that
pushes one of those stops and asks for it (`ensure`), and the tables grow.
"""

from __future__ import annotations

import threading

import numpy as np

from ..automata.rules import RuleSet
from .name_runs import name_closed_states


def _grown(arr: np.ndarray, need: int) -> np.ndarray:
    if arr.shape[0] >= need:
        return arr
    out = np.zeros((max(need, 2 * arr.shape[0]), *arr.shape[1:]), dtype=arr.dtype)
    out[: arr.shape[0]] = arr
    return out


class PushdownTables:
    """Grown under a lock; a walk reads one consistent snapshot (`arrays()`)."""

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        n = rules.n_rules
        self.start = np.full(n, -1, dtype=np.int32)
        self.cls = np.zeros((n, 256), dtype=np.int32)
        self.n_states = 0
        self.rule_of = np.zeros(64, dtype=np.int32)
        self.row_off = np.zeros(64, dtype=np.int64)
        self.accepting = np.zeros(64, dtype=np.uint8)
        self.greedy = np.zeros(64, dtype=np.uint8)
        self.reads_any = np.zeros(64, dtype=np.uint8)
        self.free = np.zeros(64, dtype=np.uint8)
        self.refused = np.zeros((64, 4), dtype=np.uint64)
        self.call_ptr = np.zeros(65, dtype=np.int32)
        self.n_table = 0
        self.table = np.zeros(1024, dtype=np.int32)
        self.n_calls = 0
        self.call_rule = np.zeros(64, dtype=np.int32)
        self.call_ret = np.zeros(64, dtype=np.int32)
        self.chk_ptr = np.zeros(65, dtype=np.int32)
        self.n_chk = 0
        self.chk_pairs = np.zeros(16, dtype=np.int32)
        self._lock = threading.Lock()
        self._snapshot: tuple = ()

    def state(self, rep: int, q: int) -> int:
        """The global id of rule class `rep`'s state q (flattening the rule if needed)."""
        if self.start[rep] < 0:
            self.ensure(rep)
        return int(self.start[rep]) + q

    def ensure(self, rep: int) -> None:
        """Flatten rule class `rep` (building its DFA if it is not built yet)."""
        rules = self.rules
        rep = rules.same[rep]
        rule = rules.rule(rep)  # (builds it: outside the lock, RuleSet has its own)
        with self._lock:
            if self.start[rep] >= 0:
                return
            dfa = rule.dfa
            n, width = dfa.table.shape
            base = self.n_states
            top = base + n
            self.rule_of = _grown(self.rule_of, top)
            self.row_off = _grown(self.row_off, top)
            self.accepting = _grown(self.accepting, top)
            self.greedy = _grown(self.greedy, top)
            self.reads_any = _grown(self.reads_any, top)
            self.free = _grown(self.free, top)
            self.refused = _grown(self.refused, top)
            self.call_ptr = _grown(self.call_ptr, top + 1)
            self.chk_ptr = _grown(self.chk_ptr, top + 1)
            self.table = _grown(self.table, self.n_table + n * width)
            table = dfa.table.astype(np.int32)
            alive = table >= 0
            self.table[self.n_table : self.n_table + n * width] = np.where(alive, table + base, -1).ravel()
            self.rule_of[base:top] = rep
            self.row_off[base:top] = range(self.n_table, self.n_table + n * width, width)
            self.n_table += n * width
            self.accepting[base:top] = dfa.accepting
            greedy = bool(getattr(rules, "any_greedy", False) and rules.greedy[rep])
            self.greedy[base:top] = greedy
            checks = rules.checks[rep] if greedy and getattr(rules, "return_checks", False) else {}
            if greedy:  # (what it reads is refused too, but where it returns on condition: chk_*)
                reads = np.packbits(dfa.table[:, dfa.byte_classes] >= 0, axis=1, bitorder="little")
                for q in np.flatnonzero(dfa.accepting).tolist():
                    bits = rules.refused_at(rep, q) | int.from_bytes(reads[q].tobytes(), "little")
                    bits &= ~sum(1 << b for b in checks.get(q, ()))
                    self.refused[base + q] = [bits >> (64 * w) & 0xFFFF_FFFF_FFFF_FFFF for w in range(4)]
            pairs = [(q, b, rules.same[k]) for q in range(n) for b, k in sorted(checks.get(q, {}).items())]
            self.chk_pairs = _grown(self.chk_pairs, self.n_chk + len(pairs))
            self.chk_pairs[self.n_chk : self.n_chk + len(pairs)] = [k << 8 | b for _, b, k in pairs]
            per_state = np.bincount(np.array([q for q, _, _ in pairs], dtype=np.int64), minlength=n)
            self.chk_ptr[base + 1 : top + 1] = np.cumsum(per_state) + self.n_chk
            self.n_chk += len(pairs)
            used = np.zeros(width, dtype=np.bool_)  # (the classes some byte has)
            used[dfa.byte_classes] = True
            self.reads_any[base:top] = alive[:, used].any(axis=1)
            self.cls[rep] = dfa.byte_classes
            self.free[base:top] = name_closed_states(dfa)
            calls = rule.calls
            if any(calls):
                edges = [(rules.same[k], base + t) for q in range(n) for k, t in calls[q]]
                self.call_ptr[base + 1 : top + 1] = np.cumsum([len(c) for c in calls]) + self.n_calls
                self.call_rule = _grown(self.call_rule, self.n_calls + len(edges))
                self.call_ret = _grown(self.call_ret, self.n_calls + len(edges))
                self.call_rule[self.n_calls : self.n_calls + len(edges)] = [k for k, _ in edges]
                self.call_ret[self.n_calls : self.n_calls + len(edges)] = [t for _, t in edges]
                self.n_calls += len(edges)
            else:  # (a terminal: no calls)
                self.call_ptr[base + 1 : top + 1] = self.n_calls
            self.n_states = top
            self.start[rep] = base  # (last: a walk sees the rule only once it is whole)
            self._snapshot = ()

    def arrays(self) -> tuple:
        """(rule_of, row_off, table, cls, accepting, greedy, refused, reads_any, call_ptr,
        call_rule, call_ret, start, free, chk_ptr, chk_pairs): views that later growth does not change."""
        snap = self._snapshot
        if not snap:
            with self._lock:
                snap = self._snapshot = (
                    self.rule_of, self.row_off, self.table, self.cls.copy(), self.accepting, self.greedy, self.refused,
                    self.reads_any, self.call_ptr, self.call_rule, self.call_ret, self.start.copy(), self.free,
                    self.chk_ptr, self.chk_pairs,
                )
        return snap
