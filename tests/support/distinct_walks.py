"""Masked random walks over objects whose keys must stay distinct (tests/index/test_distinct_keys.py),
with masks checked against the automaton's own `advance` along the way.

On pytest's `pythonpath` (pyproject.toml).
"""

from __future__ import annotations

import random

import numpy as np

from constrain import Matcher


def bits(row: np.ndarray) -> set[int]:
    return set(row_ids(row).tolist())


def row_ids(row: np.ndarray) -> np.ndarray:
    """The token ids a mask row allows, ascending."""
    return np.flatnonzero(np.unpackbits(row.view(np.uint8), bitorder="little"))


def check_mask_against_advance(m: Matcher, vocab, rng: random.Random, quote_ids: list[int]) -> None:
    """Allowed exactly when advancing succeeds: every token of the inner row with a quote
    (those that open or close keys), and samples of the inner row and of the vocabulary."""
    compiled = m.compiled
    state = m._history[-1]
    allowed = set(m.allowed_token_ids().tolist())
    inner_ids = row_ids(compiled.automaton.inner.mask_row(state[0]))
    inner = set(inner_ids.tolist())
    eos = set(vocab.eos_token_ids)
    assert allowed - inner - eos <= set(compiled.automaton.keys.spanning)  # (a key then `}` in one token)
    sample = (set(quote_ids) & inner) | set(rng.sample(inner_ids.tolist(), min(150, len(inner))))  # (ascending, as sorted(inner))
    sample |= set(rng.sample(range(len(vocab.token_bytes)), 50))
    for t in sample:
        if t in eos or t in vocab.special_ids:
            continue
        assert (compiled.next_state(state, t) is not None) == (t in allowed), (vocab.token_bytes[t], state[0])


class _Kinds:
    """Per token of a vocabulary: does it hold `,` or `}`; a `"` or `:`; is it short."""

    def __init__(self, vocab) -> None:
        data = vocab.token_bytes
        self.ending = np.array([bool(set(d) & set(b",}")) for d in data])
        self.keyish = np.array([bool(set(d) & set(b'":')) for d in data])
        self.short = np.array([0 < len(d) <= 3 for d in data])
        self.text = np.array([t not in vocab.special_ids and t not in vocab.eos_token_ids for t in range(len(data))])


_KINDS: dict[int, _Kinds] = {}


def keyed_walk(grammar, vocab, rng: random.Random, steps: int, check_every: int, quote_ids: list[int]) -> tuple[bool, str]:
    """A random masked walk that prefers tokens seen before (to provoke repeated keys) and,
    after a while, tokens that end members: (did it end, the text)."""
    kinds = _KINDS.get(id(vocab)) or _KINDS.setdefault(id(vocab), _Kinds(vocab))
    m = Matcher(grammar)
    out: list[int] = []
    seen: set[int] = set()
    for step in range(steps):
        allowed = m.allowed_token_ids()
        assert allowed.size, vocab.decode(out)
        if check_every and step % check_every == 0:
            check_mask_against_advance(m, vocab, rng, quote_ids)
        choices = allowed[kinds.text[allowed]]
        if m.is_accepting() and (rng.random() < 0.7 or not choices.size):
            return True, vocab.decode(out).decode("utf-8")
        r = rng.random()
        pick = None
        if step > steps // 3 and r < 0.5:
            pick = choices[kinds.ending[choices]]
        elif seen and r < 0.5:
            pick = choices[np.isin(choices, np.fromiter(seen, dtype=np.int64))]  # (ascending, as choices)
        elif r < 0.8:
            pick = choices[kinds.keyish[choices]]
        if pick is None or not pick.size:
            pick = choices[kinds.short[choices]]
            if not pick.size:
                pick = choices
        tid = int(pick[rng.randrange(pick.size)])
        assert m.accept_token(tid)
        out.append(tid)
        seen.add(tid)
    return m.is_accepting(), vocab.decode(out).decode("utf-8", "replace")
