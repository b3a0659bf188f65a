"""constrain's own decode loop over a transformers model: one request, KV cache, streaming.

Each step: the grammar's mask for the next token is computed on a worker thread while the model's
forward pass runs (the numba walks release the GIL), then the sampling pipeline draws under it.
Greedy decoding takes the exact shortcut: the argmax of the (penalized) logits is tried first and
the mask is only computed when the grammar rejects it. The loop stops when the grammar leaves
only EOS (no forward pass is spent on it), when the model draws EOS, or at max_new_tokens.
With `draft=` or `jump_forward=True` (the default) the steps are speculative instead
(speculative_generation.py, over constrain.specdec): same law, fewer forward passes.
"""

from __future__ import annotations

import codecs
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional


from .compiled import CompiledGrammar
from .kernels.sampling import sample
from .kernels.sampling_params import SamplingParams
from .mask_prefetch import MaskPrefetcher
from .model_forward import Prompt, cached_forward, model_device, prompt_ids
from .matcher import Matcher

@dataclass
class GenerationStats:
    """Where one request's time went. `mask_wait_seconds` is the latency the grammar added:
    the time the loop waited for a mask after the forward pass had finished."""

    prompt_tokens: int = 0
    new_tokens: int = 0
    seconds: float = 0.0
    forward_seconds: float = 0.0
    mask_seconds: float = 0.0
    mask_wait_seconds: float = 0.0
    sample_seconds: float = 0.0
    masks_computed: int = 0
    greedy_shortcuts: int = 0
    stop_reason: str = ""  # "grammar" (only EOS was left), "eos" (the model drew it), "length"
    # speculative decoding (constrain.specdec.metrics names them); plain decoding: one pass a token
    target_passes: int = 0
    drafted: int = 0
    accepted: int = 0
    alpha: float = 0.0
    accepted_per_drafted: float = 0.0
    mean_acceptance_length: float = 0.0
    forced_tokens: int = 0
    draft_seconds: float = 0.0

    @property
    def tokens_per_second(self) -> float:
        return self.new_tokens / self.seconds if self.seconds > 0 else 0.0


@dataclass
class GenerationResult:
    """The generated text (the exact bytes the grammar matched, as UTF-8), its token ids (no EOS)
    and the request's stats."""

    text: str
    token_ids: list[int]
    stats: GenerationStats = field(default_factory=GenerationStats)


def generate(
    model: Any,
    tokenizer: Any,
    prompt: Prompt,
    grammar: CompiledGrammar,
    *,
    sampling: SamplingParams = SamplingParams(),
    max_new_tokens: int = 256,
    stream: Optional[Callable[[str], None]] = None,
    draft: Any = None,
    jump_forward: bool = True,
    log_drafts: bool = False,
) -> GenerationResult:
    """Generate one constrained completion of `prompt` with a transformers causal LM.

    prompt: raw text (tokenized with the tokenizer's special tokens), a list of chat messages
    ({"role", "content"} dicts, rendered with the tokenizer's chat template and a generation
    prompt), or token ids. stream: called with each new piece of text as soon as it is whole
    UTF-8. A `sampling.seed` makes sampled output reproducible.

    Speculative decoding (exactly lossless: the output law is that of plain constrained
    sampling): `draft` is None, "ngram" (prompt lookup), "forced" (grammar-forced runs only), a
    drafter object (constrain.specdec), a model sharing the tokenizer, or (model, tokenizer) for
    a draft model whose tokenizer is checked; `jump_forward` drafts the runs the grammar forces
    (verified by the model like any draft, never injected). `log_drafts` logs one line per
    request (logger "constrain.specdec") with drafted vs accepted tokens per pass."""
    import torch

    if not isinstance(grammar, CompiledGrammar):
        raise TypeError(f"grammar must be a CompiledGrammar (from Compiler.compile_*), got {type(grammar).__name__}")
    if not isinstance(sampling, SamplingParams):
        raise TypeError(f"sampling must be a SamplingParams, got {type(sampling).__name__}")
    if max_new_tokens < 0:
        raise ValueError(f"max_new_tokens must be >= 0, got {max_new_tokens}")
    stats = GenerationStats()
    started = time.perf_counter()
    device = model_device(model)
    input_ids = prompt_ids(tokenizer, prompt).to(device)
    stats.prompt_tokens = int(input_ids.shape[1])
    text = _TextStream(grammar.vocab, stream)
    generator = None
    if sampling.seed is not None and not sampling.greedy:
        generator = torch.Generator(device=device).manual_seed(sampling.seed)
    if draft is None and not jump_forward:
        out = _plain_loop(model, input_ids, grammar, sampling, max_new_tokens, generator, text, stats)
    else:
        from .speculative_generation import speculative_loop

        out = speculative_loop(
            model, tokenizer, input_ids[0].tolist(), grammar, sampling, max_new_tokens, generator, text.feed, stats,
            draft=draft, jump_forward=jump_forward, log_drafts=log_drafts,
        )
    text.close()
    stats.new_tokens = len(out)
    stats.seconds = time.perf_counter() - started
    return GenerationResult(text.text, out, stats)


