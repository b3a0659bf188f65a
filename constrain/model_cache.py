"""The folder cache of GGUF models converted to transformers folders: transformers spends ~20 s
dequantizing a GGUF file and converting its tokenizer, and the converted safetensors load in a
fraction of a second.

An entry is named by the GGUF file's bytes, not by its path or modification time: reinstalling
the package that ships a model gives the same bytes a new time, and names by time left one more
~500 MB copy per install (twelve of SmolLM2 on one machine, until its disk was full). Each model
keeps its KEEP_PER_MODEL most recently used entries; older ones and abandoned partial writes go
when a new entry is written.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import time
from pathlib import Path
from typing import Any, Optional

KEEP_PER_MODEL = 2
STALE_PARTIAL_SECONDS = 3600.0
_CHUNK = 1 << 20


def content_digest(path: Path) -> str:
    """16 hex digits of the file's BLAKE2b (~0.1 s for SmolLM2's 98 MB)."""
    digest = hashlib.blake2b(digest_size=8)
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def converted_dir(root: Path, gguf: Path, transformers_version: str) -> Path:
    """Where `gguf` converted by this transformers version is (or will be) kept under `root`."""
    return root / f"{gguf.stem}-{content_digest(gguf)}-transformers{transformers_version}"


def mark_used(folder: Path) -> None:
    """Recency for pruning: a hit touches its folder (a read-only cache stays as it is)."""
    try:
        os.utime(folder)
    except OSError:
        pass


def save_converted(lm: Any, tok: Any, target: Path, stem: str, *, keep: int = KEEP_PER_MODEL) -> None:
    """Write the dequantized model and its tokenizer as a transformers folder, atomically (two
    processes may convert at once; the second rename loses and cleans up), then prune the older
    entries of the model `stem` (its GGUF file's name). A failure to cache is not an error: the model in hand is fine."""
    staging = target.with_name(f"{target.name}.partial-{os.getpid()}")
    try:
        if getattr(lm.config, "quantization_config", None) is not None:
            del lm.config.quantization_config  # the GGUF quantizer is done once tensors are loaded
        lm.hf_quantizer = None
        staging.mkdir(parents=True, exist_ok=True)
        tok.save_pretrained(staging)
        lm.save_pretrained(staging)
        os.rename(staging, target)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    prune(target.parent, stem, keep=keep)


def _entry_pattern(stem: str) -> re.Pattern[str]:
    # this module's names (a 16-digit digest) and older ones (size and modification time)
    return re.compile(re.escape(stem) + r"-(?:[0-9a-f]{16}|\d+-\d+)-transformers[\w.+]+(\.partial-\d+)?")


def prune(root: Path, stem: str, *, keep: int = KEEP_PER_MODEL, now: Optional[float] = None) -> list[Path]:
    """Remove the entries of the model `stem` beyond its `keep` most recently used, and partial
    writes older than STALE_PARTIAL_SECONDS (a process killed while writing). Returns what went."""
    pattern = _entry_pattern(stem)
    now = time.time() if now is None else now
    complete: list[tuple[float, Path]] = []
    removed: list[Path] = []
    try:
        children = list(root.iterdir())
    except OSError:
        return removed
    for child in children:
        match = pattern.fullmatch(child.name)
        if match is None or not child.is_dir():
            continue
        try:
            used = child.stat().st_mtime
        except OSError:
            continue
        if match.group(1) is None:
            complete.append((used, child))
        elif now - used > STALE_PARTIAL_SECONDS:
            removed.append(child)
    complete.sort(key=lambda pair: (pair[0], pair[1].name), reverse=True)
    removed.extend(path for _, path in complete[max(keep, 0):])
    for path in removed:
        shutil.rmtree(path, ignore_errors=True)
    return removed
