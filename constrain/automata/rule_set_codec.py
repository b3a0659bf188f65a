"""A RuleSet as a JSON header and integer arrays: what the disk cache keeps for a grammar of rules.

A Lark compile spends most of its time before any automaton exists (SQL: Lark's own loader and
the terminals' regexes, ~60 of ~70 ms), and the rules it ends with are the same for the same
text. Kept: rule names (CHECK rules included: return_checks.py), greedy flags, the bytes
greedy rules' ends refuse (end lookaheads), the start rule, each rule's IR as a table of nodes
(a subtree shared in memory is written once and shared again when read: Embedded nodes compare
by identity, so rules with equal IR must stay equal), and every DFA built by then (rules' and
Embedded nodes'). Rules not built yet are built on first use after loading, as before. Reading
runs no code: JSON and arrays only; anything malformed raises ValueError.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..limits import Limits
from . import ir
from .dfa import DFA
from .rules import RuleSet

FORMAT = 4  # (4: second_bytes, return_checks.py)


def encode_rule_set(rules: RuleSet) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """(header, arrays) for `rules` as they stand (the DFAs built so far included); ValueError
    where an Embedded DFA is still deferred (ir.Deferred, unbuilt)."""
    encoder = _Encoder()
    roots = [encoder.node(n) for n in rules.nodes]
    built = [[r, encoder.dfa(rules.dfas[r])] for r in range(rules.n_rules) if rules.built(r)]
    header = {
        "format": FORMAT,
        "names": list(rules.names),
        "greedy": [n for n, g in zip(rules.names, rules.greedy) if g],
        "refused": {n: _hex(bits) for n, bits in zip(rules.names, rules.refused) if bits},
        "start": rules.start,
        "second_bytes": None if rules.second_bytes is None else {
            name: {str(q): {str(b1): format(c, "x") for b1, c in by_byte.items()} for q, by_byte in per_state.items()}
            for name, per_state in rules.second_bytes.items()
        },
        "nodes": encoder.table,
        "roots": roots,
        "built": built,
        "minimal": encoder.minimal,
    }
    return header, encoder.arrays


def _hex(bits: "int | tuple[int, ...]") -> "str | list[str]":
    """A rule's refused bytes (one int, or one per state) as hex text."""
    return format(bits, "x") if type(bits) is int else [format(b, "x") for b in bits]  # type: ignore[union-attr]


def _unhex(text: Any) -> "int | tuple[int, ...]":
    if isinstance(text, str):
        return int(text, 16)
    return tuple(int(t, 16) for t in text)


def decode_rule_set(header: dict[str, Any], arrays: Any, limits: Limits) -> RuleSet:
    """The RuleSet encode_rule_set wrote; ValueError where the record is not one."""
    try:
        if header.get("format") != FORMAT:
            raise ValueError(f"rule set format {header.get('format')!r}, expected {FORMAT}")
        dfas = _unpack_dfas(arrays, frozenset(int(k) for k in header["minimal"]))
        nodes: list[ir.Node] = []
        for entry in header["nodes"]:
            nodes.append(_decode_node(entry, nodes, dfas))
        names = tuple(str(n) for n in header["names"])
        roots = tuple(_ref(nodes, k) for k in header["roots"])
        if len(roots) != len(names):
            raise ValueError("one IR root per rule expected")
        built = {int(r): dfas[int(k)] for r, k in header["built"]}
        refused = {str(n): _unhex(bits) for n, bits in header["refused"].items()}
        greedy = frozenset(header["greedy"])
        second = header["second_bytes"]
        if second is not None:
            second = {str(name): {int(q): {int(b1): int(c, 16) for b1, c in by_byte.items()} for q, by_byte in per_state.items()}
                      for name, per_state in second.items()}
            _check_second_bytes(second, dict(zip(names, roots)), greedy)
        return RuleSet(names, roots, int(header["start"]), limits, greedy, built, refused, second)
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise ValueError(f"malformed rule set record: {type(exc).__name__}: {exc}") from None


def _check_second_bytes(second: dict, roots: dict, greedy: frozenset) -> None:
    """ValueError unless each entry is a greedy rule's accepting state of its DFA, a byte, and
    a set of second bytes (return_checks.find_checks made them so)."""
    for name, per_state in second.items():
        dfa = getattr(roots.get(name), "dfa", None)
        if name not in greedy or not isinstance(dfa, DFA):
            raise ValueError(f"second bytes for {name!r}, which is no greedy rule with a DFA")
        for q, by_byte in per_state.items():
            if not 0 <= q < dfa.n_states or not dfa.accepting[q]:
                raise ValueError(f"second bytes for {name!r} at {q}, which is no accepting state")
            if any(not 0 <= b1 < 256 or not 0 < c < 1 << 257 for b1, c in by_byte.items()):
                raise ValueError(f"second bytes for {name!r} at {q}: a byte or set out of range")


