"""Left recursion out of a grammar of rules, the language kept.

Lark grammars use left recursion freely (`expr: expr "+" term | term`), and Lark's own expansion
of `x+` is a left-recursive helper rule. A stack of rule frames cannot run it (the rule would
call itself forever before reading), but only the language matters for masks, so each
left-recursive group of rules is rewritten: rules earlier in the group are substituted into
the leading position of later ones (Paull's algorithm, within the group only), then a rule's
direct recursion `A: A a | b` becomes `A: b (a)*`. Where a rule reaches itself after leading
rules that can derive the empty string, the grammar first loses the empty string (see
_without_empty) so that the recursion shows at the front.

Rules are lists of expansions; an expansion is a tuple of items: a symbol name, a Star (any
number of its expansions, one after another), or a Group (one of its expansions, or maybe
none: the reader keeps a group so only after an expansion's first terminal, where it can hold
no left corner and the expansion is not nullable whatever it holds).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Union

from ...automata import ir
from ...errors import UnsupportedGrammarError
from .factor import factored


@dataclass(frozen=True)
class Star:
    expansions: tuple[tuple, ...]


@dataclass(frozen=True)
class Plus:
    """One or more of its expansions, one after another: only in to_ir's input (a Star that
    follows a copy of its own single expansion, as `x+` comes out of `H: x | H x`)."""

    expansions: tuple[tuple, ...]


@dataclass(frozen=True)
class Group:
    """One of its expansions (or none, where `optional`): only after a terminal (see above)."""

    expansions: tuple[tuple, ...]
    optional: bool


Item = Union[str, Star, Group]
Rules = dict[str, list[tuple]]


def without_left_recursion(rules: Rules, is_terminal: Callable[[str], bool]) -> tuple[Rules, set[str]]:
    """`rules` (nonterminal -> expansions) with no rule able to call itself before reading, and
    the rules that lost the empty string on the way (empty when none had to: see below)."""
    rules = {name: list(exps) for name, exps in rules.items()}
    nullable = _nullable(rules, is_terminal)
    corners = {name: _left_corners(exps, rules, nullable, is_terminal) for name, exps in rules.items()}
    groups = _cycles(corners)
    emptied: set[str] = set()
    if any(hidden and callee in group for group in groups for name in group for callee, hidden in corners[name]):
        # A rule reaches itself after rules that may match nothing: without the empty string
        # anywhere (each expansion once with and once without every such rule) the recursion
        # shows at the front. Only then: it multiplies expansions (groups first: a nullable
        # rule inside one loses the empty string too).
        rules = {name: _ungrouped(name, exps) for name, exps in rules.items()}
        rules = _without_empty(rules, nullable, is_terminal)
        emptied = nullable
        corners = {name: _left_corners(exps, rules, set(), is_terminal) for name, exps in rules.items()}
        groups = _cycles(corners)
    for group in groups:
        for i, name in enumerate(group):
            for earlier in group[:i]:
                rules[name] = _substituted(rules[name], earlier, rules[earlier])
            rules[name] = _without_direct(name, rules[name])
    return rules, emptied


MAX_EMPTY_VARIANTS = 256  # expansions one expansion may become when the empty string goes
MAX_UNGROUPED = 4096  # expansions one rule may become when its groups are multiplied out


def symbols(expansion: tuple) -> list[str]:
    """The symbol names of an expansion, those inside its Stars and Groups too."""
    out: list[str] = []
    stack = [expansion]
    while stack:
        for x in stack.pop():
            if isinstance(x, str):
                out.append(x)
            else:
                stack.extend(x.expansions)
    return out


def renamed(expansion: tuple, names: dict[str, str]) -> tuple:
    """The expansion with each symbol in `names` replaced by its new name, inside Stars and Groups too."""
    return tuple(names.get(x, x) if isinstance(x, str) else
                 replace(x, expansions=tuple(renamed(e, names) for e in x.expansions)) for x in expansion)


def _ungrouped(name: str, expansions: list[tuple]) -> list[tuple]:
    """The expansions with every Group multiplied out (Lark's own form of them)."""
    if not any(isinstance(x, Group) for e in expansions for x in e):
        return expansions
    out: dict[tuple, None] = {}
    for e in expansions:
        product: list[tuple] = [()]
        for x in e:
            if isinstance(x, Group):
                options = [*_ungrouped(name, list(x.expansions)), *([()] if x.optional else [])]
                product = [a + b for a in product for b in options]
            else:
                product = [a + (x,) for a in product]
            if len(product) > MAX_UNGROUPED:
                raise UnsupportedGrammarError(
                    "left recursion through rules that can be empty", f"rule {name}",
                    f"its optional parts make over {MAX_UNGROUPED} expansions",
                )
        out.update(dict.fromkeys(product))
    return list(out)


def _without_empty(rules: Rules, nullable: set[str], is_terminal: Callable[[str], bool]) -> Rules:
    """The same languages less the empty string: every expansion once per choice of the rules
    in it that may match nothing (kept or left out), the empty expansion dropped."""
    out: Rules = {}
    for name, exps in rules.items():
        new: dict[tuple, None] = {}
        for e in exps:
            optional = [k for k, x in enumerate(e) if not isinstance(x, Star) and not is_terminal(x) and x in nullable]
            if 1 << len(optional) > MAX_EMPTY_VARIANTS:
                raise UnsupportedGrammarError(
                    "left recursion through rules that can be empty", f"rule {name}",
                    f"an expansion holds {len(optional)} such rules (at most {MAX_EMPTY_VARIANTS.bit_length() - 1})",
                )
            for choice in range(1 << len(optional)):
                left_out = {optional[j] for j in range(len(optional)) if choice >> j & 1}
                variant = tuple(x for k, x in enumerate(e) if k not in left_out)
                if variant:
                    new[variant] = None
        out[name] = list(new)
    return out


def to_ir(expansions: list[tuple], lower: Callable[[str], ir.Node]) -> ir.Node:
    """A rule's expansions as IR, each symbol lowered by `lower`, shared prefixes and suffixes
    written once (factor.py: Lark writes each optional part as a copy of the whole rule)."""
    if not expansions:
        return ir.NOTHING

    def item(x) -> ir.Node:
        if isinstance(x, Star):
            return ir.repeat(to_ir(list(x.expansions), lower), 0, None)
        if isinstance(x, Plus):
            return ir.repeat(to_ir(list(x.expansions), lower), 1, None)
        if isinstance(x, Group):
            inner = to_ir(list(x.expansions), lower)
            return ir.repeat(inner, 0, 1) if x.optional else inner
        return lower(x)

    return factored(_plus_rule(expansions) or [_with_plus(e) for e in expansions], item)


def _plus_rule(expansions: list[tuple]) -> list[tuple]:
    """`x1 S | x2 S` with S = (x1 | x2)*: `(x1 | x2)+` (an optional part in x+ makes such a
    rule: Lark's helper has an alternative per choice); [] where the rule is not so."""
    last = expansions[0][-1] if expansions[0] else None
    if not isinstance(last, Star) or len(expansions) != len(last.expansions) or len(expansions) < 2:
        return []
    if any(not e or e[-1] != last for e in expansions) or {e[:-1] for e in expansions} != set(last.expansions):
        return []
    return [(Plus(last.expansions),)]


def _with_plus(expansion: tuple) -> tuple:
    """`x (x)*` written `(x)+`: the automaton then holds x once, not twice (every `x+` and
    `x*` of a Lark rule is such a pair after left recursion goes; SQL's select clause held its
    result column, its joins and its CASE arms twice)."""
    out: list = []
    for x in expansion:
        if isinstance(x, Star) and len(x.expansions) == 1:
            (tail,) = x.expansions
            n = len(tail)
            if n and len(out) >= n and tuple(out[-n:]) == tail:
                del out[-n:]
                out.append(Plus(x.expansions))
                continue
        out.append(x)
    return tuple(out)


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
