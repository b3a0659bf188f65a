"""The bytes a greedy rule's end refuses next (a Lark terminal's end lookahead), as sets of bits.

A set is an int, one bit per byte, and END_OF_TEXT where the text may not end there. A rule
keeps one set for all its ends (grammar/lark/end_guard.py) or one per state of its DFA
(automata/end_window.py).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import GrammarError
from . import ir

END_OF_TEXT = 1 << 256  # a refused "byte" past the 256: the end of the text (a positive end lookahead)


def byte_row(bits: int) -> np.ndarray:
    """Bool per byte: is its bit set in `bits` (a set of bytes, one bit each; END_OF_TEXT ignored)."""
    return np.unpackbits(np.frombuffer((bits & ((1 << 256) - 1)).to_bytes(32, "little"), dtype=np.uint8),
                         bitorder="little").astype(np.bool_)


def bits_of(row: np.ndarray) -> int:
    """A bool per byte as a set of bits (byte b: bit b): byte_row's inverse."""
    return int.from_bytes(np.packbits(row, bitorder="little").tobytes(), "little")


def refusals(bits: "int | Sequence[int]") -> "int | tuple[int, ...]":
    """A rule's refused bytes as RuleSet keeps them: one int, or one per state."""
    return int(bits) if isinstance(bits, (int, np.integer)) else tuple(int(b) for b in bits)


def check_refused(name: str, bits: "int | tuple[int, ...]", greedy: bool, node: ir.Node) -> None:
    """Refused bytes (and the end) only after a greedy rule; one set per state only where `node`
    is a DFA that becomes the rule's DFA as it is (_rule_dfa), whose state numbers they follow."""
    if not greedy or not all(0 <= b < END_OF_TEXT << 1 for b in ((bits,) if type(bits) is int else bits)):
        raise GrammarError(f"refused bytes after rule {name!r}: only a greedy rule refuses bytes (and the end)")
    if type(bits) is tuple and not (type(node) is ir.Embedded and node.dfa.minimal and not len(node.dfa.call_classes)
                                    and node.dfa.n_states == len(bits)):  # type: ignore[union-attr]
        raise GrammarError(f"refused bytes after rule {name!r}: one set per state needs the rule's own minimal DFA")
