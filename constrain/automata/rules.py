"""Grammars of rules: one byte DFA per rule, with call edges, run with a stack of frames.

A rule's DFA reads bytes and *call symbols* (one per callee rule). A matcher position is a set
of stacks (nondeterminism is rare in practice: JSON keeps one); a stack is a linked list of
frames `(rule, state, parent)`, immutable and hashable, so histories, rollback and fork stay
cheap. The top frame is the rule being read; a parent frame holds the state its rule returns to.
Byte steps over stacks are stack_semantics.StackSemantics.

Left recursion (a rule reaching itself without reading a byte) would push forever and is
rejected at compile time; every rule must derive some string (checked too), which makes every
live DFA state completable in any context: what the token index relies on.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Collection, Mapping, NamedTuple, Optional, Sequence

import numpy as np

from ..errors import EmptyLanguageError, GrammarError, LimitExceededError
from ..limits import Limits
from . import ir
from .dead_paths import DeadReturns, trim
from .dfa import DFA, determinize
from .glue import glued_dfa, glued_raw
from .nfa import build_nfa, nfa_states
from .refusals import END_OF_TEXT, check_refused, refusals  # noqa: F401 (END_OF_TEXT: read from here)
from .return_checks import Confirm, SecondBytes, find_checks, with_check_rules
from .rule_facts import FirstCalls, callees as _callees, nullable_rules, productive_rules, without_calls
from .word_graph import word_graph_dfa, word_graph_fits

Stack = Optional[tuple]  # (rule, state, parent, depth) | None below the bottom frame


class CompiledRule(NamedTuple):
    """One rule, built: its DFA over bytes and call columns, per state the (callee, return
    state) of each call edge in call-column order, and per state whether it can call or return."""

    dfa: DFA
    calls: tuple[tuple[tuple[int, int], ...], ...]
    exits: np.ndarray


class RuleSet:
    """The compiled rules. A rule's DFA, calls and exits are built on its first use (`rule(r)`,
    or the `dfas` / `calls` / `exits` views): the first masks of a schema reach a few of its
    rules, most rules are reached late or never. What needs every rule (which derive nothing,
    left recursion, NFA sizes) was settled from the IR by compile_rules. Thread-safe."""

    def __init__(
        self, names: tuple[str, ...], nodes: tuple[ir.Node, ...], start: int, limits: Limits,
        greedy: Collection[str] = (), built: Optional[Mapping[int, DFA]] = None,
        refused: Optional[Mapping[str, int]] = None, second_bytes: Optional[SecondBytes] = None,
    ) -> None:
        """`second_bytes` (return_checks.find_checks; None: none looked for): the CHECK rules they
        need are appended (those `names` holds already are reused); `return_checks` says so."""
        checks: tuple[dict[int, dict[int, int]], ...] = ({},) * len(names)  # (shared, never written)
        if second_bytes is not None:
            names, nodes, greedy, refused, checks = with_check_rules(names, nodes, greedy, refused or {}, second_bytes)
        self.second_bytes = second_bytes
        self.checks = checks  # per rule: {accepting state: {byte it reads: the CHECK its return before it pushes}}
        ids = {name: k for k, name in enumerate(names)}
        self.names = names
        # Greedy rules (a Lark terminal's longest match): see StackSemantics.
        self.greedy = tuple(name in greedy for name in names)
        self.any_greedy = any(self.greedy)
        # Per rule: the bytes a greedy rule's return may not be followed by beyond those it reads (a Lark
        # terminal's end lookahead: end_guard.py, end_window.py), one bit each, and END_OF_TEXT; one int or one per state.
        self.refused = tuple(refusals((refused or {}).get(name, 0)) for name in names)
        self.nodes = nodes  # per rule: its IR, calls of rules that derive nothing removed
        self.start = start
        self.callees = tuple(tuple(ids[c] for c in _callees(n)) for n in nodes)  # per call column
        first: dict[tuple[ir.Node, bool, int], int] = {}
        # Rules with equal IR have the same DFA and exits (strings, numbers, "any value" recur);
        # a greedy rule's returns differ from a plain one's, and by what they refuse.
        self.same = tuple(first.setdefault(key, r) for r, key in enumerate(zip(nodes, self.greedy, self.refused)))
        self._limits = limits
        self._built: list[Optional[CompiledRule]] = [None] * len(names)
        self._dead = DeadReturns(self)
        self.pruned: dict[int, set[int]] = {}  # rule -> callees whose edges no text takes (dead_paths.py)
        for r, dfa in (built or {}).items():  # (DFAs compile_rules built whole)
            self._built[r] = self._compiled(r, dfa)
        self._lock = threading.Lock()
        self.dfas: Sequence[DFA] = _View(self, 0)
        self.calls: Sequence[tuple] = _View(self, 1)
        self.exits: Sequence[np.ndarray] = _View(self, 2)

    @property
    def return_checks(self) -> bool:  # (may greedy rules return on condition of the byte after the next one)
        return self.second_bytes is not None

    def check_after(self, r: int, q: int, byte: int) -> int:
        """The CHECK rule that greedy rule r's return in state q before `byte` (which q reads)
        pushes, or -1 where it may not return there (return_checks.py)."""
        at = self.checks[r].get(q)
        return -1 if at is None else at.get(byte, -1)

    def refused_at(self, r: int, q: int) -> int:
        """What greedy rule r's return in state q may not be followed by beyond what it reads."""
        bits = self.refused[r]
        return bits if type(bits) is int else bits[q]

    @property
    def n_rules(self) -> int:
        return len(self.names)

    @property
    def n_built(self) -> int:
        return sum(b is not None for b in self._built)

    def built(self, r: int) -> bool:
        return self._built[r] is not None

    def rule(self, r: int) -> CompiledRule:
        built = self._built[r]
        if built is None:
            if self.same[r] != r:  # equal IR: equal callees, so equal calls too
                built = self._built[r] = self.rule(self.same[r])
                return built
            with self._lock:
                built = self._built[r]
                if built is None:
                    built = self._built[r] = self._compile(r)
        return built

    def build_near_start(self, budget: int) -> None:
        """Build the rules nearest the start rule (breadth first over calls) while their NFAs
        add up to at most `budget` states. Small grammars are then built whole at compile time
        (masks never wait for a DFA); large ones pay for their first rules only. A rule over
        EAGER_NFA_STATES waits for its first use all the same (compile_rules built those that
        a limit could stop): one such DFA costs as much as a whole small grammar. Then the
        paths left dead by call edges no text takes are dropped (dead_paths.trim)."""
        seen = {self.start}
        todo = [self.start]
        spent = 0
        for r in todo:
            size = nfa_states(self.nodes[r])
            if size <= EAGER_NFA_STATES:
                spent += size
                if spent > budget:
                    break
                self.rule(r)
            for k in self.callees[r]:
                if k not in seen:
                    seen.add(k)
                    todo.append(k)
        trim(self, self.pruned)

    def _compile(self, r: int) -> CompiledRule:
        return self._compiled(r, _build_dfa(self.names[r], self.nodes[r], self._limits))

    def _compiled(self, r: int, dfa: DFA) -> CompiledRule:
        edges = _call_edges(dfa, self.callees[r])
        calls = self._dead.live_calls(dfa, edges)
        if calls is not edges and calls != edges:
            self.pruned[r] = {k for was, kept in zip(edges, calls) for k, _ in set(was) - set(kept)}
        return CompiledRule(dfa, calls, _exits(dfa, calls))

    def replace(self, r: int, dfa: DFA, calls: tuple) -> None:
        """Rule r (and the rules sharing its DFA) built as `dfa` with `calls` (dead_paths.trim)."""
        rule = CompiledRule(dfa, calls, _exits(dfa, calls))
        for k in range(self.n_rules):
            if self.same[k] == r and self._built[k] is not None:
                self._built[k] = rule


