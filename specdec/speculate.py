"""The speculative decode loop: the one entry the decode loop uses.

Each step: drafts are proposed from a fork of the grammar state (a grammar-forced run first when
jump-forward is on, then the drafter's tokens, alternating while both have something), the target
scores the last emitted token and all drafts in one pass, the masks for every position are built
from the state after the accepted prefix plus the drafts before it (on a fork: the real matcher
only ever advances on emitted tokens), penalties count those drafts as generated, and the
acceptance rule (verify.py) decides. The output law equals plain constrained sampling exactly.

`target` is anything with `logits(ids, last)` (constrain.model_forward.CachedLM for transformers
models; small deterministic functions in the exact-enumeration tests), so the same code runs in
both.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from constrain.kernels.bitmask import allocate_token_bitmask
from constrain.kernels.sampling import probabilities, sample
from constrain.kernels.sampling_params import SamplingParams
from constrain.matcher import Matcher

from .drafting import Draft, Drafter
from .metrics import SpecMetrics
from .pass_costs import PassCosts
from .planning import GammaController
from .randomness import Randomness
from .verify import Verdict, accept_drafts

MAX_ROUNDS = 4  # forced run / drafter alternations per step
CALIBRATE_AFTER = 6  # passes before a draft-free pass is forced to time a one-position pass


@dataclass
class SpecResult:
    tokens: list[int]
    stop_reason: str  # "grammar" (only EOS was left), "eos" (EOS was emitted), "length"
    metrics: SpecMetrics = field(default_factory=SpecMetrics)
    mask_seconds: float = 0.0
    draft_seconds: float = 0.0


def speculative_decode(
    target: Any,
    matcher: Matcher,
    prompt: Sequence[int],
    sampling: SamplingParams,
    *,
    rng: Randomness,
    max_new_tokens: int,
    drafter: Optional[Drafter] = None,
    forced: Optional[Drafter] = None,
    controller: Optional[GammaController] = None,
    max_forced: int = 32,
    on_tokens: Optional[Callable[[list[int]], None]] = None,
    pass_costs: Optional[PassCosts] = None,
) -> SpecResult:
    """Decode up to `max_new_tokens` tokens after `prompt`, advancing `matcher` by each emitted
    token. `drafter` proposes tokens (its count chosen by `controller` each step, γ; a fresh
    GammaController by default); `forced` (a ForcedDrafter) proposes grammar-forced runs of up to
    `max_forced` tokens. `on_tokens` gets each step's new tokens (without a final EOS).
    `pass_costs`: a PassCosts table to learn the target's pass cost per position count and pad
    passes to the cheapest count (the controller then plans with it too)."""
    if drafter is not None and controller is None:
        controller = GammaController()
    result = SpecResult([], "")
    metrics = result.metrics
    vocab = matcher.compiled.vocab
    greedy = sampling.greedy
    prompt = [int(t) for t in prompt]
    out = result.tokens
    bitmask: Any = None
    while True:
        if matcher.must_terminate():
            result.stop_reason = "grammar"
            break
        remaining = max_new_tokens - len(out)
        if remaining <= 0:
            result.stop_reason = "length"
            break
        context = prompt + out
        # an adaptive controller needs one pass over one position to measure the costs against:
        # if none has come by itself after a few passes, this pass drafts nothing
        calibrating = (
            isinstance(controller, GammaController)
            and not controller.has_pass_time
            and metrics.target_passes >= CALIBRATE_AFTER
        )
        gamma = controller.gamma() if controller is not None and not calibrating else 0
        timer = [0.0]
        draft = _propose(context, matcher, drafter, forced, gamma, 0 if calibrating else max_forced, remaining - 1, rng, timer)
        result.draft_seconds += timer[0]
        flags = draft.is_forced()

        pending = None
        if not greedy:  # every position's mask, computed while the target runs
            if bitmask is None or bitmask.shape[0] < len(draft) + 1:
                bitmask = allocate_token_bitmask(max(len(draft) + 1, 8), vocab.logits_width)
            pending = _mask_executor().submit(_timed_masks, matcher, draft.tokens, bitmask)
        elif bitmask is None:
            bitmask = allocate_token_bitmask(1, vocab.logits_width)

        needed = len(draft) + 1
        run = pass_costs.padded(needed) if pass_costs is not None else needed
        ids = context + draft.tokens
        ids += ids[-1:] * (run - needed)  # filler: later positions, unseen by the needed ones
        t0 = time.perf_counter()
        try:
            logits = target.logits(ids, run)[:needed]
        finally:
            masks = pending.result() if pending is not None else None
        verify_seconds = time.perf_counter() - t0
        if pass_costs is not None and metrics.target_passes > 0:  # not the prompt's pass
            pass_costs.observe(run, verify_seconds)

        if masks is None:
            t0 = time.perf_counter()
            verdict = _greedy_verdict(logits, draft.tokens, matcher, sampling, out, bitmask)
            result.mask_seconds += time.perf_counter() - t0
        else:
            rows, seconds = masks
            result.mask_seconds += seconds
            histories = [out + draft.tokens[:i] for i in range(rows)]
            p = probabilities(logits[:rows], sampling, bitmask=bitmask[:rows], history=histories)
            verdict = accept_drafts(p, draft.tokens, draft.q, rng, terminates=_terminates(vocab))

        new: list[int] = []
        for t in verdict.tokens:
            if t in vocab.eos_token_ids and matcher.must_terminate():
                break  # only EOS was left (a drafted `}` ended the text): plain decoding stops here
            if not matcher.accept_token(t):
                raise RuntimeError(f"token {t} was emitted outside the grammar's mask (a bug in constrain)")
            if matcher.is_terminated():
                break
            new.append(t)
        out.extend(new)
        metrics.observe(flags, verdict.accepted, verdict.rejected, len(verdict.tokens))
        if controller is not None and metrics.target_passes > 1:
            _observe(controller, flags, verdict.accepted, verdict.rejected, verify_seconds, timer[0], run)
        if new and on_tokens is not None:
            on_tokens(new)
        if matcher.is_terminated():
            result.stop_reason = "eos"
            break
    return result


def _propose(
    context: list[int],
    matcher: Matcher,
    drafter: Optional[Drafter],
    forced: Optional[Drafter],
    gamma: int,
    max_forced: int,
    budget: int,
    rng: Randomness,
    drafter_seconds: list[float],
) -> Draft:
    """Forced runs and drafter tokens, alternating, on a fork of `matcher`; at most `budget`
    tokens in all. Stops after a token the grammar rejects (kept: a sampled draft must be
    verified as drawn, and the target's mask rejects it) or one that terminates. The drafter's
    own time is added to drafter_seconds[0]."""
    fork = matcher.fork()
    draft = Draft([], None, 0, [])
    qs: list[Any] = []
    forced_left, inner_left = max_forced, gamma
    for _ in range(MAX_ROUNDS):
        added = 0
        for source in (forced, drafter):
            if source is None:
                continue
            n = min(budget - len(draft.tokens), forced_left if source is forced else inner_left)
            if n <= 0:
                continue
            t0 = time.perf_counter()
            part = source.propose(context + draft.tokens, fork, n, rng)
            if source is drafter:
                drafter_seconds[0] += time.perf_counter() - t0
            # a value's closing token may run one past the drafter's count, never past the budget
            tokens = part.tokens[: n + min(part.closing, budget - len(draft.tokens) - n)]
            if not tokens:
                continue
            if source is forced:
                forced_left -= len(tokens)
            else:
                inner_left -= len(tokens)
            part_q = part.q if part.q is not None else [None] * len(tokens)
            for t, q in zip(tokens, part_q):
                draft.tokens.append(int(t))
                draft.forced_flags.append(source is forced)
                qs.append(q)
                added += 1
                if not fork.accept_token(t) or fork.is_terminated():
                    return _with_q(draft, qs)
        if not added:
            break
    return _with_q(draft, qs)


def _with_q(draft: Draft, qs: list[Any]) -> Draft:
    draft.q = qs if any(q is not None for q in qs) else None
    draft.forced = sum(draft.forced_flags or [])
    return draft


_EXECUTOR: list[Optional[ThreadPoolExecutor]] = [None]
_EXECUTOR_LOCK = threading.Lock()


def _mask_executor() -> ThreadPoolExecutor:
    """The threads that compute verification masks during target passes, shared by every loop in
    the process (a thread per request would cost more than a toy model's whole pass)."""
    with _EXECUTOR_LOCK:
        if _EXECUTOR[0] is None:
            _EXECUTOR[0] = ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1), thread_name_prefix="constrain-spec-masks")
        return _EXECUTOR[0]


