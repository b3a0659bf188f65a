"""Speculative decoding is exactly lossless: the law of the first tokens with speculation equals
plain constrained sampling's, computed by enumerating every random path of the real loop on toy
models (total variation < 1e-12), for every drafter, γ = 1..3 and the sampling options; and a
deliberately biased drafter or verifier is caught by the same test."""

from __future__ import annotations

import pytest
import torch
from toy_speculation import (
    EOS,
    FixedGamma,
    ToyLM,
    exact_law,
    outcome,
    plain_law,
    toy_grammar,
)

from constrain import Matcher
from constrain.kernels import SamplingParams
from constrain.specdec import verify as verify_module
from constrain.specdec.drafting import Draft
from constrain.specdec.jump_forward import ForcedDrafter
from constrain.specdec.model_drafter import ModelDrafter
from constrain.specdec.ngram import NgramDrafter
from constrain.specdec.speculate import speculative_decode
from constrain.specdec.text_lookup import TextLookupDrafter

PATTERN = r"(c|[ab]+c)ab[abc]*"  # after the "c", "ab" is forced (a jump-forward draft)
PROMPT = [0, 1, 3, 4, 0, 1]
PARAMS = {
    "t1": SamplingParams(),
    "t0.7-topk3-penalties": SamplingParams(temperature=0.7, top_k=3, repetition_penalty=1.5, presence_penalty=0.3),
    "topp0.8-frequency": SamplingParams(temperature=1.3, top_p=0.8, frequency_penalty=0.4),
    "minp0.2": SamplingParams(min_p=0.2, repetition_penalty=0.8),
    "greedy-penalties": SamplingParams(temperature=0, repetition_penalty=2.0),
}
TV_LIMIT = 1e-12


@pytest.fixture(scope="module")
def grammar():
    return toy_grammar(PATTERN)


def drafter_for(kind: str, params: SamplingParams, grammar):
    if kind == "model":
        d = ModelDrafter(ToyLM(salt=2, scale=1.0))
        d.begin(PROMPT, params, grammar.vocab)
        return d, None
    if kind == "ngram":
        return NgramDrafter(max_ngram=2), None
    if kind == "lookup":
        return TextLookupDrafter(min_match=2), None
    if kind == "forced":
        return None, ForcedDrafter()
    if kind == "model+forced":
        d, _ = drafter_for("model", params, grammar)
        return d, ForcedDrafter()
    raise AssertionError(kind)


TOKENS_FOR = {"model": 3, "model+forced": 3, "ngram": 4, "lookup": 4, "forced": 4}  # model drafts branch: fewer tokens


def spec_law(grammar, params, kind: str, gamma: int, max_new_tokens: int):
    target = ToyLM(salt=1)

    def run(rng):
        drafter, forced = drafter_for(kind, params, grammar)
        result = speculative_decode(
            target, Matcher(grammar), PROMPT, params, rng=rng, max_new_tokens=max_new_tokens,
            drafter=drafter, forced=forced, controller=FixedGamma(gamma),
        )
        return outcome(result)

    return exact_law(run)


@pytest.mark.parametrize("params", PARAMS.values(), ids=PARAMS.keys())
@pytest.mark.parametrize("kind", ["model", "ngram", "lookup", "forced", "model+forced"])
@pytest.mark.parametrize("gamma", [1, 2, 3])
def test_speculation_has_the_law_of_plain_sampling(grammar, params, kind, gamma):
    reference = plain_law(ToyLM(salt=1), grammar, PROMPT, params, TOKENS_FOR[kind])
    law = spec_law(grammar, params, kind, gamma, TOKENS_FOR[kind])
    assert abs(sum(law.values()) - 1) < 1e-12
    tv = 0.5 * sum(abs(law.get(k, 0.0) - reference.get(k, 0.0)) for k in set(law) | set(reference))
    assert tv < TV_LIMIT, (kind, gamma, tv)


