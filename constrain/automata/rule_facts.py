"""What a grammar's rules derive, read from their IR without building any automaton.

compile_rules must know up front which rules derive some string (calls of the others are
dropped), which derive the empty string, and which rules a rule may call before reading a byte
(left recursion is refused); everything else waits until a matcher reaches the rule (its DFA is
built then). These facts are about languages, so they equal what the rule DFAs would say: a call
counts only where a whole derivation passes through it, as in a trimmed DFA.
"""

from __future__ import annotations

from typing import Callable, Mapping

import numpy as np

from . import ir
from .nfa import _sequences

Live = Callable[[str], bool]


def _embedded_nonempty(node: ir.Embedded) -> bool:
    from .reach import reaches_accepting  # numba loads on the first compile, not on import

    if isinstance(node, ir.Deferred):
        return True  # by its contract, without building it

    dfa = node.dfa
    return bool(reaches_accepting(dfa.table, dfa.accepting, np.ones(dfa.n_classes, dtype=np.bool_)))


def callees(node: ir.Node) -> tuple[str, ...]:
    """Names of the rules `node` calls, in first-appearance order (a rule DFA's call columns)."""
    # (ir.fact inlined: every node of every rule is asked, several times per compile)
    facts = node.__dict__
    found = facts.get("_callees")
    if found is None:
        found = facts["_callees"] = _find_callees(node)
    return found


def _find_callees(n: ir.Node) -> tuple[str, ...]:
    kind = type(n)
    if kind is ir.Chars:
        return ()
    if kind is ir.Concat or kind is ir.Alt:
        parts = [p for p in map(callees, n.items) if p]  # type: ignore[union-attr]
    elif kind is ir.RuleRef:
        return (n.name,)  # type: ignore[union-attr]
    elif kind is ir.Repeat:
        return callees(n.item)  # type: ignore[union-attr]
    elif kind is ir.Graph:
        parts = [p for p in (callees(e[2]) for e in n.edges) if p]  # type: ignore[union-attr]
    else:
        return ()
    if len(parts) <= 1:
        return parts[0] if parts else ()
    return tuple(dict.fromkeys(name for p in parts for name in p))


class _Fact:
    """A boolean fact about nodes, memoized per analysis; for nodes that call no rule it does
    not depend on the analysis and is remembered on the node (`ground`)."""

    ground = ""

    def __init__(self) -> None:
        self.memo: dict[int, bool] = {}

    def __call__(self, node: ir.Node) -> bool:
        facts = node.__dict__
        found = facts.get(self.ground)  # (only call-free nodes have one)
        if found is not None:
            return found
        if not callees(node):
            found = facts[self.ground] = self._eval(node)
            return found
        key = id(node)
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo[key] = self._eval(node)
        return hit

    def _eval(self, node: ir.Node) -> bool:
        raise NotImplementedError


class _Derives(_Fact):
    """Does a node derive a string, rule calls counting as derivable where `live` says so."""

    ground = "_derives"

    def __init__(self, live: Live) -> None:
        super().__init__()
        self.live = live

    def _eval(self, node: ir.Node) -> bool:
        kind = type(node)
        if kind is ir.Chars:
            return bool(_sequences(node.ranges))  # type: ignore[union-attr]
        if kind is ir.Concat:
            for n in node.items:  # type: ignore[union-attr]
                if not self(n):
                    return False
            return True
        if kind is ir.Alt:
            for n in node.items:  # type: ignore[union-attr]
                if self(n):
                    return True
            return False
        if isinstance(node, ir.Repeat):
            return node.min == 0 or self(node.item)
        if isinstance(node, ir.RuleRef):
            return self.live(node.name)
        if isinstance(node, ir.Embedded):
            return _embedded_nonempty(node)
        if isinstance(node, ir.Graph):
            return _reaches_final(node, self)
        raise TypeError(f"not an IR node: {node!r}")


def _reaches_final(g: ir.Graph, derives: Callable[[ir.Node], bool]) -> bool:
    """Is a final state of `g` reachable from its start over edges that derive something?
    Searched forward, asking `derives` only of the edges on the way (an object's members are
    mostly optional: its start is final, or a path of required members gets there)."""
    finals = set(g.finals)
    if g.start in finals:
        return True
    out = g.__dict__.get("_out")
    if out is None:
        out = {}
        for u, v, m in g.edges:
            out.setdefault(u, []).append((v, m))
        g.__dict__["_out"] = out
    seen = {g.start}
    todo = [g.start]
    while todo:
        for v, m in out.get(todo.pop(), ()):
            if v not in seen and derives(m):
                if v in finals:
                    return True
                seen.add(v)
                todo.append(v)
    return False