class _Encoder:
    """Nodes in post-order (children before parents), each written once per object (keyed by
    id(): every node and DFA stays alive through the rule set while it is encoded)."""

    def __init__(self) -> None:
        self.table: list[list] = []
        self._packed: list[Any] = []
        self._ids: dict[int, int] = {}
        self._dfas: dict[int, int] = {}
        self.minimal: list[int] = []  # DFAs known minimal (glue.py relies on the flag)

    def dfa(self, dfa: Any) -> int:
        k = self._dfas.get(id(dfa))
        if k is None:
            k = self._dfas[id(dfa)] = len(self._dfas)
            self._packed.append(dfa)
            if dfa.minimal:
                self.minimal.append(k)
        return k

    @property
    def arrays(self) -> dict[str, np.ndarray]:
        """The DFAs packed into five arrays (one file entry per DFA array would cost a zip
        member and a header parse each on every load)."""
        dfas = self._packed
        layout = np.array([[d.n_states, d.table.shape[1], d.call_classes.size] for d in dfas], dtype=np.int64).reshape(-1, 3)
        return {
            "layout": layout,
            "classes": np.concatenate([d.byte_classes for d in dfas] or [np.zeros(0, np.int32)]),
            "tables": np.concatenate([d.table.ravel() for d in dfas] or [np.zeros(0, np.int32)]),
            "accepting": np.concatenate([d.accepting for d in dfas] or [np.zeros(0, np.bool_)]),
            "calls": np.concatenate([d.call_classes for d in dfas] or [np.zeros(0, np.int32)]),
        }

    def node(self, root: ir.Node) -> int:
        todo: list[tuple[Any, bool]] = [(root, False)]
        while todo:
            node, children_done = todo.pop()
            if id(node) in self._ids:
                continue
            kids = _children(node)
            if not children_done and any(id(c) not in self._ids for c in kids):
                todo.append((node, True))
                todo.extend((c, False) for c in reversed(kids))
                continue
            self._ids[id(node)] = len(self.table)
            self.table.append(self._entry(node))
        return self._ids[id(root)]

    def _entry(self, node: Any) -> list:
        ids = self._ids
        if isinstance(node, ir.Chars):
            return ["c", [list(r) for r in node.ranges]]
        if isinstance(node, ir.Concat):
            return ["s", [ids[id(c)] for c in node.items]]
        if isinstance(node, ir.Alt):
            return ["a", [ids[id(c)] for c in node.items]]
        if isinstance(node, ir.Repeat):
            return ["r", ids[id(node.item)], node.min, node.max]
        if isinstance(node, ir.Deferred) and "_dfa" not in node.__dict__:
            raise ValueError("an automaton of the grammar is not built yet (ir.Deferred): not stored, "
                             "building it here would cost what deferring it saved")
        if isinstance(node, ir.Embedded):
            return ["e", self.dfa(node.dfa)]
        if isinstance(node, ir.Graph):
            return ["g", node.n_states, node.start, list(node.finals), [[f, t, ids[id(e)]] for f, t, e in node.edges]]
        if isinstance(node, ir.RuleRef):
            return ["f", node.name]
        raise TypeError(f"no encoding for IR node {type(node).__name__}")


def _unpack_dfas(arrays: Any, minimal: frozenset) -> list[DFA]:
    layout = np.asarray(arrays["layout"], dtype=np.int64)
    classes, tables, accepting, calls = arrays["classes"], arrays["tables"], arrays["accepting"], arrays["calls"]
    if layout.ndim != 2 or layout.shape[1] != 3 or classes.size != 256 * len(layout):
        raise ValueError("malformed DFA layout")
    if tables.size != int((layout[:, 0] * layout[:, 1]).sum()) or accepting.size != int(layout[:, 0].sum()) \
            or calls.size != int(layout[:, 2].sum()):
        raise ValueError("DFA arrays do not match their layout")
    out = []
    t = a = c = 0
    for k, (n, cols, n_calls) in enumerate(layout.tolist()):
        dfa = DFA(classes[256 * k:256 * (k + 1)], tables[t:t + n * cols].reshape(n, cols), accepting[a:a + n], calls[c:c + n_calls])
        dfa.minimal = k in minimal
        out.append(dfa)
        t, a, c = t + n * cols, a + n, c + n_calls
    return out


def _children(node: Any) -> tuple:
    if isinstance(node, (ir.Concat, ir.Alt)):
        return node.items
    if isinstance(node, ir.Repeat):
        return (node.item,)
    if isinstance(node, ir.Graph):
        return tuple(e for _, _, e in node.edges)
    return ()


def _ref(nodes: list, k: Any) -> ir.Node:
    """nodes[k], where k points to a node already read (post-order); anything else is damage."""
    if not isinstance(k, int) or not 0 <= k < len(nodes):
        raise ValueError(f"IR node reference {k!r} out of range")
    return nodes[k]


def _decode_node(entry: list, nodes: list, dfas: list[DFA]) -> ir.Node:
    def ref(k: Any) -> ir.Node:
        return _ref(nodes, k)

    tag = entry[0]
    if tag == "c":
        return ir.Chars(tuple((int(lo), int(hi)) for lo, hi in entry[1]))
    if tag == "s":
        return ir.Concat(tuple(ref(k) for k in entry[1]))
    if tag == "a":
        return ir.Alt(tuple(ref(k) for k in entry[1]))
    if tag == "r":
        hi = entry[3]
        return ir.Repeat(ref(entry[1]), int(entry[2]), None if hi is None else int(hi))
    if tag == "e":
        return ir.Embedded(dfas[int(entry[1])])
    if tag == "g":
        edges = tuple((int(f), int(t), ref(k)) for f, t, k in entry[4])
        return ir.Graph(int(entry[1]), int(entry[2]), tuple(int(f) for f in entry[3]), edges)
    if tag == "f":
        return ir.call(str(entry[1]))
    raise ValueError(f"unknown IR node tag {tag!r}")
