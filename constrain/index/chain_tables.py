"""The arrays a mask's chaining reads in numba (chain_walk.py): the summaries masks chain and
the frames of the stacks they chain down.

Filled as masks meet them: a summary is added where the Python side chains it (a top by its
rule class and state, a frame below by the item as given), so callees met only inside other
summaries cost nothing here. A part (a cached array) shared by many summaries is copied once,
by identity (the summaries keep it alive). A frame gets an id on its first mask; its parents
theirs first. A snapshot of the arrays holds a count of summaries: one added later is not
found in it (its hash slot may be, its rows in other arrays).
"""

from __future__ import annotations

import threading
from typing import Optional

import numpy as np

from ..automata.stack_semantics import Parents
from .chain_walk import TOP, find, find_all, insert, rehashed, table_of
from .summary import Summary

MAX_FRAMES = 1 << 18  # frames kept with ids (then forgotten and given ids again as met)


def _grown(a: np.ndarray, need: int) -> np.ndarray:
    """`a` if it holds `need` rows, else a copy with room for twice as many."""
    if need <= a.shape[0]:
        return a
    out = np.empty((max(need, 2 * a.shape[0]),) + a.shape[1:], dtype=a.dtype)
    out[: a.shape[0]] = a
    return out


class ChainTables:
    """Summaries (by rule class, state, item) and frames (by identity) as arrays."""

    def __init__(self, n_words: int) -> None:
        self.n_words = n_words
        self._lock = threading.Lock()
        self.n_keys = 0
        self._part_ids: dict[int, int] = {}  # id(part) -> part id
        self._parts_kept: list = []  # (so the ids above stay theirs)
        self.table = np.full((1024, 4), -1, dtype=np.int32)
        self.starts = np.zeros((1024, 2), dtype=np.int32)  # row n_summaries: where the next starts
        self.summary_parts = np.empty(1024, dtype=np.int32)
        self.pops = np.empty(1024, dtype=np.int32)
        self.parts = np.empty((256, 2), dtype=np.int64)
        self.idx = np.empty(4096, dtype=np.int32)
        self.bits = np.empty(4096, dtype=np.uint32)
        self.dense = np.empty((4, n_words), dtype=np.uint32)
        self.n_summaries = self.n_parts = self.n_sparse = self.n_dense = 0
        self._frame_ids: dict[int, int] = {}
        self.generation = 0  # (frame ids from an earlier generation are void)
        self.frame_objects: list[tuple] = []
        self.frames = np.empty((256, 3), dtype=np.int32)

    # -- summaries -----------------------------------------------------------------------------
    def add(self, rep: int, q: int, item: int, summary: Summary) -> None:
        """Make (rep, q, item)'s summary (item TOP: a top's) findable by the loop."""
        with self._lock:
            if find(self.table, rep, q, item) >= 0:
                return
            part_ids = [self._part(p) for p in summary.parts]
            s = self.n_summaries
            self.starts = _grown(self.starts, s + 2)
            lo_parts, lo_pops = self.starts[s]
            hi_parts, hi_pops = lo_parts + len(part_ids), lo_pops + len(summary.pops)
            self.summary_parts = _grown(self.summary_parts, hi_parts)
            self.pops = _grown(self.pops, hi_pops)
            self.summary_parts[lo_parts:hi_parts] = part_ids
            self.pops[lo_pops:hi_pops] = summary.pops
            self.starts[s + 1] = (hi_parts, hi_pops)
            self.n_keys += 1
            if 2 * self.n_keys > self.table.shape[0]:
                self.table = rehashed(self.table, 4 * self.table.shape[0])
            insert(self.table, rep, q, item, s)
            self.n_summaries = s + 1  # (last: a snapshot taken before finds no s, in any array)

    def _part(self, part) -> int:
        hit = self._part_ids.get(id(part))
        if hit is not None:
            return hit
        p = self.n_parts
        self.parts = _grown(self.parts, p + 1)
        if isinstance(part, tuple):
            lo = self.n_sparse
            hi = lo + part[0].size
            self.idx = _grown(self.idx, hi)
            self.bits = _grown(self.bits, hi)
            self.idx[lo:hi] = part[0]
            self.bits[lo:hi] = part[1]
            self.parts[p] = (lo, part[0].size)
            self.n_sparse = hi
        else:
            d = self.n_dense
            self.dense = _grown(self.dense, d + 1)
            self.dense[d] = part
            self.parts[p] = (d, -1)
            self.n_dense = d + 1
        self.n_parts = p + 1
        self._parts_kept.append(part)
        self._part_ids[id(part)] = p
        return p

    @classmethod
    def of_record(cls, n_words: int, record: dict[str, np.ndarray]) -> "ChainTables":
        """The tables of a warm record's summaries (warm_codec.py, its arrays range-checked
        already), found by the keys masks look up: a top's by (rule class, state, TOP), a
        frame's by each item narrowed to a kept summary's (most summaries are a callee's, met
        inside others: their narrowed items are found too). No summary is copied but the
        sparse parts' indices; the whole ones are the record's rows."""
        t = cls(n_words)
        keys, top = record["summary_keys"].astype(np.int64), record["summary_top"] != 0
        n = keys.shape[0]
        t.starts = np.zeros((n + 2, 2), dtype=np.int32)  # (summary n: nothing, for a narrowing to no item)
        t.starts[: n + 1, 0] = record["summary_parts_off"]
        t.starts[: n + 1, 1] = record["summary_pops_off"]
        t.starts[n + 1] = t.starts[n]
        t.summary_parts = np.require(record["summary_parts"], np.int32, ["C", "W"])
        t.pops = np.require(record["summary_pops"], np.int32, ["C", "W"])
        dense, off = record["pool_dense"] != 0, record["pool_off"]
        t.parts = np.empty((dense.size, 2), dtype=np.int64)
        t.parts[:, 0] = np.where(dense, np.cumsum(dense) - 1, off[:-1])
        t.parts[:, 1] = np.where(dense, -1, np.diff(off))
        t.idx = np.require(record["pool_idx"], np.int32, ["C", "W"])
        t.bits = np.require(record["pool_bits"], np.uint32, ["C", "W"])
        t.dense = np.require(record["pool_words"], np.uint32, ["C", "W"]).reshape(-1, n_words)
        t.n_parts, t.n_sparse, t.n_dense = dense.size, t.idx.size, t.dense.shape[0]
        t.n_summaries = n + 1
        narrow, to = record["narrow_keys"].astype(np.int64), record["narrow_to"].astype(np.int64)
        memo = np.flatnonzero(~top)
        narrowed = np.column_stack([narrow[:, :2], to])
        sids = np.where(to < 0, n, find_all(table_of(keys[memo], memo), narrowed))
        kept = sids >= 0
        tops = np.flatnonzero(top)
        t.table = table_of(
            np.concatenate([narrow[kept], np.column_stack([keys[tops, :2], np.full(tops.size, TOP)])]),
            np.concatenate([sids[kept], tops]),
        )
        t.n_keys = int(kept.sum()) + tops.size
        return t

    # -- frames --------------------------------------------------------------------------------
    def frame_id(self, frame: tuple, same) -> Optional[int]:
        """The id of a stack frame (rule, state, parent, depth), its parents given theirs first;
        the rule as its class (`same`). None where a merged frame lies below (stack_semantics.py)."""
        hit = self._frame_ids.get(id(frame))
        if hit is not None:
            return hit
        with self._lock:
            if len(self.frame_objects) >= MAX_FRAMES:  # (new arrays: a reader's snapshot keeps its own)
                self._frame_ids = {}
                self.frame_objects = []
                self.frames = np.empty_like(self.frames)
                self.generation += 1
            new = []
            f = frame
            while f is not None and id(f) not in self._frame_ids:
                if type(f) is Parents:  # (a merged frame's parents are several: the loop's have one)
                    return None
                new.append(f)
                f = f[2]
            parent = -1 if f is None else self._frame_ids[id(f)]
            n = len(self.frame_objects)
            self.frames = _grown(self.frames, n + len(new))
            for f in reversed(new):
                self.frames[n] = (same[f[0]], f[1], parent)
                self._frame_ids[id(f)] = parent = n
                self.frame_objects.append(f)
                n += 1
            return parent

    def snapshot(self) -> tuple[int, list[tuple], tuple]:
        """(the frames' generation, the frames by id, the loop's arguments after the tops): what
        is added later goes to new arrays or past these rows."""
        with self._lock:
            arrays = (self.frames, self.table, self.n_summaries, self.starts, self.summary_parts, self.pops, self.parts, self.idx, self.bits, self.dense)
            return self.generation, self.frame_objects, arrays


__all__ = ["ChainTables", "TOP"]
