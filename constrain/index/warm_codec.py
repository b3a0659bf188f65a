"""What a grammar's masks have learned, as a JSON header and integer arrays (the disk cache's
"warm" records, constrain/warm_store.py).

A context-free grammar's first requests are slow: each mask meets frame summaries, walks and
inner walks not computed yet (SQL: ~400 us a mask over its first five queries, ~35 us once they
are known). Those tables depend only on the rule set and the vocabulary's tries, not on the
request, so a later process can start with them. Kept: the interned items, the summaries (kept
and tops'), the walks from node items and the whole-trie inner walks with their boundaries, and
the narrowing and small-item memos (read back, the summaries and memos also fill the chaining's
arrays in one go: chain_tables.py). Not kept: rows (per position, 16 KB each) and what is cheap
to recompute. The word sets that summaries share in memory are written once and shared again
when read. Reading runs no code, and every index a numba walk would follow is range-checked
first (an out-of-range node would corrupt memory, not raise): anything malformed raises
ValueError and leaves the automaton as it was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from .boundaries import Boundaries
from .chain_tables import ChainTables
from .checked_items import CHECKED
from .summary import Summary
from .items import Items

if TYPE_CHECKING:
    from .stack_index import StackTokenAutomaton

FORMAT = 2  # (2: node items' checks)
_FORBIDDEN_WORDS = 5  # a root item's forbidden first bytes, a node item's check (checked_items.py): 257 bits
_CHAIN_ARRAYS = (  # what the chaining's tables are made of (chain_tables.py)
    "summary_keys", "summary_top", "summary_parts", "summary_parts_off", "summary_pops", "summary_pops_off",
    "pool_idx", "pool_bits", "pool_off", "pool_dense", "pool_words", "narrow_keys", "narrow_to",
)


def learned(a: StackTokenAutomaton) -> int:
    """How many table entries the masks have computed (what a warm record would hold)."""
    s = a.summaries
    return len(s._memo) + len(s._tops) + len(s._walks) + len(a._inner)


def encode_warm(a: StackTokenAutomaton) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """(header, arrays) of what `a`'s masks have computed so far. Safe while other threads
    compute masks: the tables are copied first, then the items (only ever appended), so every
    item an entry names is in the record."""
    s = a.summaries
    memo, tops, walks, inner = list(s._memo.items()), list(s._tops.items()), list(s._walks.items()), list(a._inner.items())
    narrow, small = list(s._narrow.items()), list(s._small_memo.items())
    entries = s.items.entries()
    pool = _Pool(a.index.trie.n_words)
    summaries = [(key, summ, False) for key, summ in memo] + [((r, q, 0), summ, True) for (r, q), summ in tops]
    parts = [[pool.add(p) for p in summ.parts] for _, summ, _ in summaries]
    walk_parts = [pool.add((idx, bits)) for _, (idx, bits, _) in walks]
    inner_parts = [pool.add(words) for _, (words, _, _) in inner]
    arrays = {
        **pool.arrays(),
        **_items_arrays(entries),
        "summary_keys": _keys([key for key, _, _ in summaries], 3),
        "summary_top": np.array([top for _, _, top in summaries], dtype=np.uint8),
        **_ragged("summary_parts", parts),
        **_ragged("summary_pops", [list(summ.pops) for _, summ, _ in summaries]),
        "walk_keys": _keys([key for key, _ in walks], 3),
        "walk_part": np.array(walk_parts, dtype=np.int32),
        **_bounds_arrays("walk", [b for _, (_, _, b) in walks]),
        "inner_keys": _keys([key for key, _ in inner], 2),
        "inner_part": np.array(inner_parts, dtype=np.int32),
        "inner_trie": np.array([tid for _, (_, _, tid) in inner], dtype=np.int32),
        **_bounds_arrays("inner", [b for _, (_, b, _) in inner]),
        "narrow_keys": _keys([key for key, _ in narrow], 3),
        "narrow_to": np.array([v for _, v in narrow], dtype=np.int32),
        "small_keys": _keys([key for key, _ in small], 3),
        "small_is": np.array([v for _, v in small], dtype=np.uint8),
    }
    layout, blobs = _pack(arrays)
    header = {
        "format": FORMAT,
        "n_words": int(a.index.trie.n_words),
        "trie_nodes": [int(t.byte.size) for t in a.tries],
        "n_rules": int(a.rules.n_rules),
        "layout": layout,
    }
    return header, blobs


def decode_warm_into(a: StackTokenAutomaton, header: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """Install what encode_warm wrote into `a`, which must not have computed a mask yet;
    ValueError (and `a` unchanged) where the record does not fit it."""
    try:
        _Decoder(a, header, arrays).install()
    except (KeyError, IndexError, TypeError) as exc:
        raise ValueError(f"malformed warm record: {type(exc).__name__}: {exc}") from None


def _pack(arrays: dict[str, np.ndarray]) -> tuple[dict[str, list], dict[str, np.ndarray]]:
    """The arrays as one blob per dtype (a record member costs a header parse when read: ~40
    members took longer to open than to decode) and where each lies: name -> [blob, start, shape]."""
    layout: dict[str, list] = {}
    parts: dict[str, list[np.ndarray]] = {}
    sizes: dict[str, int] = {}
    for name, arr in arrays.items():
        blob = arr.dtype.str.lstrip("<>|=")
        layout[name] = [blob, sizes.get(blob, 0), list(arr.shape)]
        parts.setdefault(blob, []).append(arr.ravel())
        sizes[blob] = sizes.get(blob, 0) + arr.size
    return layout, {blob: np.concatenate(p) for blob, p in parts.items()}


class _Pool:
    """Word sets shared by identity (a summary's part is often another's, or a walk's): each
    written once, as memory holds it: sparse, or whole (dense). (Keyed by id(): every array lives
    through encode_warm's copies of the tables.)"""

    def __init__(self, n_words: int) -> None:
        self.n_words = n_words
        self.ids: dict[int, int] = {}
        self.idx: list[np.ndarray] = []
        self.bits: list[np.ndarray] = []
        self.dense: list[bool] = []
        self.whole: list[np.ndarray] = []  # the dense ones, whole: read back as views, no decoding

    def add(self, part: Any) -> int:
        anchor = part[0] if isinstance(part, tuple) else part
        hit = self.ids.get(id(anchor))
        if hit is None:
            hit = self.ids[id(anchor)] = len(self.dense)
            if isinstance(part, tuple):
                self.idx.append(np.asarray(part[0], dtype=np.int32))
                self.bits.append(np.asarray(part[1], dtype=np.uint32))
                self.dense.append(False)
            else:
                if part.size != self.n_words:
                    raise ValueError(f"a word set of {part.size} words, expected {self.n_words}")
                self.idx.append(np.zeros(0, dtype=np.int32))
                self.bits.append(np.zeros(0, dtype=np.uint32))
                self.whole.append(part)
                self.dense.append(True)
        return hit

    def arrays(self) -> dict[str, np.ndarray]:
        return {
            "pool_idx": _cat(self.idx, np.int32),
            "pool_bits": _cat(self.bits, np.uint32),
            "pool_off": _offsets(len(i) for i in self.idx),
            "pool_dense": np.array(self.dense, dtype=np.uint8),
            "pool_words": np.array(self.whole, dtype=np.uint32).reshape(len(self.whole), self.n_words),
        }


def _items_arrays(entries: list[tuple[int, Optional[np.ndarray], int]]) -> dict[str, np.ndarray]:
    forbidden = np.zeros((len(entries), _FORBIDDEN_WORDS), dtype=np.uint64)
    for k, (_, _, f) in enumerate(entries):
        for w in range(_FORBIDDEN_WORDS):
            forbidden[k, w] = (f >> (64 * w)) & 0xFFFF_FFFF_FFFF_FFFF
    nodes = [np.zeros(0, dtype=np.int32) if n is None else n for _, n, _ in entries]
    return {
        "item_trie": np.array([tid for tid, _, _ in entries], dtype=np.int32),
        "item_root": np.array([n is None for _, n, _ in entries], dtype=np.uint8),
        "item_nodes": _cat(nodes, np.int32),
        "item_off": _offsets(n.size for n in nodes),
        "item_forbidden": forbidden,
    }


def _bounds_arrays(name: str, bounds: list[Boundaries]) -> dict[str, np.ndarray]:
    nodes = [np.concatenate([g[1] for g in b.groups]) if b.groups else np.zeros(0, dtype=np.int32) for b in bounds]
    states = [np.concatenate([np.full(g[1].size, g[0], dtype=np.int32) for g in b.groups]) if b.groups
              else np.zeros(0, dtype=np.int32) for b in bounds]
    return {f"{name}_nodes": _cat(nodes, np.int32), f"{name}_states": _cat(states, np.int32),
            f"{name}_off": _offsets(n.size for n in nodes)}


def _ragged(name: str, lists: list[list[int]]) -> dict[str, np.ndarray]:
    return {name: np.array([x for xs in lists for x in xs], dtype=np.int32), f"{name}_off": _offsets(len(xs) for xs in lists)}


def _keys(keys: list[tuple[int, ...]], width: int) -> np.ndarray:
    return np.array(keys, dtype=np.int32).reshape(len(keys), width)


def _cat(arrays: list[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate(arrays).astype(dtype, copy=False) if arrays else np.zeros(0, dtype=dtype)


def _offsets(sizes: Any) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(np.fromiter(sizes, dtype=np.int64))]).astype(np.int64)


class _Decoder:
    """Checks a warm record against the automaton, builds its tables aside, then installs them."""

    def __init__(self, a: StackTokenAutomaton, header: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        self.a = a
        self.arrays = arrays
        self.layout = header["layout"]
        if header.get("format") != FORMAT:
            raise ValueError(f"warm record format {header.get('format')!r}, expected {FORMAT}")
        self.n_words = a.index.trie.n_words
        sizes = [int(t.byte.size) for t in a.tries]
        if header.get("n_words") != self.n_words or header.get("trie_nodes") != sizes or header.get("n_rules") != a.rules.n_rules:
            raise ValueError("warm record of another vocabulary index or rule set")
        self.trie_nodes = sizes
        self._states_of: dict[int, int] = {}
        s = a.summaries
        if len(s.items) != 1 or s._memo or s._tops or s._walks or a._inner:
            raise ValueError("the automaton has computed masks already")

    def install(self) -> None:
        a, s = self.a, self.a.summaries
        items = self._items()
        self.n_items = len(items)
        pool = self._pool()
        memo, tops = self._summaries(pool)
        walks = self._walks(pool, items)
        inner = self._inner(pool)
        narrow = {k: int(v) for k, v in zip(self._triples("narrow_keys"), self._in_range(self._get("narrow_to"), -1, self.n_items, "narrowed item"))}
        small = dict(zip(self._triples("small_keys"), (self._get("small_is") != 0).tolist()))
        chain = ChainTables.of_record(self.n_words, {name: self._get(name) for name in _CHAIN_ARRAYS})  # (checked above)
        s.items, s._memo, s._tops, s._walks, s._narrow, s._small_memo = items, memo, tops, walks, narrow, small
        a._inner, a.chain_tables, a.chain_in_numba = inner, chain, True

    # -- parts of the record ------------------------------------------------------------------
    def _get(self, name: str) -> np.ndarray:
        """Array `name`: a view of its blob (see _pack)."""
        blob_name, start, shape = self.layout[name]
        blob = self.arrays[blob_name]
        size = int(np.prod(shape, dtype=np.int64))
        if blob.dtype.kind not in "iub" or blob.ndim != 1 or not 0 <= start <= start + size <= blob.size:
            raise ValueError(f"warm record array {name} does not fit its blob")
        return blob[start : start + size].reshape(shape)

    def _spans(self, name: str, total: int, count: Optional[int] = None) -> list[tuple[int, int]]:
        off = self._get(f"{name}_off")
        if off.ndim != 1 or off.size < 1 or off[0] != 0 or off[-1] != total or (np.diff(off) < 0).any():
            raise ValueError(f"warm record offsets {name}_off do not fit")
        if count is not None and off.size != count + 1:
            raise ValueError(f"warm record {name}: {off.size - 1} entries, expected {count}")
        bounds = off.tolist()
        return list(zip(bounds[:-1], bounds[1:]))

    @staticmethod
    def _in_range(arr: np.ndarray, lo: int, hi: int, what: str) -> np.ndarray:
        if arr.size and (int(arr.min()) < lo or int(arr.max()) >= hi):
            raise ValueError(f"warm record: a {what} out of range")
        return arr

    def _items(self) -> Items:
        tries, roots, forbidden = self._get("item_trie"), self._get("item_root"), self._get("item_forbidden")
        nodes = self._get("item_nodes").astype(np.int32, copy=False)
        spans = self._spans("item", nodes.size, tries.size)
        if roots.size != tries.size or forbidden.shape != (tries.size, _FORBIDDEN_WORDS):
            raise ValueError("warm record: item tables of different lengths")
        roots = roots != 0
        self._in_range(tries[~roots], 0, len(self.trie_nodes), "trie")
        sizes = np.diff(self._get("item_off"))
        if (sizes[~roots] == 0).any() or (sizes[roots] != 0).any():
            raise ValueError("warm record: an item without nodes, or a root item with some")
        limits = np.array(self.trie_nodes, dtype=np.int64)[np.where(roots, 0, tries)]
        if nodes.size and ((nodes < 0) | (nodes >= np.repeat(limits, sizes))).any():
            raise ValueError("warm record: an item's trie node out of range")
        starts = np.zeros(nodes.size, dtype=np.bool_)
        starts[np.cumsum(sizes[sizes > 0])[:-1]] = True  # (where an item's nodes begin, past the first)
        if nodes.size > 1 and not ((np.diff(nodes) > 0) | starts[1:]).all():
            raise ValueError("warm record: an item's nodes are not ascending without repeats")
        entries = []
        for k, (i, j) in enumerate(spans):
            bits = sum(int(w) << (64 * n) for n, w in enumerate(forbidden[k].tolist()))  # (forbidden bytes, or a check)
            if roots[k]:
                entries.append((-1, None, bits))
            else:
                if bits and not bits & CHECKED:
                    raise ValueError("warm record: a node item's check without its mark")
                entries.append((int(tries[k]), nodes[i:j], bits))
        return Items.of(entries, tuple(t.n_nodes for t in self.a.tries))

    def _pool(self) -> list[Any]:
        """Word sets: dense ones as rows of the whole ones' array, sparse ones as views with
        intp indices (int32 ones would be converted at every OR)."""
        idx, bits, dense = self._get("pool_idx").astype(np.intp), self._get("pool_bits"), self._get("pool_dense") != 0
        whole = self._get("pool_words")
        self._in_range(idx, 0, self.n_words, "word index")
        if bits.size != idx.size or whole.shape != (int(dense.sum()), self.n_words) or whole.dtype != np.uint32:
            raise ValueError("warm record: word set tables do not fit")
        spans = self._spans("pool", idx.size, dense.size)
        rows = (np.cumsum(dense) - 1).tolist()
        return [whole[rows[k]] if d else (idx[i:j], bits[i:j]) for k, ((i, j), d) in enumerate(zip(spans, dense.tolist()))]

    def _triples(self, name: str, width: int = 3) -> list[tuple[int, ...]]:
        """Keys (rule, state[, item]) as tuples, each part range-checked."""
        keys = self._get(name)
        if keys.ndim != 2 or keys.shape[1] != width:
            raise ValueError(f"warm record: {name} of shape {keys.shape}")
        reps, states = keys[:, 0], keys[:, 1]
        self._in_range(reps, 0, self.a.rules.n_rules, "rule")
        if ((states < 0) | (states >= self._n_states(reps))).any():
            raise ValueError(f"warm record: a rule state in {name} out of range")
        if width == 3:
            self._in_range(keys[:, 2], 0, self.n_items, "item")
        return list(map(tuple, keys.tolist()))

    def _n_states(self, reps: np.ndarray) -> np.ndarray:
        """The state count of each rule in `reps` (building those not built yet)."""
        known = self._states_of
        for r in set(reps.tolist()) - known.keys():
            known[r] = self.a.rules.rule(r).dfa.n_states
        return np.array([known[r] for r in reps.tolist()], dtype=np.int64)

    def _summaries(self, pool: list[Any]) -> tuple[dict, dict]:
        keys, top = self._triples("summary_keys"), self._get("summary_top")
        refs = self._in_range(self._get("summary_parts"), 0, len(pool), "word set")
        pops = self._in_range(self._get("summary_pops"), 0, self.n_items, "popped item")
        part_spans = self._spans("summary_parts", refs.size, len(keys))
        pop_spans = self._spans("summary_pops", pops.size, len(keys))
        if top.size != len(keys):
            raise ValueError("warm record: summary tables of different lengths")
        refs_l, pops_l = refs.tolist(), pops.tolist()
        memo: dict = {}
        tops: dict = {}
        for k, key in enumerate(keys):
            (i, j), (u, v) = part_spans[k], pop_spans[k]
            summ = Summary(tuple(pool[x] for x in refs_l[i:j]), tuple(pops_l[u:v]))
            if top[k]:
                tops[key[:2]] = summ
            else:
                memo[key] = summ
        return memo, tops

    def _bounds(self, name: str, count: int, tries: list[int]) -> list[Boundaries]:
        nodes, states = self._get(f"{name}_nodes").astype(np.int32, copy=False), self._get(f"{name}_states").astype(np.int32, copy=False)
        if states.size != nodes.size:
            raise ValueError(f"warm record: {name} boundary nodes and states differ in length")
        spans = self._spans(name, nodes.size, count)
        sizes = np.diff(self._get(f"{name}_off"))
        limits = np.array(self.trie_nodes, dtype=np.int64)[np.array(tries, dtype=np.intp)] if tries else np.zeros(0, dtype=np.int64)
        if nodes.size and ((nodes < 0) | (nodes >= np.repeat(limits, sizes))).any():
            raise ValueError(f"warm record: a {name} boundary node out of range")
        return [Boundaries.of(nodes[i:j], states[i:j], self.a.tries[tid].byte[nodes[i:j]]) for (i, j), tid in zip(spans, tries)]

    def _walks(self, pool: list[Any], items: Items) -> dict:
        keys = self._triples("walk_keys")
        parts = self._in_range(self._get("walk_part"), 0, len(pool), "word set").tolist()
        tries = [items.get(key[2])[0] for key in keys]
        if len(parts) != len(keys) or any(t < 0 for t in tries) or any(not isinstance(pool[p], tuple) for p in parts):
            raise ValueError("warm record: walks do not fit their items")
        bounds = self._bounds("walk", len(keys), tries)
        self._states_fit(keys, bounds)
        return {key: (*pool[p], b) for key, p, b in zip(keys, parts, bounds)}

    def _inner(self, pool: list[Any]) -> dict:
        keys = self._triples("inner_keys", 2)
        parts = self._in_range(self._get("inner_part"), 0, len(pool), "word set").tolist()
        tries = self._in_range(self._get("inner_trie"), 0, len(self.trie_nodes), "trie").tolist()
        if len(parts) != len(keys) or len(tries) != len(keys) or any(isinstance(pool[p], tuple) for p in parts):
            raise ValueError("warm record: inner walks do not fit")
        bounds = self._bounds("inner", len(keys), tries)
        self._states_fit(keys, bounds)
        return {key: (pool[p], b, t) for key, p, b, t in zip(keys, parts, bounds, tries)}

    def _states_fit(self, keys: list[tuple[int, ...]], bounds: list[Boundaries]) -> None:
        for key, b in zip(keys, bounds):
            n_states = self._states_of[key[0]]
            if any(not 0 <= g[0] < n_states for g in b.groups):
                raise ValueError(f"warm record: a boundary state of rule {key[0]} out of range")