class _TextStream:
    """Token ids -> UTF-8 text pieces, each passed to `stream` as soon as it is whole."""

    def __init__(self, vocab: Any, stream: Optional[Callable[[str], None]]) -> None:
        self._bytes = vocab.token_bytes
        self._stream = stream
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pieces: list[str] = []

    def feed(self, tokens: list[int]) -> None:
        self._emit(self._decoder.decode(b"".join(self._bytes[t] for t in tokens)))

    def close(self) -> None:
        self._emit(self._decoder.decode(b"", final=True))

    def _emit(self, piece: str) -> None:
        if piece:
            self._pieces.append(piece)
            if self._stream is not None:
                self._stream(piece)

    @property
    def text(self) -> str:
        return "".join(self._pieces)


def _plain_loop(
    model: Any,
    input_ids: Any,
    grammar: CompiledGrammar,
    sampling: SamplingParams,
    max_new_tokens: int,
    generator: Any,
    text: _TextStream,
    stats: GenerationStats,
) -> list[int]:
    """One forward pass per token, the next mask computed during it."""
    import torch

    matcher = Matcher(grammar)
    prefetch = MaskPrefetcher(grammar.vocab.logits_width)
    out: list[int] = []
    past = None
    step_input = input_ids
    forward = cached_forward(model)
    try:
        with torch.no_grad():
            while True:
                if matcher.must_terminate():
                    stats.stop_reason = "grammar"
                    break
                if len(out) >= max_new_tokens:
                    stats.stop_reason = "length"
                    break
                if not sampling.greedy:
                    prefetch.start(matcher)  # overlaps the forward pass below
                t0 = time.perf_counter()
                logits, past = forward(step_input, past)
                logits = logits[:, -1, :]
                stats.forward_seconds += time.perf_counter() - t0
                stats.target_passes += 1
                token = _next_token(matcher, logits, sampling, out, generator, prefetch, stats)
                if matcher.is_terminated():
                    stats.stop_reason = "eos"
                    break
                out.append(token)
                text.feed([token])
                step_input = torch.tensor([[token]], device=input_ids.device)
    finally:
        prefetch.close()
    stats.mask_seconds = prefetch.mask_seconds
    stats.masks_computed = prefetch.masks_computed
    stats.mean_acceptance_length = len(out) / stats.target_passes if stats.target_passes else 0.0
    return out


def _next_token(
    matcher: Matcher,
    logits: Any,
    sampling: SamplingParams,
    history: list[int],
    generator: Any,
    prefetch: MaskPrefetcher,
    stats: GenerationStats,
) -> int:
    """Draw the next token and advance `matcher` by it."""
    t0 = time.perf_counter()
    if sampling.greedy:
        token = int(sample(logits, sampling, history=[history]))
        if matcher.accept_token(token):  # the argmax is legal: it is the masked argmax
            stats.greedy_shortcuts += 1
            stats.sample_seconds += time.perf_counter() - t0
            return token
        prefetch.start(matcher)
    t1 = time.perf_counter()
    bitmask = prefetch.wait()
    waited = time.perf_counter() - t1
    stats.mask_wait_seconds += waited
    token = int(sample(logits, sampling, bitmask=bitmask, history=[history], generator=generator))
    stats.sample_seconds += time.perf_counter() - t0 - waited
    if not matcher.accept_token(token):
        raise RuntimeError(f"token {token} was drawn outside the grammar's mask (a bug in constrain)")
    return token