@pytest.mark.parametrize("kind", TOKENS_FOR)
def test_the_cases_above_do_draft(grammar, kind):
    """The laws above are not vacuous: along sampled runs, each drafter's drafts are verified
    (forced kinds: grammar-forced drafts), and some are accepted and some rejected."""
    from constrain.specdec.randomness import TorchRandomness

    drafted = forced = accepted = 0
    for seed in range(40):
        drafter, forced_drafter = drafter_for(kind, PARAMS["t1"], grammar)
        result = speculative_decode(
            ToyLM(salt=1), Matcher(grammar), PROMPT, PARAMS["t1"], rng=TorchRandomness(torch.Generator().manual_seed(seed)),
            max_new_tokens=TOKENS_FOR[kind], drafter=drafter, forced=forced_drafter, controller=FixedGamma(1),
        )
        drafted += result.metrics.drafted
        forced += result.metrics.forced_drafted
        accepted += result.metrics.accepted
    assert 0 < accepted <= drafted
    assert accepted < drafted or kind == "forced"  # forced runs here are single-token masks
    assert (forced > 0) == ("forced" in kind)


def test_four_tokens_with_the_model_drafter(grammar):
    params = PARAMS["t0.7-topk3-penalties"]
    reference = plain_law(ToyLM(salt=1), grammar, PROMPT, params, 4)
    law = spec_law(grammar, params, "model", 2, max_new_tokens=4)
    assert 0.5 * sum(abs(law.get(k, 0.0) - reference.get(k, 0.0)) for k in set(law) | set(reference)) < TV_LIMIT


class TruncatingRawQDrafter(ModelDrafter):
    """The bug seen in an engine: draft from the unmasked draft distribution, cut the draft at the
    first token the grammar rejects, and report the unmasked q."""

    def propose(self, context, matcher, max_tokens, rng):
        from constrain.kernels import probabilities

        fork, ids, tokens, qs = matcher.fork(), list(context), [], []
        for _ in range(min(max_tokens, self.max_tokens)):
            q = probabilities(self.lm.logits(ids, 1)[-1], self._sampling, history=[ids[self._prompt_len:]])
            x = rng.categorical(q)
            if not fork.accept_token(x):
                break
            tokens.append(x)
            qs.append(q)
            if fork.is_terminated():
                break
            ids.append(x)
        return Draft(tokens, qs or None)


def test_a_drafter_that_truncates_and_keeps_raw_q_is_caught(grammar):
    params = PARAMS["t1"]
    reference = plain_law(ToyLM(salt=1), grammar, PROMPT, params, 3)
    target = ToyLM(salt=1)

    def run(rng):
        d = TruncatingRawQDrafter(ToyLM(salt=2, scale=1.0))
        d.begin(PROMPT, params, grammar.vocab)
        return outcome(speculative_decode(target, Matcher(grammar), PROMPT, params, rng=rng, max_new_tokens=3,
                                          drafter=d, controller=FixedGamma(2)))

    law = exact_law(run)
    assert 0.5 * sum(abs(law.get(k, 0.0) - reference.get(k, 0.0)) for k in set(law) | set(reference)) > 1e-3


def test_a_verifier_that_redraws_from_p_after_a_rejection_is_caught(grammar, monkeypatch):
    """Mutation: on rejection draw from p instead of norm(max(0, p - q))."""
    monkeypatch.setattr(verify_module, "_residual", lambda p, q: p)
    params = PARAMS["t1"]
    reference = plain_law(ToyLM(salt=1), grammar, PROMPT, params, 3)
    law = spec_law(grammar, params, "model", 2, 3)
    assert 0.5 * sum(abs(law.get(k, 0.0) - reference.get(k, 0.0)) for k in set(law) | set(reference)) > 1e-3