def _timed_masks(matcher: Matcher, drafts: list[int], bitmask: Any) -> tuple[int, float]:
    t0 = time.perf_counter()
    rows = _fill_position_masks(matcher, drafts, bitmask)
    return rows, time.perf_counter() - t0


def _greedy_verdict(
    logits: Any, drafts: list[int], matcher: Matcher, sampling: SamplingParams, out: list[int], bitmask: Any
) -> Verdict:
    """Temperature 0: at each position the (penalized) argmax, masked only where the grammar
    rejects it — plain greedy decoding's exact shortcut; drafts are kept while they equal it."""
    fork = matcher.fork()
    compiled = matcher.compiled
    kept: list[int] = []
    for i in range(len(drafts) + 1):
        history = [out + drafts[:i]]
        y = int(sample(logits[i], sampling, history=history))
        if compiled.next_state(fork.state, y) is None:
            fork.fill_next_token_bitmask(bitmask, 0)
            y = int(sample(logits[i], sampling, bitmask=bitmask[0], history=history))
        if i == len(drafts) or y != drafts[i]:
            return Verdict(kept + [y], i, i < len(drafts))
        kept.append(y)
        fork.accept_token(y)
        if fork.is_terminated():
            return Verdict(kept, i + 1, False)
    raise AssertionError("unreachable")  # pragma: no cover


def _fill_position_masks(matcher: Matcher, drafts: list[int], bitmask: Any) -> int:
    """Row i of `bitmask` := the mask after the drafts before position i; returns the number of
    rows the verifier needs (it stops after a draft the grammar rejects or that terminates)."""
    fork = matcher.fork()
    for i in range(len(drafts) + 1):
        fork.fill_next_token_bitmask(bitmask, i)
        if i == len(drafts) or not fork.accept_token(drafts[i]) or fork.is_terminated():
            return i + 1
    return len(drafts) + 1  # pragma: no cover - the loop always returns


def _terminates(vocab: Any) -> Callable[[int], bool]:
    eos = vocab.eos_token_ids
    return lambda t: t in eos


def _observe(
    controller: GammaController,
    forced_flags: list[bool],
    accepted: int,
    rejected: bool,
    seconds: float,
    drafter_seconds: float,
    positions: int,
) -> None:
    """Feed the controller the drafter's own positions (forced ones are not the drafter's) and
    the pass's time."""
    inner = forced_flags.count(False)
    if inner:
        kept = forced_flags[:accepted].count(False)
        rejected_inner = rejected and not forced_flags[accepted]
        controller.observe(inner, kept, rejected_inner)
    per_token = drafter_seconds / inner if inner else None
    controller.observe_costs(draft_seconds_per_token=per_token, verify_seconds=seconds, positions=positions)
