"""Items on condition of the second byte: where a greedy rule returns before a byte it reads.

A greedy rule may return before a byte b1 it reads where the byte after b1 is in a set C
(automata/return_checks.py): the frames below read b1 and a CHECK frame refuses what follows
unless it is in C. Within a token that is a property of the token's bytes alone: reading from
a node n (whose byte is b1), a frame's tokens are those ending at n and those whose next byte,
the byte of a child of n, is in C. So an item may carry a *check* (items.py): the frames below
read from its nodes as from plain ones, and what they read is then cut to the subtrees the
check allows (frame_summaries.py). A checked item's nodes are never nested (they lie at one
depth): each token through them passes one node, so the cut is exact.
"""

from __future__ import annotations

import numpy as np

from ..automata.refusals import END_OF_TEXT
from ..automata.return_checks import CHECK_PREFIX
from ..automata.rules import RuleSet
from ..sorted_sets import sorted_unique
from .items import Items
from .row_bits import words_of
from .summary import Summary, of_words
from .trie import TokenTrie

ALL_BYTES = (1 << 256) - 1
CHECKED = END_OF_TEXT  # set in every check (END_OF_TEXT's own bit: a token's end passes any check)


def check_of(second_bytes: int) -> int:
    """An item's check for a CHECK frame's set C (its bytes; the end of the text plays no part
    within a token, and CHECKED marks the item even where C holds no byte)."""
    return (second_bytes & ALL_BYTES) | CHECKED


def checks_of(rules: RuleSet) -> dict[int, int]:
    """Per CHECK rule of `rules`, its items' check (its set C: what its end does not refuse)."""
    return {k: check_of(~rules.refused_at(k, 0)) for k, name in enumerate(rules.names) if name.startswith(CHECK_PREFIX)}


def root_returns(trie: TokenTrie, checks: dict[int, int], allowed: np.ndarray, check_bits: dict[int, int],
                 checked: dict) -> None:
    """A greedy top's returns before a first byte it reads (`checks`: byte -> CHECK rule, where
    `allowed` by byte): checked pops at the root's children, added to `checked`."""
    for b1, check in checks.items():
        node = int(trie.root[b1])
        if allowed[b1] and node >= 0:
            checked.setdefault((0, check_bits[check], 1), []).append(np.array([node], dtype=np.int32))


def allowed_ranges(trie: TokenTrie, nodes: np.ndarray, check: int) -> tuple[np.ndarray, np.ndarray]:
    """The node ranges [start, stop) a check on `nodes` (one depth) lets tokens and pops through,
    ascending: each node alone (tokens ending there, pops before its byte) and the subtrees of
    its children whose byte is in the check."""
    starts: list[int] = []
    stops: list[int] = []
    end, byte = trie.end, trie.byte
    for n in nodes.tolist():
        starts.append(n)
        stops.append(n + 1)
        c, last = n + 1, int(end[n])
        while c < last:
            after = int(end[c])
            if check >> int(byte[c]) & 1:
                if stops[-1] == c:  # (adjacent: one range)
                    stops[-1] = after
                else:
                    starts.append(c)
                    stops.append(after)
            c = after
    return np.array(starts, dtype=np.int64), np.array(stops, dtype=np.int64)


