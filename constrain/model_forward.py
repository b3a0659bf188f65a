"""A transformers causal LM as a function of token ids: `CachedLM.logits(ids, last)`.

Speculative decoding scores several positions at once and then keeps only a prefix of them, and a
draft model runs ahead and falls back; both are "the logits at the end of this id sequence". The
class keeps the KV cache of the longest prefix it shares with the previous call (cropping it when
the sequence went back), so callers think in sequences, not caches.
"""

from __future__ import annotations

import contextlib
import inspect
import time
from typing import Any, Callable, Sequence, Union

import numpy as np

from .narrow_linear import NARROW_ROWS, narrow_linear

Prompt = Union[str, Sequence[int], Sequence[dict]]


class CachedLM:
    """logits(ids, last) -> the float logits of the last `last` positions of `ids`, shape
    (last, width), computing only the positions past the cached common prefix. `passes`,
    `positions` and `seconds` count the forward passes made."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.device = model_device(model)
        self._forward = cached_forward(model)
        self._ids: list[int] = []
        self._cache: Any = None
        self.passes = 0
        self.positions = 0
        self.seconds = 0.0

    def logits(self, ids: Sequence[int], last: int = 1) -> Any:
        import torch

        ids = [int(t) for t in ids]
        if not 1 <= last <= len(ids):
            raise ValueError(f"last must be in 1..{len(ids)} (the ids' length), got {last}")
        keep = min(_common_prefix(self._ids, ids), len(ids) - last)
        if keep < len(self._ids):
            if self._cache is not None and keep > 0 and hasattr(self._cache, "crop"):
                self._cache.crop(keep - len(self._ids))  # negative: drop that many (transformers 4.x and 5)
            else:
                keep, self._cache = 0, None
        new = ids[keep:]
        t0 = time.perf_counter()
        with torch.no_grad():
            logits, self._cache = self._forward(torch.tensor([new], device=self.device), self._cache, last)
        self.seconds += time.perf_counter() - t0
        self.passes += 1
        self.positions += len(new)
        self._ids = ids
        return logits[0]

    def reset(self) -> None:
        self._ids, self._cache = [], None


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    diff = np.nonzero(np.asarray(a[:n]) != np.asarray(b[:n]))[0]
    return int(diff[0])


def cached_forward(model: Any) -> Callable[[Any, Any, int], tuple[Any, Any]]:
    """(input ids, cache, last) -> (logits of the last `last` positions, (batch, last, width);
    the new cache) for a transformers causal LM. transformers 5 names the KV cache `cache` (4.x:
    `past_key_values`) and computes only the logits asked for (`logits_to_keep`, 4.x
    `num_logits_to_keep`). A pass over 2..NARROW_ROWS positions on CPU (a verification) runs its
    linear layers as W @ x.T (constrain.narrow_linear: MKL's few-row sgemm costs twice a gemv)."""
    params = inspect.signature(model.forward).parameters
    cache_name = "cache" if "cache" in params else "past_key_values"
    keep_name = next((n for n in ("logits_to_keep", "num_logits_to_keep") if n in params), None)

    def forward(input_ids: Any, cache: Any, last: int = 1) -> tuple[Any, Any]:
        extra = {keep_name: last} if keep_name else {}
        narrow = input_ids.device.type == "cpu" and 2 <= input_ids.numel() <= NARROW_ROWS
        with narrow_linear() if narrow else contextlib.nullcontext():
            result = model(input_ids=input_ids, use_cache=True, **{cache_name: cache}, **extra)
        new_cache = getattr(result, "cache", None) if cache_name == "cache" else result.past_key_values
        return result.logits[:, -last:, :], new_cache

    return forward


def prompt_ids(tokenizer: Any, prompt: Prompt) -> Any:
    """(1, n) LongTensor of the prompt: raw text (tokenized with the tokenizer's special tokens),
    chat messages ({"role", "content"} dicts, rendered with the chat template and a generation
    prompt) or token ids."""
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


def model_device(model: Any) -> Any:
    import torch

    try:
        return next(model.parameters()).device
    except (AttributeError, StopIteration):
        return torch.device("cpu")
