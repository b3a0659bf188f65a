"""llama-cpp-python under a grammar: a logits processor, a stopping criterion and a decode helper.

llama-cpp-python calls each logits processor once per sampled token as
`processor(input_ids, scores) -> scores`: `input_ids` is an np.intc array of every token so far,
the prompt included; `scores` a float32 row of width n_vocab, indexed by token id — a contiguous
row in 0.2.x, and in 0.3.x the strided `logit` field of llama.cpp's candidate array (its custom
sampler runs first, before penalties and top-k/top-p, and copies the returned row back). Edits
in place count in both. The processor takes the first call's length as the prompt, follows the
generated suffix after it (rolling back if the ids change under it, as with llama-cpp-python's
prefix reuse), and sets the tokens the grammar forbids to -inf: a numba kernel on a contiguous
row, cached per-state index lists on a strided one (no torch in the per-token path).

Generation ends at the EOS the grammar leaves as the only choice, when llama.cpp treats that id
as end-of-generation: build the Vocabulary with `vocabulary_from_llama`, which takes llama.cpp's
own EOG ids. `complete()` also stops as soon as the grammar is complete and admits nothing more,
without evaluating the last token (one forward pass fewer than sampling the EOS).
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from ..compiled import CompiledGrammar
from ..errors import TokenRejectedError
from ..matcher import Matcher
from ..vocab import Vocabulary

_NEG_INF = np.float32(-np.inf)
_NEG_INF_BITS = np.float32(-np.inf).view(np.int32)
_ROW0 = np.zeros(1, dtype=np.int64)


class ConstrainLlamaCppProcessor:
    """A llama-cpp-python logits processor for one completion (make a new one, or reset(), for
    the next prompt). `prompt_tokens`: the prompt's length, when the first call may already
    include generated tokens; by default the first call's ids are the prompt.

    `error` is set (and only EOS allowed from then on) when the engine fed a token the grammar
    refuses: llama.cpp's sampler callback cannot raise into the caller."""

    def __init__(self, grammar: CompiledGrammar, *, prompt_tokens: Optional[int] = None, plan_cache: int = 64) -> None:
        if not isinstance(grammar, CompiledGrammar):
            raise TypeError(
                f"ConstrainLlamaCppProcessor needs a CompiledGrammar, got {type(grammar).__name__}; "
                "compile one with Compiler(vocabulary_from_llama(llm)).compile_...(...)"
            )
        self.grammar = grammar
        self.matcher = Matcher(grammar)
        self._prompt_len = prompt_tokens
        self._generated: list[int] = []
        self._row = np.zeros((1, (grammar.vocab.logits_width + 31) // 32), dtype=np.int32)
        eos_bits = np.zeros(self._row.shape[1] * 32, dtype=bool)
        eos_bits[sorted(grammar.vocab.eos_token_ids)] = True
        self._eos_row = np.packbits(eos_bits, bitorder="little").view(np.int32)[None, :].copy()
        self._plans: OrderedDict[Any, tuple[bool, np.ndarray]] = OrderedDict()
        self._plan_cache = plan_cache
        self.error: Optional[TokenRejectedError] = None
        self.calls = 0
        self.mask_seconds = 0.0

    # -- llama-cpp-python's interface ---------------------------------------------------------
    def __call__(self, input_ids: Any, scores: np.ndarray) -> np.ndarray:
        started = time.perf_counter()
        self.sync(input_ids)
        if scores.ndim != 1:
            raise ValueError(f"scores must be one row (n_vocab,), got shape {scores.shape}")
        if scores.shape[0] < self.grammar.vocab.size:
            raise ValueError(
                f"scores has {scores.shape[0]} columns but the vocabulary {self.grammar.vocab.name!r} "
                f"has {self.grammar.vocab.size} tokens: the processor must see the whole row "
                "(put it first in the LogitsProcessorList)"
            )
        if self.error is not None or self.matcher.is_terminated():
            row, key = self._eos_row, ("eos",)
        else:
            self.matcher.fill_next_token_bitmask(self._row[0])
            row, key = self._row, self.matcher.state
        self._mask(scores, row, key)
        self.calls += 1
        self.mask_seconds += time.perf_counter() - started
        if self.error is not None:
            raise self.error
        return scores

    def stopping_criteria(self) -> Callable[[Any, Any], bool]:
        """A llama-cpp-python stopping criterion: True once the grammar has ended (EOS accepted)
        or admits nothing but EOS, so generation stops even where the EOS id the grammar allows
        is not one llama.cpp stops on. (llama-cpp-python calls it before the newest token joins
        `input_ids`, which is exactly when that token can only be the EOS.)"""

        def done(input_ids: Any, logits: Any = None) -> bool:
            self.sync(input_ids)
            return self.error is not None or self.matcher.is_terminated() or self.matcher.must_terminate()

        return done

    # -- state --------------------------------------------------------------------------------
    def sync(self, input_ids: Any) -> None:
        """Bring the matcher to the tokens after the prompt in `input_ids`."""
        ids = np.asarray(input_ids)
        if self._prompt_len is None:
            self._prompt_len = int(ids.shape[0])
        new = ids[self._prompt_len :].tolist()
        known = self._generated
        if len(new) >= len(known) and new[: len(known)] == known:
            same = len(known)
        else:
            same = 0
            for a, b in zip(known, new):
                if a != b:
                    break
                same += 1
            self._rollback(len(known) - same)
        for tid in new[same:]:
            self._accept(int(tid))

    def reset(self) -> None:
        """Back to the start, for a new prompt (whose length the next call sets)."""
        self.matcher.reset()
        self._generated.clear()
        self._prompt_len = None
        self.error = None

    @property
    def generated_tokens(self) -> list[int]:
        """The tokens after the prompt, as the processor last saw them."""
        return list(self._generated)

    @property
    def text(self) -> bytes:
        """The bytes of the generated tokens (EOS excluded)."""
        eos = self.grammar.vocab.eos_token_ids
        return self.grammar.vocab.decode(t for t in self._generated if t not in eos)

    def _accept(self, tid: int) -> None:
        self._generated.append(tid)
        if self.error is not None:
            return
        if self.matcher.is_terminated():
            if tid in self.grammar.vocab.eos_token_ids:
                return
        elif self.matcher.accept_token(tid):
            return
        vocab = self.grammar.vocab
        spelled = vocab.token_bytes[tid] if 0 <= tid < vocab.size else b"?"
        self.error = TokenRejectedError(
            f"llama.cpp sampled token {tid} ({spelled!r}) after {len(self._generated) - 1} generated "
            f"tokens, which the {self.grammar.kind} grammar does not allow there (output so far "
            f"{self.text[-60:]!r}); put this processor first and do not pass another grammar",
            tid,
            len(self._generated) - 1,
        )

    def _rollback(self, n: int) -> None:
        if n <= 0:
            return
        del self._generated[-n:]
        self.error = None  # replay what is left: an error may lie in the part rolled back
        kept = list(self._generated)
        self._generated.clear()
        self.matcher.reset()
        for tid in kept:
            self._accept(tid)

    # -- masking ------------------------------------------------------------------------------
    def _mask(self, scores: np.ndarray, row: np.ndarray, key: Any) -> None:
        if scores.dtype == np.float32 and scores.flags.c_contiguous:
            from ..kernels.bitmask_numba import _mask_rows

            width = scores.shape[0]
            _mask_rows(scores.view(np.int32), width, width, row, _ROW0, _ROW0, _NEG_INF_BITS, True)
            return
        keep, idx = self._plan(row, key, scores.shape[0])
        if keep:  # few allowed: fill, then put the allowed scores back
            saved = scores[idx]
            scores[...] = _NEG_INF
            scores[idx] = saved
        else:
            scores[idx] = _NEG_INF

    def _plan(self, row: np.ndarray, key: Any, width: int) -> tuple[bool, np.ndarray]:
        """(True, allowed ids) when fewer are allowed than forbidden, else (False, forbidden ids);
        cached per automaton state (most steps revisit a few states)."""
        cache_key = (key, width)
        plan = self._plans.get(cache_key)
        if plan is not None:
            self._plans.move_to_end(cache_key)
            return plan
        bits = np.unpackbits(row[0].view(np.uint8), bitorder="little")
        if bits.shape[0] < width:
            bits = np.concatenate([bits, np.zeros(width - bits.shape[0], dtype=np.uint8)])
        bits = bits[:width]
        allowed = np.flatnonzero(bits).astype(np.int32)
        plan = (True, allowed) if 2 * allowed.size < width else (False, np.flatnonzero(bits == 0).astype(np.int32))
        self._plans[cache_key] = plan
        if len(self._plans) > self._plan_cache:
            self._plans.popitem(last=False)
        return plan


def vocabulary_from_llama(source: Any, *, logits_width: Optional[int] = None) -> Vocabulary:
    """The Vocabulary of a `llama_cpp.Llama` (its GGUF file, its n_vocab, and llama.cpp's own
    end-of-generation ids as the stop ids) or of a GGUF path."""
    if isinstance(source, (str, os.PathLike)):
        return Vocabulary.from_pretrained(os.fspath(source), logits_width=logits_width)
    path = getattr(source, "model_path", None)
    if path is None or not hasattr(source, "n_vocab"):
        raise TypeError(
            f"vocabulary_from_llama needs a llama_cpp.Llama or a GGUF path, got {type(source).__name__}"
        )
    base = Vocabulary.from_pretrained(os.fspath(path))
    width = int(logits_width or source.n_vocab())
    eog = _llama_eog_ids(source, base)
    return Vocabulary.from_pretrained(base, logits_width=max(width, base.size), eos_token_ids=eog or None)


def _llama_eog_ids(llm: Any, vocab: Vocabulary) -> list[int]:
    """The ids llama.cpp ends generation on, among the vocabulary's special and stop tokens."""
    try:
        import llama_cpp
    except ImportError:  # pragma: no cover - a Llama object implies llama_cpp
        return []
    candidates = sorted(set(vocab.special_ids) | set(vocab.eos_token_ids))
    model = getattr(getattr(llm, "_model", None), "vocab", None)
    check = getattr(llama_cpp, "llama_vocab_is_eog", None)
    if model is not None and check is not None:
        return [t for t in candidates if check(model, t)]
    return [int(llm.token_eos())]


@dataclass
class LlamaCppCompletion:
    """What complete() produced: the text the grammar matched, its token ids, why it stopped
    ("grammar": complete with nothing more allowed; "eos"; "length"), and timings."""

    text: str
    token_ids: list[int]
    stop_reason: str
    seconds: float
    prompt_tokens: int
    mask_seconds: float

    @property
    def tokens_per_second(self) -> float:
        return len(self.token_ids) / self.seconds if self.seconds > 0 else 0.0


def complete(
    llm: Any,
    prompt: Union[str, Sequence[int]],
    grammar: CompiledGrammar,
    *,
    max_tokens: int = 256,
    temperature: float = 0.0,
    top_k: int = 40,
    top_p: float = 0.95,
    min_p: float = 0.05,
    repeat_penalty: float = 1.0,
) -> LlamaCppCompletion:
    """Generate from `llm` (a llama_cpp.Llama) under `grammar` until the grammar is complete and
    admits nothing more, the model draws EOS, or `max_tokens`. `prompt`: text (tokenized with
    BOS and special tokens, as create_completion does) or token ids. Sampling is llama.cpp's
    own (temperature=0: greedy); the mask comes before its penalties and truncation."""
    from llama_cpp import LogitsProcessorList

    if isinstance(prompt, str):
        prompt_ids = list(llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=True))
    else:
        prompt_ids = [int(t) for t in prompt]
    processor = ConstrainLlamaCppProcessor(grammar, prompt_tokens=len(prompt_ids))
    eos = grammar.vocab.eos_token_ids
    tokens: list[int] = []
    stop = "length"
    started = time.perf_counter()
    if max_tokens > 0:
        stream = llm.generate(
            prompt_ids, top_k=top_k, top_p=top_p, min_p=min_p, temp=temperature, repeat_penalty=repeat_penalty,
            logits_processor=LogitsProcessorList([processor]),
        )
        for token in stream:
            if processor.error is not None:
                raise processor.error
            token = int(token)
            if token in eos:
                stop = "eos"
                break
            tokens.append(token)
            processor.sync(prompt_ids + tokens)
            if processor.error is not None:
                raise processor.error
            if processor.matcher.must_terminate():
                stop = "grammar"  # only EOS could follow: stop before evaluating this token
                break
            if len(tokens) >= max_tokens:
                break
    seconds = time.perf_counter() - started
    text = grammar.vocab.decode(tokens).decode("utf-8", "replace")
    return LlamaCppCompletion(text, tokens, stop, seconds, len(prompt_ids), processor.mask_seconds)


__all__ = ["ConstrainLlamaCppProcessor", "LlamaCppCompletion", "complete", "vocabulary_from_llama"]