def _live_states(g: ir.Graph, derives: Callable[[ir.Node], bool]) -> set[int]:
    """States of `g` from which a final state is reachable over edges that derive something."""
    into: dict[int, list[int]] = {}
    for u, v, node in g.edges:
        if derives(node):
            into.setdefault(v, []).append(u)
    return _search(into, g.finals)


def _search(adjacent: dict[int, list[int]], starts) -> set[int]:
    seen = set(starts)
    todo = list(seen)
    while todo:
        for v in adjacent.get(todo.pop(), ()):
            if v not in seen:
                seen.add(v)
                todo.append(v)
    return seen


class _Nullable(_Fact):
    """Does a node derive the empty string (calls of `nullable` rules derive it)."""

    ground = "_nullable"

    def __init__(self, nullable: set[str]) -> None:
        super().__init__()
        self.nullable = nullable

    def _eval(self, node: ir.Node) -> bool:
        kind = type(node)
        if kind is ir.Chars:
            return False
        if kind is ir.Concat:
            for n in node.items:  # type: ignore[union-attr]
                if not self(n):
                    return False
            return True
        if kind is ir.Alt:
            for n in node.items:  # type: ignore[union-attr]
                if self(n):
                    return True
            return False
        if isinstance(node, ir.Repeat):
            return node.min == 0 or self(node.item)
        if isinstance(node, ir.RuleRef):
            return node.name in self.nullable
        if isinstance(node, ir.Embedded):
            return not isinstance(node, ir.Deferred) and bool(node.dfa.accepting[0])
        if isinstance(node, ir.Graph):
            reached = _reach(node, node.start, self)
            return any(f in reached for f in node.finals)
        raise TypeError(f"not an IR node: {node!r}")


def _reach(g: ir.Graph, start: int, through: Callable[[ir.Node], bool]) -> set[int]:
    """States of `g` reachable from `start` over edges whose node satisfies `through`."""
    out: dict[int, list[int]] = {}
    for u, v, node in g.edges:
        if through(node):
            out.setdefault(u, []).append(v)
    return _search(out, (start,))


def _fixpoint(rules: Mapping[str, ir.Node], callers: Mapping[str, set[str]], holds: Callable[[set[str]], Callable[[ir.Node], bool]]) -> set[str]:
    """The least set of rules whose IR satisfies `holds(set)`: rules are evaluated callees first
    (translators add a rule before the rules it calls) and again when one of their callees joins."""
    found: set[str] = set()
    todo = list(rules)  # popped from the end: the rules added last first
    queued = set(todo)
    while todo:
        name = todo.pop()
        queued.discard(name)
        if name in found or not holds(found)(rules[name]):
            continue
        found.add(name)
        for caller in callers.get(name, ()):
            if caller not in found and caller not in queued:
                queued.add(caller)
                todo.append(caller)
    return found


def productive_rules(rules: Mapping[str, ir.Node], callers: Mapping[str, set[str]]) -> set[str]:
    """The rules that derive at least one string. `callers[k]`: the rules that call k."""
    return _fixpoint(rules, callers, lambda found: _Derives(found.__contains__))


def nullable_rules(rules: Mapping[str, ir.Node], callers: Mapping[str, set[str]]) -> set[str]:
    """The rules that derive the empty string."""
    return _fixpoint(rules, callers, _Nullable)


def first_calls(node: ir.Node, live: Live, nullable: set[str]) -> set[str]:
    """The rules `node` may call before reading a byte, in some complete derivation (calls of
    rules that `live` rejects derive nothing)."""
    return FirstCalls(live, nullable)(node)


class FirstCalls:
    """first_calls for many rules of one grammar: what it learns about shared sub-trees (which
    derive something, which derive the empty string) serves every rule."""

    def __init__(self, live: Live, nullable: set[str]) -> None:
        self.derives = _Derives(live)
        self.empty = _Nullable(nullable)
        self._may: dict[int, bool] = {}

    def __call__(self, node: ir.Node) -> set[str]:
        derives, empty = self.derives, self.empty
        out: set[str] = set()
        if not self._may_call_first(node) or not derives(node):
            return out
        todo = [node]
        seen: set[int] = set()
        while todo:  # every node on the stack derives something and lies on a derivation
            n = todo.pop()
            if id(n) in seen or not callees(n):
                continue
            seen.add(id(n))
            if isinstance(n, ir.RuleRef):
                out.add(n.name)
            elif isinstance(n, ir.Concat):
                if all(derives(m) for m in n.items):
                    for m in n.items:
                        todo.append(m)
                        if not empty(m):
                            break
            elif isinstance(n, ir.Alt):
                todo.extend(m for m in n.items if derives(m))
            elif isinstance(n, ir.Repeat):
                if (node_max := n.max) is None or node_max >= 1:
                    if derives(n.item):
                        todo.append(n.item)
            elif isinstance(n, ir.Graph):
                live_states = _live_states(n, derives)
                if n.start in live_states:
                    usable = [(a, b, m) for a, b, m in n.edges if b in live_states and derives(m)]
                    sub = ir.Graph(n.n_states, n.start, n.finals, tuple(usable))
                    reached = _reach(sub, n.start, empty)
                    todo.extend(m for a, _, m in usable if a in reached)
        return out

    def _may_call_first(self, n: ir.Node) -> bool:
        """Could `n` call a rule before reading a byte, whatever derives? (A cheap bound on
        __call__: most rules start with a byte, as objects do with `{`, and then need no
        derivability worked out over all of their members.)"""
        if not callees(n):
            return False
        hit = self._may.get(id(n))
        if hit is not None:
            return hit
        if isinstance(n, ir.RuleRef):
            found = True
        elif isinstance(n, ir.Concat):
            found = False
            for m in n.items:
                if self._may_call_first(m):
                    found = True
                    break
                if not self.empty(m):
                    break
        elif isinstance(n, ir.Alt):
            found = any(self._may_call_first(m) for m in n.items)
        elif isinstance(n, ir.Repeat):
            found = (n.max is None or n.max >= 1) and self._may_call_first(n.item)
        elif isinstance(n, ir.Graph):
            reached = _reach(n, n.start, self.empty)
            found = any(self._may_call_first(m) for a, _, m in n.edges if a in reached)
        else:
            found = False
        self._may[id(n)] = found
        return found