class _View(Sequence):
    """rules.dfas[r], rules.calls[r], rules.exits[r]: one field of rule r, built on access."""

    def __init__(self, rules: RuleSet, field: int) -> None:
        self._rules, self._field = rules, field

    def __len__(self) -> int:
        return self._rules.n_rules

    def __getitem__(self, r):  # type: ignore[override]
        return self._rules.rule(r)[self._field]


# A compile builds the rules nearest the start up to this many NFA states in all (see
# RuleSet.build_near_start): whole grammars for most schemas, so that decoding does not wait
# for DFAs (on JSONSchemaBench samples, building only on first use cut compile p50 by 0.3-3 ms
# but doubled the per-token mask p99); the first rules of very large ones.
NEAR_START_NFA_STATES = 50_000

# Rules with larger NFAs meet their limits in compile_rules (_meet_limits): those are the ones
# that can exceed max_dfa_states or take long, and a limit should stop the compile, not a
# later mask. Their DFAs wait for their first use, like those of the others not near the start.
EAGER_NFA_STATES = 10_000


def _build_dfa(name: str, node: ir.Node, limits: Limits) -> DFA:
    try:
        return _rule_dfa(node, limits.max_nfa_states, limits.max_dfa_states, limits.max_compile_seconds)[0]
    except GrammarError as exc:
        raise GrammarError(f"rule {name!r}: {exc}") from None
    except LimitExceededError as exc:
        raise exc.in_rule(name) from None


