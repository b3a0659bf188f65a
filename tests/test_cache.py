"""Caches: memory LRU bounds, disk format (no pickle), atomic writes, eviction, corruption."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from constrain.automata import regex_to_dfa
from constrain.cache import DISK_FORMAT, DiskCache, MemoryCache, cache_key


def test_memory_cache_is_a_bounded_lru():
    c = MemoryCache(max_entries=2)
    calls = []
    get = lambda k: c.get_or_compute(k, lambda: calls.append(k) or k.upper())  # noqa: E731
    assert get("a") == "A" and get("b") == "B" and get("a") == "A"
    get("c")  # evicts b, the least recently used
    assert len(c) == 2
    get("b")
    assert calls == ["a", "b", "c", "b"]
    assert (c.hits, c.misses) == (1, 4)
    c.clear()
    assert len(c) == 0 and c.hits == 0


def test_cache_key_is_stable_and_sensitive():
    k = cache_key("regex", "[0-9]+", {}, "fp", "0.1.0")
    assert k == cache_key("regex", "[0-9]+", {}, "fp", "0.1.0")
    assert k != cache_key("regex", "[0-9]*", {}, "fp", "0.1.0")
    assert k != cache_key("regex", "[0-9]+", {}, "fp2", "0.1.0")


def test_disk_round_trip_is_exact(tmp_path):
    dfa = regex_to_dfa(r'\{"a": [0-9]+\}')
    disk = DiskCache(tmp_path)
    disk.store("k1", dfa)
    back = disk.load("k1")
    assert back is not None
    for name in ("byte_classes", "table", "accepting"):
        assert np.array_equal(getattr(dfa, name), getattr(back, name))
    assert disk.load("missing") is None
    # The file is a plain npz of integer arrays: loads with pickle disabled.
    (path,) = tmp_path.glob("*.npz")
    with np.load(path, allow_pickle=False) as data:
        assert set(data.files) == {"header", "byte_classes", "table", "accepting"}
        assert all(data[f].dtype != object for f in data.files)


def test_corrupt_or_foreign_files_are_misses(tmp_path):
    disk = DiskCache(tmp_path)
    disk.store("k", regex_to_dfa("a+"))
    (path,) = tmp_path.glob("*.npz")
    path.write_bytes(b"not a zip file at all")
    assert disk.load("k") is None
    # A valid npz whose table points outside its states must be refused, not walked by numba.
    np.savez(path, header=np.frombuffer(b'{"format": %d, "key": "k"}' % DISK_FORMAT, dtype=np.uint8),
             byte_classes=np.zeros(256, np.int32), table=np.array([[5]], np.int32),
             accepting=np.array([True]))
    assert disk.load("k") is None
    # Another format version is a miss too.
    disk.store("k2", regex_to_dfa("b+"))
    p2 = disk._path("k2")
    with np.load(p2) as data:
        arrays = dict(data)
    arrays["header"] = np.frombuffer(b'{"format": 999, "key": "k2"}', dtype=np.uint8)
    np.savez(p2, **arrays)
    assert disk.load("k2") is None


def test_disk_cache_is_bounded(tmp_path):
    one = regex_to_dfa("[a-z]{1,40}")
    probe = DiskCache(tmp_path / "probe")
    probe.store("a", one)
    size_one = probe.usage()[1]
    disk = DiskCache(tmp_path / "bounded", max_bytes=size_one * 2 + 10)
    for k in "bcde":
        disk.store(k, one)
        if k == "b":
            os.utime(disk._path(k), (1, 1))  # b is the least recently used
        if k == "c":
            os.utime(disk._path(k), (2, 2))
    files, size = disk.usage()
    assert files == 2 and size <= size_one * 2 + 10
    assert disk.load("b") is None and disk.load("c") is None
    assert disk.load("e") is not None


_WRITER = """
import sys
import numpy as np
from constrain.automata import regex_to_dfa
from constrain.cache import DiskCache
disk = DiskCache(sys.argv[1])
dfa = regex_to_dfa("(x|y){1,20}z")
for _ in range(30):
    disk.store("same", dfa)
    got = disk.load("same")
    assert got is not None and np.array_equal(got.table, dfa.table)
print("ok")
"""


def test_several_processes_share_one_folder(tmp_path):
    """Concurrent writers and readers of one key: every read sees a whole, valid file."""
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path)], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0 and out.strip() == "ok", err
    assert not list(Path(tmp_path).glob(".tmp-*"))  # no temporary files left behind


def test_records_of_another_kind_or_refused_by_their_decoder_are_misses(tmp_path):
    disk = DiskCache(tmp_path)
    disk.store_record("r", "rules", {"n": 3}, {"xs": np.arange(3, dtype=np.int32)})
    assert disk.load("r") is None  # (a DFA is asked for: another kind)
    got = disk.load_record("r", "rules", lambda body, arrays: (body["n"], arrays["xs"].tolist()))
    assert got == (3, [0, 1, 2]) and disk.hits == 1

    def refuse(body, arrays):
        raise ValueError("not what I wrote")

    assert disk.load_record("r", "rules", refuse) is None and disk.hits == 1
    disk.store("d", regex_to_dfa("a+"))
    assert disk.load_record("d", "rules", lambda body, arrays: body) is None


def test_records_another_code_wrote_are_misses(tmp_path, monkeypatch):
    """A development tree between releases keeps its version: the code's own fingerprint (its
    files' sizes and times) tells its records apart."""
    from constrain import cache

    disk = DiskCache(tmp_path)
    disk.store("d", regex_to_dfa("a+"))
    assert disk.load("d") is not None
    monkeypatch.setattr(cache, "code_fingerprint", lambda: "another tree")
    assert disk.load("d") is None


def test_the_code_fingerprint_follows_the_source_files(tmp_path):
    import os

    from constrain.cache import sources_fingerprint

    (tmp_path / "sub").mkdir()
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "sub" / "b.py").write_text("y = 2\n")
    (tmp_path / "notes.txt").write_text("not code")
    first = sources_fingerprint(tmp_path)
    (tmp_path / "notes.txt").write_text("still not code")
    st = (tmp_path / "a.py").stat()
    os.utime(tmp_path / "a.py", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # (a reinstall: new times)
    (tmp_path / "sub" / "b.py").write_text("y = 2\n")
    assert sources_fingerprint(tmp_path) == first
    (tmp_path / "sub" / "b.py").write_text("y = 3\n")  # (same size, other code)
    second = sources_fingerprint(tmp_path)
    assert second != first
    (tmp_path / "sub" / "b.py").rename(tmp_path / "b.py")  # (same code, another module)
    assert sources_fingerprint(tmp_path) not in (first, second)


def test_a_record_declined_by_its_header_is_not_decoded_and_is_no_hit(tmp_path):
    disk = DiskCache(tmp_path)
    disk.store_record("r", "warm", {"write": "w1"}, {"xs": np.arange(3, dtype=np.int32)})
    decoded = []

    def decode(body, arrays):
        decoded.append(body)
        return arrays["xs"].tolist()

    assert disk.load_record("r", "warm", decode, wanted=lambda body: body["write"] != "w1") is None
    assert decoded == [] and disk.hits == 0
    assert disk.load_record("r", "warm", decode, wanted=lambda body: body["write"] == "w1") == [0, 1, 2]
    assert disk.hits == 1
