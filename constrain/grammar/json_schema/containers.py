"""Objects and arrays as IR: members in schema order (or any order), items with counts.

Object members form a small Graph (position in the property list, and whether a comma is due),
so optional properties cost no copies; property values are rule calls, so nesting goes
through the stack. Keys match by meaning: every JSON spelling of a key is that key, and the
"other keys" automaton is the difference of all strings and the named keys.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional, Sequence

from ...automata import compile_ir, ir
from ...automata.algebra import difference
from .lexical import quoted, string_body, string_literal


@lru_cache(maxsize=1)
def _any_string_dfa():
    return compile_ir(quoted(string_body()))


def other_keys(named: Sequence[str]) -> ir.Node:
    """Any JSON string whose value is none of `named`."""
    return _other_keys(tuple(sorted(set(named))))


@lru_cache(maxsize=1024)
def _other_keys(named: tuple[str, ...]) -> ir.Node:
    if not named:
        return ir.Embedded(_any_string_dfa())
    return ir.Embedded(difference(_any_string_dfa(), compile_ir(ir.alt(*(string_literal(k) for k in named)))))


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


def object_in_order(
    members: Sequence[tuple[str, ir.Node, bool]], extra_member: Optional[ir.Node], ws: ir.Node,
    counts: Counts = Counts(0, None), floating: Sequence[tuple[str, ir.Node]] = (),
) -> ir.Node:
    """`{...}` with `members` (key, value, required) in this order, each at most once;
    `extra_member` (None if other keys are forbidden) may appear anywhere between them; the
    number of members within `counts`. `floating` members (required keys the schema does not
    list in `properties`) may come anywhere, each exactly once (a bit each: callers bound them)."""
    comma = ir.concat(ws, ir.literal(","), ws)
    colon = ir.concat(ws, ir.literal(":"), ws)
    n = len(members)
    nc = counts.n
    nf = len(floating)
    full = (1 << nf) - 1

    def state(i: int, first: int, c: int, mask: int) -> int:
        return (((2 * i + first) * nc + c) << nf) | mask

    def member(sep: ir.Node, key: str, value: ir.Node) -> ir.Node:
        return ir.concat(sep, string_literal(key, canonical=True), colon, value)

    edges = []
    finals = []
    for i in range(n + 1):
        for first in (0, 1):
            for c in range(nc):
                for mask in range(1 << nf):
                    if first and (c or mask):
                        continue  # "first" only before any member
                    src = state(i, first, c, mask)
                    if i == n and counts.ok(c) and mask == full:
                        finals.append(src)
                    sep = ir.EMPTY if first else comma
                    c2 = counts.step(c)
                    if c2 is not None:
                        if extra_member is not None:
                            edges.append((src, state(i, 0, c2, mask), ir.concat(sep, extra_member)))
                        for f, (key, value) in enumerate(floating):
                            if not mask & (1 << f):
                                edges.append((src, state(i, 0, c2, mask | 1 << f), member(sep, key, value)))
                    if i < n:
                        key, value, required = members[i]
                        if c2 is not None:
                            edges.append((src, state(i + 1, 0, c2, mask), member(sep, key, value)))
                        if not required:
                            edges.append((src, state(i + 1, first, c, mask), ir.EMPTY))
    graph = ir.Graph((2 * (n + 1) * nc) << nf, state(0, 1, 0, 0), tuple(finals), tuple(edges))
    return ir.concat(ir.literal("{"), ws, graph, ws, ir.literal("}"))


def object_any_order(
    members: Sequence[tuple[str, ir.Node, bool]], extra_member: Optional[ir.Node], ws: ir.Node,
    counts: Counts = Counts(0, None),
) -> ir.Node:
    """Like object_in_order, but the named members may come in any order: the Graph tracks
    which are present (2^n positions, so callers bound n)."""
    comma = ir.concat(ws, ir.literal(","), ws)
    colon = ir.concat(ws, ir.literal(":"), ws)
    n = len(members)
    nc = counts.n
    required = sum(1 << i for i, (_, _, req) in enumerate(members) if req)

    def state(mask: int, first: int, c: int) -> int:
        return (2 * mask + first) * nc + c

    edges = []
    finals = []
    for mask in range(1 << n):
        for first in (0, 1):
            if first and mask:
                continue  # "first" only before any member
            for c in range(nc):
                if first and c:
                    continue
                src = state(mask, first, c)
                sep = ir.EMPTY if first else comma
                c2 = counts.step(c)
                if c2 is not None:
                    if extra_member is not None:
                        edges.append((src, state(mask, 0, c2), ir.concat(sep, extra_member)))
                    for i, (key, value, _) in enumerate(members):
                        if not mask & (1 << i):
                            edges.append((src, state(mask | 1 << i, 0, c2), ir.concat(sep, string_literal(key, canonical=True), colon, value)))
                if mask & required == required and counts.ok(c):
                    finals.append(src)
    graph = ir.Graph((2 << n) * nc, state(0, 1, 0), tuple(finals), tuple(edges))
    return ir.concat(ir.literal("{"), ws, graph, ws, ir.literal("}"))


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