@lru_cache(maxsize=4096)
def _rule_dfa(node: ir.Node, max_nfa: int, max_dfa: int, seconds: float) -> tuple[DFA, tuple[str, ...]]:
    """A rule's DFA over bytes and its own call columns; shared by every grammar that has the
    same rule (strings, numbers, "any JSON value" recur in almost every schema)."""
    callees = _callees(node)
    if type(node) is ir.Embedded and node.dfa.minimal and not len(node.dfa.call_classes):
        return node.dfa, callees  # (a Lark terminal's rule: its DFA is built already)
    limits = Limits(max_nfa_states=max_nfa, max_dfa_states=max_dfa, max_compile_seconds=seconds)
    calls = {name: k for k, name in enumerate(callees)}
    glued = glued_dfa(node, calls, limits)  # members of key languages, without a subset construction
    if glued is not None:
        return glued, callees
    try:
        words = word_graph_dfa(node, calls, limits)  # objects: a Graph of fixed words
        if words is not None:
            return words, callees
        nfa = build_nfa(node, max_nfa, calls)
        return determinize(nfa, limits, n_calls=len(callees)), callees
    except EmptyLanguageError:
        # A rule with no derivation at all (a `false` schema, an empty enum): one dead state.
        # Only reached for rules no live rule calls (compile_rules removed their calls).
        empty = DFA(np.zeros(256), np.full((1, 1), -1), np.zeros(1, dtype=np.bool_), np.zeros(len(callees)))
        return empty, callees


def _meet_limits(name: str, node: ir.Node, limits: Limits) -> Optional[DFA]:
    """Raise now what building this rule's DFA would raise for a limit: parts that glue
    (glue.py) meet no limit, and their DFAs wait for the rule's first use; otherwise the subset
    construction, which the limits bound, runs now, and the DFA it made is returned (its first
    use would repeat the work: SQL's select clause has 13,130 NFA states, ~20 ms)."""
    if _member_of_deferred_keys(node, limits.max_dfa_states):
        return None
    calls = {callee: k for k, callee in enumerate(_callees(node))}
    try:
        if glued_raw(node, calls, limits) is None and not word_graph_fits(node, calls, limits):
            return _rule_dfa(node, limits.max_nfa_states, limits.max_dfa_states, limits.max_compile_seconds)[0]
    except GrammarError as exc:
        raise GrammarError(f"rule {name!r}: {exc}") from None
    except LimitExceededError as exc:
        raise exc.in_rule(name) from None
    return None


def _member_of_deferred_keys(node: ir.Node, max_states: int) -> bool:
    """Is `node` a Deferred key language, then a simple tail (bytes, bounded runs of one
    character set, calls), whose DFA provably meets `max_states`? The keys' language is
    prefix-free (see ir.Deferred), so the rule's DFA has at most its states plus one per tail
    position: no limit can stop it, and its DFA (an object's other keys: a trie of every
    spelling of hundreds of keys, 8 ms for 258) waits for first use like the rest."""
    if type(node) is not ir.Concat or not node.items or type(node.items[0]) is not ir.Deferred:  # type: ignore[union-attr]
        return False
    bound = node.items[0].max_states + 1  # type: ignore[union-attr]
    for item in node.items[1:]:  # type: ignore[union-attr]
        kind = type(item)
        if kind is ir.Chars or kind is ir.RuleRef:
            bound += 1
        elif kind is ir.Concat and all(type(x) is ir.Chars for x in item.items):  # type: ignore[union-attr]
            bound += len(item.items)  # type: ignore[union-attr]
        elif kind is ir.Repeat and type(item.item) is ir.Chars and item.max is not None:  # type: ignore[union-attr]
            bound += item.max + 1  # type: ignore[union-attr]
        else:
            return False
    return bound <= max_states