def without_calls(node: ir.Node, dead: frozenset[str]) -> ir.Node:
    """`node` with the calls of `dead` rules replaced by NOTHING (the same language over the
    other rules' calls), and the parts that can then match nothing dropped: a sequence with
    such a part, an alternative, a graph edge (an object member whose value is `false` leaves
    the object a graph of fixed words that word_graph determinizes directly)."""
    memo: dict[int, ir.Node] = {}

    def go(n: ir.Node) -> ir.Node:
        hit = memo.get(id(n))
        if hit is not None:
            return hit
        if dead.isdisjoint(callees(n)):
            out: ir.Node = n  # (most sub-trees: nothing to replace below)
        elif isinstance(n, ir.RuleRef):
            out = ir.NOTHING
        elif isinstance(n, ir.Concat):
            items = tuple(go(m) for m in n.items)
            out = ir.NOTHING if any(map(_is_nothing, items)) else _same_or(n, ir.Concat, items)
        elif isinstance(n, ir.Alt):
            items = tuple(m for m in map(go, n.items) if not _is_nothing(m))
            out = ir.NOTHING if not items else items[0] if len(items) == 1 else _same_or(n, ir.Alt, items)
        elif isinstance(n, ir.Repeat):
            item = go(n.item)
            if _is_nothing(item):
                out = ir.EMPTY if n.min == 0 else ir.NOTHING
            else:
                out = n if item is n.item else ir.Repeat(item, n.min, n.max)
        elif isinstance(n, ir.Graph):
            edges = tuple((a, b, m) for a, b, m in ((a, b, go(m)) for a, b, m in n.edges) if not _is_nothing(m))
            same = len(edges) == len(n.edges) and all(e[2] is f[2] for e, f in zip(edges, n.edges))
            out = n if same else ir.Graph(n.n_states, n.start, n.finals, edges)
        else:
            out = n
        memo[id(n)] = out
        return out

    return go(node)


def replaced_calls(node: ir.Node, replace: Callable[[ir.RuleRef], ir.Node]) -> ir.Node:
    """`node` with each call replaced by `replace(call)` (which may return the call itself);
    the sub-trees without calls, and those where nothing changed, are kept as they are."""
    memo: dict[int, ir.Node] = {}

    def go(n: ir.Node) -> ir.Node:
        hit = memo.get(id(n))
        if hit is not None:
            return hit
        if not callees(n):
            out: ir.Node = n
        elif isinstance(n, ir.RuleRef):
            out = replace(n)
        elif isinstance(n, (ir.Concat, ir.Alt)):
            out = _same_or(n, type(n), tuple(go(m) for m in n.items))
        elif isinstance(n, ir.Repeat):
            item = go(n.item)
            out = n if item is n.item else ir.Repeat(item, n.min, n.max)
        elif isinstance(n, ir.Graph):
            edges = tuple((a, b, go(m)) for a, b, m in n.edges)
            out = n if all(e[2] is f[2] for e, f in zip(edges, n.edges)) else ir.Graph(n.n_states, n.start, n.finals, edges)
        else:
            raise TypeError(f"cannot replace the calls of {type(n).__name__}")
        memo[id(n)] = out
        return out

    return go(node)


def _is_nothing(n: ir.Node) -> bool:
    return type(n) is ir.Chars and not n.ranges  # type: ignore[union-attr]


def _same_or(n, cls, items: tuple) -> ir.Node:
    return n if len(items) == len(n.items) and all(a is b for a, b in zip(items, n.items)) else cls(items)
