"""Load the mask kernels when a vocabulary index is built, not inside a request's mask.

numba loads each kernel from its disk cache on its first call in a process (8-15 ms each, more
than a thousand masks' worth). The slice analysis, for one, is first needed by whichever mask
first meets a wide state, often deep into the first request. So each kernel the masks call is
called once here, on a one-state DFA, with the argument types the masks pass (numba keeps one
compiled version per type signature: read-only and writable arrays are different types).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .vocab_index import VocabIndex


def warm_kernels(index: "VocabIndex") -> None:
    from ..automata.dfa import DFA
    from .chain_walk import warm_chain
    from .name_runs import name_closed_states
    from .pushdown_summary import warm_up
    from .slice_choice import SliceChooser
    from .walk import walk_subtrees

    dead = DFA(np.zeros(256, dtype=np.int32), np.full((1, 1), -1, dtype=np.int32), np.ones(1, dtype=np.bool_))
    exits = np.zeros(1, dtype=np.bool_)  # writable, as rules.py and token_index.py make them
    chooser = SliceChooser(index.slices)
    for k in range(len(index.slices)):
        chooser._analyse(0, k, dead, exits)
    nodes = np.empty(1, dtype=np.int32)
    for t in (index.trie, *(sl.rest for sl in index.slices)):
        words = np.zeros(t.n_words, dtype=np.uint32)
        walk_subtrees(
            t.packed, t.end, t.tok1, t.tok_ptr, t.tok_ids, t.root, t.max_depth, dead.byte_classes, dead.table,
            np.zeros(1, dtype=np.uint8), np.zeros((1, 256), dtype=np.bool_), np.zeros(1, dtype=np.uint8),
            name_closed_states(dead), t.names,
            np.zeros(1, dtype=np.int32), np.int32(0), words, nodes, nodes,
        )
    warm_chain()  # (a warm record's decoding builds the chaining's tables: no part of a compile's time)
    warm_up()  # (the pushdown walk and its helpers: ~20 ms that a process's first mask of a grammar of rules paid)
