"""A rule's expansions as IR with shared prefixes and suffixes written once.

Lark's loader expands every optional part of a rule into alternatives (`a b? c? d?` becomes 8
expansions, each a full copy of the rule), so a SQL `select_core` reached the NFA builder as
24 copies of its body (13,130 NFA states for a 45-state DFA). The expansions are a finite set
of symbol sequences: here they become a trie whose equal subtries are merged (the minimal
acyclic automaton over symbols), written as nested Concat/Alt where nothing was merged and as an
ir.Graph (symbols on its edges) where suffixes are shared. The language is the same set of
sequences; only the copies go.
"""

from __future__ import annotations

from typing import Callable, Hashable

from ...automata import ir


def factored(expansions: list[tuple], lower: Callable[[Hashable], ir.Node]) -> ir.Node:
    """IR for the union of `expansions` (tuples of hashable items), each item lowered by `lower`
    (called once per distinct item)."""
    children: list[dict[Hashable, int]] = [{}]
    ends = [False]
    for e in expansions:
        node = 0
        for item in e:
            nxt = children[node].get(item)
            if nxt is None:
                nxt = children[node][item] = len(children)
                children.append({})
                ends.append(False)
            node = nxt
        ends[node] = True
    # Merge equal subtries, leaves first (a child's id is always larger than its parent's).
    canon: dict[tuple, int] = {}
    rep = [0] * len(children)
    for node in range(len(children) - 1, -1, -1):
        sig = (ends[node], frozenset((item, rep[c]) for item, c in children[node].items()))
        rep[node] = canon.setdefault(sig, node)
    lowered: dict[Hashable, ir.Node] = {}

    def low(item: Hashable) -> ir.Node:
        hit = lowered.get(item)
        if hit is None:
            hit = lowered[item] = lower(item)
        return hit

    kept = sorted(set(rep))
    incoming = dict.fromkeys(kept, 0)
    for node in kept:
        for c in children[node].values():
            incoming[rep[c]] += 1
    if all(n <= 1 or not children[node] for node, n in incoming.items()):  # (the empty end is free)
        return _tree(0, children, ends, low)
    index = {node: k for k, node in enumerate(kept)}
    edges = tuple((index[node], index[rep[c]], low(item)) for node in kept for item, c in children[node].items())
    finals = tuple(index[node] for node in kept if ends[node])
    return ir.Graph(len(kept), index[0], finals, edges)


def _tree(node: int, children: list[dict], ends: list[bool], low: Callable[[Hashable], ir.Node]) -> ir.Node:
    """The trie below `node` as nested Concat/Alt (no subtrie shared). Runs of single children
    are followed in a loop: recursion only at branches (a rule may be thousands of symbols long)."""
    parts = []
    for item, child in children[node].items():
        run = [low(item)]
        while len(children[child]) == 1 and not ends[child]:
            (item, child), = children[child].items()
            run.append(low(item))
        if children[child]:
            run.append(_tree(child, children, ends, low))
        parts.append(ir.concat(*run))
    if not parts:
        return ir.EMPTY
    body = ir.alt(*parts)
    return ir.repeat(body, 0, 1) if ends[node] else body
