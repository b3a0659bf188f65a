"""Grammars of rules: one byte DFA per rule, with call edges, run with a stack of frames.

A rule's DFA reads bytes and *call symbols* (one per callee rule). A matcher position is a set
of stacks (nondeterminism is rare in practice: JSON keeps one); a stack is a linked list of
frames `(rule, state, parent)`, immutable and hashable, so histories, rollback and fork stay
cheap. The top frame is the rule being read; a parent frame holds the state its rule returns to.

Left recursion (a rule reaching itself without reading a byte) would push forever and is
rejected at compile time; every rule must derive some string (checked too), which makes every
live DFA state completable in any context: what the token index relies on.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Mapping, Optional

import numpy as np

from ..errors import EmptyLanguageError, GrammarError, LimitExceededError
from ..limits import Limits
from . import ir
from .dfa import DFA, determinize, minimize
from .nfa import build_nfa

Stack = Optional[tuple]  # (rule, state, parent, depth) | None below the bottom frame


@dataclass(frozen=True, eq=False)
class RuleSet:
    """The compiled rules. `calls[r][q]` lists (callee, return state) of each call edge."""

    names: tuple[str, ...]
    dfas: tuple[DFA, ...]
    calls: tuple[tuple[tuple[tuple[int, int], ...], ...], ...]
    start: int
    exits: tuple[np.ndarray, ...]  # per rule: bool per state, True if it can call or return
    callees: tuple[tuple[int, ...], ...] = ()  # per rule: the rule id of each call column

    @property
    def n_rules(self) -> int:
        return len(self.names)


def _callees(node: ir.Node) -> tuple[str, ...]:
    """Names of the rules `node` calls, in first-appearance order (its call columns)."""
    out: dict[str, None] = {}
    todo = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, ir.RuleRef):
            out.setdefault(n.name, None)
        elif isinstance(n, (ir.Concat, ir.Alt)):
            todo.extend(reversed(n.items))
        elif isinstance(n, ir.Repeat):
            todo.append(n.item)
        elif isinstance(n, ir.Graph):
            todo.extend(e[2] for e in reversed(n.edges))
    return tuple(out)


@lru_cache(maxsize=4096)
def _rule_dfa(node: ir.Node, max_nfa: int, max_dfa: int, seconds: float) -> tuple[DFA, tuple[str, ...]]:
    """A rule's DFA over bytes and its own call columns; shared by every grammar that has the
    same rule (strings, numbers, "any JSON value" recur in almost every schema)."""
    callees = _callees(node)
    limits = Limits(max_nfa_states=max_nfa, max_dfa_states=max_dfa, max_compile_seconds=seconds)
    nfa = build_nfa(node, max_nfa, {name: k for k, name in enumerate(callees)})
    try:
        return determinize(nfa, limits, n_calls=len(callees)), callees
    except EmptyLanguageError:
        # A rule with no derivation at all (a `false` schema, an empty enum): one dead state.
        # Callers prune calls to it; only an empty start rule is an error.
        empty = DFA(np.zeros(256), np.full((1, 1), -1), np.zeros(1, dtype=np.bool_), np.zeros(len(callees)))
        return empty, callees


def compile_rules(rules: Mapping[str, ir.Node], start: str, limits: Limits = Limits()) -> RuleSet:
    if start not in rules:
        raise GrammarError(f"start rule {start!r} is not defined")
    names = tuple(rules)
    ids = {name: k for k, name in enumerate(names)}
    dfas = []
    calls = []
    callee_ids = []
    for name in names:
        try:
            dfa, callees = _rule_dfa(rules[name], limits.max_nfa_states, limits.max_dfa_states, limits.max_compile_seconds)
        except GrammarError as exc:
            raise GrammarError(f"rule {name!r}: {exc}") from None
        unknown = [c for c in callees if c not in ids]
        if unknown:
            raise GrammarError(f"rule {name!r}: reference to unknown rule {unknown[0]!r}")
        dfas.append(dfa)
        targets = tuple(ids[c] for c in callees)
        callee_ids.append(targets)
        calls.append(_call_edges(dfa, targets))
    exits = tuple(_exits(d, c) for d, c in zip(dfas, calls))
    rs = RuleSet(names, tuple(dfas), tuple(calls), ids[start], exits, tuple(callee_ids))
    productive = _productive(rs)
    if not productive[rs.start]:
        exc = GrammarError("the grammar accepts no document at all (its start rule derives nothing)")
        exc.empty_rules = tuple(name for name, ok in zip(rs.names, productive) if not ok)  # type: ignore[attr-defined]
        raise exc
    if not all(productive):
        rs = _prune(rs, productive)
    _check_no_left_recursion(rs)
    return rs


def _prune(rs: RuleSet, productive: list[bool]) -> RuleSet:
    """Drop calls of rules that derive nothing (e.g. a `false` branch), then re-trim each DFA so
    that every remaining state can still complete."""
    dfas, calls = [], []
    for r, dfa in enumerate(rs.dfas):
        callees = _callee_ids(rs, r)
        # Callees with identical call edges share a class column: kill a column only when
        # every callee in it is dead; the dead ones are dropped from the call lists anyway.
        live_cols = {int(dfa.call_classes[k]) for k, callee in enumerate(callees) if productive[callee]}
        dead_cols = sorted({int(dfa.call_classes[k]) for k, callee in enumerate(callees) if not productive[callee]} - live_cols)
        has_dead = any(not productive[callee] for callee in callees)
        if not productive[r] or not has_dead:
            dfas.append(dfa)
            calls.append(rs.calls[r])
            continue
        table = dfa.table.copy()
        table[:, dead_cols] = -1
        classes = np.concatenate([dfa.byte_classes, dfa.call_classes])
        new = minimize(classes, table, dfa.accepting, len(dfa.call_classes))
        dfas.append(new)
        calls.append(_call_edges(new, callees, productive))
    exits = tuple(_exits(d, c) for d, c in zip(dfas, calls))
    return RuleSet(rs.names, tuple(dfas), tuple(calls), rs.start, exits, rs.callees)


def _call_edges(dfa: DFA, targets: tuple[int, ...], productive: Optional[list[bool]] = None) -> tuple:
    """Per state, the (callee, return state) of each defined call edge, in call-column order;
    only the edges of productive callees when `productive` is given."""
    calls: list[tuple] = [()] * dfa.n_states
    if not targets:
        return tuple(calls)
    sub = dfa.table[:, dfa.call_classes]
    qs, ks = np.nonzero(sub >= 0)  # row-major: by state, then by call column
    per_state: dict[int, list[tuple[int, int]]] = {}
    for q, k, t in zip(qs.tolist(), ks.tolist(), sub[qs, ks].tolist()):
        if productive is None or productive[targets[k]]:
            per_state.setdefault(q, []).append((targets[k], t))
    for q, edges in per_state.items():
        calls[q] = tuple(edges)
    return tuple(calls)


def _exits(dfa: DFA, calls: tuple) -> np.ndarray:
    """Per state: can it call or return."""
    return np.fromiter(map(bool, calls), dtype=np.bool_, count=dfa.n_states) | dfa.accepting


def _callee_ids(rs: RuleSet, r: int) -> tuple[int, ...]:
    return rs.callees[r]


def _productive(rs: RuleSet) -> list[bool]:
    """Which rules derive at least one string (the others' calls are dead ends)."""
    from .reach import reaches_accepting  # numba loads on the first compile, not on import

    productive = [False] * rs.n_rules
    changed = True
    while changed:
        changed = False
        for r, dfa in enumerate(rs.dfas):
            if productive[r]:
                continue
            # Reachability from the start over bytes and calls of productive rules.
            allowed = np.zeros(dfa.n_classes, dtype=np.bool_)
            allowed[dfa.byte_classes] = True
            allowed[[c for c, k in zip(dfa.call_classes.tolist(), rs.callees[r]) if productive[k]]] = True
            if reaches_accepting(dfa.table, dfa.accepting, allowed):
                productive[r] = changed = True
    return productive


def _nullable(rs: RuleSet) -> list[bool]:
    null = [False] * rs.n_rules
    changed = True
    while changed:
        changed = False
        for r in range(rs.n_rules):
            if null[r]:
                continue
            seen, todo = {0}, [0]
            while todo:
                q = todo.pop()
                if rs.dfas[r].accepting[q]:
                    null[r] = changed = True
                    break
                for k, t in rs.calls[r][q]:
                    if null[k] and t not in seen:
                        seen.add(t)
                        todo.append(t)
    return null


def _check_no_left_recursion(rs: RuleSet) -> None:
    null = _nullable(rs)
    # first[r]: rules r may call before reading any byte.
    first: list[set[int]] = []
    for r in range(rs.n_rules):
        out: set[int] = set()
        seen, todo = {0}, [0]
        while todo:
            q = todo.pop()
            for k, t in rs.calls[r][q]:
                out.add(k)
                if null[k] and t not in seen:
                    seen.add(t)
                    todo.append(t)
        first.append(out)
    for r in range(rs.n_rules):
        seen, todo = set(), list(first[r])
        while todo:
            k = todo.pop()
            if k == r:
                raise GrammarError(
                    f"rule {rs.names[r]!r} is left-recursive (it can reach itself before reading "
                    "a byte); rewrite it as iteration, e.g. `a: b (\"+\" b)*`"
                )
            if k not in seen:
                seen.add(k)
                todo.extend(first[k])


class StackSemantics:
    """Byte steps over sets of stacks, with memoized closures. Shared and thread-safe (the memo
    is a dict whose entries are immutable; concurrent fills only repeat work)."""

    def __init__(self, rules: RuleSet, max_depth: int = 10_000) -> None:
        self.rules = rules
        self.max_depth = max_depth
        self._closure: dict[Stack, tuple[frozenset, bool]] = {}
        self.rows = [d.table.tolist() for d in rules.dfas]  # per rule: table as lists
        self.classes = [d.byte_classes.tolist() for d in rules.dfas]  # per rule: byte -> class

    def tables(self, r: int) -> tuple[list[list[int]], list[int]]:
        """Rule r's table and byte classes as lists (fast single steps)."""
        return self.rows[r], self.classes[r]

    def initial(self) -> frozenset:
        return frozenset({(self.rules.start, 0, None, 1)})

    def closure(self, stack: tuple) -> tuple[frozenset, bool]:
        """(stacks reachable without reading a byte by calls and returns, whether one of the
        returns empties the stack: the text so far is complete)."""
        hit = self._closure.get(stack)
        if hit is not None:
            return hit
        out: set[tuple] = set()
        complete = False
        todo = [stack]
        rs = self.rules
        while todo:
            s = todo.pop()
            if s in out:
                continue
            out.add(s)
            r, q, parent, depth = s
            if rs.calls[r][q] and depth >= self.max_depth:
                raise LimitExceededError(
                    "grammar stack depth", self.max_depth, "StackSemantics(max_depth=...) / Limits"
                )
            for k, t in rs.calls[r][q]:
                todo.append((k, 0, (r, t, parent, depth), depth + 1))
            if rs.dfas[r].accepting[q]:
                if parent is None:
                    complete = True
                else:
                    todo.append(parent)
        result = (frozenset(out), complete)
        self._closure[stack] = result
        return result

    def step(self, stacks: Iterable[tuple], byte: int) -> frozenset:
        nxt = set()
        for s in stacks:
            for r, q, parent, depth in self.closure(s)[0]:
                t = self.rows[r][q][self.classes[r][byte]]
                if t >= 0:
                    nxt.add((r, t, parent, depth))
        return frozenset(nxt)

    def advance(self, stacks: frozenset, data: bytes) -> Optional[frozenset]:
        for b in data:
            stacks = self.step(stacks, b)
            if not stacks:
                return None
        return stacks

    def is_complete(self, stacks: frozenset) -> bool:
        return any(self.closure(s)[1] for s in stacks)

    def next_bytes(self, stacks: frozenset) -> set[int]:
        """Bytes that can come next (for forced bytes)."""
        out: set[int] = set()
        for s in stacks:
            for r, q, _, _ in self.closure(s)[0]:
                row, classes = self.rows[r][q], self.classes[r]
                out.update(b for b in range(256) if row[classes[b]] >= 0)
        return out
