"""The Hugging Face side files next to tokenizer.json that say how generation ends.

tokenizer.json itself names no eos; tokenizer_config.json names the eos token by
text, generation_config.json / config.json by id (an int or a list of ints, e.g.
Llama 3 instruct's [128001, 128008, 128009]), and config.json's vocab_size is the
width of the model's logits, which may exceed the tokenizer (DeepSeek V3: 129,280
logits for 128,815 tokens).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from constrain.errors import VocabularyError


@dataclass
class SideInfo:
    """eos ids, eos token texts and model vocab size found beside a tokenizer."""

    eos_ids: set[int] = field(default_factory=set)
    eos_texts: set[str] = field(default_factory=set)
    vocab_size: int | None = None


def read_side_files(directory: Path) -> SideInfo:
    """Read tokenizer_config.json, generation_config.json and config.json when present."""
    info = SideInfo()
    tok_cfg = _read_json(directory / "tokenizer_config.json")
    text = _token_text(tok_cfg.get("eos_token"))
    if text:
        info.eos_texts.add(text)
    for name in ("generation_config.json", "config.json"):
        cfg = _read_json(directory / name)
        info.eos_ids.update(_ids(cfg.get("eos_token_id")))
        text_cfg = cfg.get("text_config")
        if isinstance(text_cfg, dict):
            info.eos_ids.update(_ids(text_cfg.get("eos_token_id")))
        if name == "config.json":
            info.vocab_size = _vocab_size(cfg)
    return info


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise VocabularyError(f"cannot read {path}: {exc}") from exc
    return data if isinstance(data, dict) else {}


def _token_text(value: Any) -> str | None:
    """eos_token is a string or an AddedToken dict {"content": ...}."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return str(value["content"])
    return None


def _ids(value: Any) -> set[int]:
    if isinstance(value, bool):
        return set()
    if isinstance(value, int):
        return {value}
    if isinstance(value, list):
        return {v for v in value if isinstance(v, int) and not isinstance(v, bool)}
    return set()


def _vocab_size(cfg: dict[str, Any]) -> int | None:
    for holder in (cfg, cfg.get("text_config")):
        if isinstance(holder, dict):
            size = holder.get("vocab_size")
            if isinstance(size, int) and not isinstance(size, bool) and size > 0:
                return size
    return None
