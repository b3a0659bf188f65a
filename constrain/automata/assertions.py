"""Zero-width assertions (lookarounds, `\\b`/`\\B`, `^`/`$` anywhere) lowered to automata.

A regex with assertions but no backreferences still denotes a regular language. Each distinct
assertion gets a *marker*, a byte that UTF-8 text never contains (0xC0, 0xC1, 0xF5-0xFF), and
the pattern compiles with the marker in the assertion's place: M, the strings with a marker
wherever the pattern passed an assertion. Where an assertion fails is a language over
characters with one marker m: `(?!Y)` fails in Σ* m Y Σ*, `(?=Y)` in Σ* m Σ* minus Σ* m Y Σ*,
lookbehinds in the mirror images, `^` in Σ+ m Σ*, `$` in Σ* m Σ+, `\\b` where m sits between two
word or two non-word characters (ASCII \\w; the ends count as non-word), `\\B` where it does not.
Taken to pass over the other markers, this "bad" language is subtracted from M (a product of
DFAs; where M can pass the same assertion twice, inside a repeat, a subset construction in
step with M guesses which pass is the bad one). Erasing the markers then leaves exactly the
strings that match with every assertion holding wherever the pattern met it. An assertion's
body may hold assertions itself: its language is computed the same way one level down, with
its own marker as a literal byte. Everything is exact; automaton sizes (Limits) or more than
13 distinct assertions at one level can make a pattern fail, with LimitExceededError or
UnsupportedRegexError.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Optional

import numpy as np

from ..errors import EmptyLanguageError, LimitExceededError, UnsupportedRegexError
from ..limits import Limits
from ..sorted_sets import sorted_unique
from . import ir
from .algebra import difference, intersect, union
from .char_graph import char_graph
from .charset import complement
from .dfa import DFA, determinize, minimize
from .nfa import NFA, build_nfa
from .regex_escapes import WORD, Anchor, unicode_class
from .regex_parser import Look, anchored, lower, parse_tree, with_pattern

MARKERS = (0xC0, 0xC1, *range(0xF5, 0x100))  # bytes that never occur in UTF-8 text

ANY: ir.Chars = ir.Chars(((0, 0x10FFFF),))
ANY_STAR = ("rep", ANY, 0, None, -1)  # parse-tree form (lower passes IR leaves through)
_WORD = ir.Chars(WORD)
_NON_WORD = ir.Chars(complement(WORD))


def regex_language(pattern: str, search: bool = False, limits: Optional[Limits] = None) -> ir.Node:
    """The IR over characters of the strings `pattern` matches: as a whole (re.fullmatch), or
    with `search` somewhere in them (re.search, JSON Schema `pattern`), `^`/`$` then anchoring
    the match. Plain IR where no assertion is left after dropping edge anchors; otherwise an
    ir.Graph over characters of the exact automaton (so callers can still map characters to
    their spellings). Raises EmptyLanguageError when no string matches."""
    return _regex_language(pattern, search, limits or Limits())


@lru_cache(maxsize=512)
def _regex_language(pattern: str, search: bool, limits: Limits) -> ir.Node:
    """regex_language, remembered: JSON Schema asks for a pattern's language once per spelling
    (decoded, canonical, quoted keys), and the same patterns recur across schemas."""
    return ir.alt(*(char_graph(p) if isinstance(p, DFA) else p for p in _parts(pattern, search, limits)))


def regex_automaton(pattern: str, limits: Optional[Limits] = None) -> "ir.Node | DFA":
    """The strings `pattern` matches as a whole: plain IR where it has no assertions (as
    regex_language), else the exact automaton as a DFA over UTF-8 bytes, not turned into a
    graph over characters: for callers that only need bytes (Lark terminals: SQL's keyword
    lookahead spent a third of its ~8 ms on the graph and on building the DFA back from it)."""
    (part,) = _parts(pattern, False, limits or Limits())
    return part


@lru_cache(maxsize=512)
def _parts(pattern: str, search: bool, limits: Limits) -> tuple:
    """The pattern's language as alternatives: IR, or DFAs where assertions made automata."""
    tree = parse_tree(pattern)
    groups: dict[tuple[bool, bool], list[object]] = {}
    # A search for A|B is a search for A or one for B: alternatives anchored alike (on the
    # left, on the right) are searched together, with one padding.
    branches = tree[1] if search and isinstance(tree, tuple) and tree[0] == "alt" else [tree]
    for branch in branches:
        key = (search and not anchored(branch, "^"), search and not anchored(branch, "$"))
        groups.setdefault(key, []).append(branch)
    parts: list[object] = []
    for (left, right), members in groups.items():
        alts = members[0] if len(members) == 1 else ("alt", members)
        padded = ("seq", [ANY_STAR] * left + [alts] + [ANY_STAR] * right)
        try:
            parts.append(lower(padded, not left, not right))
            continue
        except UnsupportedRegexError:
            pass  # an assertion: build the automaton
        try:
            dfa = _Lowering(limits).language(padded, not left, not right, ())
        except UnsupportedRegexError as exc:
            raise with_pattern(exc, pattern) from None
        if dfa is not None:
            parts.append(dfa)
    if not parts:
        raise EmptyLanguageError(f"the pattern {pattern!r} matches no string at all")
    return tuple(parts)


