"""In-memory tokenizer objects: `tokenizers.Tokenizer`, SentencePiece processors and
`transformers` tokenizers (fast ones via `.backend_tokenizer`, slow SentencePiece
ones via `.sp_model`).

Objects are recognised by type or duck typing so that importing constrain never
imports `transformers` (seconds of start-up).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from constrain.errors import VocabularyError
from constrain.vocab.hf_config import read_side_files
from constrain.vocab.loaded import LoadedVocab
from constrain.vocab.sentencepiece_model import load_processor
from constrain.vocab.tokenizer_json import load_tokenizer_json


def load_tokenizers_object(tokenizer: Any, name: str = "tokenizers.Tokenizer") -> LoadedVocab:
    """A `tokenizers.Tokenizer`, read through its tokenizer.json serialisation."""
    return load_tokenizer_json(json.loads(tokenizer.to_str()), name)


def load_transformers(tokenizer: Any) -> LoadedVocab:
    """A `transformers` tokenizer: its backend plus its added tokens, specials and eos."""
    name = str(getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__)
    backend = getattr(tokenizer, "backend_tokenizer", None)
    sp_model = getattr(tokenizer, "sp_model", None)
    if backend is not None:
        loaded = load_tokenizers_object(backend, name)
    elif sp_model is not None:
        loaded = load_processor(sp_model, name)
    else:
        raise VocabularyError(
            f"transformers tokenizer {type(tokenizer).__name__} has neither .backend_tokenizer nor "
            ".sp_model; supported: fast (tokenizers-backed) and SentencePiece tokenizers"
        )
    for token_id, added in (getattr(tokenizer, "added_tokens_decoder", None) or {}).items():
        loaded.set_special(int(token_id), str(getattr(added, "content", added)))
    size = len(loaded.token_bytes)
    for token_id in getattr(tokenizer, "all_special_ids", None) or []:
        if isinstance(token_id, int) and 0 <= token_id < size:
            loaded.special_ids.add(token_id)
    eos = getattr(tokenizer, "eos_token_id", None)
    if isinstance(eos, int):
        loaded.eos_ids.add(eos)
    elif isinstance(eos, (list, tuple)):
        loaded.eos_ids.update(i for i in eos if isinstance(i, int))
    _add_local_configs(loaded, name)
    return loaded


def _add_local_configs(loaded: LoadedVocab, name_or_path: str) -> None:
    """When the tokenizer came from a local directory, also use its generation/model config."""
    try:
        directory = Path(name_or_path)
        if not directory.is_dir():
            return
    except (OSError, ValueError):
        return
    side = read_side_files(directory)
    loaded.eos_ids.update(side.eos_ids)
    if side.vocab_size is not None:
        loaded.logits_width = side.vocab_size
