"""The vocabulary's byte trie, laid out flat in depth-first order for the mask walk.

Node i has `byte[i]` (the edge into it), `depth[i]` (bytes from the root) and `end[i]` (one past
its last descendant), so a walk that hits a dead byte skips the whole subtree with `i = end[i]`.
Token ids ending at node i are `tok_ids[tok_ptr[i]:tok_ptr[i+1]]` (several ids may share bytes).
The walk reads the packed forms: `packed[i] = depth << 8 | byte`, and `tok1[i]` = the one token
ending there, -1 for none, -2 for several (then it reads the tok_ptr range): one load per field.
`root[b]` is the node of first byte b (-1: no token starts with b), so a walk from the root
touches only the first bytes its state can read. `names[i]` is 1 where node i's subtree holds
name bytes only (name_runs.py). Special tokens and tokens with no bytes are
left out: no grammar may produce them as text.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from .name_runs import name_subtrees


class TokenTrie:
    __slots__ = (
        "byte", "depth", "end", "tok_ptr", "tok_ids", "packed", "tok1", "root", "max_depth", "vocab_size", "n_words",
        "names",
    )

    def __init__(self, token_bytes: Sequence[bytes], excluded: Iterable[int] = ()) -> None:
        skip = set(excluded)
        entries = sorted(
            (tb, tid) for tid, tb in enumerate(token_bytes) if tb and tid not in skip
        )
        byte: list[int] = [0]
        depth: list[int] = [0]
        end: list[int] = [0]
        tok_count: list[int] = [0]
        tok_ids: list[int] = []
        path: list[int] = [0]  # node index per depth along the current branch
        prev = b""
        for tb, tid in entries:
            if tb == prev:
                tok_count[path[len(tb)]] += 1
                tok_ids.append(tid)
                continue
            lcp = 0
            limit = min(len(tb), len(prev))
            while lcp < limit and tb[lcp] == prev[lcp]:
                lcp += 1
            n = len(byte)
            for d in range(len(path) - 1, lcp, -1):
                end[path[d]] = n
            del path[lcp + 1 :]
            for d in range(lcp, len(tb)):
                path.append(len(byte))
                byte.append(tb[d])
                depth.append(d + 1)
                end.append(0)
                tok_count.append(0)
            tok_count[path[len(tb)]] += 1
            tok_ids.append(tid)
            prev = tb
        n = len(byte)
        for d in range(len(path) - 1, -1, -1):
            end[path[d]] = n
        self.byte = np.asarray(byte, dtype=np.int32)
        self.depth = np.asarray(depth, dtype=np.int32)
        self.end = np.asarray(end, dtype=np.int32)
        ptr = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(np.asarray(tok_count, dtype=np.int32), out=ptr[1:])
        self.tok_ptr = ptr
        self.tok_ids = np.asarray(tok_ids, dtype=np.int32)
        self.packed = (self.depth << 8) | self.byte
        counts = np.diff(ptr)
        self.tok1 = np.full(n, -1, dtype=np.int32)
        single = counts == 1
        self.tok1[single] = self.tok_ids[ptr[:-1][single]]
        self.tok1[counts > 1] = -2
        self.root = np.full(256, -1, dtype=np.int32)
        first = np.nonzero(self.depth == 1)[0]
        self.root[self.byte[first]] = first
        self.max_depth = int(self.depth.max()) if n else 0
        self.vocab_size = len(token_bytes)
        self.n_words = (self.vocab_size + 31) // 32
        self.names = name_subtrees(self.byte, self.end)  # (walks mark these whole: name_runs.py)
        for arr in (self.byte, self.depth, self.end, self.tok_ptr, self.tok_ids, self.packed, self.tok1, self.root, self.names):
            arr.setflags(write=False)

    @property
    def n_nodes(self) -> int:
        return int(self.byte.shape[0])
