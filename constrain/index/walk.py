"""The hot loop: which tokens can a DFA state read without dying (numba, cached to disk).

numba does no bounds checking: every index below is derived from arrays the TokenTrie and DFA
constructors validated (trie ids < vocab size, table entries < n_states), and CI runs these
tests once with NUMBA_BOUNDSCHECK=1.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True, inline="always")
def _mark_tokens(i, tok1, tok_ptr, tok_ids, out):
    """OR in the bits of the token(s) ending at trie node i."""
    t = tok1[i]
    if t >= 0:
        out[t >> 5] |= np.uint32(1) << np.uint32(t & 31)
    elif t == -2:
        for k in range(tok_ptr[i], tok_ptr[i + 1]):
            u = tok_ids[k]
            out[u >> 5] |= np.uint32(1) << np.uint32(u & 31)


@numba.njit(cache=True, nogil=True, boundscheck=False)
def walk_trie(packed, end, tok1, tok_ptr, tok_ids, max_depth, byte_classes, table, start_state, out):
    """OR into `out` (uint32 words) the bit of every token readable from `start_state`.

    Returns the number of trie nodes visited (a cost figure for benchmarks)."""
    n = packed.shape[0]
    states = np.empty(max_depth + 1, dtype=np.int32)
    states[0] = start_state
    i = 1
    visited = 0
    while i < n:
        p = packed[i]
        d = p >> 8
        s = table[states[d - 1], byte_classes[p & 255]]
        visited += 1
        if s < 0:
            i = end[i]
            continue
        states[d] = s
        _mark_tokens(i, tok1, tok_ptr, tok_ids, out)
        i += 1
    return visited


@numba.njit(cache=True, nogil=True, boundscheck=False)
def walk_subtree(packed, end, tok1, tok_ptr, tok_ids, max_depth, byte_classes, table, exits,
                 first, last, start_state, out, b_nodes, b_states):
    """Walk trie nodes first..last-1 (a subtree, or the whole trie from node 1), reading with one
    rule's DFA from `start_state` at the subtree's parent depth. OR in the tokens readable inside
    the rule; record as boundaries the nodes whose byte is read by a state that can call or
    return (`exits`): there another rule may read it, so the caller continues with the stack.
    Returns the number of boundaries written (b_nodes.shape[0] + 1 means the buffer overflowed)."""
    states = np.empty(max_depth + 1, dtype=np.int32)
    base = (packed[first] >> 8) - 1
    states[base] = start_state
    cap = b_nodes.shape[0]
    n_b = 0
    i = first
    while i < last:
        p = packed[i]
        d = p >> 8
        prev = states[d - 1]
        if exits[prev]:
            if n_b < cap:
                b_nodes[n_b] = i
                b_states[n_b] = prev
                n_b += 1
            else:
                return cap + 1
        s = table[prev, byte_classes[p & 255]]
        if s < 0:
            i = end[i]
            continue
        states[d] = s
        _mark_tokens(i, tok1, tok_ptr, tok_ids, out)
        i += 1
    return n_b