def marked_language(tree: object, literals: tuple[int, ...], limits: Limits) -> Optional[DFA]:
    """The DFA over bytes of the strings the parse tree `tree` matches as a whole with its
    assertions holding, where the marker bytes `literals` (leaves of `tree`: marker_leaf) stay in
    the strings and every assertion passes over them; None where no string matches."""
    return _Lowering(limits).language(tree, True, True, literals)


def _flat_items(tree: object) -> list[object]:
    """The items of a sequence, nested sequences spliced in (a group is its items); [tree]
    for anything else."""
    if isinstance(tree, tuple) and tree[0] == "seq":
        return [x for item in tree[1] for x in _flat_items(item)]
    return [tree]


def _has_assertion(tree: object) -> bool:
    if isinstance(tree, (Look, Anchor)):
        return True
    if isinstance(tree, (ir.Chars, ir.Embedded)):
        return False
    if tree[0] == "rep":  # type: ignore[index]
        return _has_assertion(tree[1])  # type: ignore[index]
    return any(_has_assertion(t) for t in tree[1])  # type: ignore[index]


def _freeze(node: object) -> object:
    """A hashable key of a parse tree, blind to positions: equal assertions share a marker."""
    if isinstance(node, Anchor):
        return ("anchor", node.kind, node.unicode)
    if isinstance(node, Look):
        return ("look", node.kind, _freeze(node.body))
    if isinstance(node, (ir.Chars, ir.Embedded)):
        return node
    if node[0] == "rep":  # type: ignore[index]
        return ("rep", _freeze(node[1]), node[2], node[3])  # type: ignore[index]
    return (node[0], tuple(_freeze(n) for n in node[1]))  # type: ignore[index]


def marker_leaf(b: int) -> ir.Embedded:
    """The single byte `b` (a marker) as an IR leaf."""
    classes = np.zeros(256, dtype=np.int32)
    classes[b] = 1
    return ir.Embedded(DFA(classes, np.array([[-1, 1], [-1, -1]]), np.array([False, True])))


def _at_most_once(dfa: DFA, b: int) -> bool:
    """Does no string of `dfa` hold the byte `b` twice?"""
    col = dfa.table[:, dfa.byte_classes[b]]
    frontier = sorted_unique(col[col >= 0])
    seen = np.zeros(dfa.n_states, dtype=bool)
    seen[frontier] = True
    while frontier.size:
        if (col[frontier] >= 0).any():
            return False
        nxt = dfa.table[frontier].ravel()
        nxt = sorted_unique(nxt[nxt >= 0])
        frontier = nxt[~seen[nxt]]
        seen[frontier] = True
    return True


def _ignore(dfa: DFA, loops: tuple[int, ...]) -> DFA:
    """`dfa` with the bytes `loops`, on which it has no transitions, allowed anywhere (a
    self-loop on every state): still deterministic."""
    n, k = dfa.n_states, dfa.n_classes
    classes = dfa.byte_classes.copy()
    classes[list(loops)] = k
    table = np.hstack((dfa.table, np.arange(n, dtype=np.int32)[:, None]))
    return DFA(classes, table, dfa.accepting)


