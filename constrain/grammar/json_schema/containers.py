"""Objects and arrays as IR: members in schema order (or any order), items with counts.

Object members form a small Graph (position in the property list, and whether a comma is due),
so optional properties cost no copies; property values are rule calls, so nesting goes
through the stack. Keys match by meaning: every JSON spelling of a key is that key, and the
"other keys" automaton is every string but the named keys (spelled_keys.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Optional, Sequence

from ...automata import compile_ir, ir
from ...automata.algebra import difference
from ...limits import Limits
from .lexical import any_string as any_string_node, string_literal
from .spelled_keys import other_keys_bound, other_keys_dfa


@lru_cache(maxsize=1)
def _any_string_dfa():
    return compile_ir(any_string_node())


def other_keys(named: Sequence[str]) -> ir.Node:
    """Any JSON string whose value is none of `named`."""
    return _other_keys(tuple(sorted(set(named))))


@lru_cache(maxsize=1024)
def _other_keys(named: tuple[str, ...]) -> ir.Node:
    """Built when first needed: only the objects the first masks reach need theirs then. (Key
    sets too large for Limits() take the product, which enforces them, at once.)"""
    any_string = _any_string_dfa()
    if not named:
        return ir.Embedded(any_string)
    bound = other_keys_bound(any_string, named)
    if bound > Limits().max_dfa_states:
        return ir.Embedded(difference(any_string, compile_ir(ir.alt(*(string_literal(k) for k in named)))))
    return ir.Deferred(lambda: other_keys_dfa(any_string, named), bound)


def member(key: ir.Node, value: ir.Node, ws: ir.Node) -> ir.Node:
    """`key: value` for a language of keys (other keys, or those matching a pattern); made a rule
    of its own by the caller, so the object's automaton calls it instead of copying it."""
    return ir.concat(key, ws, ir.literal(":"), ws, value)


class Counts:
    """How many members an object has so far, as far as min/maxProperties care: 0..cap, where
    cap saturates ("cap or more") when there is no maximum."""

    def __init__(self, lo: int, hi: Optional[int]) -> None:
        self.lo, self.hi = lo, hi
        self.cap = hi if hi is not None else lo
        self.n = self.cap + 1

    def step(self, c: int) -> Optional[int]:
        """The count after one more member (None: over the maximum)."""
        if self.hi is not None:
            return c + 1 if c < self.hi else None
        return min(c + 1, self.cap)

    def ok(self, c: int) -> bool:
        return c >= self.lo


@dataclass(frozen=True)
class Member:
    """A named member: `"key": value`; `witness` is the set (bits) of "some other key exists"
    conditions its presence satisfies (see objects.py)."""

    key: str
    value: ir.Node
    required: bool
    witness: int = 0


