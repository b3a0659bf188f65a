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
some stack is inside a marked frame, the `(stack, ctx, items ctx)` triples, ctx holding per
marked frame (by depth) the keys used and the open key's bytes, items ctx that of
distinct_calls.py where the schema also has arrays of distinct items. Masks: the inner row
(cached per stacks; the variants are part of the stacks), minus the tokens that close a used
key or leave a key text with only used completions. Those are looked up by the key text they spell (key_masks.py);
the few tokens of other shapes that the row holds are stepped, as are those that close a key
and reach the object's `,` or `}` in one token (the variant changes inside them).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any, Iterable, Mapping, Optional, Sequence

import numpy as np

from .distinct_calls import DistinctCallsAutomaton
from .key_masks import KeyKills
from .marked_frames import DEAD, MarkedFrames
from .row_bits import token_ids
from .key_tokens import escape_pending, first_unescaped_quote, key_tokens
from .object_rules import ObjectRule
from .rule_variants import VariantRules
from .stack_index import StackTokenAutomaton

Ctx = tuple  # ((depth, used: frozenset[str], key: bytes | None), ...) bottom to top
_NONE: frozenset = frozenset()
_QUOTE, _BACKSLASH = 0x22, 0x5C
_MAX_KILLED_ROWS = 512
_MAX_MEMO = 100_000


