"""The trie of spelled_keys.other_keys_dfa in numba: a trie node per byte set of every spelling
of every named key, then its byte classes and table. In Python it cost about 20 us per key
character (every character has three or four spellings), the largest part of compiling a
small object schema. The steps, node numbering and classes are those of the Python version it
replaces (tests/grammar/test_spelled_keys.py checks the language against a difference of
automata); every index comes from arrays built in spelled_keys.py.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.typed import Dict

from ...automata.canonical import merge_columns, quotient

_QUOTE = 0x22


@numba.njit(cache=True, nogil=True)
def _child(slots, node, byte):
    """Slot of the trie edge (node, byte) in the open-addressing table `slots` (rows: key,
    target), or of the empty slot where it belongs. A table of nodes x 256 children cost a
    28 MB fill for a few hundred keys; the edges number about the key bytes."""
    key = node * 256 + byte
    mask = slots.shape[0] - 1
    h = (key * 2654435761) & mask
    while slots[h, 0] >= 0 and slots[h, 0] != key:
        h = (h + 1) & mask
    return h


@numba.njit(cache=True, nogil=True)
def _walk(slots, at, a_rows, n, node, form, last, form_set_start, set_byte_start, set_bytes, edges, m):
    """Add the path of one spelling (a list of byte sets) from `node`, ending at `last` (or a
    new node when last < 0), its edges also listed in edges[m:] as (source, byte, target);
    returns (its end, the node count, the edge count)."""
    for i in range(form_set_start[form], form_set_start[form + 1]):
        first = set_bytes[set_byte_start[i]]
        h = _child(slots, node, first)
        target = slots[h, 1] if slots[h, 0] >= 0 else -1
        if target < 0:
            if i == form_set_start[form + 1] - 1 and last >= 0:
                target = last
            else:
                target = n
                n += 1
                at[target] = a_rows[at[node], first]
            for j in range(set_byte_start[i], set_byte_start[i + 1]):
                h = _child(slots, node, set_bytes[j])
                slots[h, 0] = node * 256 + set_bytes[j]
                slots[h, 1] = target
                edges[m, 0] = node
                edges[m, 1] = set_bytes[j]
                edges[m, 2] = target
                m += 1
        node = target
    return node, n, m


@numba.njit(cache=True, nogil=True)
def _starts(counts):
    """Where each group starts in the flat array after it, and the end: [0, c0, c0 + c1, ...]."""
    out = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    for i in range(counts.shape[0]):
        out[i + 1] = out[i] + counts[i]
    return out


@numba.njit(cache=True, nogil=True)
def other_keys_arrays(a_rows, a_classes, a_accepting, chars_per_key, char_cp, forms_per_char, sets_per_form,
                      bytes_per_set, set_bytes, max_nodes):
    """(byte classes, table, accepting, whether every spelling stays inside any_string): the
    DFA of any_string (rows `a_rows` per byte) minus the keys (code points `char_cp`, their
    spellings as forms of byte sets of bytes), the reachable part in BFS order."""
    key_start = _starts(chars_per_key)
    char_form_start = _starts(forms_per_char)
    form_set_start = _starts(sets_per_form)
    set_byte_start = _starts(bytes_per_set)
    size = 16
    while size < 2 * (set_bytes.shape[0] + 1):
        size *= 2
    slots = np.full((size, 2), -1, dtype=np.int64)  # trie edges: (node * 256 + byte, target)
    at = np.empty(max_nodes, dtype=np.int64)
    at[0] = 0
    at[1] = a_rows[0, _QUOTE]
    h = _child(slots, 0, _QUOTE)
    slots[h, 0] = _QUOTE
    slots[h, 1] = 1
    n = 2
    edges = np.empty((set_bytes.shape[0] + 1, 3), dtype=np.int64)
    edges[0, 0] = 0
    edges[0, 1] = _QUOTE
    edges[0, 2] = 1
    m = 1
    is_end = np.zeros(max_nodes, dtype=np.bool_)
    boundary = Dict.empty(key_type=types.int64, value_type=types.int64)  # (node, char) -> node
    for key in range(key_start.shape[0] - 1):
        node = 1
        for ch in range(key_start[key], key_start[key + 1]):
            bkey = node * 0x110000 + char_cp[ch]
            if bkey in boundary:
                nxt = boundary[bkey]
            else:
                f = char_form_start[ch]
                nxt, n, m = _walk(slots, at, a_rows, n, node, f, -1, form_set_start, set_byte_start, set_bytes, edges, m)
                boundary[bkey] = nxt
                for f in range(char_form_start[ch] + 1, char_form_start[ch + 1]):
                    _, n, m = _walk(slots, at, a_rows, n, node, f, nxt, form_set_start, set_byte_start, set_bytes, edges, m)
            node = nxt
        is_end[node] = True
    for i in range(n):
        if at[i] < 0:
            return np.zeros(256, dtype=np.int32), np.zeros((1, 1), dtype=np.int32), np.zeros(1, dtype=np.bool_), False
    # Byte classes: any_string's, split where the targets of a byte's trie edges (in node
    # order) differ; numbered by first byte.
    # Each byte's edge targets in source order: the edges sorted by source, then stably by
    # byte (counting sorts).
    by_src = np.zeros(n + 1, dtype=np.int64)
    for e in range(m):
        by_src[edges[e, 0] + 1] += 1
    for q in range(n):
        by_src[q + 1] += by_src[q]
    order = np.empty(m, dtype=np.int64)
    for e in range(m):
        order[by_src[edges[e, 0]]] = e
        by_src[edges[e, 0]] += 1
    sig_ptr = np.zeros(257, dtype=np.int64)
    for e in range(m):
        sig_ptr[edges[e, 1] + 1] += 1
    for b in range(256):
        sig_ptr[b + 1] += sig_ptr[b]
    fill = sig_ptr[:256].copy()
    sig = np.empty(m, dtype=np.int64)
    for i in range(m):
        e = order[i]
        sig[fill[edges[e, 1]]] = edges[e, 2]
        fill[edges[e, 1]] += 1
    classes = np.empty(256, dtype=np.int32)
    reps = np.empty(256, dtype=np.int64)
    n_cls = 0
    for b in range(256):
        found = -1
        for c in range(n_cls):
            r = reps[c]
            if a_classes[r] != a_classes[b] or sig_ptr[r + 1] - sig_ptr[r] != sig_ptr[b + 1] - sig_ptr[b]:
                continue
            same = True
            for i in range(sig_ptr[b + 1] - sig_ptr[b]):
                if sig[sig_ptr[r] + i] != sig[sig_ptr[b] + i]:
                    same = False
                    break
            if same:
                found = c
                break
        if found < 0:
            found = n_cls
            reps[n_cls] = b
            n_cls += 1
        classes[b] = found
    # Trie nodes continue where any_string is after the same bytes, except on their edges;
    # after a whole key a closing quote leads nowhere. any_string's states follow the trie.
    n_any = a_rows.shape[0]
    table = np.empty((n + n_any, n_cls), dtype=np.int32)
    for s in range(n_any):
        for c in range(n_cls):
            t = a_rows[s, reps[c]]
            table[n + s, c] = t + n if t >= 0 else -1
    for q in range(n):
        for c in range(n_cls):
            table[q, c] = table[n + at[q], c]
    for e in range(m):
        table[edges[e, 0], classes[edges[e, 1]]] = edges[e, 2]
    for q in range(n):
        if is_end[q]:
            table[q, classes[_QUOTE]] = -1
    accepting = np.zeros(n + n_any, dtype=np.bool_)
    for s in range(n_any):
        accepting[n + s] = a_accepting[s]
    block_of = _merged_trie_nodes(table, accepting, n)
    table, accepting = quotient(table, block_of, accepting)  # the reachable part, BFS order
    col_of, keep = merge_columns(table)
    narrow = np.empty((table.shape[0], keep.shape[0]), dtype=np.int32)
    for q in range(table.shape[0]):
        for j in range(keep.shape[0]):
            narrow[q, j] = table[q, keep[j]]
    for b in range(256):
        classes[b] = col_of[classes[b]]
    return classes, narrow, accepting, True


@numba.njit(cache=True, nogil=True)
def _merged_trie_nodes(table, accepting, n):
    """Per state, the state it merges into: trie nodes (0..n-1) with the same accepting flag
    and the same row, once their targets are merged, are one state (keys that end alike share
    their last nodes). The trie is acyclic, so one pass children first settles it (Revuz);
    any_string's states (n..) stay apart, as they are minimal, and no trie node equals one of
    them (from every trie node some key's end is reachable, where the closing quote that
    any_string reads leads nowhere). So the result is the minimal DFA, without refinement."""
    total, k = table.shape
    rep = np.arange(total).astype(np.int64)
    # Post-order over trie edges (targets < n), iteratively.
    order = np.empty(n, dtype=np.int64)
    seen = np.zeros(n, dtype=np.bool_)
    stack = np.empty(n, dtype=np.int64)
    col = np.zeros(n, dtype=np.int64)
    top = 0
    cnt = 0
    stack[0] = 0
    seen[0] = True
    top = 1
    while top > 0:
        q = stack[top - 1]
        pushed = False
        while col[q] < k:
            t = table[q, col[q]]
            col[q] += 1
            if 0 <= t < n and not seen[t]:
                seen[t] = True
                stack[top] = t
                top += 1
                pushed = True
                break
        if not pushed:
            top -= 1
            order[cnt] = q
            cnt += 1
    size = 1
    while size < 2 * cnt + 2:
        size *= 2
    slots = np.full(size, -1, dtype=np.int64)
    hashes = np.zeros(total, dtype=np.int64)
    for i in range(cnt):
        q = order[i]
        h = np.int64(1 + accepting[q])
        for c in range(k):
            t = table[q, c]
            h = h * 1000003 + (rep[t] if t >= 0 else -1)
        hashes[q] = h
        j = (h ^ (h >> 29)) & (size - 1)
        while slots[j] >= 0:
            r = slots[j]
            if hashes[r] == h and accepting[r] == accepting[q]:
                same = True
                for c in range(k):
                    a = table[q, c]
                    b = table[r, c]
                    if (rep[a] if a >= 0 else -1) != (rep[b] if b >= 0 else -1):
                        same = False
                        break
                if same:
                    rep[q] = r
                    break
            j = (j + 1) & (size - 1)
        if slots[j] < 0:
            slots[j] = q
    return rep
