"""MaskPrefetcher: one request's next-token bitmask, computed on a worker thread.

A decode loop starts it before the model's forward pass and waits for it after: the mask costs
no latency while it is cheaper than the forward pass (the numba walks release the GIL; the
Python parts interleave with torch, which releases it inside its kernels).
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Optional

from .kernels.bitmask import allocate_token_bitmask
from .matcher import Matcher


class MaskPrefetcher:
    """Fills a (1, words) bitmask for a matcher in the background; `wait` returns it."""

    def __init__(self, width: int) -> None:
        self._bitmask = allocate_token_bitmask(1, width)
        self._executor: Optional[ThreadPoolExecutor] = None
        self._future: Optional[Future] = None
        self.mask_seconds = 0.0
        self.masks_computed = 0

    def start(self, matcher: Matcher) -> None:
        """Begin computing `matcher`'s mask; the matcher must not advance until `wait` returns."""
        if self._future is not None:
            raise RuntimeError("a mask is already being computed; wait() for it first")
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="constrain-mask")
        self._future = self._executor.submit(self._fill, matcher)

    def wait(self) -> Any:
        """The bitmask of the matcher given to the last `start` (re-raises its errors)."""
        if self._future is None:
            raise RuntimeError("wait() without start()")
        future, self._future = self._future, None
        future.result()
        return self._bitmask

    def close(self) -> None:
        if self._future is not None:
            self._future.cancel()
            self._future = None
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None

    def _fill(self, matcher: Matcher) -> None:
        t0 = time.perf_counter()
        matcher.fill_next_token_bitmask(self._bitmask, 0)
        self.mask_seconds += time.perf_counter() - t0
        self.masks_computed += 1
