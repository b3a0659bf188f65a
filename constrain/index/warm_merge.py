"""Another automaton's learned tables added to a live one's (warm records of other processes).

Processes sharing a disk cache each learn tables of their own; a store that overwrote the record
would drop what the others learned. So a store first adds the record on disk (decoded into an
automaton of the same rule set and index) to its own tables. Items are interned per automaton,
so the other's item ids are mapped to this one's (interned anew where it has not met them);
everything else is keyed and valued by rule, state and item, and is added where absent (an entry
both have is the same table: computed from the same rule set and tries). Safe while masks are
computed on other threads: interning takes the items' lock, and each entry is complete before a
dict holds it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .summary import Summary
from .items import EMPTY, ROOT

if TYPE_CHECKING:
    from .stack_index import StackTokenAutomaton


def merge_tables(into: StackTokenAutomaton, other: StackTokenAutomaton) -> int:
    """Add `other`'s learned tables to `into`'s (same rule set and vocabulary index); returns
    how many entries were new to it."""
    s, o = into.summaries, other.summaries
    ids = [ROOT]
    for tid, nodes, forbidden in o.items.entries():  # (a node item's third field: its check)
        ids.append(s.items.root(forbidden) if nodes is None else s.items.nodes(tid, nodes, check=forbidden))

    def item(k: int) -> int:
        return k if k == EMPTY else ids[k]

    def summary(found: Summary) -> Summary:
        return Summary(found.parts, tuple(ids[p] for p in found.pops))

    before = (len(s._memo), len(s._tops), len(s._walks), len(into._inner))
    for (r, q, k), found in list(o._memo.items()):
        s._memo.setdefault((r, q, ids[k]), summary(found))
    for key, found in list(o._tops.items()):
        s._tops.setdefault(key, summary(found))
    for (r, q, k), walk in list(o._walks.items()):
        s._walks.setdefault((r, q, ids[k]), walk)
    for key, inner in list(other._inner.items()):
        into._inner.setdefault(key, inner)
    for (r, q, k), to in list(o._narrow.items()):
        s._narrow.setdefault((r, q, ids[k]), item(to))
    for (r, q, k), small in list(o._small_memo.items()):
        s._small_memo.setdefault((r, q, ids[k]), small)
    return len(s._memo) + len(s._tops) + len(s._walks) + len(into._inner) - sum(before)
