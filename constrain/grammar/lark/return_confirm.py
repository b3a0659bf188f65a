"""Which returns on condition of the second byte Python's `re` agrees with (Lark matches with it).

A greedy terminal's DFA says where a longer match cannot go on (automata/return_checks.py): in
state q before b1, where the byte after b1 is in C. Lark, though, takes what `re.match` returns,
and a backtracking regex does not always fall back to the shorter match: a lookahead at the
start (SQL's `(?!(select|from...)(?![a-z0-9_]))[a-z_][a-z0-9_]*`) fails the whole match on
`select ` instead of ending it at `selec`. So each set is tried on the regex itself: a shortest
text w that reaches q, then b1, then a second character of each byte class of C (its first and last),
then a few tails; a class is kept only where every such match ends right after w. What is left
out is refused as before (never a text Lark refuses accepted, where the samples speak for their
classes).

Where the longer match would end after b1 (an accepting state), all of C is what that end
refuses, and only what it refuses whatever follows may go in (`surely`, end_window.py): its
ends refuse more than Lark for a window of several characters or a character of several bytes,
and `$` refuses a newline that `re` lets it match before. The samples alone missed those (a
review: `a(?:b(?=cd))?` before `bcd` was read as `a` then `bcd`).
"""

from __future__ import annotations

import re
import re._constants as sre_constants  # (the parser Lark itself uses for widths)
import re._parser as sre_parse
from typing import Collection, Mapping, Optional

import numpy as np

from ...automata.dfa import DFA
from ...automata.refusals import END_OF_TEXT, byte_row
from ...automata.return_checks import Confirm

TAILS = ("", " ", "a", "0", ".", "{", "$", '"', "\n", "\u00e9")
ALPHABET = tuple(chr(c) for c in range(0x20, 0x7F)) + ("\t", "\n", "\r", "\u00e9", "\u4e2d", "\U0001f600")
MAX_PER_CLASS = 2  # (its first and last byte)
MAX_PAIRS = 512  # (state, byte) pairs tried per terminal; the rest are left out (refused as before)
_NEWLINE = 1 << ord("\n")


class RegexConfirm:
    """The `confirm` of compile_rules for terminals whose regexes (as Lark matches them) are
    `patterns` by rule name; a rule without one keeps no check, and `names` (the rules
    find_checks need look at) leaves out those whose regex opens with a lookaround: there a
    failing assertion fails the whole match, nothing is given back (SQL's NAME: 264 pairs,
    each refused by `re`, were ~2 ms of its compile). `singles`: the ASCII characters some
    terminal matches alone (None: not known); the end of the text after b1 is kept in a check
    only where b1 is one of them (else no text can end there: STRING's `'abc''`, a second
    string left open, made SQL's masks chain checks for nothing)."""

    def __init__(self, patterns: Mapping[str, str], singles: Optional[Collection[int]] = None,
                 surely: Optional[Mapping[str, tuple[int, ...]]] = None) -> None:
        """`surely`: per rule whose ends refuse more than Lark (end_window.py), per state what
        they refuse whatever follows."""
        self.patterns = patterns
        self.singles = singles
        self.surely = surely or {}
        self.names = frozenset(name for name, regex in patterns.items() if not _opens_with_lookaround(regex))

    def __call__(self, name: str, dfa: DFA, found: dict[int, dict[int, int]]) -> dict[int, dict[int, int]]:
        if name not in self.names:
            return {}
        found = {q: {b1: self._sure(name, dfa, dfa.table[q, dfa.byte_classes[b1]], c) for b1, c in by_byte.items()}
                 for q, by_byte in found.items()}
        out = {}
        for q, by_byte in confirmed(self.patterns[name], dfa, found).items():
            kept = {b1: c if self._ends_after(b1) else c & ~END_OF_TEXT for b1, c in by_byte.items()}
            kept = {b1: c for b1, c in kept.items() if c}
            if kept:
                out[q] = kept
        return out

    def _sure(self, name: str, dfa: DFA, q1: int, c: int) -> int:
        """C before a state q1 that may end (all of C is what its end refuses): what it refuses
        whatever follows; not a newline where `$` may match before one."""
        if not dfa.accepting[q1]:
            return c
        surely = self.surely.get(name)
        if surely is not None:
            c &= surely[q1]
        return c & ~_NEWLINE if "$" in self.patterns[name] else c

    def _ends_after(self, b1: int) -> bool:
        return self.singles is None or b1 in self.singles


regex_confirm = RegexConfirm


def _opens_with_lookaround(regex: str) -> bool:
    """Can an assertion come before the regex's first character (in some branch)? Unknown
    (a regex `re` cannot parse) counts as yes."""
    if "(?=" not in regex and "(?!" not in regex:  # (most terminals: no parse)
        return False
    if _GROUP_OPENINGS.sub("", regex, count=1).startswith(("(?=", "(?!")):  # (SQL's NAME: no parse of its 40 keywords)
        return True
    try:
        return _opens(sre_parse.parse(regex))
    except Exception:
        return True


_GROUP_OPENINGS = re.compile(r"^(?:\((?:\?[a-zA-Z]*:)?)+")  # `(?:(?i:(` before what the regex reads first


