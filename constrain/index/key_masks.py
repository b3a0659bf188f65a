"""Which tokens a used key refuses, for distinct_keys.py: found by the key text they spell.

Inside an any-order object (distinct_keys.py) with some keys used, the inner row allows tokens
that would close a used key again, or leave a key text that only used named keys complete.
This module finds them without stepping the row's tokens: for a frame that reads key text, the
tokens whose bytes before their closing quote finish a used key (`after` in key_tokens.py), and
the tokens that end at a prefix of a used named key that no unused one shares (unless a key
language goes on there: `infinite` in object_rules.py); for a frame where a key may open, the
same for tokens that open a key (`closed`, `opened`). Refusals found so are final where the
frame is the only reader of the token's first byte ("sure"); otherwise the automaton steps them.
Tokens these shapes do not describe are stepped too: see key_tokens.py.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from typing import Any, Callable

import numpy as np

from .row_bits import token_ids
from .key_tokens import KeyTokens, escape_pending
from .object_rules import ObjectRule, canonical

_NONE: frozenset = frozenset()
_QUOTE, _COMMA, _BACKSLASH = 0x22, 0x2C, 0x5C
_ENDS = b",}"
_FIRST_BYTES = b'", \t\n\r'  # what a token that opens a key where one may open begins with
_MAX_MEMO = 100_000
_MAX_USED_SETS = 256


class KeyKills:
    """The lookups above over one automaton's stack semantics `sem`, for its `marked` rules
    (`object_of(r)`: a marked rule's ObjectRule)."""

    def __init__(
        self, sem: Any, marked: frozenset, object_of: Callable[[int], ObjectRule], keys: KeyTokens, token_bytes: Any
    ) -> None:
        self.sem = sem
        self.marked = marked
        self._object = object_of
        self.keys = keys
        self._token_bytes = token_bytes
        self._used_memo: dict[tuple, tuple] = {}
        self._subtokens: dict[tuple[bytes, int], list] = {}
        self._opened: dict[bytes, list] = {}
        self._first_readers: dict[Any, bool] = {}
        self._touch_memo: dict[frozenset, dict[int, bool]] = {}
        self._spelled: dict[str, bytes] = {}
        self._fresh_memo: dict[tuple, tuple] = {}
        self._parents: dict[tuple, tuple] = {}

    def pair(self, s: tuple, ctx: tuple, words: np.ndarray, sure: set, step: set) -> None:
        """Add to `sure` the tokens that reading from stack `s` (its ctx) refuses at a key of a
        marked frame on top of its closure; to `step`, those that need stepping to tell."""
        if not any(used for _, used, _ in ctx):
            return
        by_depth = {d: (used, key) for d, used, key in ctx}
        tops = self.sem.closure(s)[0]
        for e in tops:
            if e[0] not in self.marked or e[1] == 0:
                continue
            used, key = by_depth.get(e[3], (_NONE, None))
            if not used:
                continue
            if key is None and not self._reads_key_start(e[0], e[1]):
                continue
            obj = self._object(e[0])
            facts = self._used_facts(obj, used)
            if key is not None:
                out = sure if len(tops) == 1 else step
                self._inside_key(e, obj, used, facts, key, words, out, step)
            else:
                out = sure if self._only_reader(s, e) else step
                self._before_key(e, obj, used, facts, words, out, step)

    def _inside_key(
        self, e: tuple, obj: ObjectRule, used: frozenset, facts: tuple, key: bytes, words: np.ndarray, out: set, step: set
    ) -> None:
        """Frame `e` reads the key text after `key`: tokens that close it as a used key, or end
        it where only used keys could complete it."""
        every, named, others, dead = facts
        if others:
            step.update(token_ids(words & self.keys.escaped))  # they may spell a used key otherwise
        if not key:
            out.update(self._fresh(obj, used, facts)[0])
            return
        after = self.keys.after
        if escape_pending(key):
            step.update(token_ids(words & self.keys.quotes))  # (rare: a token completes the escape)
        else:
            for spelled in _with_prefix(every, key):
                out.update(after.get(spelled[len(key):], ()))
            if others and _BACKSLASH in key:  # spelled otherwise than canonically so far
                try:
                    text = json.loads(b'"' + key + b'"')
                except ValueError:  # (ends inside a character)
                    step.update(token_ids(words & self.keys.quotes))
                else:
                    for k in _with_prefix(others, text):
                        out.update(after.get(self._canonical(k[len(text) :]), ()))
        if not obj.closed_prefixes:
            return
        start = len(key)
        for spelled in _with_prefix(named, key):
            for j, ids in self._sub_tokens(spelled, start):
                if self._dead(obj, used, spelled[:j], dead) and obj.prefix_closed(spelled[:j]):
                    out.update(ids)

    def _before_key(
        self, e: tuple, obj: ObjectRule, used: frozenset, facts: tuple, words: np.ndarray, out: set, step: set
    ) -> None:
        """Frame `e` may open a key next: tokens that open and close a used key, or open one
        and stop where only used keys could complete it."""
        if facts[2]:
            step.update(token_ids(words & self.keys.escaped))
        out.update(self._fresh(obj, used, facts)[1])

    def note(self, obj: ObjectRule, used: frozenset, key: str) -> None:
        """`key` was just added to `used`: _fresh may then extend the earlier set's lists."""
        if len(self._parents) > _MAX_USED_SETS:
            self._parents.clear()
        self._parents[(id(obj), used | {key})] = (used, key)

    def _fresh(self, obj: ObjectRule, used: frozenset, facts: tuple) -> tuple[list[int], list[int]]:
        """(the tokens refused right after a key's opening quote, those refused where a key may
        open), per object and used set: the tokens that close a used key, or stop at a prefix
        that only used named keys begin with. Both only grow with the used set, and what a key
        adds is its own closing and its own prefixes (no used key is the last to begin with
        a prefix of another), so they extend the lists of the set before it when known."""
        memo_key = (id(obj), used)
        hit = self._fresh_memo.get(memo_key)
        if hit is not None:
            return hit
        parent = self._parents.get(memo_key)
        before = self._fresh_memo.get((id(obj), parent[0])) if parent is not None else None
        if before is not None:
            inside, opening = list(before[0]), list(before[1])
            new = [parent[1]]
        else:
            inside, opening = [], []
            new = list(used)
        after, closed, dead = self.keys.after, self.keys.closed, facts[3]
        for k in new:
            spelled = self._canonical(k)
            inside += after.get(spelled, ())
            opening += closed.get(spelled, ())
            if spelled not in obj.decoded or not obj.closed_prefixes:
                continue
            for j, ids in self._sub_tokens(spelled, 0):
                if self._dead(obj, used, spelled[:j], dead) and obj.prefix_closed(spelled[:j]):
                    inside += ids
            for j, ids in self._opened_prefixes(spelled):
                if self._dead(obj, used, spelled[:j], dead) and obj.prefix_closed(spelled[:j]):
                    opening += ids
        hit = (inside, opening)
        if len(self._fresh_memo) > _MAX_USED_SETS:
            self._fresh_memo.clear()
        self._fresh_memo[memo_key] = hit
        return hit

    def _used_facts(self, obj: ObjectRule, used: frozenset) -> tuple:
        """(canonical spellings of the used keys, sorted; those of named keys; the other keys
        used, sorted; a dict filled on demand by _dead), per object and used set."""
        memo_key = (id(obj), used)
        hit = self._used_memo.get(memo_key)
        if hit is not None:
            return hit
        every = sorted(self._canonical(k) for k in used)
        decoded = obj.decoded
        named = [s for s in every if s in decoded]
        others = sorted(k for k in used if self._canonical(k) not in decoded)
        hit = (every, named, others, {})
        if len(self._used_memo) > _MAX_USED_SETS:
            self._used_memo.clear()
        self._used_memo[memo_key] = hit
        return hit

    @staticmethod
    def _dead(obj: ObjectRule, used: frozenset, prefix: bytes, known: dict) -> bool:
        """Do only used named keys begin with `prefix`? (remembered in `known`, per used set)"""
        hit = known.get(prefix)
        if hit is None:
            hit = known[prefix] = not obj.unused_with_prefix(prefix, used)
        return hit

    def _canonical(self, key: str) -> bytes:
        hit = self._spelled.get(key)
        if hit is None:
            if len(self._spelled) > _MAX_MEMO:
                self._spelled.clear()
            hit = self._spelled[key] = canonical(key)
        return hit

    def _sub_tokens(self, spelled: bytes, start: int) -> list:
        """[(j, token ids)] for the tokens whose bytes are spelled[start:j]."""
        memo_key = (spelled, start)
        hit = self._subtokens.get(memo_key)
        if hit is None:
            by_bytes = self.keys.by_bytes
            end = min(len(spelled), start + self.keys.max_len)
            hit = [(j, by_bytes[spelled[start:j]]) for j in range(start + 1, end + 1) if spelled[start:j] in by_bytes]
            if len(self._subtokens) > _MAX_MEMO:
                self._subtokens.clear()
            self._subtokens[memo_key] = hit
        return hit

    def _opened_prefixes(self, spelled: bytes) -> list:
        """[(j, token ids)] for the tokens that open a key and stop after spelled[:j]."""
        hit = self._opened.get(spelled)
        if hit is None:
            opened = self.keys.opened
            hit = [(j, opened[spelled[:j]]) for j in range(1, len(spelled) + 1) if spelled[:j] in opened]
            if len(self._opened) > _MAX_MEMO:
                self._opened.clear()
            self._opened[spelled] = hit
        return hit

    def _reads_key_start(self, r: int, q: int) -> bool:
        rows, classes = self.sem.tables(r)
        return rows[q][classes[_QUOTE]] >= 0 or rows[q][classes[_COMMA]] >= 0

    def _only_reader(self, s: tuple, e: tuple) -> bool:
        """Is `e` the only top of `s`'s closure that can read a byte a key-opening token
        begins with? (Then such a token's reading is e's, and a refusal there is final.)"""
        memo_key = (s, e)
        hit = self._first_readers.get(memo_key)
        if hit is None:
            sem = self.sem
            hit = True
            for other in sem.closure(s)[0]:
                if other != e:
                    rows, classes = sem.tables(other[0])
                    if any(rows[other[1]][classes[b]] >= 0 for b in _FIRST_BYTES):
                        hit = False
                        break
            if len(self._first_readers) > _MAX_MEMO:
                self._first_readers.clear()
            self._first_readers[memo_key] = hit
        return hit

    def touching(self, stacks: frozenset, ids: list[int]) -> list[int]:
        """The tokens of `ids` whose reading from `stacks` has a marked frame read a `"` (open
        or close a key) and then ends, or fails only at a `,` or `}` (which a rule variant
        switched inside the token may allow): only those can meet a used key or a variant
        change. Found by stepping the inner stacks alone, and remembered per stacks (an array's
        string items recur at every character)."""
        if not ids:
            return ids
        memo = self._touch_memo.get(stacks)
        if memo is None:
            if len(self._touch_memo) > _MAX_USED_SETS:
                self._touch_memo.clear()
            memo = self._touch_memo[stacks] = {}
        todo = [t for t in ids if t not in memo]
        if todo:
            step, marked, token_bytes = self.sem.step, self.marked, self._token_bytes
            for t in todo:
                cur, quote = stacks, False
                for b in token_bytes[t]:
                    nxt = step(cur, b)
                    if not nxt:
                        quote = quote and b in _ENDS
                        break
                    cur = nxt
                    if b == _QUOTE and not quote and any(s[0] in marked for s in cur):
                        quote = True
                memo[t] = quote
        return [t for t in ids if memo[t]]

def _with_prefix(spelled: list, prefix: Any) -> list:
    """The items of the sorted list `spelled` (bytes or str) that begin with `prefix`."""
    if not prefix:
        return spelled
    i = bisect_left(spelled, prefix)
    j = i
    while j < len(spelled) and spelled[j].startswith(prefix):
        j += 1
    return spelled[i:j]
