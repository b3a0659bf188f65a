"""Distinct keys: an object whose keys come in any order, each key at most once, kept around the
stack automaton.

An object of many properties in any order is not regular in a small way (the set of keys used
is 2^n states), so its rule (object_rules.py) reads any sequence of members and the matcher
keeps, per frame of such a *marked* rule, the keys used so far and the open key's bytes. A key
is known at its closing quote (decoded: `"\\u0061"` is `"a"`); it must not be a used one. Counts
and required keys are kept by the frame's rule *variant* (rule_variants.py): once no key may
follow, the object's `,` is gone from its DFA; while a required key is missing (or below
minProperties), its `}` is. No dead ends: a key text whose every completion is a used key is
refused at once (where only named keys can complete it: `infinite` in object_rules.py says when
a key language such as additionalProperties still can), a comma where no key may follow.

A state is `(stacks, pairs)`, as in distinct_calls.py: the inner automaton's stacks, and where
some stack is inside a marked frame, the `(stack, ctx)` pairs, ctx holding per marked frame (by
depth) the keys used and the open key's bytes. Masks: the inner row (cached per stacks; the
variants are part of the stacks), minus the tokens that close a used key or leave a key text
with only used completions. Those are looked up by the key text they spell (key_tokens.py);
the few tokens of other shapes that the row holds are stepped.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections import OrderedDict
from typing import Any, Iterable, Mapping, Optional, Sequence

import numpy as np

from .distinct_calls import _ids
from .key_tokens import escape_pending, key_tokens
from .object_rules import ObjectRule, canonical
from .rule_variants import VariantRules
from .stack_index import StackTokenAutomaton

Ctx = tuple  # ((depth, used: frozenset[str], key: bytes | None), ...) bottom to top
_NONE: frozenset = frozenset()
_QUOTE, _COMMA, _BACKSLASH = 0x22, 0x2C, 0x5C
_FIRST_BYTES = b'", \t\n\r'  # what a token that opens a key where one may open begins with
_MAX_KILLED_ROWS = 512
_MAX_MEMO = 100_000
_MAX_USED_SETS = 256


class DistinctKeysAutomaton:
    """TokenAutomaton (see constrain/compiled.py) over a StackTokenAutomaton of VariantRules whose
    marked rules are any-order objects: `objects` maps each marked (base) rule id to (named keys,
    required keys, minProperties, maxProperties or None)."""

    def __init__(
        self,
        inner: StackTokenAutomaton,
        objects: Mapping[int, tuple[Sequence[str], Iterable[str], int, Optional[int]]],
        token_bytes: Sequence[bytes],
        special_ids: Iterable[int],
    ) -> None:
        if not isinstance(inner.rules, VariantRules):
            raise TypeError("DistinctKeysAutomaton needs a StackTokenAutomaton over VariantRules")
        self.inner = inner
        self.sem = inner.semantics
        self.rules: VariantRules = inner.rules
        self._specs = dict(objects)
        self.marked = frozenset(v for v in range(self.rules.n_rules) if self.rules.base_of(v) in self._specs)
        self._token_bytes = token_bytes
        self.keys = key_tokens(token_bytes, frozenset(special_ids), inner.index.trie.n_words)
        self._objects: dict[int, ObjectRule] = {}
        self._killed_rows: OrderedDict[Any, np.ndarray] = OrderedDict()
        self._no_rows: dict[Any, np.ndarray] = {}  # (no state is cached here: see row_cache)
        self._frames_memo: dict[Any, tuple] = {}
        self._used_memo: dict[tuple, tuple] = {}
        self._subtokens: dict[tuple[bytes, int], list] = {}
        self._opened: dict[bytes, list] = {}
        self._first_readers: dict[Any, bool] = {}
        self._touch_memo: dict[frozenset, dict[int, bool]] = {}
        self._spelled: dict[str, bytes] = {}

    def _object(self, r: int) -> ObjectRule:
        base = self.rules.base_of(r)
        hit = self._objects.get(base)
        if hit is None:
            named, required, lo, hi = self._specs[base]
            rule = self.rules.base.rule(base)
            hit = self._objects.setdefault(base, ObjectRule(rule.dfa, rule.calls, named, required, lo, hi))
        return hit

    # -- TokenAutomaton ------------------------------------------------------------------------
    def initial_state(self) -> tuple:
        return (self.inner.initial_state(), None)

    def is_accepting(self, state: tuple) -> bool:
        return self.inner.is_accepting(state[0])

    def eos_row(self) -> np.ndarray:
        return self.inner.eos_row()

    def row_cache(self) -> dict[Any, np.ndarray]:
        # States differ in their used keys: mask_row answers from the inner cache (per stacks)
        # and a small cache of rows with kills.
        return self._no_rows

    def stats(self) -> dict[str, int]:
        out = dict(self.inner.stats())
        out["distinct_key_rows_cached"] = len(self._killed_rows)
        return out

    def advance(self, state: tuple, data: bytes) -> Optional[tuple]:
        stacks, pairs = state
        if pairs is None:
            if b"{" not in data:  # a marked object starts with its `{`: none can open here
                nxt = self.inner.advance(stacks, data)
                return None if nxt is None else (nxt, None)
            pairs = frozenset((s, ()) for s in stacks)
        for b in data:
            pairs = self._step(pairs, b)
            if not pairs:
                return None
        stacks = frozenset(s for s, _ in pairs)
        if not any(ctx for _, ctx in pairs):
            return (stacks, None)
        return (stacks, pairs)

    def forced_bytes(self, state: tuple) -> bytes:
        out = bytearray()
        for b in self.inner.forced_bytes(state[0]):
            nxt = self.advance(state, bytes([b]))
            if nxt is None:
                break
            out.append(b)
            state = nxt
        return bytes(out)

    def mask_row(self, state: tuple) -> np.ndarray:
        stacks, pairs = state
        base = self.inner.mask_row(stacks)
        if pairs is None:
            return base
        hit = self._killed_rows.get(state)
        if hit is not None:
            return hit
        killed, added = self._corrections(state, base.view(np.uint32))
        if not killed and not added:
            return base
        words = base.view(np.uint32).copy()
        for t in killed:
            words[t >> 5] &= ~np.uint32(1 << (t & 31))
        for t in added:
            words[t >> 5] |= np.uint32(1 << (t & 31))
        row = words.view(np.int32)
        row.setflags(write=False)
        self._killed_rows[state] = row
        if len(self._killed_rows) > _MAX_KILLED_ROWS:
            try:
                self._killed_rows.popitem(last=False)
            except KeyError:  # another thread emptied it first
                pass
        return row

    # -- stepping ------------------------------------------------------------------------------
    def _marked_frames(self, stack: Any) -> tuple[tuple[int, bool], ...]:
        """(depth, is the top) of each marked frame in `stack`, bottom to top (memoized)."""
        hit = self._frames_memo.get(stack)
        if hit is not None:
            return hit
        out = []
        f = stack
        top = True
        marked = self.marked
        while f is not None:
            if f[0] in marked:
                out.append((f[3], top))
            f = f[2]
            top = False
        out.reverse()
        if len(self._frames_memo) > _MAX_MEMO:
            self._frames_memo.clear()
        hit = self._frames_memo[stack] = tuple(out)
        return hit

    def _step(self, pairs: frozenset, b: int) -> frozenset:
        sem = self.sem
        out = set()
        for s, ctx in pairs:
            for e in sem.closure(s)[0]:
                r = e[0]
                rows, classes = sem.tables(r)
                t = rows[e[1]][classes[b]]
                if t < 0:
                    continue
                nxt = self._next(ctx, e, (r, t, e[2], e[3]), b)
                if nxt is not None:
                    out.add(nxt)
        return frozenset(out)

    def _next(self, ctx: Ctx, e: tuple, s2: tuple, b: int) -> Optional[tuple]:
        """(stack, ctx) after `e` (a top of the closure) read `b` into `s2` (None: refused)."""
        frames = self._marked_frames(s2)
        if not frames:
            return (s2, ())
        old = {d: (used, key) for d, used, key in ctx}
        new = []
        for d, top in frames:
            used, key = old.get(d, (_NONE, None))
            if top:
                if e[1] == 0:  # the object reads its `{`: a new one
                    used, key = _NONE, None
                else:
                    got = self._read(s2, used, key, b)
                    if got is None:
                        return None
                    s2, used, key = got
            new.append((d, used, key))
        return (s2, tuple(new))

    def _read(self, s2: tuple, used: frozenset, key: Optional[bytes], b: int) -> Optional[tuple]:
        """The marked frame on top of `s2` read `b`: its (frame, used, key), or None."""
        if key is None:
            if b != _QUOTE:
                return (s2, used, None)
            key = b""
        elif b == _QUOTE and _closes(key):
            k = json.loads(b'"' + key + b'"')
            if k in used:
                return None
            used = used | {k}
            comma, brace = self._object(s2[0]).flags(used)
            return ((self.rules.variant(self.rules.base_of(s2[0]), comma, brace), *s2[1:]), used, None)
        else:
            key = key + bytes((b,))
        obj = self._object(s2[0])
        if not obj.infinite[s2[1]] and not self._named_alive(obj, key, used):
            return None
        return (s2, used, key)

    @staticmethod
    def _named_alive(obj: ObjectRule, prefix: bytes, used: frozenset) -> bool:
        """Does an unused named key begin with `prefix`?"""
        named, decoded = obj.named, obj.decoded
        for i in range(bisect_left(named, prefix), len(named)):
            s = named[i]
            if not s.startswith(prefix):
                return False
            if decoded[s] not in used:
                return True
        return False

    # -- masks ---------------------------------------------------------------------------------
    def _corrections(self, state: tuple, words: np.ndarray) -> tuple[list[int], list[int]]:
        """(The tokens of the inner row `words` that advancing from `state` refuses, the tokens
        outside it that advancing accepts: `spanning` ones, see key_tokens.py)."""
        pairs = state[1]
        sure: set[int] = set()
        step: set[int] = set()
        if len(pairs) == 1:
            for s, ctx in pairs:
                self._pair_kills(s, ctx, words, sure, step)
        else:  # (kills for one pair may be readable in another: step them all)
            for s, ctx in pairs:
                self._pair_kills(s, ctx, words, step, step)
        step.update(self._touching(state[0], _ids(words & self.keys.complex)))
        spanning = self._touching(state[0], self.keys.spanning)
        step.update(spanning)
        step -= sure
        killed = list(sure)
        added = []
        token_bytes = self._token_bytes
        for t in step:
            inside = bool(words[t >> 5] >> np.uint32(t & 31) & 1)
            if inside or t in spanning:
                ok = self.advance(state, token_bytes[t]) is not None
                if inside and not ok:
                    killed.append(t)
                elif ok and not inside:
                    added.append(t)
        return killed, added

    def _touching(self, stacks: frozenset, ids: list[int]) -> list[int]:
        """The tokens of `ids` whose reading from `stacks` has a marked frame read a `"` (open
        or close a key) before it ends or fails: only those can meet a used key or a variant
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
                cur, hit = stacks, False
                for b in token_bytes[t]:
                    cur = step(cur, b)
                    if not cur:
                        break
                    if b == _QUOTE and any(s[0] in marked for s in cur):
                        hit = True
                        break
                memo[t] = hit
        return [t for t in ids if memo[t]]

    def _pair_kills(self, s: tuple, ctx: Ctx, words: np.ndarray, sure: set, step: set) -> None:
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
            obj = self._object(e[0])
            facts = self._used_facts(obj, used)
            if key is not None:
                out = sure if len(tops) == 1 else step
                self._inside_key(e, obj, facts, key, words, out, step)
            elif self._reads_key_start(e[0], e[1]):
                out = sure if self._only_reader(s, e) else step
                self._before_key(e, obj, facts, words, out, step)

    def _inside_key(self, e: tuple, obj: ObjectRule, facts: tuple, key: bytes, words: np.ndarray, out: set, step: set) -> None:
        """Frame `e` reads the key text after `key`: tokens that close it as a used key, or end
        it where only used keys could complete it."""
        every, named, others, dead_from = facts
        after = self.keys.after
        if escape_pending(key):
            step.update(_ids(words & self.keys.quotes))  # (rare: a token completes the escape)
        else:
            for spelled in _with_prefix(every, key):
                out.update(after.get(spelled[len(key):], ()))
            if others and _BACKSLASH in key:  # spelled otherwise than canonically so far
                try:
                    text = json.loads(b'"' + key + b'"')
                except ValueError:  # (ends inside a character)
                    step.update(_ids(words & self.keys.quotes))
                else:
                    for k in _with_prefix(others, text):
                        out.update(after.get(self._canonical(k[len(text) :]), ()))
        if others:
            step.update(_ids(words & self.keys.escaped))  # they may spell a used key otherwise
        rows, classes = self.sem.tables(e[0])
        infinite = obj.infinite if obj.has_language else None
        start = len(key)
        for spelled in _with_prefix(named, key):
            first_dead = dead_from[spelled]
            for j, ids in self._sub_tokens(spelled, start):
                if j >= first_dead and (infinite is None or not _infinite_at(infinite, rows, classes, e[1], spelled[start:j])):
                    out.update(ids)

    def _before_key(self, e: tuple, obj: ObjectRule, facts: tuple, words: np.ndarray, out: set, step: set) -> None:
        """Frame `e` may open a key next: tokens that open and close a used key, or open one
        and stop where only used keys could complete it."""
        every, named, others, dead_from = facts
        closed = self.keys.closed
        for spelled in every:
            out.update(closed.get(spelled, ()))
        if others:
            step.update(_ids(words & self.keys.escaped))
        rows, classes = self.sem.tables(e[0])
        token_bytes = self._token_bytes
        for spelled in named:
            first_dead = dead_from[spelled]
            for j, ids in self._opened_prefixes(spelled):
                if j < first_dead:
                    continue
                if not obj.has_language:
                    out.update(ids)
                    continue
                for t in ids:
                    q = _walk(rows, classes, e[1], token_bytes[t])
                    if q >= 0 and not obj.infinite[q]:
                        out.add(t)

    def _used_facts(self, obj: ObjectRule, used: frozenset) -> tuple:
        """(canonical spellings of the used keys, sorted; those of named keys; the other keys
        used, sorted; per used named key, the shortest length of its prefixes that only used named keys
        begin with), per object and used set."""
        memo_key = (id(obj), used)
        hit = self._used_memo.get(memo_key)
        if hit is not None:
            return hit
        every = sorted(self._canonical(k) for k in used)
        decoded = obj.decoded
        named = [s for s in every if s in decoded]
        all_named = obj.named
        dead_from = {}
        for s in named:
            i = bisect_left(all_named, s)
            longest = 0
            for step in (-1, 1):  # the nearest unused named keys in order share the most
                j = i + step
                while 0 <= j < len(all_named) and decoded[all_named[j]] in used:
                    j += step
                if 0 <= j < len(all_named):
                    longest = max(longest, _common(s, all_named[j]))
            dead_from[s] = longest + 1
        others = sorted(k for k in used if self._canonical(k) not in decoded)
        hit = (every, named, others, dead_from)
        if len(self._used_memo) > _MAX_USED_SETS:
            self._used_memo.clear()
        self._used_memo[memo_key] = hit
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


def _closes(key: bytes) -> bool:
    """Does a `"` after the key text `key` close it (an even run of backslashes before it)?"""
    n = len(key)
    i = n
    while i and key[i - 1] == _BACKSLASH:
        i -= 1
    return (n - i) % 2 == 0


def _with_prefix(spelled: list, prefix: Any) -> list:
    """The items of the sorted list `spelled` (bytes or str) that begin with `prefix`."""
    if not prefix:
        return spelled
    i = bisect_left(spelled, prefix)
    j = i
    while j < len(spelled) and spelled[j].startswith(prefix):
        j += 1
    return spelled[i:j]


def _common(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _infinite_at(infinite: list, rows: list, classes: list, q: int, data: bytes) -> bool:
    """Is the state after `data` from q one of `infinite` (a refused walk counts as such: the
    token is not in the row anyway)?"""
    q = _walk(rows, classes, q, data)
    return q < 0 or infinite[q]


def _walk(rows: list, classes: list, q: int, data: bytes) -> int:
    for b in data:
        q = rows[q][classes[b]]
        if q < 0:
            return -1
    return q
