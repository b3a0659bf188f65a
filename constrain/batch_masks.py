"""Fill a batch's bitmask rows, in parallel across rows.

Each row is one matcher's mask; rows are independent, so they are split over worker threads
(the numba walks release the GIL; cached rows are a copy). Used by the engine integrations,
which fill every request's row once per step.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional, Sequence

from .matcher import Matcher


def fill_batch_bitmask(
    matchers: Sequence[Optional[Matcher]],
    bitmask: Any,
    *,
    executor: Optional[ThreadPoolExecutor] = None,
    min_rows_per_thread: int = 4,
) -> None:
    """Row i of `bitmask` gets matchers[i]'s next-token mask; a None matcher leaves its row as it
    is. With an executor and enough rows, the rows are filled on its threads in chunks."""
    rows = [i for i, m in enumerate(matchers) if m is not None]
    if bitmask.shape[0] < len(matchers):
        raise ValueError(f"bitmask has {bitmask.shape[0]} rows for {len(matchers)} matchers")
    workers = executor._max_workers if executor is not None else 1  # noqa: SLF001 (stdlib field)
    chunks = min(workers, len(rows) // max(1, min_rows_per_thread))
    if executor is None or chunks <= 1:
        for i in rows:
            matchers[i].fill_next_token_bitmask(bitmask, i)  # type: ignore[union-attr]
        return
    size = (len(rows) + chunks - 1) // chunks
    parts = [rows[k : k + size] for k in range(0, len(rows), size)]

    def fill(part: list[int]) -> None:
        for i in part:
            matchers[i].fill_next_token_bitmask(bitmask, i)  # type: ignore[union-attr]

    for future in [executor.submit(fill, part) for part in parts]:
        future.result()