def object_graph(
    ordered: Sequence[Member], floating: Sequence[Member], extras: Sequence[tuple[ir.Node, int]], ws: ir.Node,
    counts: Counts = Counts(0, None), n_witness: int = 0, floating_ok: Callable[[int], bool] = lambda used: True,
    conditions: Optional[Any] = None,
) -> ir.Node:
    """`{...}`: the `ordered` members in this order (each at most once, required ones present);
    `floating` members anywhere, each at most once; `extras` (member nodes for key languages,
    with their witness bits) anywhere, any number of times; the member count within `counts`;
    every witness condition met; `floating_ok` of the set of floating members used (their
    dependencies); `conditions` (key_conditions.MemberConditions) hold at the end. A Graph over
    (position, first?, count, floating used, witnesses met, residual condition), built from the
    start state so only reachable states exist."""
    comma = ir.concat(ws, ir.literal(","), ws)
    colon = ir.concat(ws, ir.literal(":"), ws)
    n = len(ordered)
    all_witness = (1 << n_witness) - 1
    required_floating = sum(1 << f for f, m in enumerate(floating) if m.required)
    start = (0, True, 0, 0, 0, conditions.start() if conditions is not None else None)
    index = {start: 0}
    todo = [start]
    edges: list[tuple[int, int, ir.Node]] = []
    finals = []

    def go(src: int, dst: tuple, node: ir.Node) -> None:
        if dst not in index:
            index[dst] = len(index)
            todo.append(dst)
        edges.append((src, index[dst], node))

    made: dict[tuple, ir.Node] = {}

    def member(sep: ir.Node, m: Member, value: Optional[ir.Node]) -> ir.Node:
        # The key stays one (shared) item, not flattened into its characters: the same
        # language and NFA, and the rule facts visit four items instead of one per character.
        # One node per (separator, key, value): the edges of every graph state that reads the
        # same member share it, and what the compiler learns about it (hash, callees, word).
        v = m.value if value is None else value
        key = (sep is comma, m.key, id(v))
        node = made.get(key)
        if node is None:
            node = made[key] = ir.Concat((*_items(sep), string_literal(m.key, canonical=True), *_items(colon), v))
        return node

    def present(f: Any, m: Member) -> list:
        return [(None, f)] if conditions is None else conditions.present(f, m.key)

    def done(f: Any, used: int) -> bool:
        if conditions is None:
            return True
        return conditions.final(f, [m.key for k, m in enumerate(floating) if not used >> k & 1])

    while todo:
        here = todo.pop()
        i, first, c, used, met, f = here
        src = index[here]
        if (i == n and counts.ok(c) and used & required_floating == required_floating and met == all_witness
                and floating_ok(used) and done(f, used)):
            finals.append(src)
        sep = ir.EMPTY if first else comma
        c2 = counts.step(c)
        if c2 is not None:
            f_other = f if conditions is None else conditions.other(f)
            if f_other is not False:
                for node, bits in extras:
                    go(src, (i, False, c2, used, met | bits, f_other), ir.concat(sep, node))
            for k, m in enumerate(floating):
                if not used >> k & 1:
                    for value, f2 in present(f, m):
                        go(src, (i, False, c2, used | 1 << k, met | m.witness, f2), member(sep, m, value))
        if i < n:
            m = ordered[i]
            if c2 is not None:
                for value, f2 in present(f, m):
                    go(src, (i + 1, False, c2, used, met | m.witness, f2), member(sep, m, value))
            if not m.required:
                f2 = f if conditions is None else conditions.absent(f, m.key)
                if f2 is not False:
                    go(src, (i + 1, first, c, used, met, f2), ir.EMPTY)
    graph = ir.Graph(len(index), 0, tuple(finals), tuple(edges))
    return ir.concat(ir.literal("{"), ws, graph, ws, ir.literal("}"))


def _items(node: ir.Node) -> tuple[ir.Node, ...]:
    return node.items if isinstance(node, ir.Concat) else (node,)


def array(prefix: Sequence[ir.Node], rest: Optional[ir.Node], min_items: int, max_items: Optional[int], ws: ir.Node) -> ir.Node:
    """`[...]` whose item k is prefix[k] (then `rest`, None = no more items), with the count
    between min_items and max_items."""
    comma = ir.concat(ws, ir.literal(","), ws)
    p = len(prefix)
    if rest is None:
        max_items = p if max_items is None else min(max_items, p)
    if max_items is not None and max_items < min_items:
        return ir.NOTHING

    def tail(k: int) -> ir.Node:
        """Items from position k on (k >= 1: each preceded by a comma)."""
        if max_items is not None and k >= max_items:
            return ir.EMPTY
        if k >= p:
            assert rest is not None
            lo = max(0, min_items - k)
            hi = None if max_items is None else max_items - k
            if k == 0:
                more = ir.repeat(ir.concat(comma, rest), max(0, lo - 1), None if hi is None else hi - 1)
                body = ir.concat(rest, more)
                return body if lo >= 1 else ir.repeat(body, 0, 1)
            return ir.repeat(ir.concat(comma, rest), lo, hi)
        item = ir.concat(comma if k else ir.EMPTY, prefix[k], tail(k + 1))
        return item if k < min_items else ir.repeat(item, 0, 1)

    return ir.concat(ir.literal("["), ws, tail(0), ws, ir.literal("]"))
