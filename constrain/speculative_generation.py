"""`generate`'s speculative path: resolve `draft=`, run constrain.specdec's loop on the model,
and report its figures in the request's GenerationStats."""

from __future__ import annotations

import logging
import threading
import weakref
from typing import Any, Callable, Optional

from .compiled import CompiledGrammar
from .kernels.sampling_params import SamplingParams
from .matcher import Matcher
from .model_forward import CachedLM

logger = logging.getLogger("constrain.specdec")


def speculative_loop(
    model: Any,
    tokenizer: Any,
    prompt: list[int],
    grammar: CompiledGrammar,
    sampling: SamplingParams,
    max_new_tokens: int,
    generator: Any,
    on_tokens: Callable[[list[int]], None],
    stats: Any,
    *,
    draft: Any,
    jump_forward: bool,
    log_drafts: bool,
) -> list[int]:
    from .specdec.jump_forward import SpellingMemory
    from .specdec.pass_costs import PassCosts
    from .specdec.planning import GammaController
    from .specdec.randomness import TorchRandomness
    from .specdec.speculate import speculative_decode

    drafter, forced = resolve_drafters(draft, jump_forward, tokenizer)
    memory = _per_model(_MEMORIES, model, SpellingMemory)
    for source in (forced, drafter):
        if source is not None and hasattr(source, "memory"):
            source.memory = memory
    if drafter is not None and hasattr(drafter, "begin"):
        drafter.begin(prompt, sampling, grammar.vocab)
    target = CachedLM(model)
    costs = _per_model(_COSTS, model, PassCosts)
    result = speculative_decode(
        target, Matcher(grammar), prompt, sampling, rng=TorchRandomness(generator),
        max_new_tokens=max_new_tokens, drafter=drafter, forced=forced, on_tokens=on_tokens,
        controller=GammaController(costs=costs) if drafter is not None else None, pass_costs=costs,
    )
    memory.add(result.tokens)
    m = result.metrics
    stats.stop_reason = result.stop_reason
    stats.forward_seconds = target.seconds
    stats.mask_seconds = result.mask_seconds
    stats.draft_seconds = result.draft_seconds
    stats.target_passes = m.target_passes
    stats.drafted, stats.accepted = m.drafted, m.accepted
    stats.alpha = m.alpha
    stats.accepted_per_drafted = m.accepted_per_drafted
    stats.mean_acceptance_length = m.mean_acceptance_length
    stats.forced_tokens = m.forced_tokens
    if log_drafts:
        logger.info(m.log_line())
    return result.tokens


# Per model object, kept across requests: what a pass over n positions costs (the model's and
# the machine's, not a request's; a request is too short to learn it), and how the model spells
# forced text (its earlier outputs: a request's first forced run has no context to learn from).
_COSTS: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()
_MEMORIES: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()
_PER_MODEL_LOCK = threading.Lock()


def _per_model(table: "weakref.WeakKeyDictionary[Any, Any]", model: Any, make: Any) -> Any:
    try:
        with _PER_MODEL_LOCK:
            found = table.get(model)
            if found is None:
                found = table[model] = make()
            return found
    except TypeError:  # not weak-referenceable
        return make()


def resolve_drafters(draft: Any, jump_forward: bool, tokenizer: Any) -> tuple[Optional[Any], Optional[Any]]:
    """(drafter, forced-run drafter) for generate's `draft=` and `jump_forward=`."""
    from .specdec.jump_forward import ForcedDrafter
    from .specdec.model_drafter import ModelDrafter
    from .specdec.ngram import NgramDrafter
    from .specdec.text_lookup import TextLookupDrafter

    forced = ForcedDrafter(tokenizer) if jump_forward or draft == "forced" else None
    if draft is None or draft == "forced":
        return None, forced
    if draft == "ngram":
        return NgramDrafter(), forced
    if draft == "lookup":
        return TextLookupDrafter(tokenizer), forced
    if isinstance(draft, str):
        raise ValueError(f"draft must be None, 'ngram', 'forced', a drafter or a model; got {draft!r}")
    if callable(getattr(draft, "propose", None)):
        return draft, forced
    if isinstance(draft, tuple) and len(draft) == 2:
        return ModelDrafter(draft[0], draft[1]), forced
    if hasattr(draft, "forward") and hasattr(draft, "config"):
        return ModelDrafter(draft), forced
    raise TypeError(
        f"draft must be None, 'ngram', 'forced', a drafter (with .propose), a transformers model sharing "
        f"the tokenizer, or (model, tokenizer); got {type(draft).__name__}"
    )
