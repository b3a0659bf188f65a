"""Rules inlined into their callers, so that a text runs through few stack frames.

A Lark grammar is a chain of small rules (an expression grammar is one rule per precedence
level: `expr -> or_expr -> and_expr -> ... -> primary`), and each is a frame on the stack: at
every boundary a mask pops and pushes through the whole chain. Only recursion needs a frame of
its own. So a depth-first walk of the calls from the start marks the rules a call leads back to
(the targets of back edges: `expr`, reached again from `primary` through parentheses); every
other rule is substituted into its callers, which then read it in their own automaton. Greedy
terminal rules stay calls (their returns are what makes them greedy), and so does a rule whose
automaton is large: over INLINE_NFA_STATES where it is used in several places (copies multiply),
over INLINE_ONCE_NFA_STATES anywhere.
"""

from __future__ import annotations

from typing import Collection

from ...automata import ir
from ...automata.nfa import nfa_states
from ...automata.rule_facts import callees, replaced_calls

INLINE_NFA_STATES = 800  # a rule used in several places
INLINE_ONCE_NFA_STATES = 20_000  # a rule used once
MAX_INLINED_NFA_STATES = 50_000  # a rule with what is inlined into it


def inlined(rules: dict[str, ir.Node], start: str, keep: Collection[str]) -> dict[str, ir.Node]:
    """`rules` with every rule but `start`, `keep` and recursion's targets substituted into its
    callers; the rules the start no longer reaches are dropped."""
    breakers = set(keep) | {start} | _back_edge_targets(rules, start)
    uses: dict[str, int] = {}
    for node in rules.values():
        _count_calls(node, uses)
    done: dict[str, ir.Node] = {}
    busy: set[str] = set()

    def body(name: str) -> ir.Node:
        hit = done.get(name)
        if hit is None:
            busy.add(name)
            hit = _substitute(rules[name], lambda c: c not in breakers and c not in busy, body, uses)
            if hit is not rules[name] and nfa_states(hit) > MAX_INLINED_NFA_STATES:
                hit = rules[name]  # too large with its callees inside: they keep frames of their own
            done[name] = hit
            busy.discard(name)
        return hit

    out: dict[str, ir.Node] = {}
    todo = [start]
    while todo:
        name = todo.pop()
        if name in out:
            continue
        out[name] = body(name)
        todo.extend(c for c in callees(out[name]) if c not in out)
    return out


def _count_calls(node: ir.Node, uses: dict[str, int]) -> None:
    """Add to `uses` each call in `node`, once per place it is written."""
    if not callees(node):
        return
    if isinstance(node, ir.RuleRef):
        uses[node.name] = uses.get(node.name, 0) + 1
    elif isinstance(node, (ir.Concat, ir.Alt)):
        for m in node.items:
            _count_calls(m, uses)
    elif isinstance(node, ir.Repeat):
        _count_calls(node.item, uses)
    elif isinstance(node, ir.Graph):
        for _, _, m in node.edges:
            _count_calls(m, uses)


def _back_edge_targets(rules: dict[str, ir.Node], start: str) -> set[str]:
    targets: set[str] = set()
    state: dict[str, int] = {}  # 1: on the walk's path, 2: finished
    stack = [(start, iter(callees(rules[start])))]
    state[start] = 1
    while stack:
        name, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            state[name] = 2
            stack.pop()
            continue
        if nxt not in rules:
            continue
        mark = state.get(nxt)
        if mark == 1:
            targets.add(nxt)
        elif mark is None:
            state[nxt] = 1
            stack.append((nxt, iter(callees(rules[nxt]))))
    return targets


def _substitute(node: ir.Node, inline, body, uses: dict[str, int]) -> ir.Node:
    def replace(call: ir.RuleRef) -> ir.Node:
        if not inline(call.name):
            return call
        sub = body(call.name)
        size = nfa_states(sub)
        if size <= INLINE_NFA_STATES or (uses.get(call.name, 0) <= 1 and size <= INLINE_ONCE_NFA_STATES):
            return sub
        return call

    return replaced_calls(node, replace)
