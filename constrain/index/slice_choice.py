"""Which vocabulary slice a state's walk may skip, from each DFA's slice depths (computed on a
DFA's first need, once per automaton: most rules of a grammar are never asked)."""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..automata.dfa import DFA
from .slices import TokenSlice


class SliceProofs:
    """Slice depths per DFA object, shared by every automaton over one
    vocabulary index. Rule DFAs are shared between grammars (rules.py caches them per rule),
    so a string, number or format rule (an email's DFA: 0.5 ms) is analysed once per process,
    not once per grammar. Entries hold their DFA, so an id is never reused while cached."""

    __slots__ = ("_entries",)
    MAX_ENTRIES = 2048

    def __init__(self) -> None:
        self._entries: dict[tuple, tuple[DFA, bytes, np.ndarray]] = {}

    def get(self, what: str, k: int, dfa: DFA, exits: bytes) -> Optional[np.ndarray]:
        hit = self._entries.get((what, k, id(dfa)))
        if hit is not None and hit[0] is dfa and hit[1] == exits:
            return hit[2]
        return None

    def put(self, what: str, k: int, dfa: DFA, exits: bytes, value: np.ndarray) -> None:
        if len(self._entries) >= self.MAX_ENTRIES:
            self._entries.clear()  # (a racing put only repeats a computation)
        self._entries[(what, k, id(dfa))] = (dfa, exits, value)


class SliceChooser:
    """Per automaton; `key` names one of its DFAs (a rule id, or 0 for a regex)."""

    __slots__ = ("slices", "_depths", "_worth_of", "_proofs", "_probes")

    def __init__(self, slices: tuple[TokenSlice, ...], proofs: Optional[SliceProofs] = None) -> None:
        self.slices = slices
        # One whole unit per slice (-1: none): a state where it is dead is not worth a slice,
        # found by one lookup before _worth indexes the slice's units (object rules are new
        # in every grammar, and their states read punctuation).
        self._probes = tuple(int(sl.whole_units[0]) if sl.whole_units.size else -1 for sl in slices)
        self._depths: dict[tuple[int, int], np.ndarray] = {}
        self._worth_of: dict[tuple[int, int, int], bool] = {}
        self._proofs = proofs

    def _worth(self, key: int, k: int, dfa: DFA, state: int) -> bool:
        """Asked before the first analysis of a DFA: does every byte that is a whole unit of
        slice k live at `state`? Only then can the slice hold many allowed tokens; elsewhere
        (object and array syntax, numbers, patterns) the plain walk is cheap or the slice
        cannot apply, and most rules never reach a state that repays the analysis. Judged for
        the one state (a first mask asks one or two states of a new DFA)."""
        hit = self._worth_of.get((key, k, state))
        if hit is None:
            row = dfa.table[state]
            hit = self._worth_of.setdefault((key, k, state), bool((row[dfa.byte_classes[self.slices[k].whole_units]] >= 0).all()))
        return hit

    def _analyse(self, key: int, k: int, dfa: DFA, exits: np.ndarray) -> np.ndarray:
        from .slice_depth import state_depths

        if exits.shape != (dfa.n_states,):
            raise ValueError("one exit flag per DFA state")
        sl = self.slices[k]
        exits = np.ascontiguousarray(exits, dtype=np.bool_)
        proofs = self._proofs
        depths = proofs.get("depths", k, dfa, exits.tobytes()) if proofs is not None else None
        if depths is None:
            depths = state_depths(dfa.table, dfa.byte_classes, exits, sl.unit_next, np.int32(sl.max_units))
            if proofs is not None:
                proofs.put("depths", k, dfa, exits.tobytes(), depths)
        return self._depths.setdefault((key, k), depths)  # a racing fill computed the same array

    def choose(self, key: int, dfa: DFA, exits: np.ndarray, state: int) -> tuple[int, Optional[np.ndarray]]:
        """(0, None) where no slice applies: walk the whole trie. Else (k, words): walk trie
        k (slice k-1's rest trie), starting from `words`, a fresh copy of the slice tokens
        allowed at `state`; no boundary of theirs matters (see slice_depth.py)."""
        for k, sl in enumerate(self.slices):
            depths = self._depths.get((key, k))
            if depths is None:
                probe = self._probes[k]
                if probe >= 0 and dfa.table[state, dfa.byte_classes[probe]] < 0:
                    continue
                if not self._worth(key, k, dfa, state):
                    continue
                depths = self._analyse(key, k, dfa, exits)
            units = int(depths[state])
            if units >= 0:
                return k + 1, sl.masks_upto[units].copy()
        return 0, None