class _Lowering:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.deadline = time.perf_counter() + limits.max_compile_seconds

    def compile(self, node: ir.Node) -> Optional[DFA]:
        """The DFA of `node`; None when its language is empty."""
        try:
            return determinize(build_nfa(node, self.limits.max_nfa_states), self.limits, self.deadline)
        except EmptyLanguageError:
            return None

    def language(self, tree: object, at_start: bool, at_end: bool, literals: tuple[int, ...]) -> Optional[DFA]:
        """The DFA (over characters and the marker bytes `literals` that `tree` holds as IR
        leaves) of the strings `tree` matches with its assertions holding; None if none."""
        if not literals:
            shortcut = self.edge_lookahead(tree, at_start, at_end)
            if shortcut is not None:
                return shortcut[0]
        pool = [m for m in MARKERS if m not in literals]
        found: dict[object, tuple[int, object]] = {}

        def marker(node: object) -> ir.Node:
            key = _freeze(node)
            if key not in found:
                if not pool:
                    raise UnsupportedRegexError(
                        f"more than {len(MARKERS)} distinct assertions (lookarounds, anchors, \\b) "
                        "at one level are not supported", "", node.pos  # type: ignore[attr-defined]
                    )
                found[key] = (pool.pop(0), node)
            return marker_leaf(found[key][0])

        marked = self.compile(lower(tree, at_start, at_end, marker))
        if marked is None or not found:
            return marked
        for m, node in found.values():
            bad = self.bad(node, m)
            if bad is None:
                continue
            try:
                if _at_most_once(marked, m):  # the usual case: a product of two DFAs
                    marked = difference(marked, _ignore(bad, tuple(b for b in MARKERS if b != m)), self.limits)
                else:
                    marked = self.without_any_bad_pass(marked, bad, m)
            except EmptyLanguageError:
                return None
        return self.erase(marked, tuple(m for m, _ in found.values()))

    def edge_lookahead(self, tree: object, at_start: bool, at_end: bool) -> Optional[tuple[Optional[DFA]]]:
        """A lookahead at an edge, as a product of DFAs instead of markers (Lark's keyword
        exclusions, `(?!(select|from|...)(?!\\w))[a-z_]\\w*`, spent ~5 ms in the general way):
        `(?=Y)X` / `(?!Y)X` over the whole text is X ∩ YΣ* / X − YΣ*; a lookahead followed by
        nothing but Σ* (`K(?!W).*`, as Y's own inner one) is Σ* ∩ WΣ* / Σ* − WΣ*; alternatives
        each so. Only at the top level (no marker bytes in the strings); (None,) is the empty
        language, None: no such edge."""
        items = _flat_items(tree)
        if not items:
            return None
        first = items[0]
        if len(items) == 1 and isinstance(first, tuple) and first[0] == "alt":  # each branch so
            plain, dfas = [], []
            for branch in first[1]:
                if not _has_assertion(branch):
                    plain.append(lower(branch, at_start, at_end))
                    continue
                dfa = self.language(branch, at_start, at_end, ())
                if dfa is not None:
                    dfas.append(dfa)
            if plain:  # (the plain branches in one automaton, the others joined by products:
                dfa = self.compile(ir.alt(*plain))  # embedding built DFAs in an NFA again cost more)
                if dfa is not None:
                    dfas.append(dfa)
            if not dfas:
                return (None,)
            found = dfas[0]
            for dfa in dfas[1:]:
                found = union(found, dfa, self.limits)
            return (found,)
        if at_start and at_end and isinstance(first, Look) and first.kind in ("=", "!"):
            rest = self.language(("seq", items[1:]), True, True, ())
            if rest is None:
                return (None,)
            ahead = self.language(("seq", [first.body, ANY_STAR]), True, True, ())
            if ahead is None:
                return (None,) if first.kind == "=" else (rest,)
            try:
                return ((intersect if first.kind == "=" else difference)(rest, ahead, self.limits),)
            except EmptyLanguageError:
                return (None,)
        if not at_end:
            return None
        k = len(items)
        while k and items[k - 1] == ANY_STAR:
            k -= 1
        look = items[k - 1] if 0 < k < len(items) else None
        if not (isinstance(look, Look) and look.kind in ("=", "!") and not _has_assertion(look.body)):
            return None
        anything = self.compile(ir.repeat(ANY, 0, None))
        ahead = self.compile(lower(("seq", [look.body, ANY_STAR]), False, True))
        if ahead is None:
            tail = anything if look.kind == "!" else None
        else:
            try:
                tail = (intersect if look.kind == "=" else difference)(anything, ahead, self.limits)  # type: ignore[arg-type]
            except EmptyLanguageError:
                tail = None
        if tail is None:
            return (None,)
        return (self.language(("seq", [*items[: k - 1], ir.Embedded(tail)]), at_start, True, ()),)

    def without_any_bad_pass(self, marked: DFA, bad: DFA, m: int) -> DFA:
        """Strings of `marked` none of whose m's (the assertion met more than once, inside a
        repeat) is a bad one: a subset construction over `bad` (each m may start a run of it,
        or be passed over like every other marker) in step with `marked`, so only the sets of
        runs that strings of `marked` can give arise (`bad` lifted on its own would track
        every set of positions of m)."""
        key = marked.byte_classes.astype(np.int64) * bad.n_classes + bad.byte_classes
        is_marker = np.zeros(256, dtype=bool)
        is_marker[list(MARKERS)] = True
        kinds = [(int(key[b]), 2 if b == m else int(is_marker[b])) for b in range(256)]
        reps: dict[tuple[int, int], int] = {}  # joint class -> its first byte
        for b in range(256):
            reps.setdefault(kinds[b], b)
        columns = list(reps.values())
        col_of = {kind: j for j, kind in enumerate(reps)}
        joint = np.array([col_of[kinds[b]] for b in range(256)], dtype=np.int32)
        mt, bt = marked.table.tolist(), bad.table.tolist()
        mc, bc = marked.byte_classes.tolist(), bad.byte_classes.tolist()
        start = (0, frozenset((0,)))
        index = {start: 0}
        order = [start]
        rows: list[list[int]] = []
        while len(rows) < len(order):
            q, runs = order[len(rows)]
            row = []
            for b in columns:
                q2 = mt[q][mc[b]]
                if q2 < 0:
                    row.append(-1)
                    continue
                if is_marker[b] and b != m:
                    runs2 = runs
                else:
                    runs2 = frozenset(t for t in (bt[r][bc[b]] for r in runs) if t >= 0)
                    if b == m:
                        runs2 |= runs
                nxt = (q2, runs2)
                if nxt not in index:
                    if len(order) >= self.limits.max_dfa_states:
                        raise LimitExceededError("DFA size (states)", self.limits.max_dfa_states, "Limits(max_dfa_states=...)")
                    index[nxt] = len(order)
                    order.append(nxt)
                row.append(index[nxt])
            rows.append(row)
            if len(rows) % 1024 == 0 and time.perf_counter() > self.deadline:
                raise LimitExceededError("compile time (s)", self.limits.max_compile_seconds, "Limits(max_compile_seconds=...)")
        accepting = np.array([bool(marked.accepting[q]) and not any(bad.accepting[r] for r in runs) for q, runs in order])
        return minimize(joint, np.array(rows, dtype=np.int32), accepting)

    def bad(self, node: object, m: int) -> Optional[DFA]:
        """Strings of characters with one marker m where the assertion `node` fails."""
        mark = marker_leaf(m)
        anything = ir.repeat(ANY, 0, None)
        if isinstance(node, Look):
            ahead = node.kind in ("=", "!")
            items = [ANY_STAR, mark, node.body, ANY_STAR] if ahead else [ANY_STAR, node.body, mark, ANY_STAR]
            matched = self.language(("seq", items), False, False, (m,))
            if node.kind in ("!", "<!"):
                return matched
            every = self.compile(ir.concat(anything, mark, anything))
            if matched is None:
                return every
            try:
                return difference(every, matched, self.limits)  # type: ignore[arg-type]
            except EmptyLanguageError:
                return None
        assert isinstance(node, Anchor)
        if node.kind == "^":
            return self.compile(ir.concat(ir.repeat(ANY, 1, None), mark, anything))
        if node.kind == "$":
            return self.compile(ir.concat(anything, mark, ir.repeat(ANY, 1, None)))
        word, non_word = (ir.Chars(unicode_class("w")), ir.Chars(unicode_class("W"))) if node.unicode else (_WORD, _NON_WORD)
        word_before = ir.concat(anything, word)
        word_after = ir.concat(word, anything)
        other_before = ir.alt(ir.EMPTY, ir.concat(anything, non_word))  # the start counts as non-word
        other_after = ir.alt(ir.EMPTY, ir.concat(non_word, anything))
        if node.kind == "b":  # fails where both sides are alike
            return self.compile(ir.alt(ir.concat(word_before, mark, word_after), ir.concat(other_before, mark, other_after)))
        return self.compile(ir.alt(ir.concat(word_before, mark, other_after), ir.concat(other_before, mark, word_after)))

    def erase(self, dfa: DFA, markers: tuple[int, ...]) -> DFA:
        """`dfa` with the bytes `markers` read as the empty string."""
        n, table, classes = dfa.n_states, dfa.table, dfa.byte_classes
        rows = []
        b = 0
        while b < 256:  # runs of bytes of one class, erased bytes on their own
            e = b
            if b not in markers:
                while e + 1 < 256 and e + 1 not in markers and classes[e + 1] == classes[b]:
                    e += 1
                tgt = table[:, classes[b]]
                q = np.flatnonzero(tgt >= 0)
                rows.append(np.stack((q, np.full(len(q), b), np.full(len(q), e), tgt[q]), axis=1))
            b = e + 1
        eps = [np.stack((np.flatnonzero(dfa.accepting), np.full(int(dfa.accepting.sum()), n)), axis=1)]
        for b in markers:
            tgt = table[:, classes[b]]
            q = np.flatnonzero(tgt >= 0)
            eps.append(np.stack((q, tgt[q]), axis=1))
        nfa = NFA(n_states=n + 1, start=0, final=n)
        nfa.edge_blocks = [np.concatenate(rows).astype(np.int64)]
        nfa.eps_blocks = [np.concatenate(eps).astype(np.int64)]
        return determinize(nfa, self.limits, self.deadline)
