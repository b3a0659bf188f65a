"""A sparse bitmask row (word indices, their bits) OR-ed into a whole one, by a numba loop.

Apart from row_bits.py because it loads numba, which `import constrain` must not (the masks'
modules import this one; pushdown_summary.warm_up compiles it outside any mask's clock).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def or_sparse(words, idx, bits):
    """words[idx] |= bits, as a loop: numpy's fancy `|=` gathers, ORs and scatters through
    temporaries (0.8 against 0.4 us at 5 words, 8.6 against 2.2 at 3,000), and a mask ORs in
    a few such parts per frame of each stack (frame_summaries.py)."""
    for i in range(idx.shape[0]):
        words[idx[i]] |= bits[i]


def warm_or_sparse() -> None:
    """Compile (or load) or_sparse for the index types parts come in: int64 from nonzero(),
    int32 from a warm record (warm_codec.py)."""
    words = np.zeros(1, dtype=np.uint32)
    bits = np.zeros(1, dtype=np.uint32)
    for dtype in (np.int64, np.int32):
        or_sparse(words, np.zeros(1, dtype=dtype), bits)
