"""Mistral Tekken vocabularies (tekken.json) -> exact token bytes.

Tekken is tiktoken-style byte BPE: entry `rank` holds base64 raw bytes and gets
id `num_special + rank`; the first `num_special` ids are special tokens (the file's
"special_tokens", or for older files mistral_common's fixed list, padded with
"<SPECIAL_i>" fillers). Only the first `default_vocab_size - num_special` ranks
are used, exactly as mistral_common truncates them.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from constrain.errors import VocabularyError
from constrain.vocab.loaded import LoadedVocab

# mistral_common Tekkenizer.DEPRECATED_SPECIAL_TOKENS, for files without "special_tokens".
LEGACY_SPECIALS: tuple[str, ...] = (
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]",
    "[IMG_END]", "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
)  # fmt: skip
FILLER = "<SPECIAL_{id}>"
EOS_TEXT = "</s>"


def is_tekken(data: Any) -> bool:
    """A Tekken file has a "config" object and a "vocab" list of {rank, token_bytes} entries."""
    if not (isinstance(data, dict) and isinstance(data.get("config"), dict)):
        return False
    vocab = data.get("vocab")
    return isinstance(vocab, list) and (not vocab or "token_bytes" in vocab[0])


def load_tekken(data: dict[str, Any], name: str) -> LoadedVocab:
    """Token bytes, special ids and eos of a parsed tekken.json."""
    config = data["config"]
    specials = _special_texts(data, name)
    num_special = len(specials)
    vocab = data["vocab"]
    total = config.get("default_vocab_size")
    inner = len(vocab) if total is None else int(total) - num_special
    if not 0 < inner <= len(vocab):
        raise VocabularyError(
            f"{name}: default_vocab_size {total} leaves {inner} regular tokens, "
            f"but the file has {len(vocab)} (and {num_special} specials)"
        )
    entries = vocab[:inner]
    for position, entry in enumerate(entries):
        if entry.get("rank") != position:
            raise VocabularyError(f"{name}: vocab entry {position} has rank {entry.get('rank')!r}")
    try:
        regular = [base64.b64decode(entry["token_bytes"], validate=True) for entry in entries]
    except (binascii.Error, KeyError, TypeError) as exc:
        raise VocabularyError(f"{name}: bad token_bytes in vocab: {exc}") from exc
    token_bytes = [text.encode("utf-8") for text in specials] + regular
    eos = specials.index(EOS_TEXT) if EOS_TEXT in specials else None
    return LoadedVocab(
        name=name,
        token_bytes=token_bytes,
        special_ids=set(range(num_special)),
        eos_ids=set() if eos is None else {eos},
        logits_width=None if total is None else int(total),
    )


def _special_texts(data: dict[str, Any], name: str) -> list[str]:
    """Special token texts in id order, padded with fillers to default_num_special_tokens."""
    listed = data.get("special_tokens")
    if listed is None:
        texts = list(LEGACY_SPECIALS)
    else:
        try:
            ranked = sorted((int(t["rank"]), str(t["token_str"])) for t in listed)
        except (KeyError, TypeError, ValueError) as exc:
            raise VocabularyError(f"{name}: malformed special_tokens: {exc}") from exc
        if [rank for rank, _ in ranked] != list(range(len(ranked))):
            raise VocabularyError(f"{name}: special token ranks must be 0..{len(ranked) - 1}")
        texts = [text for _, text in ranked]
    wanted = data["config"].get("default_num_special_tokens", len(texts))
    if wanted < len(texts):
        raise VocabularyError(
            f"{name}: {len(texts)} special tokens but default_num_special_tokens={wanted}"
        )
    return texts + [FILLER.format(id=i) for i in range(len(texts), wanted)]
