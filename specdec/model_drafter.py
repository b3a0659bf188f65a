"""A small model as the drafter: it samples under the same grammar mask and sampling parameters as
the target, and reports q, the exact distribution each draft token was drawn from.

It must share the target's tokenizer: the same bytes for every id and the same special tokens
(a draft id that means other text would be verified as the wrong token). `begin` checks that
against the target's vocabulary and raises DrafterMismatchError naming the first difference.
"""

from __future__ import annotations

import weakref
from typing import Any, Optional, Sequence

from constrain.errors import DrafterMismatchError
from constrain.kernels.bitmask import allocate_token_bitmask
from constrain.kernels.sampling import probabilities
from constrain.kernels.sampling_params import SamplingParams
from constrain.matcher import Matcher
from constrain.model_forward import CachedLM
from constrain.vocab.vocabulary import Vocabulary

from .drafting import Draft
from .randomness import Randomness


class ModelDrafter:
    """Draft with `model`: a transformers causal LM, or any object with `logits(ids, last)`
    returning the logits of the last `last` positions of `ids` (rows, width). `tokenizer`: the
    draft model's tokenizer (checked against the target's vocabulary); leave it None only for a
    model known to share the target's tokenizer (its logits width is still checked)."""

    kind = "model"

    def __init__(self, model: Any, tokenizer: Any = None, *, max_tokens: int = 4) -> None:
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        self.lm = model if _is_logits_fn(model) else CachedLM(model)
        self.tokenizer = tokenizer
        self.max_tokens = max_tokens
        self._sampling = SamplingParams()
        self._prompt_len = 0
        self._bitmask: Any = None
        self._width = 0

    def begin(self, prompt: Sequence[int], sampling: SamplingParams, vocab: Vocabulary) -> None:
        """Start a request: the prompt (penalties count only what follows it), the sampling
        parameters the target uses, and the target's vocabulary (the tokenizer check)."""
        if self.tokenizer is not None:
            check_same_tokenizer(vocab, _draft_vocabulary(self.tokenizer))
        width = _config_width(self.lm)
        if width is not None and width < vocab.size:
            raise DrafterMismatchError(
                f"the draft model's logits have {width} columns; the target's vocabulary has "
                f"{vocab.size} tokens (the drafter must share the target's tokenizer)"
            )
        self._sampling = sampling
        self._prompt_len = len(prompt)
        self._width = vocab.logits_width
        self._bitmask = allocate_token_bitmask(1, vocab.logits_width)

    def propose(self, context: Sequence[int], matcher: Matcher, max_tokens: int, rng: Randomness) -> Draft:
        import torch

        if self._bitmask is None:
            raise RuntimeError("ModelDrafter.begin(prompt, sampling, vocab) must start each request")
        fork = matcher.fork()
        ids = list(context)
        history = ids[self._prompt_len:]
        tokens: list[int] = []
        qs: list[Any] = []
        for _ in range(min(max_tokens, self.max_tokens)):
            logits = self.lm.logits(ids, 1)[-1]
            fork.fill_next_token_bitmask(self._bitmask, 0)
            q = probabilities(_to_width(logits, self._width), self._sampling, bitmask=self._bitmask[0], history=[history])
            x = int(q.argmax()) if self._sampling.greedy else rng.categorical(q)
            tokens.append(x)
            qs.append(q)
            if not fork.accept_token(x) or fork.is_terminated():
                break
            ids.append(x)
            history.append(x)
        return Draft(tokens, qs)


def check_same_tokenizer(target: Vocabulary, draft: Vocabulary) -> None:
    """Raise DrafterMismatchError unless both vocabularies give every id the same bytes and agree
    on the special tokens."""
    if target.size != draft.size:
        raise DrafterMismatchError(
            f"the draft tokenizer has {draft.size} tokens, the target's {target.size}: a drafter must "
            "share the target's tokenizer"
        )
    for i, (a, b) in enumerate(zip(target.token_bytes, draft.token_bytes)):
        if a != b:
            raise DrafterMismatchError(f"token id {i} is {b!r} for the drafter but {a!r} for the target")
    if target.special_ids != draft.special_ids:
        diff = sorted(target.special_ids ^ draft.special_ids)[:5]
        raise DrafterMismatchError(f"the special tokens differ between drafter and target (ids {diff})")


_VOCABS_BY_OBJECT: "weakref.WeakKeyDictionary[Any, Vocabulary]" = weakref.WeakKeyDictionary()
_VOCABS_BY_PATH: dict[str, Vocabulary] = {}


def _draft_vocabulary(tokenizer: Any) -> Vocabulary:
    """The draft tokenizer's Vocabulary, read once per tokenizer object (or path): reading a
    128k-token tokenizer takes about a second, and generate() checks on every request."""
    if isinstance(tokenizer, (str, bytes)) or hasattr(tokenizer, "__fspath__"):
        key = str(tokenizer)
        if key not in _VOCABS_BY_PATH:
            if len(_VOCABS_BY_PATH) >= 8:
                _VOCABS_BY_PATH.clear()
            _VOCABS_BY_PATH[key] = Vocabulary.from_pretrained(tokenizer)
        return _VOCABS_BY_PATH[key]
    try:
        known = _VOCABS_BY_OBJECT.get(tokenizer)
    except TypeError:  # not weak-referenceable
        return Vocabulary.from_pretrained(tokenizer)
    if known is None:
        known = _VOCABS_BY_OBJECT[tokenizer] = Vocabulary.from_pretrained(tokenizer)
    return known


def _is_logits_fn(model: Any) -> bool:
    try:
        import torch

        if isinstance(model, torch.nn.Module):
            return False
    except ImportError:  # pragma: no cover - torch is a dependency
        pass
    return callable(getattr(model, "logits", None))


def _config_width(lm: Any) -> Optional[int]:
    config = getattr(getattr(lm, "model", None), "config", None)
    width = getattr(config, "vocab_size", None)
    return int(width) if width is not None else None


def _to_width(logits: Any, width: int) -> Any:
    """The draft's logits on the target's width: extra columns (past both vocabularies) dropped,
    missing ones -inf."""
    import torch

    if logits.shape[-1] == width:
        return logits
    if logits.shape[-1] > width:
        return logits[..., :width]
    pad = torch.full((width - logits.shape[-1],), float("-inf"), dtype=logits.dtype, device=logits.device)
    return torch.cat([logits, pad])
