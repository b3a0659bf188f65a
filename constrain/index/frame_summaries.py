"""Frame summaries: what one rule frame reads from given trie nodes, whatever lies below it.

A mask walks the token trie with a stack's top rule; where a token crosses a call or the rule's
end, the rest of the stack reads on. Keyed by whole stacks, that work starts afresh under every
new parent (SQL: the same dozen expression rules under hundreds of different stacks). What one
frame reads from given nodes, though, does not depend on what lies below it. A *summary* of
(rule, state, item) holds the tokens read without popping the frame, its callees' included, and
the items where it pops: where its parent reads on. A mask is the stack's summaries chained
downward (stack_index.py), each looked up by (rule, state, item): context-free, so shared by
every position and stack that meets it (Earley's completion, at the trie's granularity).

An *item* is where reading resumes: a set of trie nodes of one trie (the next byte to read is
each node's own), or the root, less the tokens whose first byte is *forbidden* (after a greedy
rule's return: it returns only before a byte it cannot read, automata/stack_semantics.py).
A frame at a *small* item (the subtrees it or its callees can read first hold at most
SMALL_ITEM nodes: most items) is summarized by one numba walk with a stack of its own
(pushdown_walk.py): its callees need no summaries. At larger items and at the root, summaries of
callees are computed before their callers' by a trampoline and shared (a callee reading the
whole `" x..."` region is walked once). Callees never wait on their callers: that would be left
recursion, which compile_rules rejects.

What keeps this cheap on JSON, where most summaries are met once: an item is narrowed to the
nodes its reader can read first (a pop offers every byte some caller may read); a state that
reads none of an item's bytes needs no walk; a summary keeps its parts (cached arrays) unmerged
up to a few (summary.py); a stack's top keeps its summary per (rule, state), parts as they are.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Generator, Optional

import numpy as np

from ..automata.refusals import byte_row
from ..automata.stack_semantics import ALL_BYTES
from ..errors import GrammarError, LimitExceededError
from ..sorted_sets import sorted_unique
from .boundaries import Boundaries
from .checked_items import checks_of, cut, ends_only, root_returns, route_pop, split_returns, walk_pops
from .first_reads import FirstReads
from .follow import IF_FOLLOWS, IF_UNREAD_ALLOWED, follow_row
from .items import EMPTY, ROOT, Items
from .node_sets import merged
from .pushdown_summary import PushdownSummaries
from .row_bits import nonzero_words
from .summary import NOTHING, Summary, of_parts, of_words, part_bytes
from .walk import readable_subtrees_within

if TYPE_CHECKING:
    from .stack_index import StackTokenAutomaton

_NO_WORDS = np.zeros(0, dtype=np.intp)
_NO_BITS = np.zeros(0, dtype=np.uint32)
SMALL_ITEM = 65536  # a frame at an item whose readable subtrees hold at most this many trie nodes:
# one pushdown walk (larger ones share their callees' summaries: see _small; the sweep: cold-lark.md)


class FrameSummaries:
    """The summaries of one StackTokenAutomaton, cached per (rule class, state, item)."""

    def __init__(self, automaton: StackTokenAutomaton, max_nesting: int, max_stacks: int, small_item: int = SMALL_ITEM) -> None:
        self.a = automaton
        self.items = Items(tuple(t.n_nodes for t in automaton.tries))
        rules = automaton.rules
        self._checks = rules.checks if getattr(rules, "return_checks", False) and any(rules.checks) else None
        self.small_item = small_item
        self._check_bits = checks_of(rules) if self._checks is not None else {}  # CHECK rule -> its items' check
        self.max_nesting = max_nesting
        self.max_stacks = max_stacks
        self.pushdown = PushdownSummaries(automaton.rules, max_nesting, max_stacks, automaton.mask_seconds)
        self._memo: dict[tuple[int, int, int], Summary] = {}
        self._found: dict[tuple[int, int, int], Summary] = {}  # get()'s answers by the item as given
        self._walks: dict[tuple[int, int, int], tuple[np.ndarray, np.ndarray, Boundaries]] = {}
        self._tops: dict[tuple[int, int], Summary] = {}
        self._narrow: dict[tuple[int, int, int], int] = {}
        self._small_memo: dict[tuple[int, int, int], bool] = {}
        self.first = FirstReads(automaton.rules, automaton.reads)
        self._greedy = rules.greedy if getattr(rules, "any_greedy", False) else None

    def __len__(self) -> int:
        return len(self._memo)

    def memory_bytes(self) -> int:
        """The arrays the summaries made (tops' parts are other summaries' or walks' arrays)."""
        return sum(part_bytes(p) for s in self._memo.values() for p in s.parts) + sum(
            w[0].nbytes + w[1].nbytes for w in self._walks.values()
        )

    def get(self, rep: int, q: int, item: int, deadline: float) -> Summary:
        """The summary of (rep, q) at `item`, looked up by the item as given first: a mask
        chains ~10 of them, and narrowing each again costs a second lookup."""
        given = (rep, q, item)
        hit = self._found.get(given)
        if hit is not None:
            return hit
        item = self._narrowed(rep, q, item)
        if item == EMPTY:
            hit = NOTHING
        else:
            key = (rep, q, item)
            hit = self._memo.get(key)
            if hit is None:
                hit = self._walked(key, deadline) if self._small(rep, q, item) else None
                if hit is None:  # (not small, or the walk met a return on condition)
                    hit = self._run(key, deadline)
        self._found[given] = hit
        return hit

    def read_top(self, rep: int, q: int, words: np.ndarray, deadline: float) -> tuple[int, ...]:
        """OR into `words` what a stack's top (rule class `rep` in state q) reads from the root
        without popping; returns the items where it pops. A top's summary keeps its parts (its
        inner walk, its callees' summaries) unmerged: most are met once, and merging costs."""
        hit = self.top(rep, q, deadline)
        hit.or_into(words)
        return hit.pops

    def top(self, rep: int, q: int, deadline: float) -> Summary:
        """What a stack's top (rule class `rep` in state q) reads from the root (read_top)."""
        hit = self._tops.get((rep, q))
        if hit is None:
            hit = self._tops.setdefault((rep, q), self._run((rep, q, ROOT), deadline, top=True))
        return hit

    def _run(self, key: tuple[int, int, int], deadline: float, top: bool = False) -> Summary:
        """Compute `key`'s summary and those it needs first, callees before callers (a `top`'s
        summary is returned unmerged and not kept)."""
        todo = [(key, self._summarize(*key, deadline, top))]
        busy = {key}
        value: Optional[Summary] = None
        started = 0
        while True:
            k, gen = todo[-1]
            try:
                need = gen.send(value)
            except StopIteration as done:
                todo.pop()
                if not todo and top:
                    return done.value
                value = self._memo.setdefault(k, done.value)
                busy.discard(k)
                if not todo:
                    return value
                continue
            value = self._memo.get(need)
            if value is not None:
                continue
            if self._small(*need):  # (a pushdown walk: it needs nothing first)
                value = self._walked(need, deadline)
                if value is not None:
                    continue
            if need in busy:  # (compile_rules rejects left recursion: this is a bug if met)
                raise GrammarError(f"rule {self.a.rules.names[need[0]]!r} calls itself before reading a byte")
            if len(todo) >= self.max_nesting:
                raise LimitExceededError("grammar stack depth", self.max_nesting, "Limits(max_stack_depth=...)")
            started += 1
            if not started & 31 and time.perf_counter() > deadline:  # (the clock costs: every 32nd)
                raise LimitExceededError("seconds for one mask", self.a.mask_seconds, "Limits(max_mask_seconds=...)")
            todo.append((need, self._summarize(*need, deadline)))
            busy.add(need)

    def _summarize(self, rep: int, q0: int, item0: int, deadline: float, top: bool = False) -> Generator[tuple[int, int, int], Summary, Summary]:
        """Read with rule `rep` from (q0, item0): walk the trie, and at each boundary met, the
        callees (yielding their summaries' keys) and the rule again where they return, until
        no (state, item) is new. Boundaries in accepting states are where the frame pops.
        A `top`'s parts stay unmerged. From the root less forbidden first bytes (a greedy
        top's return), the summary from the whole root less what starts with those bytes: one
        summary per frame, not one per forbidden set (SQL: `age <` made the expression chain's
        seven from-root summaries anew for the bytes `<` reads on, = and >)."""
        a = self.a
        tid0, nodes0, forbidden0 = self.items.get(item0)
        if nodes0 is None and forbidden0 and not top:
            whole = yield (rep, q0, ROOT)
            return self._without_first_bytes(whole, forbidden0)
        if nodes0 is not None and forbidden0:  # (a checked item: what its nodes give, cut by its check)
            closure = self.first.closure(rep, q0) if not forbidden0 & ALL_BYTES else None
            if closure is not None:  # (the text ends after the nodes' byte: no walk needed)
                return ends_only(self.items, a.tries[tid0], tid0, nodes0, forbidden0, closure)
            whole = yield (rep, q0, self.items.nodes(tid0, nodes0, ascending=True))
            return cut(whole, self.items, a.tries[tid0], tid0, nodes0, forbidden0)
        rule = a.rules.rule(rep)
        accepting, calls = rule.dfa.accepting, rule.calls
        same = a.rules.same
        greedy = self._greedy is not None and self._greedy[rep]
        parts: list = []  # what the frame reads: cached word arrays (dense) or (idx, bits) pairs
        popped: dict[int, list[np.ndarray]] = {}  # trie id -> node arrays
        popped_root: Optional[int] = None  # forbidden first bytes of a pop at the root
        checked: dict[tuple[int, int, int], list[np.ndarray]] = {}  # (trie id, check, depth) -> checked pops
        checks = self._checks[rep] if self._checks is not None and greedy else None
        todo = [(q0, item0)]
        seen: set[tuple[int, int]] = set()
        while todo:
            q, item = todo.pop()
            item = self._narrowed(rep, q, item)
            if item == EMPTY or (q, item) in seen:
                continue
            seen.add((q, item))
            tid, nodes, forbidden = self.items.get(item)
            if nodes is not None and forbidden:  # a checked item (a callee's pop)
                sub = yield (rep, q, item)
                parts.extend(sub.parts)
                for p in sub.pops:
                    route_pop(self.items, p, popped, checked, a.tries)
                continue
            sub = self._walked((rep, q, item), deadline) if nodes is not None and self._small(rep, q, item) else None
            if sub is not None:  # one pushdown walk, callees and all
                parts.extend(sub.parts)
                for p in sub.pops:
                    route_pop(self.items, p, popped, checked, a.tries)
                continue
            if nodes is None:  # from the root: the first byte is read by q or by what q reaches
                groups, tid = self._from_root(rep, q, forbidden, parts)
                for k, t in calls[q]:
                    sub = yield (same[k], 0, item)
                    parts.extend(sub.parts)
                    todo.extend((t, p) for p in sub.pops)
                if accepting[q]:
                    f = forbidden | (a.semantics.return_refusals(rep, q) if greedy else 0)
                    popped_root = f if popped_root is None else popped_root & f
                    if checks is not None and q in checks:  # returns before a first byte it reads, checked
                        followed = a.exit_filter.checked_bytes(rep, q, rule.dfa.n_states)  # (as walks record them)
                        root_returns(a.index.trie, checks[q], followed & ~byte_row(forbidden), self._check_bits, checked)
            else:
                idx, bits, bounds = self._walk(tid, rep, q, item, nodes)
                if idx.size:
                    parts.append((idx, bits))
                groups = bounds.groups
            for q2, g_nodes, g_bytes in groups:
                if accepting[q2] and checks is not None and q2 in checks:
                    g_nodes = split_returns(a.tries[tid], tid, a.reads(rep, q2), g_nodes, g_bytes, checks[q2],
                                            self._check_bits, checked)
                if accepting[q2]:
                    popped.setdefault(tid, []).append(g_nodes)  # (the walk kept those a caller may read)
                for k, t in calls[q2]:
                    k = same[k]
                    starts = self.first.starts(k)  # (the nodes it cannot read would be narrowed away)
                    at_nodes = g_nodes if starts is None else g_nodes[starts[g_bytes]]
                    if at_nodes.size:
                        at = self.items.nodes(tid, at_nodes)
                        self._narrow[(k, 0, at)] = at  # (narrowed already)
                        sub = yield (k, 0, at)
                        parts.extend(sub.parts)
                        todo.extend((t, p) for p in sub.pops)
        pops = []
        if popped_root is not None and popped_root != ALL_BYTES:
            pops.append(self.items.root(popped_root))
        for tid, found in popped.items():
            nodes = found[0] if len(found) == 1 else sorted_unique(np.concatenate(found), a.tries[tid].n_nodes)
            if nodes.size:
                pops.append(self.items.nodes(tid, nodes))
        for (tid, check, _), found in checked.items():
            nodes = found[0] if len(found) == 1 else sorted_unique(np.concatenate(found), a.tries[tid].n_nodes)
            pops.append(self.items.nodes(tid, nodes, ascending=True, check=check))
        if top:
            return Summary(tuple(parts), tuple(pops))
        return of_parts(parts, a.index.trie.n_words, tuple(pops))

    def _without_first_bytes(self, whole: Summary, forbidden: int) -> Summary:
        """`whole` (a summary from the root) less the tokens whose first byte is forbidden: its
        parts less those tokens, its node pops less the nodes under those bytes, its root pops
        forbidding them too."""
        fb = self.a.index.first_bytes
        refused = fb.starting_with(forbidden)
        parts: list = []
        for part in whole.parts:
            if isinstance(part, tuple):
                bits = part[1] & ~refused[part[0]]
                kept = bits != 0
                if kept.any():
                    parts.append((part[0][kept], bits[kept]))
            else:
                parts.append(part & ~refused)
        pops = []
        for p in whole.pops:
            tid, nodes, f = self.items.get(p)
            if nodes is None:
                if f | forbidden != ALL_BYTES:
                    pops.append(self.items.root(f | forbidden))
                continue
            kept = fb.nodes_allowed(tid, nodes, forbidden)
            if kept.all():
                pops.append(p)
            elif kept.any():
                pops.append(self.items.nodes(tid, nodes[kept], ascending=True, check=f))
        return of_parts(parts, self.a.index.trie.n_words, tuple(pops))

    def _small(self, rep: int, q: int, item: int) -> bool:
        """Is (rep, q) at `item` one pushdown walk: do the subtrees of the item's nodes that the
        frame or a callee can read first hold at most `small_item` trie nodes? (A walk stops at
        the other nodes at once; the root is never small.)"""
        key = (rep, q, item)
        hit = self._small_memo.get(key)
        if hit is None:
            tid, nodes, check = self.items.get(item)
            hit = False
            if nodes is not None and not check and self.small_item >= 0:  # (a checked item: cut, not walked)
                trie = self.a.tries[tid]
                hit = readable_subtrees_within(nodes, trie.byte, trie.end, self.first.reachable(rep, q), self.small_item)
            self._small_memo[key] = hit
        return hit

    def _narrowed(self, rep: int, q: int, item: int) -> int:
        """`item` less the nodes whose byte rule class `rep` cannot read first in state q
        (EMPTY: none left): a pop's nodes are what any caller may read, most callers read few
        of them, and a walk from a node its reader cannot read is wasted."""
        key = (rep, q, item)
        hit = self._narrow.get(key)
        if hit is None:
            tid, nodes, check = self.items.get(item)
            starts = None if nodes is None else self.first.starts(rep, q)
            if starts is None:
                hit = item
            else:
                kept = nodes[starts[self.a.tries[tid].byte[nodes]]]
                if kept.size == nodes.size:
                    hit = item
                else:
                    hit = self.items.nodes(tid, kept, ascending=True, check=check) if kept.size else EMPTY
            self._narrow[key] = hit
        return hit

    def _from_root(self, rep: int, q: int, forbidden: int, parts: list) -> tuple[tuple, int]:
        """Add to `parts` what rule `rep` reads from q inside itself from the root (the cached
        walk, less the tokens starting with a forbidden byte); returns its boundary groups and
        trie."""
        a = self.a
        inner, bounds, tid = a.inner_walk(rep, q)
        if not forbidden:
            parts.append(inner)
            return bounds.groups, tid
        fb = a.index.first_bytes
        if not (a.reads(rep, q) & fb.allowed(forbidden)).any():
            return (), tid
        parts.append(inner & ~fb.starting_with(forbidden))
        if not bounds.groups:
            return (), tid
        return fb.bounds_without(tid, bounds, forbidden, a.kept_bounds).groups, tid

    def _walked(self, key: tuple[int, int, int], deadline: float) -> Optional[Summary]:
        """The summary of a frame at a small node item (see _small): one pushdown walk, kept (None
        where a return on condition met a second one). A node whose byte nothing in the frame's
        closure reads is not walked: the frame reads nothing there and pops there or not (a third
        of SQL's first walks read no node; so are most nodes of $start's items)."""
        hit = self._memo.get(key)
        if hit is None:
            rep, q, item = key
            tid, nodes, _ = self.items.get(item)
            closure = self.first.closure(rep, q)
            unread = None
            if closure is not None:
                read = closure[0][self.a.tries[tid].byte[nodes]]
                n_read = np.count_nonzero(read)  # (a C loop: any() and all() are ufunc reductions)
                if not n_read:
                    return self._memo.setdefault(key, Summary((), (item,) if closure[1] else ()))
                if n_read < nodes.size:
                    unread = nodes[~read] if closure[1] else None
                    nodes = nodes[read]
            walked = self.pushdown.read(rep, q, self.a.tries[tid], nodes, deadline)
            if walked is None:  # (a return on condition met another: summarized by walks and callees)
                self._small_memo[key] = False
                return None
            words, pops, checked = walked
            if unread is not None:
                pops = unread if pops is None else merged(pops, unread)  # (both ascending)
            popped = () if pops is None else (self.items.nodes(tid, pops, ascending=True),)
            if checked is not None:
                popped += walk_pops(self.items, self.a.tries[tid], tid, *checked, self._check_bits)
            hit = self._memo.setdefault(key, of_words(words, popped))
        return hit

    def _walk(self, tid: int, rep: int, q: int, item: int, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray, Boundaries]:
        """Rule `rep` reading from q at `nodes` (each node's byte first), cached: (word indices,
        their bits, boundaries)."""
        key = (rep, q, item)
        hit = self._walks.get(key)
        if hit is None:
            trie = self.a.tries[tid]
            node_bytes = trie.byte[nodes]
            if self.a.reads(rep, q)[node_bytes].any():
                words = np.zeros(trie.n_words, dtype=np.uint32)
                b_nodes, b_states = self.a.walk(rep, q, nodes, trie, words)
                idx = nonzero_words(words)
                hit = (idx, words[idx], Boundaries.of(b_nodes, b_states, trie.byte[b_nodes]))
            else:  # (q reads none of the bytes: no walk, each node is a boundary or nothing)
                hit = (_NO_WORDS, _NO_BITS, self._unread(rep, q, nodes, node_bytes))
            hit = self._walks.setdefault(key, hit)
        return hit

    def _unread(self, rep: int, q: int, nodes: np.ndarray, node_bytes: np.ndarray) -> Boundaries:
        """The boundaries a walk from nodes whose bytes q cannot read would record (walk.py:
        a node is one where q exits, by its exit kind)."""
        kinds, follow = self.a.exit_filter.kinds(rep)
        kind = kinds[q]
        if kind == 0:
            return Boundaries.of(nodes[:0], nodes[:0], node_bytes[:0])
        if kind == IF_FOLLOWS or kind >= IF_UNREAD_ALLOWED:  # (q reads none of them: only the follow row filters)
            keep = follow[follow_row(kind), node_bytes]
            nodes, node_bytes = nodes[keep], node_bytes[keep]
        return Boundaries.of(nodes, np.full(nodes.size, q, dtype=np.int32), node_bytes)
