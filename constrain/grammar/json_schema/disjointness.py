"""Can two `oneOf` branches both match a value? If no pair can, `oneOf` is a plain union and
needs no complements (cheaper, and complements of some keywords are refused).

Proofs of disjointness, over the plain alternatives of each branch: no common type; no common
constant; a key one side requires and the other forbids (an object `oneOf` of shapes with
`additionalProperties: false`); a key both require whose values cannot meet (a discriminator).
Anything unproven is treated as overlapping (then oneOf uses complements: still exact).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import ConstrainError
from .keywords import ALL_TYPES
from .literals import json_equal, type_name

if TYPE_CHECKING:  # pragma: no cover
    from .translate import Translator

MAX_DEPTH = 4


def branches_disjoint(branches: list, tr: "Translator", context: Any = True) -> bool:
    """No value valid under `context` (the oneOf's sibling keywords) matches two branches.
    The cheap proof by types and constants first; then the plain alternatives pair by pair."""
    from .combinators import disjoint, merge

    if disjoint(branches, tr):
        return True
    try:
        alts = [[m for a in _alternatives(b, tr) if (m := merge(context, a, "#", tr)) is not False] for b in branches]
    except ConstrainError:
        return False
    return all(_disjoint_sets(alts[i], alts[j], tr, 0) for i in range(len(alts)) for j in range(i))


def _alternatives(schema: Any, tr: "Translator") -> list:
    from .dnf import alternatives

    return alternatives(schema, "#", tr)


def _disjoint_sets(xs: list, ys: list, tr: "Translator", depth: int) -> bool:
    return all(_disjoint(x, y, tr, depth) for x in xs for y in ys)


def _types(s: Any) -> set[str]:
    """The JSON types a plain schema allows ("number" covers "integer")."""
    if s is True:
        return set(ALL_TYPES)
    if "const" in s or "enum" in s:
        values = [s["const"]] if "const" in s else s["enum"]
        return {type_name(v) for v in values}
    t = s.get("type", ALL_TYPES)
    return {"number" if x == "integer" else x for x in ([t] if isinstance(t, str) else t)}


def _values(s: Any) -> "list | None":
    if isinstance(s, dict) and ("const" in s or "enum" in s):
        return [s["const"]] if "const" in s else list(s["enum"])
    return None


def _disjoint(x: Any, y: Any, tr: "Translator", depth: int) -> bool:
    if x is False or y is False:
        return True
    common = _types(x) & _types(y)
    if not common:
        return True
    vx, vy = _values(x), _values(y)
    if vx is not None and vy is not None:
        return not any(json_equal(a, b) for a in vx for b in vy)
    for values, other in ((vx, y), (vy, x)):
        if values is not None:
            try:
                return not any(tr.valid_value(v, other) for v in values)
            except ConstrainError:
                return False
    if common == {"object"} and depth < MAX_DEPTH:
        return _objects_disjoint(x, y, tr, depth)
    return False


def _forbids(s: dict, key: str) -> bool:
    props = s.get("properties", {})
    if key in props:
        return props[key] is False
    return s.get("additionalProperties", True) is False and not s.get("patternProperties")


def _objects_disjoint(x: dict, y: dict, tr: "Translator", depth: int) -> bool:
    for a, b in ((x, y), (y, x)):
        if any(_forbids(b, k) for k in a.get("required", ())):
            return True
    shared = set(x.get("required", ())) & set(y.get("required", ()))
    for k in shared:
        px, py = x.get("properties", {}).get(k, True), y.get("properties", {}).get(k, True)
        if px is True or py is True:
            continue
        try:
            if _disjoint_sets(_alternatives(px, tr), _alternatives(py, tr), tr, depth + 1):
                return True
        except ConstrainError:
            continue
    return False
