"""Where a copied value ends, the prompt lookup drafts the grammar's way out of it.

A value copied from the prompt into structured output usually ends where the prompt's phrase
does ("Grace Hopper, 85 years old": the name ends before the comma), and what the output writes
there is not the prompt's punctuation but the byte that closes the value and the grammar's
forced run after it (`"` then `,"age":` in a JSON object: the model writes `",`). Copying on past
that point costs a verification pass at every value's end. So where the copied bytes reach a
phrase end (`,;!?)`, a line break, a full stop not followed by a letter or digit, or, in a name,
a lowercase word), or where the grammar stops accepting the copy, the draft stops copying and
writes the closing byte: among the ASCII punctuation bytes the grammar allows there, the one
after which it forces the longest run that leaves the value (a run with a non-word byte in it),
or failing that a byte that completes the document (only EOS may follow), spelled as the model
spelled it before (its first token only: `",`; the rest of the run is jump-forward's), else as
the tokenizer spells it. Where no byte leaves the value that way (a free string with text allowed
after it) no closing is drafted. A guess like every draft, verified by the target: when the
model goes on writing the value, the draft loses what copying on would have won.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from constrain.compiled import TERMINATED

from .jump_forward import SPELLING_WINDOW
from .token_spelling import Encode, spell
from .word_echo import IS_WORD

PHRASE_END = frozenset(b",;!?)\n\r")
SENTENCE_END, SPACE = ord("."), ord(" ")
LOWER_A, LOWER_Z, UPPER_A, UPPER_Z = ord("a"), ord("z"), ord("A"), ord("Z")
SENTENCE_START = frozenset(b".!?:;\n\r\t\"'>([{")  # before a sentence's first word (`>`: a special token's end)
CLOSING_CANDIDATES = bytes(b for b in range(0x21, 0x7F) if not chr(b).isalnum() and b != ord("_"))
MEMO_SIZE = 4096  # grammar states whose closing token is kept


def phrase_end(data: bytes | bytearray, name: bool = False) -> int:
    """Offset of the first byte of `data` where a copied phrase ends, or -1: a byte of
    PHRASE_END, or a full stop that ends `data` or is followed by neither a letter nor a digit
    (`3.5` and `example.com` go on; `St. Louis` is a miss). With `name` (the copy continues a
    capitalized word: a name), also a space before a lowercase word ("Tom Baker| just turned 52";
    "University| of Oxford" is a miss)."""
    n = len(data)
    for i, b in enumerate(data):
        if b in PHRASE_END:
            return i
        if b == SENTENCE_END and (i + 1 == n or not chr(data[i + 1]).isalnum()):
            return i
        if name and b == SPACE and i + 1 < n and LOWER_A <= data[i + 1] <= LOWER_Z:
            return i
    return -1


def continues_name(data: bytes | bytearray, start: int) -> bool:
    """Does the copy from `data[start]` continue a name: is the word `start` is in or right
    after (at a word start: the copy's first word) capitalized, and either not the first word of
    a sentence or followed by another capitalized word ("Tom Baker", "The Blue Kettle"; not "The
    toaster broke", whose first word is capitalized as any sentence's is)?"""
    i = start
    if i > 0 and IS_WORD[data[i - 1]]:
        while i > 0 and IS_WORD[data[i - 1]]:
            i -= 1
    else:
        while i < len(data) and data[i] == SPACE:
            i += 1
    if not (i < len(data) and _upper(data[i])):
        return False
    before = i - 1
    while before >= 0 and data[before] == SPACE:
        before -= 1
    if before >= 0 and data[before] not in SENTENCE_START:
        return True
    after = i
    while after < len(data) and IS_WORD[data[after]]:
        after += 1
    return after + 1 < len(data) and data[after] == SPACE and _upper(data[after + 1])


def _upper(b: int) -> bool:
    return UPPER_A <= b <= UPPER_Z


class ValueCloser:
    """The closing token at a grammar state; the closing bytes are memoized per state for one
    compiled grammar."""

    def __init__(self) -> None:
        self._compiled: Any = None
        self._memo: dict[Any, bytes] = {}

    def closing_token(
        self, compiled: Any, state: Any, encode: Optional[Encode], spelled: Sequence[Sequence[int]] = ()
    ) -> Optional[int]:
        """The first token spelling the closing bytes at `state` (closing_bytes), or None where
        there are none (or the grammar rejects that token). `spelled`: id sequences (the
        context, the model's earlier outputs) searched for the model's own first token of those
        bytes, the longest found (a model writes `",` `"` where the tokenizer spells `","`); the
        tokenizer's spelling where none holds one."""
        closing = self.closing_bytes(compiled, state)
        if not closing:
            return None
        table = compiled.vocab.token_bytes
        special = compiled.vocab.special_ids
        token = _longest_seen_prefix(spelled, closing, table, special)
        if token is None:
            tokens = spell(compiled.vocab, closing, encode, 1)
            token = tokens[0] if tokens else None
        if token is None or compiled.next_state(state, token) is None:
            return None
        return token

    def closing_bytes(self, compiled: Any, state: Any) -> bytes:
        """The closing byte at `state` and the run it forces (b"": no byte leaves the value, or
        the state is after an EOS)."""
        if state == TERMINATED:
            return b""
        if compiled is not self._compiled or len(self._memo) >= MEMO_SIZE:
            self._compiled, self._memo = compiled, {}
        found = self._memo.get(state)
        if found is None:
            found = self._memo[state] = _closing_bytes(compiled, state)
        return found


def _closing_bytes(compiled: Any, state: Any) -> bytes:
    """The longest (closing byte + forced run) whose run leaves the value (`41.` forcing `0`
    stays in it: a run of word bytes does not count); failing that, a byte that completes the
    document (only EOS may follow it: `}`); else b""."""
    automaton = compiled.automaton
    best = b""
    complete: list[tuple[int, Any]] = []
    for c in CLOSING_CANDIDATES:
        after = automaton.advance(state, bytes((c,)))
        if after is None:
            continue
        run = automaton.forced_bytes(after)
        if any(not IS_WORD[b] for b in run):
            if len(run) + 1 > len(best):
                best = bytes((c,)) + run
        elif not run and automaton.is_accepting(after):
            complete.append((c, after))
    if best:
        return best
    eos_only = automaton.eos_row()
    for c, after in complete:  # (rows only where nothing forces a run: they may cost a mask)
        if np.array_equal(compiled.mask_row(after), eos_only):
            return bytes((c,))
    return b""


def _longest_seen_prefix(
    spelled: Sequence[Sequence[int]], data: bytes, table: Sequence[bytes], special: Any
) -> Optional[int]:
    """The longest token among the last SPELLING_WINDOW ids of each sequence in `spelled` whose
    bytes are a prefix of `data`, or None."""
    first = data[0]
    best, best_len = None, 0
    for ids in spelled:
        for t in ids[-SPELLING_WINDOW:]:
            piece = table[t]
            if len(piece) > best_len and piece[0] == first and data.startswith(piece) and t not in special:
                best, best_len = int(t), len(piece)
    return best
