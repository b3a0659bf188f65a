"""Compilers for vLLM's model: one Vocabulary per tokenizer, one Compiler per set of stop ids.

vLLM ends a request on its own stop ids (`SamplingParams.all_stop_token_ids`: the tokenizer's
EOS, the generation config's, the request's `stop_token_ids`), so those, and only those, are
the EOS ids a grammar may end with: an end-of-turn token vLLM does not stop on would leave a
finished grammar allowing nothing but a token that never ends the request. Requests almost
always share one stop set, so this is one Compiler (and one token trie) per model in practice.

`check_spec` compiles a request's grammar against a 257-token byte vocabulary, so a broken
schema, regex or Lark text is refused where the request enters vLLM (a client error), before
any worker sees it.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Iterable, Optional

from ..compiled import CompiledGrammar
from ..compiler import Compiler
from ..errors import VocabularyError
from ..vocab import Vocabulary
from .vllm_options import GrammarSpec, compile_spec

_lock = threading.Lock()
_vocabs: "weakref.WeakKeyDictionary[Any, dict[int, Vocabulary]]" = weakref.WeakKeyDictionary()
_compilers: dict[tuple[str, frozenset[int]], Compiler] = {}
_checker: list[Compiler] = []


def vocabulary_for(tokenizer: Any, logits_width: int) -> Vocabulary:
    """The Vocabulary of `tokenizer` (a transformers tokenizer, anything
    `Vocabulary.from_pretrained` reads, or a Vocabulary) for logits `logits_width` wide; read
    once per tokenizer object and width."""
    if isinstance(tokenizer, Vocabulary):
        return tokenizer if tokenizer.logits_width == logits_width else Vocabulary.from_pretrained(tokenizer, logits_width=logits_width)
    with _lock:
        try:
            known = _vocabs.setdefault(tokenizer, {})
        except TypeError:  # not weakly referenceable: read it every time it is asked for
            known = {}
        vocab = known.get(logits_width)
    if vocab is None:
        try:
            vocab = Vocabulary.from_pretrained(tokenizer, logits_width=logits_width)
        except VocabularyError as exc:
            raise VocabularyError(
                f"{exc} (vLLM reports {logits_width} logits per row: a tokenizer with more ids than "
                "the model's vocab_size cannot be masked)"
            ) from None
        with _lock:
            vocab = known.setdefault(logits_width, vocab)
    return vocab


def compiler_for(vocab: Vocabulary, stop_token_ids: Optional[Iterable[int]] = None) -> Compiler:
    """The Compiler whose EOS ids are `stop_token_ids` (the vocabulary's own when None or empty);
    one per vocabulary and stop set, kept for the process. Stop ids past the tokenizer (a padded
    logits row) are dropped: those columns are always masked."""
    stops = frozenset(t for t in (int(t) for t in stop_token_ids or ()) if 0 <= t < vocab.size)
    stops = stops or vocab.eos_token_ids
    key = (vocab.fingerprint, stops)
    with _lock:
        compiler = _compilers.get(key)
    if compiler is None:
        from ..models import default_cache_dir

        scoped = vocab if stops == vocab.eos_token_ids else Vocabulary.from_pretrained(vocab, eos_token_ids=sorted(stops))
        compiler = Compiler(scoped, cache_dir=default_cache_dir())
        with _lock:
            compiler = _compilers.setdefault(key, compiler)
    return compiler


def check_spec(spec: GrammarSpec) -> CompiledGrammar:
    """Compile `spec` against a byte vocabulary: raises the error the model's compile would
    (a bad schema, regex or Lark text) without needing the model's tokenizer."""
    with _lock:
        if not _checker:
            table = [bytes([b]) for b in range(256)] + [b"</s>"]
            _checker.append(Compiler(Vocabulary(table, [256], [256], name="byte-check")))
        compiler = _checker[0]
    return compile_spec(compiler, spec)
