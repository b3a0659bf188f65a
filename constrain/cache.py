"""Compile caches: a bounded in-memory LRU, and an optional on-disk store.

Disk format (version DISK_FORMAT): one `.npz` per key holding only integer/bool arrays and a
UTF-8 JSON header stored as a uint8 array; read with `allow_pickle=False`, so loading never runs
code. Writes go to a temporary file in the same folder and are published with `os.replace`, so
readers in other processes see a whole file or none. The folder is bounded in bytes; the least
recently used files go first. A file that is corrupt or of another version is treated as a miss.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Hashable, Optional

import numpy as np

from .automata.dfa import DFA
from .errors import CacheError

log = logging.getLogger(__name__)

DISK_FORMAT = 1
_SUFFIX = ".cdfa.npz"


@dataclass(frozen=True)
class CacheInfo:
    hits: int
    misses: int
    entries: int
    max_entries: int
    disk_hits: int
    disk_files: int
    disk_bytes: int


def cache_key(*parts: Any) -> str:
    """A stable hex digest of JSON-serializable key parts."""
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class MemoryCache:
    """Bounded LRU of compiled objects; thread-safe; `compute` runs outside the lock."""

    def __init__(self, max_entries: int = 128) -> None:
        if max_entries < 0:
            raise ValueError("max_entries must be >= 0")
        self.max_entries = max_entries
        self._data: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get_or_compute(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                self.hits += 1
                return self._data[key]
            self.misses += 1
        value = compute()
        with self._lock:
            if key in self._data:  # another thread finished first: share its object
                return self._data[key]
            if self.max_entries:
                self._data[key] = value
                while len(self._data) > self.max_entries:
                    self._data.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.hits = self.misses = 0


class DiskCache:
    """DFAs on disk, keyed by hex digests; bounded to `max_bytes`."""

    def __init__(self, directory: os.PathLike[str] | str, max_bytes: int = 512 * 2**20) -> None:
        self.directory = Path(directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CacheError(f"cannot create cache folder {self.directory}: {exc}") from exc
        self.max_bytes = max_bytes
        self.hits = 0

    def _path(self, key: str) -> Path:
        return self.directory / f"{key}{_SUFFIX}"

    def load(self, key: str) -> Optional[DFA]:
        path = self._path(key)
        try:
            with np.load(path, allow_pickle=False) as data:
                header = json.loads(bytes(data["header"]).decode("utf-8"))
                if header.get("format") != DISK_FORMAT or header.get("key") != key:
                    return None
                dfa = DFA(data["byte_classes"], data["table"], data["accepting"])
        except FileNotFoundError:
            return None
        except Exception as exc:  # corrupt or foreign file: a miss, never a crash
            log.warning("ignoring unreadable cache file %s: %s", path, exc)
            return None
        try:
            os.utime(path)  # mark as recently used for eviction
        except OSError:
            pass
        self.hits += 1
        return dfa

    def store(self, key: str, dfa: DFA) -> None:
        header = json.dumps({"format": DISK_FORMAT, "key": key}).encode("utf-8")
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".npz")
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez(
                    fh,
                    header=np.frombuffer(header, dtype=np.uint8),
                    byte_classes=dfa.byte_classes,
                    table=dfa.table,
                    accepting=dfa.accepting,
                )
            os.replace(tmp, self._path(key))
        except OSError as exc:
            log.warning("could not write cache file in %s: %s", self.directory, exc)
            try:
                os.unlink(tmp)
            except OSError:
                pass
            return
        self._evict()

    def _files(self) -> list[tuple[float, int, Path]]:
        out = []
        for p in self.directory.glob(f"*{_SUFFIX}"):
            try:
                st = p.stat()
            except OSError:
                continue
            out.append((st.st_mtime, st.st_size, p))
        return out

    def _evict(self) -> None:
        files = sorted(self._files())
        total = sum(size for _, size, _ in files)
        for _, size, path in files:
            if total <= self.max_bytes:
                break
            try:
                path.unlink()
            except OSError:
                pass
            total -= size

    def usage(self) -> tuple[int, int]:
        files = self._files()
        return len(files), sum(size for _, size, _ in files)

    def clear(self) -> None:
        for _, _, path in self._files():
            try:
                path.unlink()
            except OSError:
                pass
        self.hits = 0
