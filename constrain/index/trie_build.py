"""The token trie's node arrays from the sorted token bytes, in one numba pass (trie.py).

The loop in Python took ~0.2 s per trie at Llama 3's 128k tokens, and a vocabulary index builds
five (the whole vocabulary and each slice's rest): most of a process's first compile. Kept apart
from trie.py so that `import constrain` does not load numba.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def trie_nodes(flat, offsets, lengths, max_len):
    """Nodes in depth-first order for the tokens `flat[offsets[e]:offsets[e] + lengths[e]]`,
    sorted, none empty (equal ones adjacent): (byte, depth, end, tokens ending there) per node,
    the root first. A node is made for each byte past a token's common prefix with the one
    before it; the nodes left off the current branch end where the next one starts."""
    cap = flat.shape[0] + 1
    byte = np.zeros(cap, dtype=np.int32)
    depth = np.zeros(cap, dtype=np.int32)
    end = np.zeros(cap, dtype=np.int32)
    count = np.zeros(cap, dtype=np.int32)
    path = np.zeros(max_len + 1, dtype=np.int32)  # node per depth along the current branch
    n_path = 1
    n = 1
    prev_off = 0
    prev_len = 0
    for e in range(lengths.shape[0]):
        off = offsets[e]
        length = lengths[e]
        lcp = 0
        limit = min(length, prev_len)
        while lcp < limit and flat[off + lcp] == flat[prev_off + lcp]:
            lcp += 1
        if lcp == length and length == prev_len:  # the same bytes as the token before
            count[path[length]] += 1
            continue
        for d in range(n_path - 1, lcp, -1):
            end[path[d]] = n
        n_path = lcp + 1
        for d in range(lcp, length):
            path[n_path] = n
            n_path += 1
            byte[n] = flat[off + d]
            depth[n] = d + 1
            n += 1
        count[path[length]] += 1
        prev_off = off
        prev_len = length
    for d in range(n_path - 1, -1, -1):
        end[path[d]] = n
    return byte[:n].copy(), depth[:n].copy(), end[:n].copy(), count[:n].copy()


def sorted_nodes(token_bytes: list[bytes], ids: list[int]) -> tuple[np.ndarray, ...]:
    """(byte, depth, end, count per node, the token ids in node order) of non-empty tokens
    `token_bytes` with ascending ids `ids`: sorted by bytes, equal ones by id (a stable sort)."""
    order = sorted(range(len(token_bytes)), key=token_bytes.__getitem__)
    ordered = [token_bytes[k] for k in order]
    lengths = np.fromiter(map(len, ordered), dtype=np.int64, count=len(ordered))
    offsets = np.zeros(len(ordered), dtype=np.int64)
    if len(ordered) > 1:
        np.cumsum(lengths[:-1], out=offsets[1:])
    flat = np.frombuffer(b"".join(ordered), dtype=np.uint8)
    max_len = int(lengths.max()) if lengths.size else 0
    byte, depth, end, count = trie_nodes(flat, offsets, lengths, max_len)
    tok_ids = np.asarray(ids, dtype=np.int32)[np.asarray(order, dtype=np.int64)]
    return byte, depth, end, count, tok_ids
