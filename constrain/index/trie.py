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
        from .trie_build import sorted_nodes  # (numba: not loaded by `import constrain`)

        skip = set(excluded)
        ids = [tid for tid, tb in enumerate(token_bytes) if tb and tid not in skip]
        byte, depth, end, tok_count, tok_ids = sorted_nodes([token_bytes[tid] for tid in ids], ids)
        n = byte.shape[0]
        self.byte = byte
        self.depth = depth
        self.end = end
        ptr = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(tok_count, out=ptr[1:])
        self.tok_ptr = ptr
        self.tok_ids = tok_ids
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
