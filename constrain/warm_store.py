"""A grammar's learned mask tables in the disk cache: later processes start warm.

A context-free grammar's masks are slow while they meet frame summaries and walks for the first
time (index/warm_codec.py) and fast once those are known, so with a `cache_dir` the tables are
stored beside the rule set: when a request ends (its matcher accepts an EOS) and they have
grown by a quarter since last stored (at least MIN_NEW entries; on a thread of its own), and at
interpreter exit. A compile that finds the record installs it before the first mask. A record
is not stored past an eighth of the disk cache's bytes (64 MiB at the default
`disk_cache_bytes`): every later compile reads it whole. Processes sharing a folder each add
the record another wrote since (each write has an id) to their own tables before they write
(index/warm_merge.py), so what several processes learn adds up; two writes at once still lose
one (tables are a cache: losing some costs time, never correctness). Any failure to read or
write is a miss, logged, never an error.
"""

from __future__ import annotations

import atexit
import logging
import threading
import uuid
import weakref
from typing import TYPE_CHECKING, Optional

from .automata.rule_set_codec import FORMAT as RULES_FORMAT
from .cache import DiskCache, cache_key
from .index.warm_codec import FORMAT, decode_warm_into, encode_warm, learned
from .index.warm_merge import merge_tables
from .limits import Limits

if TYPE_CHECKING:
    from .index.stack_index import StackTokenAutomaton

log = logging.getLogger(__name__)

MIN_NEW = 32  # entries learned since the last store before a request's end stores again
EXIT_WAIT = 30.0  # seconds the exit's store waits for one under way
_LIVE: "weakref.WeakSet[WarmStore]" = weakref.WeakSet()


class WarmStore:
    """One automaton's warm record: loaded once, stored as it grows."""

    def __init__(self, disk: DiskCache, grammar_key: str, automaton: StackTokenAutomaton, limits: Limits) -> None:
        self.disk = disk
        # (the rule set's record format too: tables learned under older rules' meaning, say
        # end refusals read per rule before they were per state, must not meet newer rules)
        self.key = cache_key("warm", grammar_key, FORMAT, RULES_FORMAT)
        self.automaton = automaton
        self.limits = limits
        self.known: set[str] = set()  # the writes (their ids) whose tables this one holds
        self.stored = 0  # entries in the record as last read or written
        self.max_bytes = disk.max_bytes // 8
        self.full = False  # the tables outgrew max_bytes: no more stores
        self._busy = threading.Lock()
        self._thread: Optional[threading.Thread] = None
        _LIVE.add(self)

    def load(self) -> bool:
        """Install the stored tables (before any mask); False where there are none that fit."""
        def install(header, arrays) -> bool:
            decode_warm_into(self.automaton, header, arrays)
            self.known.add(str(header.get("write")))
            return True

        found = bool(self.disk.load_record(self.key, "warm", install))
        self.stored = learned(self.automaton)
        return found

    def request_ended(self) -> None:
        """Store the tables where they grew enough since last stored, on a thread of its own:
        the request's thread goes on (SQL's 4 MB took 11-21 ms to encode and write, measured
        inline; masks computed meanwhile are safe, encode_warm copies the tables first)."""
        new = learned(self.automaton) - self.stored
        if new >= max(MIN_NEW, self.stored // 4) and not self.full and not self._busy.locked():
            self._thread = threading.Thread(target=self.store, name="constrain-warm-store", daemon=True)
            self._thread.start()

    def wait(self, timeout: Optional[float] = None) -> None:
        """Until a store that a request's end started is done."""
        if self._thread is not None:
            self._thread.join(timeout)

    def store(self, wait: bool = False) -> None:
        """Encode and write the tables now (`wait`: after a store under way, else skip)."""
        if not self._busy.acquire(blocking=wait, timeout=EXIT_WAIT if wait else -1):
            return
        try:
            if learned(self.automaton) <= self.stored:
                return
            self._merge_stored()
            count = learned(self.automaton)
            header, arrays = encode_warm(self.automaton)
            header["write"] = uuid.uuid4().hex
            size = sum(a.nbytes for a in arrays.values())
            if size > self.max_bytes:
                self.full = True
                log.info("a grammar's warm tables (%d bytes) outgrew %d bytes: no longer stored", size, self.max_bytes)
                return
            self.disk.store_record(self.key, "warm", header, arrays)
            self.known.add(header["write"])
            self.stored = count
        except Exception as exc:  # noqa: BLE001 - a cache write never fails a request
            log.warning("could not store a grammar's warm tables: %s", exc)
        finally:
            self._busy.release()

    def _merge_stored(self) -> None:
        """Add to this automaton's tables those of the record on disk, where another process
        wrote it since this one last read or wrote it (index/warm_merge.py; a record this one
        knows is declined before its arrays are read)."""
        from .index.stack_index import StackTokenAutomaton

        def decode(header, arrays) -> tuple[StackTokenAutomaton, str]:
            other = StackTokenAutomaton(self.automaton.rules, self.automaton.index, self.limits)
            decode_warm_into(other, header, arrays)
            return other, str(header.get("write"))

        found = self.disk.load_record(self.key, "warm", decode, wanted=lambda header: str(header.get("write")) not in self.known)
        if found is not None:
            merge_tables(self.automaton, found[0])
            self.known.add(found[1])


@atexit.register
def _store_all() -> None:
    for store in list(_LIVE):
        if learned(store.automaton) > store.stored and not store.full:
            store.store(wait=True)
