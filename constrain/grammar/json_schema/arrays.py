"""Arrays: positional items, counts, `contains` with min/maxContains, and `uniqueItems`.

`contains` splits each item in two: it matches the contained schema or its complement; a Graph
counts the matches. `uniqueItems` over a small finite set of values tracks which of the k values
were used (2^k states); over an open set the array becomes a rule whose items the matcher keeps
distinct (constrain/index/distinct_calls.py).
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, Any, Optional

from ...automata import ir
from ...errors import UnsupportedSchemaError
from . import containers
from .combinators import contains_list
from .keywords import count_keyword
from .literals import json_equal, json_literal

if TYPE_CHECKING:  # pragma: no cover
    from .translate import Translator

MAX_UNIQUE_VALUES = 10
MAX_CONTAINS = 3


def array_node(tr: "Translator", schema: dict, pointer: str) -> ir.Node:
    prefix, prefix_ptr, rest, rest_ptr = _positions(schema, pointer)
    lo = count_keyword(schema, "minItems", pointer, 0)
    hi = count_keyword(schema, "maxItems", pointer, None)
    if rest is False:
        hi = len(prefix) if hi is None else min(hi, len(prefix))
    if hi is not None and hi < lo:
        return ir.NOTHING
    for key in ("minContains", "maxContains"):
        count_keyword(schema, key, pointer, None)  # (validated)
    # (at least zero matches and no maximum: always true)
    entries = [e for e in contains_list(schema, tr.legacy_refs) if e[1] > 0 or e[2] is not None]
    unique = schema.get("uniqueItems") is True and (hi is None or hi > 1)
    if unique and not entries:
        node = _unique(tr, pointer, prefix, rest, lo, hi)
        if node is not None:
            return node
    if entries:
        node = _counting(tr, pointer, prefix, rest, lo, hi, entries)
    else:
        prefix_nodes = [tr.rule(f"{prefix_ptr}/{i}", s) for i, s in enumerate(prefix)]
        rest_node: Optional[ir.Node] = None if rest is False else tr.rule(rest_ptr, rest)
        node = containers.array(prefix_nodes, rest_node, lo, hi, tr.ws)
    # Items from an open set: the array's own rule calls only its items, and the matcher keeps
    # each array's items distinct (constrain/index/distinct_calls.py).
    return tr.distinct_items(node) if unique else node


def _positions(schema: dict, pointer: str) -> tuple[list, str, Any, str]:
    """(schemas of the first items, their pointer, schema of the others, its pointer)."""
    items = schema.get("items", True)
    if "prefixItems" in schema:
        return list(schema["prefixItems"]), f"{pointer}/prefixItems", items, f"{pointer}/items"
    if isinstance(items, list):  # drafts before 2020-12: a tuple
        return list(items), f"{pointer}/items", schema.get("additionalItems", True), f"{pointer}/additionalItems"
    return [], "", items, f"{pointer}/items"


def _counting(
    tr: "Translator", pointer: str, prefix: list, rest: Any, lo: int, hi: Optional[int], entries: list,
) -> ir.Node:
    """Items are counted per `contains` schema they match: the array is valid when each count
    is within its [minContains, maxContains] and the length in [lo, hi]. An item is one of 2^n
    kinds (which of the n contains schemas it matches); a Graph tracks position and counts."""
    ptr = f"{pointer}/contains"
    if len(entries) > MAX_CONTAINS:
        raise UnsupportedSchemaError("contains", ptr, f"more than {MAX_CONTAINS} contains keywords on one array")
    p = len(prefix)
    # Positions 0..top; without maxItems `top` means "top or more" (and is past the first item).
    top = max(p, lo, hi) if hi is not None else max(p, lo, 1)
    counters = [containers.Counts(int(c_lo), None if c_hi is None else int(c_hi)) for _, c_lo, c_hi, _ in entries]
    combos = list(itertools.product(*(range(c.n) for c in counters)))
    index = {combo: k for k, combo in enumerate(combos)}
    n_states = (top + 1) * len(combos)
    if n_states > tr.opts.max_item_states:
        raise UnsupportedSchemaError("contains", ptr, f"counting needs {n_states} states (limit {tr.opts.max_item_states})")
    kinds: dict[tuple[int, int], Optional[ir.Node]] = {}

    def item(i: int, mask: int) -> Optional[ir.Node]:
        """An item at position i that matches exactly the contains schemas in `mask`."""
        key = (min(i, p), mask)
        if key not in kinds:
            base = prefix[i] if i < p else rest
            parts = [c if mask >> j & 1 else {"not": c} for j, (c, _, _, _) in enumerate(entries)]
            if base is False or any(x is False for x in parts) or any(x == {"not": True} for x in parts):
                kinds[key] = None
            else:
                where = f"{pointer}/prefixItems/{i}" if i < p else f"{pointer}/items"
                kinds[key] = tr.rule(f"{where}#contains{mask}", {"allOf": [base, *parts]})
        return kinds[key]

    def state(i: int, combo: tuple) -> int:
        return i * len(combos) + index[combo]

    comma = ir.concat(tr.ws, ir.literal(","), tr.ws)
    edges = []
    finals = []
    for i in range(top + 1):
        for combo in combos:
            if i >= lo and all(c.ok(v) for c, v in zip(counters, combo)):
                finals.append(state(i, combo))
            if hi is not None and i >= hi:
                continue
            nxt = i + 1 if hi is not None else min(i + 1, top)
            sep = ir.EMPTY if i == 0 else comma
            for mask in range(1 << len(entries)):
                stepped = tuple(c.step(v) if mask >> j & 1 else v for j, (c, v) in enumerate(zip(counters, combo)))
                node = item(i, mask)
                if node is not None and None not in stepped:
                    edges.append((state(i, combo), state(nxt, stepped), ir.concat(sep, node)))
    graph = ir.Graph(n_states, state(0, combos[0]), tuple(finals), tuple(edges))
    return ir.concat(ir.literal("["), tr.ws, graph, tr.ws, ir.literal("]"))


def _unique(tr: "Translator", pointer: str, prefix: list, rest: Any, lo: int, hi: Optional[int]) -> Optional[ir.Node]:
    """uniqueItems over a small finite set of item values: a Graph over (position up to the end
    of the prefix, the set of values used so far). None where the values are not few and known."""
    universe: list = []
    allowed: list[list[int]] = []  # per position 0..p (p: every later position)
    for i, sub in enumerate(prefix + [rest]):
        values = [] if sub is False else finite_values(tr, sub, f"{pointer}/items")
        if values is None:
            return None
        idx = []
        for v in values:
            found = next((k for k, w in enumerate(universe) if json_equal(v, w)), None)
            if found is None:
                universe.append(v)
                found = len(universe) - 1
            idx.append(found)
        allowed.append(idx)
    k = len(universe)
    p = len(prefix)
    n_states = (p + 1) << k
    if k > MAX_UNIQUE_VALUES or n_states > tr.opts.max_item_states:
        return None
    literals = [json_literal(v) for v in universe]
    comma = ir.concat(tr.ws, ir.literal(","), tr.ws)

    def state(i: int, mask: int) -> int:
        return (i << k) | mask

    edges = []
    finals = []
    for i in range(p + 1):
        for mask in range(1 << k):
            used = bin(mask).count("1")
            if used >= lo and (hi is None or used <= hi) and (i == p or used == i):
                finals.append(state(i, mask))
            if hi is not None and used >= hi:
                continue
            sep = comma if (mask or i) else ir.EMPTY
            for j in allowed[i]:
                if not mask & (1 << j):
                    edges.append((state(i, mask), state(min(i + 1, p), mask | 1 << j), ir.concat(sep, literals[j])))
    graph = ir.Graph(n_states, 0, tuple(finals), tuple(edges))
    return ir.concat(ir.literal("["), tr.ws, graph, tr.ws, ir.literal("]"))


def finite_values(tr: "Translator", schema: Any, pointer: str) -> Optional[list]:
    """The values `schema` allows if they are few and known (enum/const, booleans, null,
    integers between close bounds)."""
    from .dnf import alternatives

    out: list = []
    for alt in alternatives(schema, pointer, tr):
        if alt is True:
            return None
        if "const" in alt or "enum" in alt:
            values = [alt["const"]] if "const" in alt else list(alt["enum"])
            values = [v for v in values if tr.valid_value(v, alt)]
        else:
            types = alt.get("type")
            if types is None:
                return None
            types = {types} if isinstance(types, str) else set(types)
            if types == {"integer"}:
                values = _small_integer_range(tr, alt)
                if values is None:
                    return None
            elif types <= {"boolean", "null"}:
                values = ([True, False] if "boolean" in types else []) + ([None] if "null" in types else [])
            else:
                return None
        for v in values:
            if not any(json_equal(v, w) for w in out):
                out.append(v)
        if len(out) > MAX_UNIQUE_VALUES:
            return None
    return out


def _small_integer_range(tr: "Translator", alt: dict) -> Optional[list]:
    """The integers an integer schema with close bounds allows (bounds taken loosely, each
    value then checked against the whole schema), or None."""
    lows = [alt[k] for k in ("minimum", "exclusiveMinimum") if _is_number(alt.get(k))]
    highs = [alt[k] for k in ("maximum", "exclusiveMaximum") if _is_number(alt.get(k))]
    if not lows or not highs:
        return None
    lo, hi = math.floor(min(lows)), math.ceil(max(highs))
    if hi - lo > 4 * MAX_UNIQUE_VALUES:
        return None
    values = [v for v in range(lo, hi + 1) if tr.valid_value(v, alt)]
    return values if len(values) <= MAX_UNIQUE_VALUES else None


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