class DistinctKeysAutomaton:
    """TokenAutomaton (see constrain/compiled.py) over a StackTokenAutomaton of VariantRules whose
    marked rules are any-order objects: `objects` maps each marked (base) rule id to (named keys,
    required keys, minProperties, maxProperties or None). `items`: a DistinctCallsAutomaton over
    the same inner automaton, whose arrays' items must differ too (uniqueItems): its context is
    carried beside the objects' and its masks are met."""

    def __init__(
        self,
        inner: StackTokenAutomaton,
        objects: Mapping[int, tuple[Sequence[str], Iterable[str], int, Optional[int]]],
        token_bytes: Sequence[bytes],
        special_ids: Iterable[int],
        items: Optional[DistinctCallsAutomaton] = None,
    ) -> None:
        if not isinstance(inner.rules, VariantRules):
            raise TypeError("DistinctKeysAutomaton needs a StackTokenAutomaton over VariantRules")
        if items is not None and items.inner is not inner:
            raise ValueError("the distinct items must be kept over the same automaton")
        self.inner = inner
        self.items = items
        self.sem = inner.semantics
        self.sem.merge = False  # (a context per stack: its marked frames' texts; merged frames would mix them)
        self.rules: VariantRules = inner.rules
        self._specs = dict(objects)
        self.marked = frozenset(v for v in range(self.rules.n_rules) if self.rules.base_of(v) in self._specs)
        self._token_bytes = token_bytes
        self.keys = key_tokens(token_bytes, frozenset(special_ids), inner.index.trie.n_words)
        self._objects: dict[int, ObjectRule] = {}
        self._killed_rows: OrderedDict[Any, np.ndarray] = OrderedDict()
        self._no_rows: dict[Any, np.ndarray] = {}  # (no state is cached here: see row_cache)
        self._marked_frames = MarkedFrames(self.marked)
        self._unusual_memo: dict[frozenset, tuple] = {}
        self._kills = KeyKills(self.sem, self.marked, self._object, self.keys, token_bytes)

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
        out = dict(self.items.stats() if self.items is not None else self.inner.stats())
        out["distinct_key_rows_cached"] = len(self._killed_rows)
        return out

    def advance(self, state: tuple, data: bytes) -> Optional[tuple]:
        stacks, pairs = state
        if pairs is None:
            items = self.items
            # a marked object starts with its `{`: none can open here; a marked array, unless
            # it is risky (see distinct_calls.py), is entered by stepping
            if b"{" not in data and (items is None or not items._risky(data)):
                nxt = self.inner.advance(stacks, data)
                if nxt is None:
                    return None
                if items is None or not any(items._marked_frames(s) for s in nxt):
                    return (nxt, None)
            pairs = frozenset((s, (), ()) for s in stacks)
        for b in data:
            pairs = self._step(pairs, b)
            if not pairs:
                return None
        stacks = frozenset(s for s, _, _ in pairs)
        if not any(ctx or ictx for _, ctx, ictx in pairs):
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
        items = self.items
        if items is not None and any(ictx for _, _, ictx in pairs):
            base = items.mask_row((stacks, frozenset((s, ictx) for s, _, ictx in pairs)))
        elif not killed and not added:
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
    def _step(self, pairs: frozenset, b: int) -> frozenset:
        sem, items = self.sem, self.items
        out = set()
        for s, ctx, ictx in pairs:
            for e in sem.closure(s)[0]:
                r = e[0]
                rows, classes = sem.tables(r)
                t = rows[e[1]][classes[b]]
                if t < 0:
                    continue
                nxt = self._next(ctx, e, (r, t, e[2], e[3]), b)
                if nxt is None:
                    continue
                if items is None:
                    out.add((*nxt, ()))
                else:
                    ictx2 = items._next_ctx(ictx, nxt[0], b)
                    if ictx2 is not DEAD:
                        out.add((*nxt, ictx2))
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
            self._kills.note(self._object(s2[0]), used, k)
            used = used | {k}
            comma, brace = self._object(s2[0]).flags(used)
            return ((self.rules.variant(self.rules.base_of(s2[0]), comma, brace), *s2[1:]), used, None)
        else:
            key = key + bytes((b,))
        obj = self._object(s2[0])
        if not obj.infinite[s2[1]] and not obj.unused_with_prefix(key, used):
            return None
        return (s2, used, key)

    # -- masks ---------------------------------------------------------------------------------
    def _unusual(self, stacks: frozenset, words: np.ndarray) -> tuple[list[int], list[int]]:
        """The `complex` tokens of the row and the `spanning` ones (key_tokens.py) whose reading
        from `stacks` touches a key, per stacks (the row is the stacks' own)."""
        hit = self._unusual_memo.get(stacks)
        if hit is None:
            touching = self._kills.touching
            complex_ = self.keys.complex_closing
            if any(self._object(f[0]).closed_prefixes for f in self._frames_of(stacks)):
                complex_ = complex_ | self.keys.complex  # (a key that opens there may end at a used prefix)
            hit = (touching(stacks, token_ids(words & complex_)), touching(stacks, self.keys.spanning))
            if len(self._unusual_memo) > _MAX_MEMO:
                self._unusual_memo.clear()
            self._unusual_memo[stacks] = hit
        return hit

    def _switches(self, state: tuple, t: int) -> bool:
        """May the `spanning` token t change its object's rule variant where it closes a key?
        (Told without stepping where a lone frame reads a key: the key it closes is its text so
        far and the token's bytes before the quote; else True.)"""
        pairs = state[1]
        if len(pairs) != 1:
            return True
        ((s, ctx, _),) = pairs
        if s[0] not in self.marked or not ctx or ctx[-1][0] != s[3]:
            return True
        _, used, key = ctx[-1]
        data = self._token_bytes[t]
        end = first_unescaped_quote(data, 0)
        if key is None or end is None or escape_pending(key):
            return True
        try:
            k = json.loads(b'"' + key + data[:end] + b'"')
        except ValueError:
            return True
        if k in used:
            return False  # refused at the quote already (key_masks.py)
        base = self.rules.base_of(s[0])
        return self.rules.variant(base, *self._object(s[0]).flags(used | {k})) != s[0]

    def _frames_of(self, stacks: frozenset) -> list[tuple]:
        """The marked frames of `stacks`."""
        out = []
        for f in stacks:
            while f is not None:
                if f[0] in self.marked:
                    out.append(f)
                f = f[2]
        return out

    def _corrections(self, state: tuple, words: np.ndarray) -> tuple[list[int], list[int]]:
        """(The tokens of the inner row `words` that advancing from `state` refuses, the tokens
        outside it that advancing accepts: `spanning` ones, see key_tokens.py)."""
        pairs = state[1]
        sure: set[int] = set()
        step: set[int] = set()
        if len(pairs) == 1:
            for s, ctx, _ in pairs:
                self._kills.pair(s, ctx, words, sure, step)
        else:  # (kills for one pair may be readable in another: step them all)
            for s, ctx, _ in pairs:
                self._kills.pair(s, ctx, words, step, step)
        complex_, spanning = self._unusual(state[0], words)
        step.update(complex_)
        step.update(t for t in spanning if self._switches(state, t))
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


def _closes(key: bytes) -> bool:
    """Does a `"` after the key text `key` close it (an even run of backslashes before it)?"""
    n = len(key)
    i = n
    while i and key[i - 1] == _BACKSLASH:
        i -= 1
    return (n - i) % 2 == 0
