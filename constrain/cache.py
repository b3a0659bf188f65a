"""Compile caches: a bounded in-memory LRU, and an optional on-disk store.

Disk format (version DISK_FORMAT): one `.npz` per key holding only integer/bool arrays and a
UTF-8 JSON header stored as a uint8 array (the record's kind: "dfa", "rules" or "warm", the
fingerprint of the code that wrote it, and its body); read with `allow_pickle=False`, so loading
never runs code. Writes go to a temporary file in the same folder and are published with
`os.replace`, so readers in other processes see a whole file or none. The folder is bounded in
bytes; the least recently used files go first. A file that is corrupt, of another version or
written by other code is treated as a miss.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Hashable, Optional, TypeVar

import numpy as np

from .automata.dfa import DFA
from .errors import CacheError

log = logging.getLogger(__name__)

DISK_FORMAT = 1
_SUFFIX = ".cdfa.npz"
T = TypeVar("T")


@dataclass(frozen=True)
class CacheInfo:
    hits: int
    misses: int
    entries: int
    max_entries: int
    disk_hits: int
    disk_files: int
    disk_bytes: int


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A digest of this package's source files: a record that other code wrote (a development
    tree between releases) is a miss, never read as if this code had written it. The files'
    contents, not their times: a reinstall of the same code (`pip install .` rewrites every
    file) keeps the cache. ~200 files, a few ms, once per process that uses a disk cache."""
    return sources_fingerprint(Path(__file__).parent)


def sources_fingerprint(root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(f"{path.relative_to(root)}\0".encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:20]


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
    """Compiled automata on disk (regex DFAs, grammars' rule sets: records of a `kind`), keyed by
    hex digests; bounded to `max_bytes`."""

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
        """The DFA stored under `key`, or None."""
        return self.load_record(key, "dfa", lambda _, a: DFA(a["byte_classes"], a["table"], a["accepting"]))

    def store(self, key: str, dfa: DFA) -> None:
        self.store_record(key, "dfa", {}, {"byte_classes": dfa.byte_classes, "table": dfa.table, "accepting": dfa.accepting})

    def load_record(
        self, key: str, kind: str, decode: Callable[[dict[str, Any], dict[str, np.ndarray]], T],
        wanted: Optional[Callable[[dict[str, Any]], bool]] = None,
    ) -> Optional[T]:
        """decode(body, arrays) of the record of `kind` stored under `key`, or None: a missing,
        corrupt, foreign or other-kind file, one `wanted(body)` declines (asked before any array
        is read), or one `decode` refuses (ValueError), is a miss."""
        path = self._path(key)
        try:
            with np.load(path, allow_pickle=False) as data:
                header = json.loads(bytes(data["header"]).decode("utf-8"))
                if (header.get("format") != DISK_FORMAT or header.get("key") != key or header.get("kind", "dfa") != kind
                        or header.get("code") != code_fingerprint()):
                    return None
                if wanted is not None and not wanted(header.get("body", {})):
                    return None
                arrays = {name: data[name] for name in data.files if name != "header"}
            found = decode(header.get("body", {}), arrays)
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
        return found

    def store_record(self, key: str, kind: str, body: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        """Store `body` (JSON) and `arrays` (integer/bool) as the record of `kind` under `key`."""
        header = json.dumps({"format": DISK_FORMAT, "key": key, "kind": kind, "code": code_fingerprint(), "body": body}).encode("utf-8")
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".npz")
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez(fh, header=np.frombuffer(header, dtype=np.uint8), **arrays)
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
