"""Distinct items: within one frame of a marked rule, the texts of its calls must differ.

JSON Schema's `uniqueItems` over an open domain (any strings, objects, numbers) is not
context-free, so it cannot live in the rules. It lives here, around the stack automaton: a
*marked* rule (an array) calls only its items; the bytes read while an item's frame sits above
the array's frame are the item's text; when the item's value is settled its key (e.g. the JSON
value, where 1 == 1.0) must differ from the keys of the array's earlier items.

A value is settled when its frame pops (a number ends at the `,` or `]` after it) or as soon as
nothing inside it can read another byte (a string at its closing quote, an object at its `}`):
checking there, not only at the pop, keeps a duplicate from leading into a dead end where every
continuation would be refused.

A state is `(stacks, pairs)`: the inner automaton's set of stacks, and where some stack is inside
a marked frame, the set of `(stack, ctx)` pairs, ctx holding per marked frame (by depth) the keys
so far and the open item's bytes. Masks: the inner mask (cached per stacks), minus the tokens
that would settle a duplicate. Those are found by stepping only *candidate* tokens: ones with a
byte that can settle a value where a duplicate is still possible (e.g. inside a string whose
text so far begins some earlier item, tokens with a `"`). Everything else keeps the inner row.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import OrderedDict
from typing import Any, Callable, Hashable, Iterable, Optional, Sequence

import numpy as np

from .item_settling import ESCAPE_OR_CONTROL, QUOTE, ReadingStates, after_item_bytes, open_string, settled_text, settling_bytes
from .marked_frames import DEAD, MarkedFrames
from .row_bits import token_ids
from .stack_index import StackTokenAutomaton
from .token_sets import token_set

Ctx = tuple  # ((depth, keys: frozenset, item: bytes | None), ...) bottom to top
_MAX_KILLED_ROWS = 512
_MAX_MEMO = 100_000
_MAX_KEY_SETS = 256


class DistinctCallsAutomaton:
    """TokenAutomaton (see constrain/compiled.py) over a StackTokenAutomaton whose `marked`
    rules' calls must have distinct `key_of(text)` per frame; `string_prefix(text)` gives the
    characters a partial string item has settled (None: not a string), which tells where a
    duplicate is still possible."""

    def __init__(
        self,
        inner: StackTokenAutomaton,
        marked: Iterable[int],
        key_of: Callable[[bytes], Hashable],
        string_prefix: Callable[[bytes], Optional[str]],
        token_bytes: Sequence[bytes],
        special_ids: Iterable[int],
    ) -> None:
        self.inner = inner
        self.sem = inner.semantics
        self.sem.merge = False  # (a context per stack: its marked frames' texts; merged frames would mix them)
        self.marked = frozenset(marked)
        self.key_of = key_of
        self.string_prefix = string_prefix
        self._token_bytes = token_bytes
        self._special = frozenset(special_ids)
        self._reads = ReadingStates(inner.rules)
        self.after_item = after_item_bytes(inner.rules, self.marked)
        self.finals = settling_bytes(inner.rules, self.marked, self._reads)
        self.all_settling = frozenset(self.after_item | self.finals)
        self._token_sets: dict[tuple, np.ndarray] = {}
        self._killed_rows: OrderedDict[Any, np.ndarray] = OrderedDict()
        self._outside: dict[frozenset, np.ndarray] = {}  # rows of states outside marked arrays
        self._no_rows: dict[Any, np.ndarray] = {}  # (no state is cached here: see row_cache)
        self._marked_frames = MarkedFrames(self.marked)
        self._deepest_memo: dict[Any, int] = {}
        self._strings_memo: dict[frozenset, list[str]] = {}
        self._settle_memo: dict[frozenset, dict[int, bool]] = {}

    # -- TokenAutomaton ------------------------------------------------------------------------
    def initial_state(self) -> tuple:
        return self._make(self.inner.initial_state(), None)

    def is_accepting(self, state: tuple) -> bool:
        return self.inner.is_accepting(state[0])

    def eos_row(self) -> np.ndarray:
        return self.inner.eos_row()

    def row_cache(self) -> dict[Any, np.ndarray]:
        # States differ in their item texts, so rows are not worth sharing by state; mask_row
        # answers from the inner cache (per stacks) and a small cache of rows with kills.
        return self._no_rows

    def stats(self) -> dict[str, int]:
        out = dict(self.inner.stats())
        out["distinct_rows_cached"] = len(self._killed_rows) + len(self._outside)
        return out

    def advance(self, state: tuple, data: bytes) -> Optional[tuple]:
        stacks, pairs = state
        if pairs is None and not self._risky(data):
            nxt = self.inner.advance(stacks, data)
            if nxt is None:
                return None
            if not any(self._marked_frames(s) for s in nxt):
                return (nxt, None)
        if pairs is None:
            pairs = frozenset((s, ()) for s in stacks)
        for b in data:
            pairs = self._step(pairs, b)
            if not pairs:
                return None
        return self._make(frozenset(s for s, _ in pairs), pairs)

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
        if pairs is None:  # outside every marked array: the row depends on the stacks alone
            hit = self._outside.get(stacks)
            if hit is None:
                hit = self._outside.setdefault(stacks, self._row(state))
            return hit
        hit = self._killed_rows.get(state)
        if hit is None:
            hit = self._row(state)
        return hit

    def _row(self, state: tuple) -> np.ndarray:
        """The inner row minus the candidates that stepping refuses."""
        stacks, pairs = state
        base = self.inner.mask_row(stacks)
        words = base.view(np.uint32)
        cands, closing = self._candidates(pairs)
        ids = token_ids(words & cands.view(np.uint32))
        if closing:  # tokens with a `"` that might close an open string item as a duplicate
            quotes = self._tokens("any", QUOTE).view(np.uint32)
            ids += self._closing_dups(token_ids(words & quotes & ~cands.view(np.uint32)), closing)
        killed = self._killed(state, ids)
        if not killed:
            return base
        words = base.view(np.uint32).copy()
        for t in killed:
            words[t >> 5] &= ~np.uint32(1 << (t & 31))
        row = words.view(np.int32)
        row.setflags(write=False)
        if pairs is not None:
            self._killed_rows[state] = row
            if len(self._killed_rows) > _MAX_KILLED_ROWS:
                try:
                    self._killed_rows.popitem(last=False)
                except KeyError:  # another thread emptied it first
                    pass
        return row

    def _killed(self, state: tuple, ids: list[int]) -> list[int]:
        """The tokens among `ids` that advancing refuses. Candidates share prefixes (`"`, `",`,
        `","`), so each prefix is stepped once."""
        token_bytes, special = self._token_bytes, self._special
        texts = sorted((token_bytes[t], t) for t in ids if t < len(token_bytes) and t not in special and token_bytes[t])
        if state[1] is None:  # only tokens that open a marked array: rare, step them whole
            return [t for data, t in texts if self.advance(state, data) is None]
        texts = self._may_settle(state[0], texts)
        reached: dict[bytes, frozenset] = {b"": state[1]}
        killed = []
        for data, t in texts:
            k = len(data)
            while data[:k] not in reached:
                k -= 1
            pairs = reached[data[:k]]
            while pairs and k < len(data):
                pairs = self._step(pairs, data[k])
                k += 1
                reached[data[:k]] = pairs
            if not pairs:
                killed.append(t)
        return killed

    def _may_settle(self, stacks: frozenset, texts: list[tuple[bytes, int]]) -> list[tuple[bytes, int]]:
        """The (bytes, id) of `texts` (sorted) whose reading from `stacks` meets a stack where an
        item could settle: only there can the items so far refuse a token. That depends on the
        stacks alone, so it is remembered per stacks (they recur at every character of a
        string), and found without the items' texts (several times cheaper than `_step`)."""
        memo = self._settle_memo.get(stacks)
        if memo is None:
            if len(self._settle_memo) > _MAX_KEY_SETS:
                self._settle_memo.clear()
            memo = self._settle_memo[stacks] = {}
        todo = [(data, t) for data, t in texts if t not in memo]
        if todo:
            step, settles_at = self.sem.step, self._settles_at
            reached: dict[bytes, tuple[frozenset, bool]] = {b"": (stacks, False)}
            for data, t in todo:
                k = len(data)
                while data[:k] not in reached:
                    k -= 1
                cur, hit = reached[data[:k]]
                while not hit and cur and k < len(data):
                    cur = step(cur, data[k])
                    hit = any(settles_at(s) for s in cur)
                    k += 1
                    reached[data[:k]] = (cur, hit)
                memo[t] = hit or not cur  # (a dead token is stepped in full: never assumed)
        return [(data, t) for data, t in texts if memo[t]]

    def _settles_at(self, stack: tuple) -> bool:
        """Can an item settle on reaching `stack` (see _next_ctx)? Where a marked frame is the
        top (an item's frame just returned) or no frame above a marked one can read on."""
        frames = self._marked_frames(stack)
        if not frames:
            return False
        if frames[-1][1]:
            return True
        deepest = self._deepest_reader(stack)
        return any(deepest <= d for d, _ in frames)

    # -- stepping ------------------------------------------------------------------------------
    def _make(self, stacks: frozenset, pairs: Optional[frozenset]) -> tuple:
        if pairs is not None and not any(ctx for _, ctx in pairs):
            pairs = None
        if pairs is None and any(self._marked_frames(s) for s in stacks):
            pairs = frozenset((s, ()) for s in stacks)
        return (stacks, pairs)

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
                s2 = (r, t, e[2], e[3])
                ctx2 = self._next_ctx(ctx, s2, b)
                if ctx2 is not DEAD:
                    out.add((s2, ctx2))
        return frozenset(out)

    def _next_ctx(self, ctx: Ctx, s2: tuple, b: int) -> Any:
        frames = self._marked_frames(s2)
        if not frames:
            return ()
        old = {d: (keys, item) for d, keys, item in ctx}
        new = []
        open_items = False
        for d, top in frames:
            keys, item = old.get(d, (frozenset(), None))
            if top:
                if item is not None:  # the item's frame popped before this byte: settled
                    k = self.key_of(item)
                    if k in keys:
                        return DEAD
                    keys = keys | {k}
                    item = None
            else:
                item = (item or b"") + bytes((b,))
                open_items = True
            new.append((d, keys, item))
        if open_items:
            deepest = self._deepest_reader(s2)
            for d, keys, item in new:
                if item is not None and keys and deepest <= d and self.key_of(item) in keys:
                    return DEAD  # nothing inside the item can read on: settled, a duplicate
        return tuple(new)

    def _deepest_reader(self, stack: tuple) -> int:
        """The greatest depth of a frame that can read a byte next (calls and returns taken)."""
        hit = self._deepest_memo.get(stack)
        if hit is None:
            hit = max((e[3] for e in self.sem.closure(stack)[0] if self._reads(e[0])[e[1]]), default=-1)
            if len(self._deepest_memo) > _MAX_MEMO:
                self._deepest_memo.clear()
            self._deepest_memo[stack] = hit
        return hit

    # -- candidates for the mask ---------------------------------------------------------------
    def _candidates(self, pairs: Optional[frozenset]) -> tuple[np.ndarray, list[tuple[str, list[str]]]]:
        """(uint8 bytes of a token bitmask: the tokens that might settle a duplicate here; the
        open string items, as (text so far, earlier string keys sorted), whose tokens with a
        `"` are left to _closing_dups rather than all taken)."""
        every = self.all_settling
        if pairs is None:
            return self._tokens("risky", every), []
        out = None
        closing: list[tuple[str, list[str]]] = []
        for _, ctx in pairs:
            # Inside a string, bytes before the first `"` are text: they settle nothing.
            innermost = next((item for _, _, item in reversed(ctx) if item is not None), None)
            in_string = innermost is not None and open_string(innermost)
            part = self._tokens("two_after_quote" if in_string else "two", every)
            for _, keys, item in ctx:
                if item is None:
                    if keys:
                        part = part | self._tokens("late", every)
                elif keys and self._possible(keys, item):
                    text = settled_text(item)
                    if text is None:
                        part = part | self._tokens("any", self._settling_for(item))
                    else:
                        closing.append((text, self._strings(keys)))
            out = part if out is None else out | part
        return (out if out is not None else self._tokens("two", every)), closing

    def _closing_dups(self, ids: list[int], closing: list[tuple[str, list[str]]]) -> list[int]:
        """The tokens among `ids` (each with a `"`) whose first `"` may close one of the open
        string items `closing` as an earlier key. Before that quote a token can settle nothing
        in the item's array; a later settling there needs another item inside the token, and
        those tokens ("two_after_quote") are candidates anyway. Tokens with an escape or a
        control byte before the quote are kept: stepping decides."""
        token_bytes = self._token_bytes
        out = []
        for t in ids:
            data = token_bytes[t]
            head = data[: data.find(b'"')]
            if ESCAPE_OR_CONTROL.search(head) is not None:
                out.append(t)
                continue
            try:
                text = head.decode("utf-8")
            except UnicodeDecodeError:
                out.append(t)
                continue
            for so_far, strings in closing:
                whole = so_far + text
                i = bisect_left(strings, whole)
                if i < len(strings) and strings[i] == whole:
                    out.append(t)
                    break
        return out

    def _settling_for(self, item: bytes) -> frozenset:
        first = item[:1]
        if first == b'"':
            return frozenset(b'"')
        if first in (b"t", b"f", b"n"):
            return frozenset(b"el")
        # An object or array item settles at its own closing bracket (deeper ones are
        # candidates too: a superset is fine, stepping decides).
        if first == b"{":
            return frozenset(b"}")
        if first == b"[":
            return frozenset(b"]")
        return self.all_settling

    def _possible(self, keys: frozenset, item: bytes) -> bool:
        """Can the open item still settle as one of `keys`? (False only where provable.)"""
        if item[:1] == b'"':
            prefix = self.string_prefix(item)
            if prefix is not None:
                strings = self._strings(keys)
                i = bisect_left(strings, prefix)
                return i < len(strings) and strings[i].startswith(prefix)
        return True

    def _strings(self, keys: frozenset) -> list[str]:
        """The string keys among `keys`, sorted (a prefix test is then one bisection: arrays of
        hundreds of strings ask it at every character)."""
        hit = self._strings_memo.get(keys)
        if hit is None:
            hit = sorted(k[1] for k in keys if isinstance(k, tuple) and k[0] == "s")
            if len(self._strings_memo) > _MAX_KEY_SETS:
                self._strings_memo.clear()
            self._strings_memo[keys] = hit
        return hit

    def _tokens(self, how: str, byte_set: frozenset) -> np.ndarray:
        """The token set `how` over `byte_set` (see token_sets.py), cached here too."""
        key = (how, byte_set)
        hit = self._token_sets.get(key)
        if hit is None:
            hit = self._token_sets[key] = token_set(
                self._token_bytes, self._special, self.inner.index.trie.n_words, how, byte_set, self.after_item
            )
        return hit

    def _risky(self, data: bytes) -> bool:
        i = data.find(b"[")
        if i < 0:
            return False
        after = [j for j in range(i + 1, len(data)) if data[j] in self.after_item]
        return bool(after) and any(c in self.all_settling for c in data[after[0] + 1 :])
