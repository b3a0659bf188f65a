"""A transformers LogitsProcessor: `model.generate(..., logits_processor=[...])` under a grammar.

transformers runs custom processors after its own penalty processors and before the sampling
warpers (temperature, top-k, top-p, min-p), so the mask lands before any truncation, as it must.
Rows are followed by the tokens they generated, not by position: beam search reorders and
copies rows between steps, so each step finds a row's matcher by its generated prefix (forking
the parent's matcher for a new token). Works for greedy, sampling and beam search, and for a
batch with one grammar per prompt.
"""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional, Sequence, Union

from ..batch_masks import fill_batch_bitmask
from ..compiled import CompiledGrammar
from ..kernels.bitmask import allocate_token_bitmask, apply_token_bitmask_inplace
from ..matcher import Matcher

try:  # subclass transformers' base class when it is there (it only defines __call__)
    from transformers import LogitsProcessor as _Base
except ImportError:  # pragma: no cover - transformers is a dependency
    _Base = object  # type: ignore[assignment,misc]


class ConstrainLogitsProcessor(_Base):  # type: ignore[misc,valid-type]
    """Masks each row's scores with its grammar. One processor per `generate` call.

    grammars: one CompiledGrammar for every prompt, or one per prompt of the batch (rows are
    prompt-major: num_beams × num_return_sequences rows per prompt, as transformers lays them
    out). A row whose grammar has ended may only draw EOS; a row that went on past it (transformers
    pads a finished row) is left unmasked."""

    def __init__(self, grammars: Union[CompiledGrammar, Sequence[CompiledGrammar]], *, threads: int = 0) -> None:
        self._grammars = [grammars] if isinstance(grammars, CompiledGrammar) else list(grammars)
        if not self._grammars or not all(isinstance(g, CompiledGrammar) for g in self._grammars):
            raise TypeError("ConstrainLogitsProcessor needs CompiledGrammar objects")
        self._prompt_len: Optional[int] = None
        self._known: list[dict[tuple[int, ...], Matcher]] = [{} for _ in self._grammars]
        self._bitmask: Any = None
        self._executor = ThreadPoolExecutor(threads) if threads > 1 else None
        self.rows_unmasked = 0  # rows past their grammar's end at the last step

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        rows = input_ids.shape[0]
        if rows % len(self._grammars):
            raise ValueError(f"{rows} rows do not split over {len(self._grammars)} prompts' grammars")
        if self._prompt_len is None:
            self._prompt_len = int(input_ids.shape[1])
        per_prompt = rows // len(self._grammars)
        keys = [tuple(row) for row in input_ids[:, self._prompt_len :].tolist()]
        # a parent continued by one row only (no beam copied it) advances in place, not forked
        children = Counter((r // per_prompt, key[:-1]) for r, key in enumerate(keys) if key)
        matchers: list[Optional[Matcher]] = []
        known: list[dict[tuple[int, ...], Matcher]] = [{} for _ in self._grammars]
        for r, key in enumerate(keys):
            p = r // per_prompt
            matcher = self._matcher_for(p, key, in_place=children[(p, key[:-1])] == 1)
            if matcher is not None:
                known[p][key] = matcher
            matchers.append(matcher)
        self._known = known
        self.rows_unmasked = sum(m is None for m in matchers)
        width = max(g.vocab.logits_width for g in self._grammars)
        if self._bitmask is None or self._bitmask.shape[0] != rows or self._bitmask.shape[1] * 32 < width:
            self._bitmask = allocate_token_bitmask(rows, width)
        fill_batch_bitmask(matchers, self._bitmask, executor=self._executor)
        active = [r for r, m in enumerate(matchers) if m is not None]
        if active:  # rows without a matcher (padding) stay unmasked
            mask = self._bitmask.to(scores.device, non_blocking=True)
            apply_token_bitmask_inplace(scores, mask, indices=active)
        return scores

    def _matcher_for(self, prompt: int, tokens: tuple[int, ...], in_place: bool) -> Optional[Matcher]:
        """The matcher after `tokens`, from the last step's matchers (the parent's own, advanced,
        when `in_place`); None when the row went past its grammar's end (a finished row that
        transformers pads)."""
        known = self._known[prompt]
        if tokens in known:
            return known[tokens]
        if not tokens:
            return Matcher(self._grammars[prompt])
        parent = known.get(tokens[:-1])
        if parent is None:
            parent = self._replay(prompt, tokens[:-1])
            if parent is None:
                return None
        if parent.is_terminated():  # more EOS keeps the row ended; anything else is padding
            return parent if tokens[-1] in parent.compiled.vocab.eos_token_ids else None
        child = parent if in_place else parent.fork()
        if not child.accept_token(tokens[-1]):
            return None
        return child

    def _replay(self, prompt: int, tokens: tuple[int, ...]) -> Optional[Matcher]:
        """A matcher for a prefix this processor has not seen (e.g. generate resumed with new
        input ids): replayed from the start; None if the grammar rejects it."""
        matcher = Matcher(self._grammars[prompt])
        for t in tokens:
            if matcher.is_terminated():
                return matcher
            if not matcher.accept_token(t):
                return None
        return matcher
