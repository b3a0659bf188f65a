"""A byte DFA of UTF-8 text back to IR over characters: an ir.Graph with character-set edges.

Automata algebra (intersection, difference, assertions) happens on byte DFAs, but some callers
still need characters: JSON Schema maps each character of a `pattern` to its JSON spellings
(escapes) before the final automaton is built. The states of the graph are the DFA states
that lie between characters; an edge carries the code points that lead from one to another.
"""

from __future__ import annotations

from . import ir
from .charset import normalize
from .dfa import DFA

# Lead bytes: (first, last, continuation bytes that follow, value bits the lead carries)
_LEADS = ((0x00, 0x7F, 0, 0x7F), (0xC2, 0xDF, 1, 0x1F), (0xE0, 0xEF, 2, 0x0F), (0xF0, 0xF4, 3, 0x07))


def char_graph(dfa: DFA) -> ir.Graph:
    """The IR of the language of `dfa`, which must hold UTF-8 text only (ValueError if not)."""
    table = dfa.table.tolist()
    classes = dfa.byte_classes.tolist()
    tails_memo: dict[tuple[int, int], list[tuple[int, int, int]]] = {}

    def runs(row: list[int], lo: int, hi: int):
        """(first byte, last byte, target) of the bytes lo..hi, merged where the target agrees."""
        b = lo
        while b <= hi:
            t = row[classes[b]]
            e = b
            while e < hi and row[classes[e + 1]] == t:
                e += 1
            if t >= 0:
                yield b, e, t
            b = e + 1

    def tails(state: int, n: int) -> list[tuple[int, int, int]]:
        """(low, high, target): ranges of the values of n continuation bytes read from state."""
        key = (state, n)
        found = tails_memo.get(key)
        if found is not None:
            return found
        if n == 0:
            out = [(0, 0, state)]
        else:
            shift = 6 * (n - 1)
            full = (1 << shift) - 1
            out = []
            for b, e, t in runs(table[state], 0x80, 0xBF):
                for lo, hi, tt in tails(t, n - 1):
                    if lo == 0 and hi == full:  # every continuation: one range over b..e
                        out.append(((b & 0x3F) << shift, ((e & 0x3F) << shift) | full, tt))
                    else:
                        out.extend((((c & 0x3F) << shift) | lo, ((c & 0x3F) << shift) | hi, tt) for c in range(b, e + 1))
        tails_memo[key] = out
        return out

    index = {0: 0}
    order = [0]
    edges: list[tuple[int, int, ir.Node]] = []
    k = 0
    while k < len(order):
        s = order[k]
        k += 1
        row = table[s]
        for b, e, _ in runs(row, 0x80, 0xC1):
            raise ValueError(f"not UTF-8 text: byte {b:#x} after a whole character")
        for b, e, _ in runs(row, 0xF5, 0xFF):
            raise ValueError(f"not UTF-8 text: byte {b:#x} after a whole character")
        out: dict[int, list[tuple[int, int]]] = {}
        for first, last, n, bits in _LEADS:
            for b, e, t in runs(row, first, last):
                if n == 0:
                    out.setdefault(t, []).append((b, e))
                    continue
                for lead in range(b, e + 1):
                    base = (lead & bits) << (6 * n)
                    for lo, hi, tt in tails(t, n):
                        out.setdefault(tt, []).append((base | lo, base | hi))
        for t, ranges in out.items():
            if t not in index:
                index[t] = len(order)
                order.append(t)
            edges.append((index[s], index[t], ir.Chars(normalize(ranges))))
    finals = tuple(i for i, s in enumerate(order) if dfa.accepting[s])
    return ir.Graph(len(order), 0, finals, tuple(edges))
