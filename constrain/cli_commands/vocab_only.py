"""A Compiler for a model built from its tokenizer alone: compiling needs the vocabulary, not the
weights. The embedded default's GGUF file is read directly (under a second, where transformers
spends seconds converting its tokenizer). The Vocabulary is the one constrain.models builds from
the loaded model (same fingerprint), so both share the disk cache and the compiled grammars."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..compiler import Compiler
from ..errors import ConstrainError, ModelLoadError
from ..models import DEFAULT_MODEL, default_cache_dir, default_model_path
from ..vocab import Vocabulary
from .output import fail, one_line

_compilers: dict[str, Compiler] = {}


def tokenizer_compiler(model: Optional[str]) -> Compiler:
    """A Compiler over `model`'s vocabulary (None or "smollm2": the embedded default; a .gguf
    file; a local model folder; a Hugging Face id), with constrain.models' disk cache; one per
    process and model."""
    key = model or DEFAULT_MODEL
    if key not in _compilers:
        try:
            vocab = _vocabulary(key)
        except ConstrainError as exc:
            fail(f"--model {key}: {one_line(str(exc))}")
        _compilers[key] = Compiler(vocab, cache_dir=default_cache_dir())
    return _compilers[key]


def _vocabulary(model: str) -> Vocabulary:
    if model == DEFAULT_MODEL:
        return Vocabulary.from_pretrained(default_model_path())
    path = Path(model).expanduser()
    if path.exists():
        return Vocabulary.from_pretrained(path)
    if model.endswith(".gguf") or model.startswith((".", "/", "~")):
        raise ModelLoadError(f"no such file or folder: {model}")
    import transformers  # a Hugging Face id: transformers finds (or fetches) its tokenizer

    transformers.logging.set_verbosity_error()
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(model)
        width = getattr(transformers.AutoConfig.from_pretrained(model), "vocab_size", None)
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"cannot load the tokenizer of {model!r}: {one_line(str(exc))}") from exc
    return Vocabulary.from_pretrained(tokenizer, logits_width=width)
