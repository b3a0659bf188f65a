"""A grammar's learned mask tables in the disk cache: later processes start warm.

A context-free grammar's masks are slow while they meet frame summaries and walks for the first
time (index/warm_codec.py) and fast once those are known, so with a `cache_dir` the tables are
stored beside the rule set: when a request ends (its matcher accepts an EOS) and they have
grown by a quarter since last stored (at least MIN_NEW entries), and at interpreter exit. A
compile that finds the record installs it before the first mask (its size is what the next
compiles read: a record is not stored past an eighth of the disk cache's bytes, 64 MiB at the
default `disk_cache_bytes`; the tables stop being stored there). Processes sharing a folder
each write what they learned; the last write wins (tables are a cache: losing some costs time,
never correctness). Any failure to read or write is a miss, logged, never an error.
"""

from __future__ import annotations

import atexit
import logging
import threading
import weakref
from typing import TYPE_CHECKING

from .cache import DiskCache, cache_key
from .index.warm_codec import FORMAT, decode_warm_into, encode_warm, learned

if TYPE_CHECKING:
    from .index.stack_index import StackTokenAutomaton

log = logging.getLogger(__name__)

MIN_NEW = 32  # entries learned since the last store before a request's end stores again
_LIVE: "weakref.WeakSet[WarmStore]" = weakref.WeakSet()


class WarmStore:
    """One automaton's warm record: loaded once, stored as it grows."""

    def __init__(self, disk: DiskCache, grammar_key: str, automaton: StackTokenAutomaton) -> None:
        self.disk = disk
        self.key = cache_key("warm", grammar_key, FORMAT)
        self.automaton = automaton
        self.stored = 0  # entries in the record as last read or written
        self.max_bytes = disk.max_bytes // 8
        self.full = False  # the tables outgrew max_bytes: no more stores
        self._busy = threading.Lock()
        _LIVE.add(self)

    def load(self) -> bool:
        """Install the stored tables (before any mask); False where there are none that fit."""
        def install(header, arrays) -> bool:
            decode_warm_into(self.automaton, header, arrays)
            return True

        found = bool(self.disk.load_record(self.key, "warm", install))
        self.stored = learned(self.automaton)
        return found

    def request_ended(self) -> None:
        """Store the tables where they grew enough since last stored (a request's end: no mask
        is waiting on this thread)."""
        new = learned(self.automaton) - self.stored
        if new >= max(MIN_NEW, self.stored // 4) and not self.full:
            self.store()

    def store(self) -> None:
        if not self._busy.acquire(blocking=False):  # (another thread is storing)
            return
        try:
            count = learned(self.automaton)
            if count <= self.stored:
                return
            header, arrays = encode_warm(self.automaton)
            size = sum(a.nbytes for a in arrays.values())
            if size > self.max_bytes:
                self.full = True
                log.info("a grammar's warm tables (%d bytes) outgrew %d bytes: no longer stored", size, self.max_bytes)
                return
            self.disk.store_record(self.key, "warm", header, arrays)
            self.stored = count
        except Exception as exc:  # noqa: BLE001 - a cache write never fails a request
            log.warning("could not store a grammar's warm tables: %s", exc)
        finally:
            self._busy.release()


@atexit.register
def _store_all() -> None:
    for store in list(_LIVE):
        if learned(store.automaton) > store.stored and not store.full:
            store.store()
