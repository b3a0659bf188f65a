"""The regular-expression IR every front end lowers to (regex, later JSON Schema and Lark terminals).

Nodes are immutable and hashable so identical sub-expressions can be shared and cached. Characters
are Unicode code point ranges; the NFA builder turns them into UTF-8 byte ranges.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any, Callable, Optional, TypeVar, Union

from .charset import Ranges, normalize

_T = TypeVar("_T")


def _cached_hash(cls: type[_T]) -> type[_T]:
    """Remember a node's hash: IR trees are cache keys (rule DFAs, shared rules) hashed over and
    over, and the dataclass hash would walk the whole tree every time."""
    names = tuple(f.name for f in fields(cls))
    label = cls.__name__
    if len(names) == 1:  # (Chars, Concat, Alt, RuleRef: without a generator per node, hashing
        (only,) = names  # a grammar's rules to find equal ones took ~0.9 ms of SQL's compile)

        def __hash__(self: Any) -> int:
            facts = self.__dict__
            h = facts.get("_hash")
            if h is None:
                h = facts["_hash"] = hash((label, facts[only]))
            return h

    else:

        def __hash__(self: Any) -> int:
            facts = self.__dict__
            h = facts.get("_hash")
            if h is None:
                h = facts["_hash"] = hash((label, *(facts[n] for n in names)))
            return h

    def __getstate__(self: Any) -> dict:
        # str hashes are per process; cached facts (see `fact`) are recomputed on demand
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_")}

    cls.__hash__ = __hash__  # type: ignore[method-assign]
    cls.__getstate__ = __getstate__  # type: ignore[attr-defined]
    return cls


def fact(node: Any, name: str, compute: Callable[[Any], _T]) -> _T:
    """compute(node), remembered on the node: facts about an immutable tree (its NFA size, the
    rules it calls) are asked for every grammar that contains it, and subtrees recur."""
    found = node.__dict__.get(name)
    if found is None:
        found = node.__dict__[name] = compute(node)
    return found


@_cached_hash
@dataclass(frozen=True)
class Chars:
    """One character from a set of code point ranges (empty set: matches nothing)."""

    ranges: Ranges


@_cached_hash
@dataclass(frozen=True)
class Concat:
    items: tuple["Node", ...]


@_cached_hash
@dataclass(frozen=True)
class Alt:
    items: tuple["Node", ...]


@_cached_hash
@dataclass(frozen=True)
class Repeat:
    """`item` repeated min..max times; max None means unbounded."""

    item: "Node"
    min: int
    max: Optional[int]


Node = Union[Chars, Concat, Alt, Repeat, "Embedded", "Graph", "RuleRef"]

EMPTY = Concat(())
NOTHING = Chars(())


def chars(ranges) -> Chars:
    return Chars(normalize(ranges))


@lru_cache(maxsize=8192)
def literal(text: str) -> Node:
    """The exact string `text`. Shared: the same few literals (`,` `:` `{`) recur in every
    grammar, and what the compiler learns about a node (its hash, size, callees) stays on it."""
    if len(text) == 1:
        return Chars(((ord(text), ord(text)),))
    return Concat(tuple(Chars(((ord(c), ord(c)),)) for c in text))


def concat(*items: Node) -> Node:
    if len(items) == 1:
        return items[0]  # (the same node, not a copy: what the compiler learns stays on it)
    flat: list[Node] = []
    for it in items:
        if isinstance(it, Concat):
            flat.extend(it.items)
        else:
            flat.append(it)
    return flat[0] if len(flat) == 1 else Concat(tuple(flat))


def alt(*items: Node) -> Node:
    if len(items) == 1:
        return items[0]  # (the same node, not a copy: what the compiler learns stays on it)
    flat: list[Node] = []
    for it in items:
        if isinstance(it, Alt):
            flat.extend(it.items)
        else:
            flat.append(it)
    return flat[0] if len(flat) == 1 else Alt(tuple(flat))


def repeat(item: Node, lo: int, hi: Optional[int]) -> Node:
    if hi is not None and hi < lo:
        raise ValueError(f"repeat bounds {{{lo},{hi}}}: max < min")
    if lo == 1 and hi == 1:
        return item
    return Repeat(item, lo, hi)


@dataclass(frozen=True, eq=False)
class Embedded:
    """A finished DFA used as a sub-expression (results of intersection, difference, ...).
    Compared by identity: two Embedded nodes are equal only if they hold the same DFA."""

    dfa: object  # constrain.automata.dfa.DFA (untyped here to keep ir free of imports)


class Deferred(Embedded):
    """An Embedded DFA built on the first use of `.dfa`: most rules of a grammar are never
    reached by the first masks, so the automata only they need wait. Its language must be
    non-empty and lack the empty string (rule facts take both for granted), be prefix-free (no
    word extends another: quoted strings), and have at most `max_states` states (NFA sizes and
    limits are checked against that bound before the DFA exists)."""

    def __init__(self, make: Callable[[], object], max_states: int) -> None:
        object.__setattr__(self, "_make", make)
        object.__setattr__(self, "max_states", max_states)

    @property
    def dfa(self) -> object:  # type: ignore[override]
        built = self.__dict__.get("_dfa")
        if built is None:
            built = self.__dict__.setdefault("_dfa", self._make())  # a racing build made the same
        return built

    def __repr__(self) -> str:
        return f"Deferred(max_states={self.max_states})"

    def __reduce__(self) -> tuple:
        return Embedded, (self.dfa,)


@_cached_hash
@dataclass(frozen=True)
class Graph:
    """A small automaton whose edges are sub-expressions: states 0..n_states-1, `start`, the
    accepting `finals`, and `edges` (from, to, node). It expresses right-linear structure, such
    as JSON object members in schema order with optional ones and commas, without the
    exponential copies a tree of Concat/Alt would need."""

    n_states: int
    start: int
    finals: tuple[int, ...]
    edges: tuple[tuple[int, int, "Node"], ...]


@_cached_hash
@dataclass(frozen=True)
class RuleRef:
    """A call of another rule of the same grammar (matched through the stack, see rules.py)."""

    name: str


@lru_cache(maxsize=8192)
def call(name: str) -> RuleRef:
    """The (shared) call of rule `name`: rule names recur across grammars (`s1`, `any_value`),
    and so do the facts the compiler keeps on the node."""
    return RuleRef(name)