def compile_rules(
    rules: Mapping[str, ir.Node], start: str, limits: Limits = Limits(), greedy: Collection[str] = (),
    refused: Optional[Mapping[str, int]] = None, return_checks: bool = False, confirm: Optional[Confirm] = None,
) -> RuleSet:
    """The RuleSet of `rules` (name -> IR, RuleRefs naming other rules) started at `start`.
    `greedy` names rules that return only where they cannot read the next byte (see
    StackSemantics); they call no rule and never derive the empty string. `refused`: per greedy
    rule, the bytes (one bit each) its return may not be followed by besides those, and
    END_OF_TEXT where the text may not end after it. `return_checks`: greedy rules may return
    on condition of the byte after the next one (return_checks.py), as `confirm` agrees.
    Raises GrammarError for an unknown rule, a start rule that derives nothing (listing the
    rules that derive nothing in `empty_rules`) and left recursion; LimitExceededError for a
    rule over max_nfa_states (or, for large rules, max_dfa_states). The DFAs of the other rules
    are built on each rule's first use."""
    if start not in rules:
        raise GrammarError(f"start rule {start!r} is not defined")
    names = tuple(rules)
    callees = {name: _callees(node) for name, node in rules.items()}
    callers: dict[str, set[str]] = {}
    for name in names:
        for c in callees[name]:
            if c not in rules:
                raise GrammarError(f"rule {name!r}: reference to unknown rule {c!r}")
            callers.setdefault(c, set()).add(name)
    made: dict[str, DFA] = {}
    for name in names:
        size = nfa_states(rules[name])
        if size > limits.max_nfa_states:
            raise LimitExceededError("NFA size", limits.max_nfa_states, "Limits(max_nfa_states=...) passed to Compiler", name)
        if size > EAGER_NFA_STATES:
            dfa = _meet_limits(name, rules[name], limits)
            if dfa is not None:
                made[name] = dfa
    productive = productive_rules(rules, callers)
    if start not in productive:
        exc = GrammarError("the grammar accepts no document at all (its start rule derives nothing)")
        exc.empty_rules = tuple(name for name in names if name not in productive)  # type: ignore[attr-defined]
        raise exc
    dead = frozenset(names) - productive
    nodes = tuple(
        without_calls(rules[n], dead) if dead and n in productive and dead.intersection(callees[n]) else rules[n]
        for n in names
    )
    nullable = nullable_rules(rules, callers)
    for name in greedy:
        if name not in rules or callees[name] or name in nullable:
            raise GrammarError(f"greedy rule {name!r} must exist, call no rule and not derive the empty string")
    for name, bits in (refused or {}).items():
        check_refused(name, refusals(bits), name in greedy, rules[name])
    _check_no_left_recursion(names, nodes, productive, nullable)
    # (a DFA _meet_limits made is kept where no call of a rule that derives nothing was removed)
    built = {k: made[name] for k, name in enumerate(names) if name in made and nodes[k] is rules[name]}
    found = find_checks(names, nodes, greedy, refused or {}, confirm) if return_checks else None
    return RuleSet(names, nodes, names.index(start), limits, frozenset(greedy), built, refused, found)


def _call_edges(dfa: DFA, targets: tuple[int, ...]) -> tuple:
    """Per state, the (callee, return state) of each defined call edge, in call-column order."""
    calls: list[tuple] = [()] * dfa.n_states
    if not targets:
        return tuple(calls)
    sub = dfa.table[:, dfa.call_classes]
    qs, ks = np.nonzero(sub >= 0)  # row-major: by state, then by call column
    per_state: dict[int, list[tuple[int, int]]] = {}
    for q, k, t in zip(qs.tolist(), ks.tolist(), sub[qs, ks].tolist()):
        per_state.setdefault(q, []).append((targets[k], t))
    for q, edges in per_state.items():
        calls[q] = tuple(edges)
    return tuple(calls)


def _exits(dfa: DFA, calls: tuple) -> np.ndarray:
    """Per state: can it call or return."""
    return np.fromiter(map(bool, calls), dtype=np.bool_, count=dfa.n_states) | dfa.accepting


def _check_no_left_recursion(names: tuple[str, ...], nodes: tuple[ir.Node, ...], productive: set[str], nullable: set[str]) -> None:
    """No rule may reach a call of itself before reading a byte. A rule that derives nothing is
    checked over its own structure (its callees taken as able to derive)."""
    ids = {name: k for k, name in enumerate(names)}
    in_live, in_dead = FirstCalls(productive.__contains__, nullable), FirstCalls(_anything, nullable)
    first = [{ids[c] for c in (in_live if name in productive else in_dead)(node)} for name, node in zip(names, nodes)]
    for r in range(len(names)):
        seen: set[int] = set()
        todo = list(first[r])
        while todo:
            k = todo.pop()
            if k == r:
                raise GrammarError(
                    f"rule {names[r]!r} is left-recursive (it can reach itself before reading "
                    "a byte); rewrite it as iteration, e.g. `a: b (\"+\" b)*`"
                )
            if k not in seen:
                seen.add(k)
                todo.extend(first[k])


def _anything(name: str) -> bool:
    return True
