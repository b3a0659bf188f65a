"""Objects of many properties in any order: one rule of members, keys kept distinct by the matcher.

With property_order="any", an object's members may come in any order. Up to
`max_any_order_properties` (10) named members, the object is a Graph over the set of members
used (containers.object_graph: 2^n states, exact in the grammar), unless that Graph would be
too large (long keys, flexible whitespace). Beyond that, it is a rule that
reads `{`, any number of members `key: value` (a named key in its canonical spelling, or a key
of a key language: patternProperties regions, additionalProperties) separated by commas, and
`}`; the matcher keeps per object frame which keys were used (constrain/index/distinct_keys.py):
each key at most once, required keys present and the member count within min/maxProperties at
`}`, no comma where no key may follow.

Refused here (UnsupportedSchemaError), past the limit only (a Graph too large otherwise):
  - objects whose keys carry conditions (dependentRequired / dependencies, if-then-else on keys,
    "some other key exists"): those need the key set in the grammar;
  - key languages with finitely many keys (a pattern such as `^[ab]$` without
    additionalProperties, propertyNames with maxLength): a used key could then leave a key text
    that only used keys complete, which the matcher does not look ahead for;
  - maxProperties below the number of possible keys together with required keys: near the
    maximum only the missing required keys could come next (strict=False drops maxProperties).
uniqueItems elsewhere in the schema is kept alongside (distinct_keys.py carries both).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Sequence

from ...automata import ir
from ...automata.nfa import nfa_states
from ...errors import UnsupportedSchemaError
from ...index.object_rules import reaches_cycle
from . import containers
from .lexical import string_literal

if TYPE_CHECKING:  # pragma: no cover
    from .translate import Translator


GRAPH_NFA_BUDGET = 50_000  # a graph of key subsets past this many NFA states: keyed instead
# (its DFA has about as many states, built at compile time: 10 members with 12-character
# keys made 66,560; a few JSONSchemaBench objects of 9-10 members passed the 100,000 limit)


def keyed(tr: "Translator", pointer: str, members: Sequence[containers.Member], conditions: bool) -> bool:
    """Is this any-order object a keyed rule rather than a Graph of key subsets? Past
    `max_any_order_properties` named members it must be (`conditions`, key conditions the
    Graph alone can hold, are then refused); below, where the Graph would be too large and
    there are no conditions."""
    if len(members) > tr.opts.max_any_order_properties:
        if conditions:
            raise UnsupportedSchemaError(
                "properties", pointer, f"{past(tr)} does not support conditions on which keys are present "
                "(dependencies, if/then/else or not on keys)",
            )
        return True
    if conditions or len(members) < 2:
        return False
    return nfa_states(containers.object_graph([], members, [], tr.ws)) > GRAPH_NFA_BUDGET


def past(tr: "Translator") -> str:
    return f"property_order='any' with more than {tr.opts.max_any_order_properties} properties"


@dataclass(frozen=True)
class KeyedObject:
    """What the matcher needs of an any-order object rule: named keys and their value rules'
    names, required keys, member count bounds, the value rules of its key languages."""

    pointer: str
    named: tuple[str, ...]
    values: tuple[str, ...]
    required: frozenset
    lo: int
    hi: Optional[int]
    language_values: tuple[str, ...]

    def satisfiable(self, callable_rules: set[str]) -> bool:
        """Can an object be written when only the rules `callable_rules` derive values?"""
        named = {k for k, v in zip(self.named, self.values) if v in callable_rules}
        if not self.required <= named:
            return False
        return self.lo <= len(named) or any(v in callable_rules for v in self.language_values)


def any_order_object(
    tr: "Translator", pointer: str, members: Sequence[containers.Member], languages: Sequence[tuple[ir.Node, ir.RuleRef]],
    lo: int, hi: Optional[int], open_languages: bool,
) -> ir.Node:
    """The rule of an object whose `members` (named) and key `languages` (key node, value) come
    in any order; `open_languages`: their union is known to be every key but the named ones."""
    if not open_languages:
        for key, _ in languages:
            if not _open(key):
                raise UnsupportedSchemaError(
                    "properties", pointer,
                    f"{past(tr)} needs key patterns "
                    "with unboundedly many keys (this one has finitely many)",
                )
    required = frozenset(m.key for m in members if m.required)
    if required and hi is not None and (languages or hi < len(members)):
        tr.unsupported(
            "maxProperties", f"{pointer}/maxProperties",
            f"{past(tr)} supports maxProperties "
            "with required keys only when it allows every named key",
        )
        hi = None  # (strict=False: relaxed, recorded)
    ws = tr.ws
    colon = ir.concat(ws, ir.literal(":"), ws)
    items = [ir.concat(string_literal(m.key, canonical=True), colon, m.value) for m in members]
    items += [ir.concat(key, colon, value) for key, value in languages]
    if not items or hi == 0:
        if lo > 0 or required:
            return ir.NOTHING
        return ir.concat(ir.literal("{"), ws, ir.literal("}"))
    member = ir.alt(*items)
    body = ir.concat(member, ir.repeat(ir.concat(ws, ir.literal(","), ws, member), 0, None))
    if lo == 0 and not required:
        body = ir.repeat(body, 0, 1)
    spec = KeyedObject(
        pointer, tuple(m.key for m in members), tuple(_name(m.value) for m in members), required, lo, hi,
        tuple(_name(v) for _, v in languages),
    )
    return tr.keyed_object(ir.concat(ir.literal("{"), ws, body, ws, ir.literal("}")), spec)


def _name(node: ir.Node) -> str:
    if not isinstance(node, ir.RuleRef):  # pragma: no cover (values are rules: tr.rule, any_value)
        raise TypeError(f"an object member's value must be a rule call, not {type(node).__name__}")
    return node.name


def _open(key: ir.Node) -> bool:
    """Does every key text of this key language (quoted) go on to infinitely many keys?"""
    if isinstance(key, ir.Deferred):
        return True  # every string but some named keys (containers.other_keys)
    if not isinstance(key, ir.Embedded):  # pragma: no cover (key languages are DFAs)
        return False
    dfa = key.dfa
    infinite = reaches_cycle(dfa)
    return bool((infinite | dfa.accepting).all())