def within(nodes: np.ndarray, ranges: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Bool per node: does it lie in one of the (ascending, disjoint) ranges."""
    starts, stops = ranges
    k = np.searchsorted(starts, nodes, side="right") - 1
    return (k >= 0) & (nodes < stops[np.maximum(k, 0)])


def allowed_words(trie: TokenTrie, ranges: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """The tokens of the ranges as a row of uint32 words (a range's token ids are one run of
    tok_ids: the trie is laid out depth first)."""
    ptr = trie.tok_ptr
    runs = [trie.tok_ids[ptr[a] : ptr[b]] for a, b in zip(*ranges)]
    ids = np.concatenate(runs) if runs else np.zeros(0, dtype=np.int64)
    return words_of(ids, trie.n_words)


def cut(whole: Summary, items: Items, trie: TokenTrie, tid: int, nodes: np.ndarray, check: int) -> Summary:
    """A summary from a checked item: `whole` (the summary from its nodes, unchecked) cut to
    what the check lets through. Pops at the item's own nodes (before their byte: the frame
    below reads it) keep the check; deeper ones are kept where they lie in an allowed subtree."""
    ranges = allowed_ranges(trie, nodes, check)
    words = np.zeros(trie.n_words, dtype=np.uint32)
    whole.or_into(words)
    words &= allowed_words(trie, ranges)
    pops = []
    for p in whole.pops:
        ptid, pnodes, pcheck = items.get(p)
        if pnodes is None or ptid != tid:  # (a summary from nodes pops at nodes of their trie)
            raise AssertionError("a summary from trie nodes popped elsewhere")
        kept = within(pnodes, ranges)
        own = kept & within(pnodes, (nodes, nodes + 1))  # (at the item's own nodes)
        if own.any():
            pops.append(items.nodes(tid, pnodes[own], ascending=True, check=check))
        deeper = kept & ~own
        if deeper.all():
            pops.append(p)
        elif deeper.any():
            pops.append(items.nodes(tid, pnodes[deeper], ascending=True, check=pcheck))
    return of_words(words, tuple(pops))


def ends_only(items: Items, trie: TokenTrie, tid: int, nodes: np.ndarray, check: int,
              closure: tuple[np.ndarray, bool]) -> Summary:
    """A summary from a checked item whose check holds no byte (the text must end after the
    nodes' byte), without a walk: the tokens ending at the nodes whose byte the frame's closure
    reads (`closure`: first_reads.py), and its pops there (checked still) where it can pop."""
    read = nodes[closure[0][trie.byte[nodes]]].astype(np.int64)
    words = allowed_words(trie, (read, read + 1))
    return of_words(words, (items.nodes(tid, nodes, ascending=True, check=check),) if closure[1] else ())


def route_pop(items: Items, p: int, popped: dict, checked: dict, tries: tuple[TokenTrie, ...]) -> None:
    """Add pop item `p` to a summary's pops being gathered: plain node pops by trie, checked
    ones by (trie, check, depth)."""
    tid, nodes, check = items.get(p)
    if not check:
        popped.setdefault(tid, []).append(nodes)
        return
    depth = int(tries[tid].depth[nodes[0]])
    checked.setdefault((tid, check, depth), []).append(nodes)


def split_returns(trie: TokenTrie, tid: int, reads: np.ndarray, nodes: np.ndarray, node_bytes: np.ndarray,
                  checks: dict[int, int], check_bits: "dict[int, int]", checked: dict) -> np.ndarray:
    """A greedy state's boundary nodes (its pops): those whose byte it reads are returns on
    condition (`checks`: byte -> CHECK rule, `check_bits`: CHECK rule -> item check), added to
    `checked` by (trie, check, depth); returns the others (plain pops)."""
    read = reads[node_bytes]
    if not read.any():
        return nodes
    at, at_bytes = nodes[read], node_bytes[read]
    depths = trie.depth[at]
    for b1 in np.unique(at_bytes).tolist():
        check = check_bits[checks[b1]]
        same_byte = at_bytes == b1
        for d in np.unique(depths[same_byte]).tolist():
            checked.setdefault((tid, check, d), []).append(at[same_byte & (depths == d)])
    return nodes[~read]


def walk_pops(items: Items, trie: TokenTrie, tid: int, nodes: np.ndarray, checks: np.ndarray,
              check_bits: "dict[int, int]") -> tuple[int, ...]:
    """A pushdown walk's pops on condition (nodes, and per node the CHECK rule class) as
    checked items: one per check and depth."""
    depths = trie.depth[nodes]
    out = []
    for check, depth in sorted(set(zip(checks.tolist(), depths.tolist()))):
        at = sorted_unique(nodes[(checks == check) & (depths == depth)], trie.n_nodes)
        out.append(items.nodes(tid, at, ascending=True, check=check_bits[check]))
    return tuple(out)
