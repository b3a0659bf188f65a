"""Byte steps over sets of stacks of rule frames (see rules.py), with memoized closures.

A frame is `(rule, state, parent, depth)`. Before each byte a stack is *closed*: calls push the
callee at its start, accepting states pop to the parent. A *greedy* rule (a Lark terminal: its
match is the longest, as a regex match is) pops only where it cannot read the next byte: the
tops its return reaches are *restricted*, they may not read first a byte the greedy rule reads
in its state. A greedy rule calls nothing, so it is only ever the top of the stack it starts in
and one closure restricts at most once.

A byte step needs the union of the stacks' closures, not each one: an ambiguous grammar
(`expr: expr "+" expr`) holds a stack per nesting depth after n operators, each closure pops
through all the frames below it, and stepping each closure alone costs O(n^2) a byte. A
stack's closure is its *own level* (what it reaches without popping to its parent) plus, where
that level pops, its parent's closure; `step` unions own levels down each parent chain and
stops at a parent whose closure is in already (they share tails): O(n) a byte.

An ambiguous grammar can also hold exponentially many stacks: Lua's reference grammar
(`exp: exp binop exp | prefixexp ...`, nullable table constructors) held 6,366 after 40 bytes,
every one with the same top, their frames below in every order. So a step *merges* the stacks
whose tops are the same (rule, state) into one frame whose parent is a `Parents`: the set of
their parents (a graph-structured stack, as in Tomita's parser). A closure that pops there pops
to each parent; each step makes at most one frame per (rule, state), so the frames stay
polynomial in the text. Stacks whose parent is greedy are not merged (a CHECK frame's: a
greedy return's restriction is per stack), nor stacks at the bottom; a merged frame's depth is
its deepest stack's. Only ambiguity makes merged frames: an unambiguous text keeps one stack
and plain parents.

Where the rule set has return checks (return_checks.py), a greedy top may also return before a
byte it reads, on condition of the byte after it: the tops its return reaches read that byte
and a CHECK frame goes on each new stack. A CHECK frame is greedy and reads nothing, so the
greedy frame below it restricts too: a closure's restriction is a tuple of *layers*, one per
greedy return, each (the tops it reaches, the bytes they may not read first, the bytes they
may read on condition: {byte: CHECK rule}).
"""

from __future__ import annotations

import time
from typing import Any, Iterable, Iterator, Optional

from ..errors import LimitExceededError
from .refusals import bits_of
from .rules import END_OF_TEXT, RuleSet, Stack

ALL_BYTES = (1 << 256) - 1
MAX_MEMO = 1 << 18  # stacks whose closure, and whose own level, are kept (then all forgotten: a
# recursive grammar's stacks are without bound, and a server meets ever more)
KEPT_HASH_EVERY = 32  # frames at depths divisible by this keep their hash (see KeptHash)


class KeptHash(tuple):
    """A frame that keeps its hash, made at every KEPT_HASH_EVERY-th depth: a tuple's hash
    walks its parents, so every memo lookup of a stack n frames deep cost O(n) (JSON nested 4,000
    deep: 0.55 ms an accepted token). Equal to the plain tuple of its fields, with the same hash,
    so either may meet the other in a memo."""

    def __new__(cls, r: int, q: int, parent: Stack, depth: int) -> "KeptHash":
        frame = tuple.__new__(cls, (r, q, parent, depth))
        frame.h = tuple.__hash__(frame)
        return frame

    def __hash__(self) -> int:
        return self.h

    def __getnewargs__(self) -> tuple:
        return tuple(self)


class Parents(frozenset):
    """The parents of a merged frame (see above): two or more frames, none greedy, so a merged
    greedy top's return reaches their closures unrestricted by anything below."""

    __slots__ = ()


def _members(parent: Any) -> Iterable[tuple]:
    """The frames a stack pops to: its parent, or a merged frame's parents."""
    return parent if type(parent) is Parents else (parent,)


def _frame(r: int, q: int, parent: Stack, depth: int) -> tuple:
    """A frame that will be a parent (a call's return frame): its hash kept every so often."""
    return (r, q, parent, depth) if depth % KEPT_HASH_EVERY else KeptHash(r, q, parent, depth)


