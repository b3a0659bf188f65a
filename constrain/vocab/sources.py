"""Find out what `Vocabulary.from_pretrained` was given and hand it to the right loader.

Files are recognised by content (GGUF magic, JSON shape, SentencePiece protobuf),
not by extension, so renamed or extension-less files still load and wrong
files fail with a message naming what was found.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from constrain.errors import VocabularyError
from constrain.vocab.gguf_metadata import MAGIC as GGUF_MAGIC
from constrain.vocab.gguf_file import load_gguf
from constrain.vocab.hf_config import read_side_files
from constrain.vocab.loaded import LoadedVocab
from constrain.vocab.sentencepiece_model import load_processor, load_sentencepiece_file
from constrain.vocab.tekken import is_tekken, load_tekken
from constrain.vocab.tokenizer_json import is_tokenizer_json, load_tokenizer_json, piece_ids
from constrain.vocab.transformers_obj import load_tokenizers_object, load_transformers

SUPPORTED_SOURCES = (
    "a transformers tokenizer, a tokenizers.Tokenizer, a sentencepiece.SentencePieceProcessor, "
    "or a path to a tokenizer.json (or its directory), a SentencePiece model, "
    "a Mistral Tekken json or a GGUF file"
)
_DIR_CANDIDATES = ("tokenizer.json", "tekken.json", "tokenizer.model")


def load_source(source: Any) -> LoadedVocab:
    """Dispatch on the kind of `source`."""
    if isinstance(source, (str, os.PathLike)):
        return load_path(Path(source))
    import tokenizers

    if isinstance(source, tokenizers.Tokenizer):
        return load_tokenizers_object(source)
    if type(source).__module__.startswith("sentencepiece") and hasattr(
        source, "serialized_model_proto"
    ):
        return load_processor(source, "sentencepiece.SentencePieceProcessor")
    if hasattr(source, "backend_tokenizer") or hasattr(source, "sp_model"):
        return load_transformers(source)
    raise VocabularyError(
        f"cannot read a vocabulary from a {type(source).__name__}; supported: {SUPPORTED_SOURCES}"
    )


def load_path(path: Path) -> LoadedVocab:
    """A file, or a directory holding one of the known tokenizer files."""
    if not path.exists():
        raise VocabularyError(
            f"no such file or directory: {path} (from_pretrained reads local files; "
            "for a Hugging Face Hub id pass AutoTokenizer.from_pretrained(id) instead)"
        )
    if path.is_file():
        return _load_file(path)
    for candidate in _DIR_CANDIDATES:
        if (path / candidate).is_file():
            return _load_file(path / candidate)
    ggufs = sorted(path.glob("*.gguf"))
    if len(ggufs) == 1:
        return _load_file(ggufs[0])
    raise VocabularyError(
        f"directory {path} holds no tokenizer: looked for {', '.join(_DIR_CANDIDATES)} "
        f"or exactly one *.gguf file (found {len(ggufs)})"
    )


def _load_file(path: Path) -> LoadedVocab:
    try:
        with path.open("rb") as handle:
            head = handle.read(64)
    except OSError as exc:
        raise VocabularyError(f"cannot read {path}: {exc}") from exc
    if head.startswith(GGUF_MAGIC):
        return load_gguf(path)
    if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):
        return _load_json(path)
    return load_sentencepiece_file(path)


def _load_json(path: Path) -> LoadedVocab:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise VocabularyError(f"{path} looks like JSON but does not parse: {exc}") from exc
    if is_tekken(data):
        return load_tekken(data, path.name)
    if not is_tokenizer_json(data):
        keys = ", ".join(sorted(data)[:8]) if isinstance(data, dict) else type(data).__name__
        raise VocabularyError(
            f"{path} is JSON but neither a tokenizer.json (needs 'model' and 'decoder') nor a "
            f"Mistral Tekken vocabulary (needs 'config' and 'vocab'); found: {keys}"
        )
    name = f"{path.parent.name}/{path.name}" if path.name == "tokenizer.json" else path.name
    loaded = load_tokenizer_json(data, name)
    side = read_side_files(path.parent)
    loaded.eos_ids.update(side.eos_ids)
    if side.eos_texts:
        pieces = piece_ids(data)
        loaded.eos_ids.update(pieces[text] for text in side.eos_texts if text in pieces)
    loaded.logits_width = side.vocab_size
    return loaded
