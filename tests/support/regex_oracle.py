"""An independent judge of regex masks for the tests: interegular's character FSM walked over a
character trie of the vocabulary's token texts (a token is viable if some continuation of the
output so far, with its bytes, can still match).

On pytest's `pythonpath` (pyproject.toml); tests reach it through conftest's fixtures.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from constrain import Vocabulary


class RegexOracle:
    """Viable-prefix judge for a regex, built on interegular's character FSM."""

    def __init__(self, pattern: str) -> None:
        import interegular

        fsm = interegular.parse_pattern(pattern).to_fsm()
        self.fsm = fsm
        self.alphabet = fsm.alphabet
        # Live states: those from which a final state is reachable.
        live = set(fsm.finals)
        changed = True
        while changed:
            changed = False
            for s, trans in fsm.map.items():
                if s not in live and any(t in live for t in trans.values()):
                    live.add(s)
                    changed = True
        self.live = live
        self.explicit = sorted(ord(c) for c in self.alphabet._symbol_mapping if isinstance(c, str))
        self.other = self.alphabet._symbol_mapping.get(interegular.fsm.anything_else)
        self._tail_memo: dict = {}

    def step_char(self, state, ch: str):
        sym = self.alphabet[ch]
        nxt = self.fsm.map.get(state, {}).get(sym)
        return nxt if nxt is not None and nxt in self.live else None

    def start(self):
        return self.fsm.initial if self.fsm.initial in self.live else None

    def viable(self, state, data: bytes) -> bool:
        """Can the text reach `data` from `state` and still complete? Incomplete UTF-8 at the end
        is viable iff some code point starting with those bytes can be read."""
        if state is None:
            return False
        cut = _complete_prefix_length(data)
        try:
            text = data[:cut].decode("utf-8")  # strict: a broken sequence inside is not viable
        except UnicodeDecodeError:
            return False
        for ch in text:
            state = self.step_char(state, ch)
            if state is None:
                return False
        return self.tail_viable(state, data[cut:])

    def tail_viable(self, state, tail: bytes) -> bool:
        """Can a code point whose UTF-8 starts with `tail` (possibly empty) be read from `state`?
        (Memoized: a vocabulary has a few hundred distinct incomplete tails, and the answer
        scans every code point the pattern names.)"""
        if not tail:
            return True
        hit = self._tail_memo.get((state, tail))
        if hit is None:
            hit = self._tail_memo[(state, tail)] = self._tail_viable(state, tail)
        return hit

    def _tail_viable(self, state, tail: bytes) -> bool:
        lo, hi = _code_point_span(tail)
        if lo is None:
            return False
        trans = self.fsm.map.get(state, {})
        for cp in self.explicit:
            if lo <= cp <= hi and trans.get(self.alphabet[chr(cp)]) in self.live:
                return True
        if self.other is not None and trans.get(self.other) in self.live:
            # anything_else covers every code point not listed explicitly
            n_explicit = sum(1 for cp in self.explicit if lo <= cp <= hi)
            if n_explicit < _count_scalars(lo, hi):
                return True
        return False

    def accepting(self, state) -> bool:
        return state is not None and state in self.fsm.finals

    def advance(self, state, pending: bytes, data: bytes):
        """(state, pending) after `data`: complete characters are read, an incomplete UTF-8
        tail is carried as `pending`. Returns (None, b"") if the text dies."""
        data = pending + data
        cut = _complete_prefix_length(data)
        for ch in data[:cut].decode("utf-8"):
            state = self.step_char(state, ch)
            if state is None:
                return None, b""
        return state, data[cut:]


def _complete_prefix_length(data: bytes) -> int:
    """Length of `data` without a trailing incomplete UTF-8 sequence."""
    for k in range(1, min(4, len(data)) + 1):
        b = data[-k]
        if b & 0xC0 == 0x80:
            continue
        need = 2 if b >> 5 == 6 else 3 if b >> 4 == 14 else 4 if b >> 3 == 30 else 1
        return len(data) - k if need > k else len(data)
    return len(data)


def _count_scalars(lo: int, hi: int) -> int:
    n = hi - lo + 1
    s_lo, s_hi = max(lo, 0xD800), min(hi, 0xDFFF)
    if s_lo <= s_hi:
        n -= s_hi - s_lo + 1
    return n


def _code_point_span(tail: bytes):
    """Code point range whose UTF-8 encodings start with the incomplete sequence `tail`."""
    b0 = tail[0]
    need = 2 if b0 >> 5 == 6 else 3 if b0 >> 4 == 14 else 4 if b0 >> 3 == 30 else 0
    if need == 0 or any(b & 0xC0 != 0x80 for b in tail[1:]):
        return None, None
    lo_bytes = tail + b"\x80" * (need - len(tail))
    hi_bytes = tail + b"\xbf" * (need - len(tail))
    lo = _decode_loose(lo_bytes)
    hi = _decode_loose(hi_bytes)
    # Clamp to the valid range of that encoding length (no overlongs, no > U+10FFFF).
    floor = {2: 0x80, 3: 0x800, 4: 0x10000}[need]
    lo, hi = max(lo, floor), min(hi, 0x10FFFF)
    if lo > hi:
        return None, None
    if need == 3 and lo >= 0xD800 and hi <= 0xDFFF:
        return None, None
    return lo, hi