class StackSemantics:
    """Shared and thread-safe (the memos are dicts whose entries are immutable; concurrent
    fills only repeat work; a full memo is replaced by an empty one, never emptied in place, and
    no entry needs another to be there)."""

    def __init__(
        self, rules: RuleSet, max_depth: int = 10_000, max_stacks: int = 10_000, max_seconds: float = 10.0,
        merge: bool = True,
    ) -> None:
        self.rules = rules
        self.merge = merge  # (False: every reading its own stack, as tests compare)
        self.max_depth = max_depth
        self.max_stacks = max_stacks
        self.max_seconds = max_seconds  # for one `advance` (Limits.max_accept_seconds)
        self._closure: dict[Stack, tuple[frozenset, bool, Optional[tuple[frozenset, int]]]] = {}
        self._levels: dict[Stack, tuple[frozenset, bool, int, bool]] = {}
        self._lists: list[Optional[tuple[list, list]]] = [None] * rules.n_rules
        self._bits: dict[tuple[int, int], int] = {}
        self._greedy = getattr(rules, "greedy", None) if getattr(rules, "any_greedy", False) else None
        self._checks = bool(getattr(rules, "return_checks", False))

    def tables(self, r: int) -> tuple[list[list[int]], list[int]]:
        """Rule r's table and byte classes as lists (fast single steps), made on first use."""
        hit = self._lists[r]
        if hit is None:
            dfa = self.rules.rule(r).dfa
            hit = self._lists[r] = (dfa.table.tolist(), dfa.byte_classes.tolist())
        return hit

    def initial(self) -> frozenset:
        return frozenset({(self.rules.start, 0, None, 1)})

    def read_bits(self, r: int, q: int) -> int:
        """The bytes rule r reads in state q, one bit each."""
        hit = self._bits.get((r, q))
        if hit is None:
            dfa = self.rules.rule(r).dfa
            hit = self._bits[(r, q)] = bits_of(dfa.table[q, dfa.byte_classes] >= 0)
        return hit

    def return_refusals(self, r: int, q: int) -> int:
        """The bytes a greedy rule r's return in state q may not be followed by, one bit each:
        those it reads in q (it ends only where it cannot read on) and those its end refuses
        (a Lark terminal's end lookahead, grammar/lark/end_guard.py)."""
        return self._after_end(r, q) & ALL_BYTES

    def _after_end(self, r: int, q: int) -> int:
        """What return_refusals says, with END_OF_TEXT where greedy rule r's end in q refuses it."""
        return self.read_bits(r, q) | self.rules.refused_at(r, q)

    def closure(self, stack: tuple) -> tuple[frozenset, bool, Optional[tuple]]:
        """(stacks reachable without reading a byte by calls and returns, whether one of the
        returns empties the stack: the text so far is complete, the *restriction*). The
        restriction, for a stack whose closure pops a greedy top that can read on: its layers
        (see above), the top's first; else None."""
        hit = self._closure.get(stack)
        if hit is not None:
            return hit
        if type(stack) is Parents:  # (a merged greedy top's parents: none is greedy, so no restriction)
            parts = [self.closure(member) for member in stack]
            result = (frozenset().union(*(p[0] for p in parts)), any(p[1] for p in parts), None)
        elif reads := self._greedy_return(stack):
            below, complete, deeper = self.closure(stack[2])
            r, q = stack[0], stack[1]
            layer = (below, reads, self.rules.checks[r].get(q) if self._checks else None)
            result = (below | {stack}, complete and not reads & END_OF_TEXT, (layer, *(deeper or ())))
        else:
            result = self._close(stack)
        if len(self._closure) >= MAX_MEMO:
            self._closure = {}
        self._closure[stack] = result
        return result

    def _greedy_return(self, stack: tuple) -> int:
        """For a greedy top that may return and read on or refuses bytes after its end: those bytes
        (one bit each), which what its return reaches may not read first; else 0."""
        r, q, parent, _ = stack
        if self._greedy is not None and self._greedy[r] and parent is not None and self.rules.rule(r).dfa.accepting[q]:
            return self._after_end(r, q)
        return 0

    def _close(self, stack: tuple) -> tuple[frozenset, bool, None]:
        """The closure as own levels down the parent chains (a parent's closure known ends one)."""
        tops: set[tuple] = set()
        complete = False
        todo = [stack]
        seen: set[int] = set()
        while todo:
            s = todo.pop()
            level, pops, _, done = self.own_level(s)
            tops |= level
            complete = complete or done
            if not pops:
                continue
            for parent in _members(s[2]):
                known = self._closure.get(parent)
                if known is not None:
                    tops |= known[0]
                    complete = complete or known[1]
                elif id(parent) not in seen:
                    seen.add(id(parent))
                    todo.append(parent)
        return frozenset(tops), complete, None

    def own_level(self, stack: tuple) -> tuple[frozenset, bool, int, bool]:
        """(the tops `stack`'s closure reaches without popping to its parent, whether they pop
        to it, the bytes before which they may not: a greedy top's return, one bit each, whether
        they empty the stack). The closure is these tops and, where they pop, the parent's
        closure (see above)."""
        hit = self._levels.get(stack)
        if hit is not None:
            return hit
        reads = self._greedy_return(stack)
        if reads:
            hit = (frozenset({stack}), True, reads, False)
            self._remember_level(stack, hit)
            return hit
        parent = stack[2]
        out: set[tuple] = set()
        pops = complete = False
        todo = [stack]
        rs = self.rules
        while todo:
            s = todo.pop()
            if s in out:
                continue
            out.add(s)
            r, q, p, depth = s
            rule = rs.rule(r)
            calls = rule.calls[q]
            if calls and depth >= self.max_depth:
                raise LimitExceededError("grammar stack depth", self.max_depth, "Limits(max_stack_depth=...)")
            for k, t in calls:
                todo.append((k, 0, _frame(r, t, p, depth), depth + 1))
            if rule.dfa.accepting[q]:
                if p is None:
                    complete = True
                elif p is parent:  # (frames of this level hold the stack's own parent; deeper ones, frames of it)
                    pops = True
                else:
                    todo.append(p)
        hit = (frozenset(out), pops, 0, complete)
        self._remember_level(stack, hit)
        return hit

    def _remember_level(self, stack: tuple, level: tuple[frozenset, bool, int, bool]) -> None:
        if len(self._levels) >= MAX_MEMO:
            self._levels = {}
        self._levels[stack] = level

    def step(self, stacks: frozenset, byte: int, deadline: Optional[float] = None) -> frozenset:
        """The stacks after `byte`; past `deadline` (perf_counter seconds) LimitExceededError."""
        bit = 1 << byte
        if len(stacks) == 1:  # (one stack, most texts: its memoized closure, no union to build)
            return self._step_one(next(iter(stacks)), byte, bit)
        held: Optional[list] = [] if self._checks else None
        tops: set[tuple] = set().union(*(level[0] for level in self._levels_of(stacks, bit, held, deadline)))
        nxt = set()
        for top in tops:
            r, q, parent, depth = top
            rows, classes = self.tables(r)
            t = rows[q][classes[byte]]
            if t >= 0:
                nxt.add((r, t, parent, depth))
        for s in held or ():  # greedy tops held before the byte: those that return on condition
            check = self.rules.check_after(s[0], s[1], byte)
            if check >= 0:
                nxt.update((check, 0, _frame(*after), after[3] + 1) for after in self._step_one(s[2], byte, bit))
        return self._merged(nxt)

    def _merged(self, nxt: set) -> frozenset:
        """The stacks, those with the same top (rule, state) as one frame over their Parents (see
        above); LimitExceededError past max_stacks."""
        if self.merge and len(nxt) > 1:
            by_top: dict[tuple[int, int], list[tuple]] = {}
            for s in nxt:
                by_top.setdefault((s[0], s[1]), []).append(s)
            if len(by_top) < len(nxt):
                greedy = self._greedy
                nxt = set()
                for (r, q), group in by_top.items():
                    under = [s for s in group if s[2] is not None]
                    if len(under) < 2:
                        nxt.update(group)
                        continue
                    parents = [p for s in under for p in _members(s[2])]
                    if greedy is not None and any(greedy[p[0]] for p in parents):
                        nxt.update(group)  # (a greedy parent restricts what its return reaches: per stack)
                        continue
                    nxt.update(s for s in group if s[2] is None)
                    nxt.add((r, q, Parents(parents), max(s[3] for s in under)))
        if len(nxt) > self.max_stacks:
            raise LimitExceededError(
                "readings of the text at one position (an ambiguous grammar's stacks)", self.max_stacks,
                "Limits(max_stacks=...)",
            )
        return frozenset(nxt)

    def _step_one(self, stack: tuple, byte: int, bit: int) -> frozenset:
        nxt = set()
        tops, _, layers = self.closure(stack)
        for top in tops:
            check = -1
            if layers is not None:
                check = self._layers_allow(layers, top, byte, bit)
                if check == -2:
                    continue
            r, q, parent, depth = top
            rows, classes = self.tables(r)
            t = rows[q][classes[byte]]
            if t >= 0:
                nxt.add((r, t, parent, depth) if check < 0 else (check, 0, _frame(r, t, parent, depth), depth + 1))
        return self._merged(nxt)

    @staticmethod
    def _layers_allow(layers: tuple, top: tuple, byte: int, bit: int) -> int:
        """May `top` read `byte` first under a closure's restriction: -2 no, -1 yes, else yes
        with that CHECK rule's frame pushed after it (a conditional return)."""
        check = -1
        for tops, refused, conditional in layers:
            if refused & bit and top in tops:
                found = conditional.get(byte) if conditional else None
                if found is None:
                    return -2
                check = found
        return check

    def advance(self, stacks: frozenset, data: bytes) -> Optional[frozenset]:
        """The stacks after `data`, None where it is refused; LimitExceededError past
        `max_seconds` (deep stacks of an ambiguous grammar: hashing a stack walks its frames)."""
        deadline = time.perf_counter() + self.max_seconds
        for b in data:
            stacks = self.step(stacks, b, deadline)
            if not stacks:
                return None
            if time.perf_counter() > deadline:
                self._late()
        return stacks

    def _late(self) -> None:
        raise LimitExceededError("seconds for one accepted token", self.max_seconds, "Limits(max_accept_seconds=...)")

    def is_complete(self, stacks: frozenset) -> bool:
        if len(stacks) == 1:
            return self.closure(next(iter(stacks)))[1]
        return any(level[3] for level in self._levels_of(stacks, END_OF_TEXT))

    def next_bytes(self, stacks: frozenset) -> set[int]:
        """Bytes that can come next (for forced bytes)."""
        if len(stacks) > 1:
            bits = self._next_bits(stacks)
            return {b for b in range(256) if bits >> b & 1}
        out: set[int] = set()
        for s in stacks:
            tops, _, layers = self.closure(s)
            for top in tops:
                bits = self.read_bits(top[0], top[1])
                for below, refused, conditional in layers or ():
                    if top in below:
                        bits &= ~refused | sum(1 << b for b in conditional or ())
                out.update(b for b in range(256) if bits >> b & 1)
        return out

    def _next_bits(self, stacks: frozenset) -> int:
        """next_bytes of several stacks by own levels (one bit each), a superset where a greedy
        top's return refuses bytes it does not read itself (the frames below may read them):
        fewer bytes are then forced, none wrongly. Its other refusals it reads itself."""
        out = 0
        for level in self._levels_of(stacks):
            for r, q, _, _ in level[0]:
                out |= self.read_bits(r, q)
        return out

    def _levels_of(
        self, stacks: frozenset, bit: int = 0, held: Optional[list] = None, deadline: Optional[float] = None
    ) -> Iterator[tuple[frozenset, bool, int, bool]]:
        """The own levels the stacks' closures are made of, each parent's once (by id: frames
        outlive the walk); a greedy top's return is not followed before a byte of `bit` it
        reads or refuses (END_OF_TEXT: the end, which a positive end lookahead refuses). Such
        tops are appended to `held` (their return may be conditional: see step). The deadline
        is looked at every 64 stacks."""
        done: set[int] = set()
        for i, stack in enumerate(stacks):
            if deadline is not None and not i & 63 and time.perf_counter() > deadline:
                self._late()
            todo = [stack]
            while todo:
                s = todo.pop()
                level = self.own_level(s)
                yield level
                if not level[1]:
                    continue
                if level[2] & bit:
                    if held is not None:
                        held.append(s)
                    continue
                for parent in _members(s[2]):
                    if id(parent) not in done:
                        done.add(id(parent))
                        todo.append(parent)
