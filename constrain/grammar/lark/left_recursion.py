"""Left recursion out of a grammar of rules, the language kept.

Lark grammars use left recursion freely (`expr: expr "+" term | term`), and Lark's own expansion
of `x+` is a left-recursive helper rule. A stack of rule frames cannot run it (the rule would
call itself forever before reading), but only the language matters for masks, so each
left-recursive group of rules is rewritten: rules earlier in the group are substituted into
the leading position of later ones (Paull's algorithm, within the group only), then a rule's
direct recursion `A: A a | b` becomes `A: b (a)*`. A rule reaching itself through a leading
rule that can derive the empty string is refused (UnsupportedGrammarError): rare in practice.

Rules are lists of expansions; an expansion is a tuple of items: a symbol name, or a Star (any
number of its expansions, one after another).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Union

from ...automata import ir
from ...errors import UnsupportedGrammarError


@dataclass(frozen=True)
class Star:
    expansions: tuple[tuple, ...]


Item = Union[str, Star]
Rules = dict[str, list[tuple]]


def without_left_recursion(rules: Rules, is_terminal: Callable[[str], bool]) -> Rules:
    """`rules` (nonterminal -> expansions) with no rule able to call itself before reading."""
    rules = {name: list(exps) for name, exps in rules.items()}
    nullable = _nullable(rules, is_terminal)
    corners = {name: _left_corners(exps, rules, nullable, is_terminal) for name, exps in rules.items()}
    for group in _cycles(corners):
        members = set(group)
        for name in group:
            for callee, hidden in corners[name]:
                if callee in members and hidden:
                    raise UnsupportedGrammarError(
                        "left recursion through a rule that can be empty", f"rule {name}",
                        f"{name} reaches {callee} after a rule that may match nothing; make that rule non-empty "
                        "or move the recursion",
                    )
        for i, name in enumerate(group):
            for earlier in group[:i]:
                rules[name] = _substituted(rules[name], earlier, rules[earlier])
            rules[name] = _without_direct(name, rules[name])
    return rules


def to_ir(expansions: list[tuple], lower: Callable[[str], ir.Node]) -> ir.Node:
    """A rule's expansions as IR, each symbol lowered by `lower`."""
    if not expansions:
        return ir.NOTHING
    return ir.alt(*[_sequence(e, lower) for e in expansions])


def _sequence(expansion: tuple, lower: Callable[[str], ir.Node]) -> ir.Node:
    items = [ir.repeat(to_ir(list(x.expansions), lower), 0, None) if isinstance(x, Star) else lower(x) for x in expansion]
    return ir.concat(*items) if items else ir.EMPTY


def _substituted(expansions: list[tuple], lead: str, its: list[tuple]) -> list[tuple]:
    """Expansions that start with rule `lead` replaced by one per expansion of it."""
    out: list[tuple] = []
    for e in expansions:
        if e and e[0] == lead:
            out.extend(d + e[1:] for d in its)
        else:
            out.append(e)
    return out


def _without_direct(name: str, expansions: list[tuple]) -> list[tuple]:
    """`A: A a1 | A a2 | b1 | b2` as `A: (b1 | b2) (a1 | a2)*` (`A: A` alone is dropped)."""
    tails = [e[1:] for e in expansions if e and e[0] == name]
    if not tails:
        return expansions
    tails = [t for t in tails if t]
    bases = [e for e in expansions if not (e and e[0] == name)]
    if not tails:
        return bases
    star = Star(tuple(dict.fromkeys(tails)))
    return [b + (star,) for b in bases]


def _nullable(rules: Rules, is_terminal: Callable[[str], bool]) -> set[str]:
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, exps in rules.items():
            if name not in found and any(all(_item_nullable(x, found, is_terminal) for x in e) for e in exps):
                found.add(name)
                changed = True
    return found


def _item_nullable(item: Item, nullable: set[str], is_terminal: Callable[[str], bool]) -> bool:
    if isinstance(item, Star):
        return True
    return not is_terminal(item) and item in nullable


def _left_corners(exps: list[tuple], rules: Rules, nullable: set[str], is_terminal: Callable[[str], bool]) -> set[tuple[str, bool]]:
    """(rule, reached after an empty-able prefix?) for each rule an expansion may start with."""
    out: set[tuple[str, bool]] = set()
    for e in exps:
        for k, item in enumerate(e):
            if isinstance(item, Star):
                continue
            if is_terminal(item):
                break
            if item in rules:
                out.add((item, k > 0))
            if item not in nullable:
                break
    return out


def _cycles(corners: dict[str, set[tuple[str, bool]]]) -> list[list[str]]:
    """The groups of rules that reach one another through left corners (strongly connected
    components with a cycle), each in grammar order."""
    order = {name: k for k, name in enumerate(corners)}
    graph = {name: sorted({c for c, _ in edges if c in corners}, key=order.__getitem__) for name, edges in corners.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[list[str]] = []
    counter = 0
    for root in corners:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            succ = graph[node]
            if i < len(succ):
                work.append((node, i + 1))
                nxt = succ[i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if work and work[-1][1] > 0:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1 or node in graph[node]:
                    groups.append(sorted(group, key=order.__getitem__))
    return groups