@pytest.mark.parametrize("kind", ["model+forced", "ngram"])
def test_after_rejections_the_matcher_is_a_fresh_one_fed_the_emitted_tokens(grammar, kind):
    """The grammar state only ever advances on emitted tokens: after speculative decoding with
    rejections along the way, the matcher equals a fresh matcher fed the output (and its EOS)."""
    from constrain.specdec.randomness import TorchRandomness

    rejections = 0
    for seed in range(30):
        matcher = Matcher(grammar)
        drafter, forced = drafter_for(kind, PARAMS["t0.7-topk3-penalties"], grammar)
        result = speculative_decode(
            ToyLM(salt=1), matcher, PROMPT, PARAMS["t0.7-topk3-penalties"], rng=TorchRandomness(torch.Generator().manual_seed(seed)),
            max_new_tokens=8, drafter=drafter, forced=forced, controller=FixedGamma(3),
        )
        rejections += sum(1 for d, _, a in result.metrics.passes if a < d)
        fresh = Matcher(grammar)
        assert fresh.accept_tokens(result.tokens) == len(result.tokens)
        if result.stop_reason == "eos":
            assert fresh.accept_token(EOS)
        assert fresh.state == matcher.state and fresh.num_accepted_tokens == matcher.num_accepted_tokens
    assert rejections > 0


class ClosingDrafter:
    """Deterministic drafts of `max_tokens` tokens and one more flagged as a value's closing
    (Draft.closing, as the prompt lookup's value ends are): the loop may verify it past γ."""

    kind = "closing"

    def __init__(self) -> None:
        self.proposed: list[tuple[int, int]] = []  # (count asked, tokens proposed)

    def propose(self, context, matcher, max_tokens, rng):
        tokens = [0, 1][:max_tokens] + [2] * max(0, max_tokens - 2) + [2]  # "ab...c": the pattern's start
        self.proposed.append((max_tokens, len(tokens)))
        return Draft(tokens, None, 0, closing=1)


@pytest.mark.parametrize("gamma", [1, 2, 3])
@pytest.mark.parametrize("params", [PARAMS["t1"], PARAMS["greedy-penalties"]], ids=["t1", "greedy"])
def test_a_closing_token_past_gamma_keeps_the_law_and_the_budget(grammar, params, gamma):
    max_new = 3
    reference = plain_law(ToyLM(salt=1), grammar, PROMPT, params, max_new)
    target = ToyLM(salt=1)
    longest = [0]

    def run(rng):
        drafter = ClosingDrafter()
        result = speculative_decode(target, Matcher(grammar), PROMPT, params, rng=rng, max_new_tokens=max_new,
                                    drafter=drafter, controller=FixedGamma(gamma))
        longest[0] = max([longest[0]] + [d for d, _, _ in result.metrics.passes])
        assert len(result.tokens) <= max_new
        return outcome(result)

    law = exact_law(run)
    tv = 0.5 * sum(abs(law.get(k, 0.0) - reference.get(k, 0.0)) for k in set(law) | set(reference))
    assert tv < TV_LIMIT
    # the closing token was verified past γ where the budget left room (the first pass: 3 - 1)
    assert longest[0] == min(gamma + 1, max_new - 1)


def test_padding_passes_with_filler_positions_keeps_the_law(grammar):
    """Passes padded to a cheaper position count (filler tokens after the drafts) give the same
    law: a causal model's needed positions never see the filler."""
    from constrain.specdec.pass_costs import PassCosts

    costs = PassCosts(max_positions=8)
    for n, seconds in {1: 1.0, 2: 3.0, 3: 3.0, 4: 1.5, 5: 1.6, 6: 9.0, 7: 9.0, 8: 9.0}.items():
        costs.observe(n, seconds)
        costs.observe(n, seconds)
    assert costs.padded(2) == 4
    params = PARAMS["t0.7-topk3-penalties"]
    target = ToyLM(salt=1)
    calls = []
    real_logits = target.logits
    target.logits = lambda ids, last: calls.append(last) or real_logits(ids, last)

    def run(rng):
        drafter, forced = drafter_for("model+forced", params, grammar)
        return outcome(speculative_decode(target, Matcher(grammar), PROMPT, params, rng=rng, max_new_tokens=3,
                                          drafter=drafter, forced=forced, controller=FixedGamma(1), pass_costs=costs))

    law = exact_law(run)
    reference = plain_law(ToyLM(salt=1), grammar, PROMPT, params, 3)
    assert 0.5 * sum(abs(law.get(k, 0.0) - reference.get(k, 0.0)) for k in set(law) | set(reference)) < TV_LIMIT
    assert 4 in calls  # some passes were padded
