"""constrain.model_cache: entries named by a GGUF file's bytes (a reinstall that gives the file a
new time finds its entry), and a bounded number of entries per model."""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import SimpleNamespace

from constrain import model_cache
from constrain.model_cache import KEEP_PER_MODEL, STALE_PARTIAL_SECONDS, converted_dir, prune


def _gguf(folder: Path, data: bytes, name: str = "Model.Q4.gguf") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(data)
    return path


def test_a_reinstalled_file_finds_its_entry_and_other_bytes_do_not(tmp_path):
    first = _gguf(tmp_path / "venv1", b"GGUF" + bytes(range(256)) * 5000)
    again = _gguf(tmp_path / "venv2", first.read_bytes())
    os.utime(again, ns=(1, 1))  # another install: the same bytes at another time
    root = tmp_path / "cache"
    assert converted_dir(root, first, "5.0") == converted_dir(root, again, "5.0")
    assert converted_dir(root, first, "5.0").name.startswith("Model.Q4-")
    assert converted_dir(root, first, "5.0") != converted_dir(root, first, "5.1")
    changed = _gguf(tmp_path / "venv3", first.read_bytes()[:-1] + b"\x00")
    assert converted_dir(root, changed, "5.0") != converted_dir(root, first, "5.0")


def _entry(root: Path, name: str, age: float) -> Path:
    path = root / name
    path.mkdir(parents=True)
    (path / "config.json").write_text("{}")
    stamp = time.time() - age
    os.utime(path, (stamp, stamp))
    return path


def test_prune_keeps_the_most_recently_used_entries_of_the_model_only(tmp_path):
    root = tmp_path
    newest = _entry(root, "M-0123456789abcdef-transformers5.25.0", age=10)
    recent = _entry(root, "M-fedcba9876543210-transformers4.57.1", age=20)
    older = _entry(root, "M-00000000000000ff-transformers5.25.0", age=30)
    old_scheme = [_entry(root, f"M-98362432-17965876029157198{i}0-transformers5.25.0", age=100 + i) for i in range(3)]
    other_model = _entry(root, "M2-0123456789abcdef-transformers5.25.0", age=500)
    lookalike = _entry(root, "M-notes", age=500)
    fresh_partial = _entry(root, "M-1111111111111111-transformers5.25.0.partial-77", age=5)
    stale_partial = _entry(root, "M-2222222222222222-transformers5.25.0.partial-78", age=STALE_PARTIAL_SECONDS + 60)

    removed = prune(root, "M")

    assert KEEP_PER_MODEL == 2
    assert sorted(removed) == sorted([older, *old_scheme, stale_partial])
    assert sorted(root.iterdir()) == sorted([newest, recent, other_model, lookalike, fresh_partial])


def test_a_hit_counts_as_use(tmp_path):
    kept = _entry(tmp_path, "M-aaaaaaaaaaaaaaaa-transformers5.0", age=1000)
    _entry(tmp_path, "M-bbbbbbbbbbbbbbbb-transformers5.0", age=10)
    dropped = _entry(tmp_path, "M-cccccccccccccccc-transformers5.0", age=20)
    model_cache.mark_used(kept)
    assert prune(tmp_path, "M") == [dropped]
    assert prune(tmp_path / "missing", "M") == []


class _Saves:
    """What save_converted calls on a transformers model and tokenizer: save_pretrained."""

    def __init__(self, fail: bool = False):
        self.config = SimpleNamespace(quantization_config=object())
        self.fail = fail

    def save_pretrained(self, folder: Path) -> None:
        if self.fail:
            raise OSError("disk full")
        (Path(folder) / "config.json").write_text("{}")


def test_save_writes_the_entry_then_prunes_the_models_older_ones(tmp_path):
    old = [_entry(tmp_path, f"M-{i:016x}-transformers5.0", age=100 + i) for i in range(3)]
    target = tmp_path / "M-ffffffffffffffff-transformers5.0"
    model = _Saves()
    model_cache.save_converted(model, _Saves(), target, "M")
    assert (target / "config.json").is_file() and not hasattr(model.config, "quantization_config")
    assert sorted(tmp_path.iterdir()) == sorted([target, old[0]])


def test_a_failed_save_leaves_no_partial_folder(tmp_path):
    target = tmp_path / "M-ffffffffffffffff-transformers5.0"
    model_cache.save_converted(_Saves(fail=True), _Saves(), target, "M")
    assert list(tmp_path.iterdir()) == []
