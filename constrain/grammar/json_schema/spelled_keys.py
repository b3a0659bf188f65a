"""The DFA of "any JSON string except these keys", built directly from the keys' spellings.

Every object that allows unnamed keys needs this language (every spelling of every string
whose value is not a named key). As a difference of automata it costs an NFA, a subset
construction and two minimizations per object; here it is a trie over the keys' spellings
(each character raw, as a short escape, as `\\uXXXX` in either letter case, or a surrogate
pair: the same spellings as lexical.encode_chars) whose missing edges continue in the
any-string DFA. The result is deterministic and trimmed but not minimal: rule DFAs that embed
it are minimized anyway.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ...automata import DFA
from ...automata.charset import contains
from ...automata.minimize import quotient
from .lexical import SHORT_ESCAPES, UNESCAPED

_QUOTE = 0x22
_HEX = "0123456789abcdef"


def _escape(unit: int) -> list[tuple[int, ...]]:
    """`\\uXXXX` for one UTF-16 unit: byte sets (hex letters in either case)."""
    out: list[tuple[int, ...]] = [(0x5C,), (0x75,)]
    for d in f"{unit:04x}":
        out.append((ord(d),) if d.isdigit() else (ord(d), ord(d.upper())))
    return out


@lru_cache(maxsize=4096)
def spellings(c: int) -> tuple[list[tuple[int, ...]], ...]:
    """Every JSON spelling of code point `c`, each a list of byte sets (none for a lone
    surrogate, which JSON text cannot carry)."""
    if 0xD800 <= c <= 0xDFFF:
        return ()
    out = []
    if contains(UNESCAPED, c):
        out.append([(b,) for b in chr(c).encode("utf-8")])
    if c in SHORT_ESCAPES:
        out.append([(b,) for b in SHORT_ESCAPES[c].encode("ascii")])
    if c <= 0xFFFF:
        out.append(_escape(c))
    else:
        v = c - 0x10000
        out.append(_escape(0xD800 + (v >> 10)) + _escape(0xDC00 + (v & 0x3FF)))
    return tuple(out)


def other_keys_dfa(any_string: DFA, named: tuple[str, ...]) -> DFA:
    """Strings of `any_string` (the DFA of every quoted JSON string) that spell none of `named`.

    Trie nodes are states that also know where `any_string` is (its state after the same
    bytes); a byte the trie lacks continues in a copy of `any_string`; a closing quote after a
    whole named key leads nowhere."""
    a_rows = any_string.table[:, any_string.byte_classes]  # (states, 256)
    after_quote = int(a_rows[0, _QUOTE])
    edges: list[dict[int, int]] = [{_QUOTE: 1}, {}]  # per trie node: byte -> node
    at: list[int] = [0, after_quote]  # per trie node: the any-string state
    ends: set[int] = set()  # trie nodes where a whole key has been read
    boundary: dict[tuple[int, str], int] = {}  # (node, character) -> node after it
    for key in named:
        spelled = [spellings(ord(ch)) for ch in key]
        if not all(spelled):
            continue  # a lone surrogate: no JSON text spells this key
        node = 1
        for ch, forms in zip(key, spelled):
            nxt = boundary.get((node, ch))
            if nxt is None:
                nxt = boundary[(node, ch)] = _walk(edges, at, a_rows, node, forms[0], None)
                for form in forms[1:]:
                    _walk(edges, at, a_rows, node, form, nxt)
            node = nxt
        ends.add(node)
    if min(at) < 0:
        raise ValueError("a key spelling that any_string rejects: not the DFA of every JSON string")
    # Byte classes: any_string's, split where the trie's edge labels tell bytes apart.
    signature: dict[int, list[int]] = {}
    for out in edges:
        for byte, target in out.items():
            signature.setdefault(byte, []).append(target)
    ids: dict[tuple, int] = {}
    classes = np.array([ids.setdefault((c, tuple(signature.get(x, ()))), len(ids))
                        for x, c in enumerate(any_string.byte_classes.tolist())], dtype=np.int32)
    reps = np.unique(classes, return_index=True)[1]
    n_trie, n_any = len(edges), any_string.n_states
    rows = a_rows[:, reps]
    table = np.empty((n_trie + n_any, len(reps)), dtype=np.int32)
    table[n_trie:] = np.where(rows >= 0, rows + n_trie, -1)
    table[:n_trie] = table[n_trie + np.asarray(at)]
    src = [node for node, out in enumerate(edges) for _ in out]
    byte = [b for out in edges for b in out]
    table[src, classes[byte]] = [t for out in edges for t in out.values()]
    table[list(ends), classes[_QUOTE]] = -1
    accepting = np.zeros(n_trie + n_any, dtype=np.bool_)
    accepting[n_trie:] = any_string.accepting
    table, accepting = quotient(table, np.arange(len(table), dtype=np.int64), accepting)  # the reachable part
    return DFA(classes, table, accepting)


def other_keys_bound(any_string: DFA, named: tuple[str, ...]) -> int:
    """At most how many states other_keys_dfa(any_string, named) has (without building it):
    a trie node per byte set of every spelling, plus the copy of any_string."""
    return 2 + any_string.n_states + sum(_spelled_length(ord(ch)) for key in named for ch in key)


@lru_cache(maxsize=4096)
def _spelled_length(c: int) -> int:
    return sum(len(form) for form in spellings(c))


def _walk(edges: list[dict[int, int]], at: list[int], a_rows: np.ndarray, node: int,
          form: list[tuple[int, ...]], last: int | None) -> int:
    """Add the path of one spelling from `node` (ending at `last`, or a new node); returns its
    end. Spellings are a prefix code, so paths share prefixes but never end inside another."""
    for i, byte_set in enumerate(form):
        target = edges[node].get(byte_set[0])
        if target is None:
            if i == len(form) - 1 and last is not None:
                target = last
            else:
                target = len(edges)
                edges.append({})
                at.append(int(a_rows[at[node], byte_set[0]]))
            for b in byte_set:
                edges[node][b] = target
        node = target
    return node
