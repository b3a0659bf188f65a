"""constrain's own decode loop over a transformers model: one request, KV cache, streaming.

Each step: the grammar's mask for the next token is computed on a worker thread while the model's
forward pass runs (the numba walks release the GIL), then the sampling pipeline draws under it.
Greedy decoding takes the exact shortcut: the argmax of the (penalized) logits is tried first and
the mask is only computed when the grammar rejects it. The loop stops when the grammar leaves
only EOS (no forward pass is spent on it), when the model draws EOS, or at max_new_tokens.
"""

from __future__ import annotations

import codecs
import inspect
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from .compiled import CompiledGrammar
from .kernels.sampling import sample
from .kernels.sampling_params import SamplingParams
from .mask_prefetch import MaskPrefetcher
from .matcher import Matcher

Prompt = Union[str, Sequence[int], Sequence[dict]]


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
) -> GenerationResult:
    """Generate one constrained completion of `prompt` with a transformers causal LM.

    prompt: raw text (tokenized with the tokenizer's special tokens), a list of chat messages
    ({"role", "content"} dicts, rendered with the tokenizer's chat template and a generation
    prompt), or token ids. stream: called with each new piece of text as soon as it is whole
    UTF-8. A `sampling.seed` makes sampled output reproducible."""
    import torch

    if not isinstance(grammar, CompiledGrammar):
        raise TypeError(f"grammar must be a CompiledGrammar (from Compiler.compile_*), got {type(grammar).__name__}")
    if not isinstance(sampling, SamplingParams):
        raise TypeError(f"sampling must be a SamplingParams, got {type(sampling).__name__}")
    if max_new_tokens < 0:
        raise ValueError(f"max_new_tokens must be >= 0, got {max_new_tokens}")
    stats = GenerationStats()
    started = time.perf_counter()
    device = _model_device(model)
    input_ids = prompt_ids(tokenizer, prompt).to(device)
    stats.prompt_tokens = int(input_ids.shape[1])
    vocab = grammar.vocab
    matcher = Matcher(grammar)
    generator = None
    if sampling.seed is not None and not sampling.greedy:
        generator = torch.Generator(device=device).manual_seed(sampling.seed)
    prefetch = MaskPrefetcher(vocab.logits_width)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    out: list[int] = []
    pieces: list[str] = []
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
                stats.forward_seconds += time.perf_counter() - t0
                token = _next_token(matcher, logits, sampling, out, generator, prefetch, stats)
                if matcher.is_terminated():
                    stats.stop_reason = "eos"
                    break
                out.append(token)
                piece = decoder.decode(vocab.token_bytes[token])
                if piece:
                    pieces.append(piece)
                    if stream is not None:
                        stream(piece)
                step_input = torch.tensor([[token]], device=device)
    finally:
        prefetch.close()
    tail = decoder.decode(b"", final=True)
    if tail:
        pieces.append(tail)
        if stream is not None:
            stream(tail)
    stats.new_tokens = len(out)
    stats.seconds = time.perf_counter() - started
    stats.mask_seconds = prefetch.mask_seconds
    stats.masks_computed = prefetch.masks_computed
    return GenerationResult("".join(pieces), out, stats)


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


def prompt_ids(tokenizer: Any, prompt: Prompt) -> Any:
    """(1, n) LongTensor of the prompt: text, chat messages or ids (see `generate`)."""
    import torch

    if isinstance(prompt, str):
        ids = tokenizer(prompt, return_tensors="pt")["input_ids"]
    elif isinstance(prompt, Sequence) and prompt and all(isinstance(m, dict) for m in prompt):
        ids = tokenizer.apply_chat_template(list(prompt), add_generation_prompt=True, return_tensors="pt")
        if not isinstance(ids, torch.Tensor):
            ids = ids["input_ids"]
    elif isinstance(prompt, Sequence) and all(isinstance(t, (int, np.integer)) for t in prompt):
        ids = torch.tensor([list(prompt)], dtype=torch.long)
    else:
        raise TypeError("prompt must be text, a list of chat messages ({'role', 'content'} dicts) or token ids")
    if ids.dim() != 2 or ids.shape[0] != 1 or ids.shape[1] == 0:
        raise ValueError(f"the prompt must be one non-empty sequence, got shape {tuple(ids.shape)}")
    return ids


def cached_forward(model: Any) -> Callable[[Any, Any], tuple[Any, Any]]:
    """(input ids, cache) -> (last position's logits, new cache) for a transformers causal LM.
    transformers 5 names the KV cache `cache` (4.x: `past_key_values`) and computes the logits of
    the last position only when asked (`logits_to_keep`, 4.x `num_logits_to_keep`)."""
    params = inspect.signature(model.forward).parameters
    cache_name = "cache" if "cache" in params else "past_key_values"
    extra = {}
    for name in ("logits_to_keep", "num_logits_to_keep"):
        if name in params:
            extra[name] = 1
            break

    def forward(input_ids: Any, cache: Any) -> tuple[Any, Any]:
        result = model(input_ids=input_ids, use_cache=True, **{cache_name: cache}, **extra)
        new_cache = getattr(result, "cache", None) if cache_name == "cache" else result.past_key_values
        return result.logits[:, -1, :], new_cache

    return forward


def _model_device(model: Any) -> Any:
    import torch

    try:
        return next(model.parameters()).device
    except (AttributeError, StopIteration):
        return torch.device("cpu")