def _decode_loose(b: bytes) -> int:
    n = len(b)
    first_bits = {2: 0x1F, 3: 0x0F, 4: 0x07}[n]
    cp = b[0] & first_bits
    for x in b[1:]:
        cp = (cp << 6) | (x & 0x3F)
    return cp




_UNSEEN = object()


class _TextTrie:
    """A vocabulary's token texts as a character trie, for the oracle: `viable` token by token,
    with the characters of a shared prefix stepped once (its verdict is the same for every token
    under it). Each token sits at the node of its complete characters with its incomplete UTF-8
    tail; tokens whose bytes do not decode sit nowhere (never viable)."""

    def __init__(self, vocab: Vocabulary) -> None:
        self.children: list[dict[str, int]] = [{}]
        self.tokens: list[list[tuple[int, bytes]]] = [[]]
        special = vocab.special_ids
        for tid, data in enumerate(vocab.token_bytes):
            if not data or tid in special:
                continue
            cut = _complete_prefix_length(data)
            try:
                text = data[:cut].decode("utf-8")
            except UnicodeDecodeError:
                continue
            node = 0
            for ch in text:
                nxt = self.children[node].get(ch)
                if nxt is None:
                    nxt = self.children[node][ch] = len(self.children)
                    self.children.append({})
                    self.tokens.append([])
                node = nxt
            self.tokens[node].append((tid, data[cut:]))
        # per node: the ids of tokens that end on a whole character (viable wherever the node is
        # reached: tail_viable(state, b"") is True), and the others with their incomplete tails
        self.whole = [[tid for tid, tail in here if not tail] for here in self.tokens]
        self.tailed = [[(tid, tail) for tid, tail in here if tail] for here in self.tokens]
        del self.tokens
        self._memo: tuple = (None, {}, {})  # (oracle, state -> ids, (state, char) -> state): walks revisit states

    def viable_ids(self, oracle: RegexOracle, state) -> list[int]:
        if self._memo[0] is not oracle:
            self._memo = (oracle, {}, {})
        hit = self._memo[1].get(state)
        if hit is None:
            hit = self._memo[1][state] = self._walk(oracle, state, self._memo[2])
        return hit

    def _walk(self, oracle: RegexOracle, state, steps: dict) -> list[int]:
        """`steps` memoizes oracle.step_char (a pure function of state and character; the trie
        repeats the same few characters on every branch)."""
        out: list[int] = []
        todo = [(0, state)]
        children, whole, tailed = self.children, self.whole, self.tailed
        while todo:
            node, st = todo.pop()
            out.extend(whole[node])
            for tid, tail in tailed[node]:
                if oracle.tail_viable(st, tail):
                    out.append(tid)
            for ch, child in children[node].items():
                nxt = steps.get((st, ch), _UNSEEN)
                if nxt is _UNSEEN:
                    nxt = steps[(st, ch)] = oracle.step_char(st, ch)
                if nxt is not None:
                    todo.append((child, nxt))
        return out


_PER_VOCAB: dict[tuple[str, int], tuple[Vocabulary, Any]] = {}


def _per_vocab(kind: str, vocab: Vocabulary, make: Callable[[Vocabulary], Any]) -> Any:
    """make(vocab), kept per vocabulary object (the oracle's trie, the walks' token shapes)."""
    hit = _PER_VOCAB.get((kind, id(vocab)))
    if hit is None or hit[0] is not vocab:
        hit = _PER_VOCAB[(kind, id(vocab))] = (vocab, make(vocab))
    return hit[1]


def oracle_mask(oracle: RegexOracle, state, pending: bytes, vocab: Vocabulary) -> np.ndarray:
    """Bool array: the oracle's verdict for every token id after (state, pending bytes)."""
    allowed = np.zeros(vocab.size, dtype=bool)
    if state is None:
        return allowed
    if pending:  # (the pending bytes change where each token's characters start: token by token)
        special = vocab.special_ids
        for tid, data in enumerate(vocab.token_bytes):
            if data and tid not in special and oracle.viable(state, pending + data):
                allowed[tid] = True
    else:
        allowed[_per_vocab("text trie", vocab, _TextTrie).viable_ids(oracle, state)] = True
    if not pending and oracle.accepting(state):
        for tid in vocab.eos_token_ids:
            allowed[tid] = True
    return allowed
