"""Toy models and an exact-law enumerator for the speculative-decoding tests.

A toy language model's logits are a deterministic function of the whole prefix (a seeded normal
draw per prefix), over a vocabulary of a few tokens with a real Vocabulary and a compiled grammar.
`exact_law(run)` executes `run(rng)` once per path of random choices (an `EnumeratingRandomness`
replays a script of choices and records the alternatives at each new choice point), so the law
it returns is the law of the code that ran, to float64 rounding.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable, Hashable

import numpy as np
import torch

from constrain import Compiler, Matcher, Vocabulary
from constrain.kernels import allocate_token_bitmask, probabilities

TOKENS = [b"a", b"b", b"c", b"ab", b"ca", b"</s>"]
EOS = 5


def toy_vocab() -> Vocabulary:
    return Vocabulary(TOKENS, special_ids=[EOS], eos_token_ids=[EOS], name="toy")


class ToyLM:
    """logits(ids, last): row j is the logit vector after ids[:len(ids) - last + j + 1], a normal
    draw seeded by that prefix and `salt` (scaled by `scale`)."""

    def __init__(self, salt: int, width: int = len(TOKENS), scale: float = 1.5) -> None:
        self.salt, self.width, self.scale = salt, width, scale
        self.calls = 0

    def row(self, prefix: tuple[int, ...]) -> torch.Tensor:
        seed = abs(hash((self.salt,) + prefix)) % (2**32)
        return torch.from_numpy(np.random.default_rng(seed).normal(size=self.width) * self.scale).to(torch.float32)

    def logits(self, ids, last: int = 1) -> torch.Tensor:
        self.calls += 1
        ids = tuple(int(t) for t in ids)
        n = len(ids)
        return torch.stack([self.row(ids[: n - last + j + 1]) for j in range(last)])


class EnumeratingRandomness:
    """Replays `script`; at each choice past it takes the first outcome and records the others.
    `prob` is the probability of the path taken (float64)."""

    def __init__(self, script: list[Any]) -> None:
        self.script = script
        self.taken: list[Any] = []
        self.alternatives: list[list[Any]] = []
        self.prob = 1.0

    def _choose(self, options: list[tuple[Any, float]]) -> Any:
        depth = len(self.taken)
        if depth < len(self.script):
            outcome = self.script[depth]
            weight = dict(options)[outcome]
            self.alternatives.append([])
        else:
            outcome, weight = options[0]
            self.alternatives.append([o for o, _ in options[1:]])
        self.taken.append(outcome)
        self.prob *= weight
        return outcome

    def categorical(self, probs: Any) -> int:
        p = probs.to(torch.float64)
        p = p / p.sum()
        return self._choose([(int(i), float(p[i])) for i in torch.nonzero(p > 0).flatten()])

    def bernoulli(self, prob: float) -> bool:
        prob = min(1.0, max(0.0, float(prob)))
        return self._choose([(o, w) for o, w in ((True, prob), (False, 1.0 - prob)) if w > 0])


def exact_law(run: Callable[[Any], Hashable], max_paths: int = 200_000) -> dict[Hashable, float]:
    law: dict[Hashable, float] = defaultdict(float)
    stack: list[list[Any]] = [[]]
    paths = 0
    while stack:
        script = stack.pop()
        rng = EnumeratingRandomness(script)
        law[run(rng)] += rng.prob
        paths += 1
        if paths > max_paths:
            raise RuntimeError(f"more than {max_paths} random paths")
        for depth in range(len(script), len(rng.taken)):
            for alt in rng.alternatives[depth]:
                stack.append(rng.taken[:depth] + [alt])
    return dict(law)


def plain_law(target: ToyLM, grammar, prompt: list[int], params, max_new_tokens: int) -> dict[Hashable, float]:
    """The law of plain constrained sampling (one token per step from `probabilities`), outcomes
    keyed like `outcome`: (tokens, ended by EOS)."""
    law: dict[Hashable, float] = defaultdict(float)
    bitmask = allocate_token_bitmask(1, grammar.vocab.logits_width)

    def walk(matcher: Matcher, out: list[int], prob: float) -> None:
        if matcher.must_terminate() or len(out) >= max_new_tokens:
            law[(tuple(out), False)] += prob
            return
        matcher.fill_next_token_bitmask(bitmask, 0)
        p = probabilities(target.logits(prompt + out, 1)[-1], params, bitmask=bitmask[0], history=[out])
        p = p.to(torch.float64) / p.to(torch.float64).sum()
        for t in torch.nonzero(p > 0).flatten().tolist():
            child = matcher.fork()
            assert child.accept_token(t)
            if child.is_terminated():
                law[(tuple(out), True)] += prob * float(p[t])
            else:
                walk(child, out + [t], prob * float(p[t]))

    walk(Matcher(grammar), [], 1.0)
    return dict(law)


def outcome(result) -> tuple[tuple[int, ...], bool]:
    return (tuple(result.tokens), result.stop_reason == "eos")


def total_variation(a: dict, b: dict) -> float:
    return 0.5 * sum(abs(a.get(k, 0.0) - b.get(k, 0.0)) for k in set(a) | set(b))


class FixedGamma:
    """A controller that always drafts `gamma` tokens (the tests pin γ)."""

    def __init__(self, gamma: int) -> None:
        self._gamma = gamma

    def gamma(self) -> int:
        return self._gamma

    def observe(self, *args, **kwargs) -> None:
        pass

    def observe_costs(self, *args, **kwargs) -> None:
        pass


def toy_grammar(pattern: str):
    return Compiler(toy_vocab()).compile_regex(pattern)