def _opens(seq) -> bool:  # type: ignore[no-untyped-def]
    for op, av in seq:
        if op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            return True
        if op is sre_constants.AT:  # (an anchor reads nothing: look on)
            continue
        if op is sre_constants.SUBPATTERN:
            return _opens(av[-1])
        if op is sre_constants.BRANCH:
            return any(_opens(branch) for branch in av[1])
        return False
    return False


def confirmed(regex: str, dfa: DFA, found: dict[int, dict[int, int]]) -> dict[int, dict[int, int]]:
    """`found` (per state {b1: C}) less what `re.match(regex, ...)` contradicts."""
    try:
        compiled = re.compile(regex)
    except re.error:
        return {}
    witnesses = _witnesses(dfa, set(found))
    groups: dict[int, list[list[int]]] = {}  # C -> its testable bytes by byte class
    out: dict[int, dict[int, int]] = {}
    tried = 0
    for q, by_byte in found.items():
        w = witnesses.get(q)
        if w is None:
            continue
        kept = {}
        for b1, c in by_byte.items():
            tried += 1
            if b1 < 0x80 and tried <= MAX_PAIRS:
                if c not in groups:
                    idx = np.flatnonzero(byte_row(c) & _TESTABLE)
                    classes = dfa.byte_classes[idx]
                    groups[c] = [idx[classes == k].tolist() for k in np.unique(classes).tolist()]
                agreed = _agreed(compiled, groups[c], w, chr(b1), c)
                if agreed:
                    kept[b1] = agreed
        if kept:
            out[q] = kept
    return out


def _agreed(compiled: re.Pattern, groups: list[list[int]], w: str, first: str, c: int) -> int:
    """The part of C (bits; `groups`: its bytes by byte class) whose samples all end the match
    right after `w`."""
    out = 0
    if c & END_OF_TEXT and _ends_at(compiled, w + first, len(w)):
        out |= END_OF_TEXT
    for bytes_ in groups:
        picks = bytes_ if len(bytes_) <= MAX_PER_CLASS else [bytes_[0], bytes_[-1]]
        if all(_ends_at(compiled, w + first + _CHAR_OF[b] + tail, len(w)) for b in picks for tail in TAILS):  # type: ignore[operator]
            out |= sum(1 << b for b in bytes_)
    return out


def _ends_at(compiled: re.Pattern, text: str, end: int) -> bool:
    m = compiled.match(text)
    return m is not None and m.end() == end


def _witnesses(dfa: DFA, wanted: set[int]) -> dict[int, str]:
    """A shortest text reaching each wanted state from the start (breadth first): over
    printable ASCII and a few control characters (all states at once), then over ALPHABET's
    other characters where some state is still missing."""
    rows = dfa.table[:, dfa.byte_classes]
    found: dict[int, str] = {0: ""}
    seen = np.zeros(dfa.n_states, dtype=np.bool_)
    seen[0] = True
    frontier = np.zeros(1, dtype=np.int64)
    while frontier.size and not wanted <= found.keys():
        nxt = rows[frontier][:, _ASCII]  # (frontier, characters)
        fresh = nxt >= 0
        fresh[fresh] = ~seen[nxt[fresh]]
        at, ch = np.nonzero(fresh)
        states, first = np.unique(nxt[at, ch], return_index=True)
        for s, i in zip(states.tolist(), first.tolist()):
            found[s] = found[int(frontier[at[i]])] + chr(_ASCII[ch[i]])
        seen[states] = True
        frontier = states
    if not wanted <= found.keys():
        found = _slow_witnesses(rows, found, wanted)
    return found


def _slow_witnesses(rows: np.ndarray, found: dict[int, str], wanted: set[int]) -> dict[int, str]:
    """_witnesses over every character of ALPHABET, from the states found so far."""
    frontier = list(found)
    encoded = [ch.encode() for ch in ALPHABET]
    while frontier and not wanted <= found.keys():
        nxt = []
        for q in frontier:
            for ch, data in zip(ALPHABET, encoded):
                s = q
                for b in data:
                    s = int(rows[s, b])
                    if s < 0:
                        break
                if s >= 0 and s not in found:
                    found[s] = found[q] + ch
                    nxt.append(s)
        frontier = nxt
    return found


def _char_of(b: int) -> Optional[str]:
    """A character whose UTF-8 starts with byte b (the first such code point), None for a
    continuation byte or one no UTF-8 text holds."""
    if b < 0x80:
        return chr(b)
    if 0xC2 <= b <= 0xDF:
        return chr((b - 0xC0) << 6)
    if 0xE0 <= b <= 0xEF:
        return chr(0x800 if b == 0xE0 else (b - 0xE0) << 12)
    if 0xF0 <= b <= 0xF4:
        return chr(0x10000 if b == 0xF0 else (b - 0xF0) << 18)
    return None


_CHAR_OF = tuple(_char_of(b) for b in range(256))
_TESTABLE = np.array([ch is not None for ch in _CHAR_OF])
_ASCII = np.array([ord(ch) for ch in ALPHABET if ord(ch) < 0x80], dtype=np.int64)
