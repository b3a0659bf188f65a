"""Prompt lookup over text: draft the continuation of the longest earlier echo of the output's end.

Token-level n-grams miss most echoes in structured output: a value copied from the prompt into a
JSON string is tokenized differently there (" Ada" in prose, "Ad" + "a" after a quote). Matching
bytes instead finds the echo whatever the tokens: the longest suffix of the context's bytes
(prompt and output) that occurs earlier is located; where the bytes that followed that occurrence
start on a token boundary of the context, the context's own tokens from there are drafted (the
model's spelling when the echo is of its own output), else those bytes are spelled with the
model's tokens (token_spelling.spell); the draft is cut where the grammar rejects it. A short
match of punctuation alone is no evidence (`":"` recurs at every key of a JSON object). Without a
match, the partial word at the end is looked up at earlier word starts (word_echo.py): the first
bytes of a copied value.
Deterministic (no q): the verifier draws from the target and accepts on a match.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any, Optional, Sequence

from constrain.matcher import Matcher

from .drafting import Draft
from .randomness import Randomness
from .token_spelling import as_encode, spell
from .value_end import ValueCloser, continues_name, phrase_end
from .word_echo import IS_WORD, word_echo


class TextLookupDrafter:
    """`encode`: the model's tokenizer (an object with .encode, or str -> ids; None: greedy
    longest match over the vocabulary). A match needs at least `min_match` bytes; suffixes are
    considered up to `max_match` bytes; the draft spells at most `max_bytes` following bytes.
    A match of punctuation alone (no letter, digit or non-ASCII byte) needs `min_punctuation_match`
    bytes. `word_starts`: without a match, look the partial word up at earlier word starts.
    `value_ends`: close a copied value where its phrase ends (value_end.py)."""

    kind = "lookup"

    def __init__(
        self, encode: Any = None, *, min_match: int = 3, max_match: int = 64, max_tokens: int = 10, max_bytes: int = 96,
        min_punctuation_match: int = 8, word_starts: bool = True, value_ends: bool = True,
    ) -> None:
        for name, value in (("min_match", min_match), ("max_match", max_match), ("max_tokens", max_tokens),
                            ("max_bytes", max_bytes), ("min_punctuation_match", min_punctuation_match)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if max_match < min_match:
            raise ValueError(f"max_match ({max_match}) must be >= min_match ({min_match})")
        self._encode = as_encode(encode)
        self.min_match, self.max_match = min_match, max_match
        self.max_tokens, self.max_bytes = max_tokens, max_bytes
        self.min_punctuation_match = min_punctuation_match
        self.word_starts = bool(word_starts)
        self.value_ends = bool(value_ends)
        self._closer = ValueCloser()
        self.memory: Any = None  # a SpellingMemory (set by the generation loop): the model's spellings
        self._ids: list[int] = []
        self._data = bytearray()
        self._starts: list[int] = []  # byte offset of each id's bytes in _data
        self._vocab: Any = None

    def reset(self) -> None:
        self._ids, self._data, self._starts = [], bytearray(), []

    def propose(self, context: Sequence[int], matcher: Matcher, max_tokens: int, rng: Optional[Randomness] = None) -> Draft:
        limit = min(int(max_tokens), self.max_tokens)
        if limit <= 0:
            return Draft([], None, 0)
        vocab = matcher.compiled.vocab
        data = self._context_bytes(context, vocab)
        start = self._echo(data)
        if start < 0 and self.word_starts:
            start = word_echo(data)
        if start < 0:
            return Draft([], None, 0)
        copied = bytes(data[start : start + self.max_bytes])
        k = bisect_left(self._starts, start)
        if k < len(self._ids) and self._starts[k] == start:  # on a token boundary: its own tokens
            tokens = []
            table = vocab.token_bytes
            used = 0
            for t in self._ids[k : k + limit]:
                used += len(table[t])
                if used > self.max_bytes:
                    break
                tokens.append(t)
        else:
            tokens = spell(vocab, copied, self._encode, limit)
        cut = matcher.validate_tokens(tokens)
        if self.value_ends:
            end = phrase_end(copied, continues_name(data, start))
            draft = self._close_value(tokens, cut, end, matcher, self._ids)
            return Draft(draft, None, 0, closing=max(0, len(draft) - limit))
        return Draft(tokens[:cut], None, 0)

    def _close_value(
        self, tokens: list[int], cut: int, end: int, matcher: Matcher, context: Sequence[int]
    ) -> list[int]:
        """The copied tokens up to the phrase's end `end` (a byte offset, -1: none) or the
        grammar's cut, and the token that closes the value there (it may be one past the drafter's
        limit); `tokens[:cut]` where neither is met or no closing byte forces a run."""
        compiled = matcher.compiled
        table = compiled.vocab.token_bytes
        used = kept = 0
        while kept < cut and (end < 0 or used + len(table[tokens[kept]]) <= end):
            used += len(table[tokens[kept]])
            kept += 1
        at_phrase_end = end >= 0 and used == end
        at_grammar_cut = 0 < kept == cut < len(tokens) and not at_phrase_end
        if not (at_phrase_end or at_grammar_cut):
            return tokens[:cut]
        state = matcher.state
        for t in tokens[:kept]:
            state = compiled.next_state(state, t)
        spelled = (context, self.memory.ids()) if self.memory is not None else (context,)
        closing = self._closer.closing_token(compiled, state, self._encode, spelled)
        return tokens[:cut] if closing is None else tokens[:kept] + [closing]

    def _context_bytes(self, context: Sequence[int], vocab: Any) -> bytearray:
        """The context's bytes, extended in place when the context extends the previous one."""
        ids = context if isinstance(context, list) else [int(t) for t in context]
        n = len(self._ids)
        if vocab is not self._vocab or len(ids) < n or ids[:n] != self._ids:
            self._vocab, self._ids, self._data, self._starts, n = vocab, [], bytearray(), [], 0
        table = vocab.token_bytes
        for t in ids[n:]:
            self._starts.append(len(self._data))
            self._data += table[t]
        self._ids = [int(t) for t in ids]
        return self._data

    def _echo(self, data: bytearray) -> int:
        """Where the bytes after the longest earlier occurrence of a suffix of `data` start, or
        -1. An occurrence of a suffix implies one of every shorter suffix, so the longest
        matching length is found by bisection."""
        end = len(data)

        def occurrence(length: int) -> int:
            return data.rfind(data[end - length :], 0, end - 1) if length <= end - 1 else -1

        lo, hi = self.min_match, min(self.max_match, end - 1)
        if hi < lo:
            return -1
        best = occurrence(lo)
        if best < 0:
            return -1
        best_len = lo
        while lo < hi:
            mid = (lo + hi + 1) // 2
            at = occurrence(mid)
            if at >= 0:
                lo, best, best_len = mid, at, mid
            else:
                hi = mid - 1
        if best_len < self.min_punctuation_match and not any(IS_WORD[b] for b in data[end - best_len :]):
            return -1  # (`":"` recurs at every key of a JSON object: it predicts no value)
        return best + best_len
