"""A key formula (key_formula.py) evaluated member by member inside an object's automaton.

The automaton's state carries the *residual*: the formula with what the members so far settled
substituted and simplified. Atoms are ("has", key, j, absent_ok): the key is absent (and
absent_ok says) or present with a value valid under the key's j-th schema (j = -1: any value).
At a member `"k": value`, the values of k split into *cells* by the schemas the residual still
asks of k: one cell per constant that a const/enum among them lists (judged by jsonschema),
then the sign combinations of the others, explored depth first and cut where the residual
turns false. Cells leading to the same residual share one value rule, written as a few cubes
of those schemas (so a complement appears only where a distinction needs one). Residuals stay
few in practice (an exact oneOf over keys: "exactly one of the rest" or "none of the rest");
their number, like the cells per member, is capped.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Optional

from ...automata.algebra import intersect
from ...errors import ConstrainError, EmptyLanguageError, UnsupportedSchemaError
from .combinators import types_of
from .dnf import finite_candidates
from .keywords import ALL_TYPES, ANNOTATIONS
from .key_atoms import ANY, _and, _asked, _has, _not, _one, _or, _subst, _subst_all
from .strings import key_language

if TYPE_CHECKING:  # pragma: no cover
    from .translate import Translator

OTHER = ("constrain", "other key")  # pseudo-key: some key the formula does not name is present
MAX_VALUES = 256  # constants that split one member
MAX_CELLS = 64  # cells of one member past its constants
MAX_RESIDUALS = 4096


class KeyConditions:
    """The formula of one object over its keys, and its residuals."""

    def __init__(self, raw: Any, tr: "Translator", pointer: str) -> None:
        self.tr, self.pointer = tr, pointer
        self.schemas: dict[Any, list[Any]] = {}  # key -> the distinct schemas atoms ask of it
        self._index: dict[Any, dict[Any, int]] = {}  # key -> semantic key -> position
        self._finite: dict[tuple, Optional[list]] = {}
        self._memo: dict[tuple, Any] = {}
        self._asks: dict[tuple, tuple[int, ...]] = {}
        self._valid: dict[tuple, bool] = {}
        self._residuals: set = set()
        self.formula = self._convert(raw)

    # -- from the raw formula -----------------------------------------------------------------
    def _position(self, key: Any, schema: Any) -> int:
        if schema is True or schema == {}:
            return ANY
        index = self._index.setdefault(key, {})
        skey = _semantic_key(schema, self.tr)
        j = index.get(skey)
        if j is None:
            j = index[skey] = len(self.schemas.setdefault(key, []))
            self.schemas[key].append(schema)
        return j

    def _convert(self, f: Any) -> Any:
        if isinstance(f, bool):
            return f
        tag = f[0]
        if tag == "in":
            _, key, schema, absent_ok = f
            self.schemas.setdefault(key, [])
            if schema is False:
                return _not(_has(key, ANY, False)) if absent_ok else False
            return _has(key, self._position(key, schema), absent_ok)
        if tag == "closed":
            names = set(f[1])
            return ("closed", frozenset(names))  # expanded once every key is known (below)
        if tag == "type":
            return "object" in f[1]
        if tag == "not":
            return _not(self._convert(f[1]))
        parts = [self._convert(p) for p in f[1]]
        return _and(parts) if tag == "and" else _or(parts) if tag == "or" else _one(parts)

    def close(self, f: Any) -> Any:
        """Expand ("closed", names): every key the formula names outside `names`, and every
        other key, absent."""
        if isinstance(f, bool):
            return f
        tag = f[0]
        if tag == "closed":
            return _and([_not(_has(k, ANY, False)) for k in self.schemas if k not in f[1]] + [_not(_has(OTHER, ANY, False))])
        if tag == "has":
            return f
        if tag == "not":
            return _not(self.close(f[1]))
        parts = [self.close(p) for p in f[1]]
        return _and(parts) if tag == "and" else _or(parts) if tag == "or" else _one(parts)

    # -- substitution ------------------------------------------------------------------------
    def absent(self, f: Any, key: Any) -> Any:
        return self._substitute(f, key, None, False)

    def present(self, f: Any, key: Any) -> Any:
        """f with `key` present (its value not yet judged)."""
        return self._substitute(f, key, ANY, True)

    def judged(self, f: Any, key: Any, j: int, holds: bool) -> Any:
        """f with the value of (present) `key` valid or not under its j-th schema."""
        return self._substitute(f, key, j, holds)

    def _substitute(self, f: Any, key: Any, j: Optional[int], value: bool) -> Any:
        if isinstance(f, bool):
            return f
        memo_key = (f, key, j, value)
        hit = self._memo.get(memo_key)
        if hit is None:
            hit = self._memo[memo_key] = _subst(f, key, j, value)
        return hit

    def count(self, residual: Any) -> Any:
        """Register a residual that an automaton state carries (their number is capped)."""
        if residual not in self._residuals:
            self._residuals.add(residual)
            if len(self._residuals) > MAX_RESIDUALS:
                raise UnsupportedSchemaError(
                    "oneOf", self.pointer, f"the conditions on this object's keys take more than {MAX_RESIDUALS} states"
                )
        return residual

    def asks(self, f: Any, key: Any) -> tuple[int, ...]:
        """The schema positions of `key` that f still asks about."""
        hit = self._asks.get((f, key))
        if hit is None:
            found: set[int] = set()
            _asked(f, key, found)
            hit = self._asks[(f, key)] = tuple(sorted(found - {ANY}))
        return hit

    def finite(self, key: Any, j: int) -> Optional[list]:
        """The values that include all valid under key's j-th schema, if it lists them."""
        if (key, j) not in self._finite:
            self._finite[(key, j)] = finite_candidates(self.schemas[key][j], self.tr)
        return self._finite[(key, j)]

    def valid(self, key: Any, j: int, value: Any) -> bool:
        """Is `value` (one of finite()'s, alive as long as this object) valid under key's j-th
        schema? Remembered: every residual that reaches the member asks again."""
        memo_key = (key, j, id(value))
        hit = self._valid.get(memo_key)
        if hit is None:
            try:
                hit = self._valid[memo_key] = self.tr.valid_value(value, self.schemas[key][j])
            except ConstrainError:
                raise UnsupportedSchemaError("properties", self.pointer, f"cannot judge a constant of {key!r}") from None
        return hit

    # -- cells of one member -----------------------------------------------------------------
    def cells(self, f: Any, key: Any) -> tuple[list, list]:
        """(kept, dropped) for a member `key` in residual f. kept: (residual, truths) per
        cell with a residual that is not false; dropped: the truths (partial: a cube) of the
        values that make it false. truths: position -> bool over `asks(f, key)`."""
        f = self.present(f, key)
        js = self.asks(f, key)
        kept: list = []
        dropped: list = []
        finite = [j for j in js if self.finite(key, j) is not None]
        general = [j for j in js if j not in finite]
        values: list = []
        for j in finite:
            values += [v for v in self.finite(key, j) or () if not any(_same(v, w) for w in values)]
        if len(values) > MAX_VALUES:
            raise UnsupportedSchemaError("enum", self.pointer, f"more than {MAX_VALUES} constants split the values of {key!r}")
        for v in values:
            truths = {j: self.valid(key, j, v) for j in js}
            g = _subst_all(f, key, truths)
            (dropped if g is False else kept).append(truths if g is False else (g, truths))
        rest = {j: False for j in finite}
        g = _subst_all(f, key, rest)
        self._explore(g, key, general, 0, rest, (set(ALL_TYPES), None), kept, dropped)
        if len(kept) + len(dropped) > MAX_VALUES + MAX_CELLS:
            raise UnsupportedSchemaError("properties", self.pointer, f"the conditions on {key!r} split its values into too many cases")
        return kept, dropped

    def _explore(self, g: Any, key: Any, general: list, i: int, truths: dict, scope: tuple, kept: list, dropped: list) -> None:
        """Sign combinations of the general schemas from the i-th on, depth first; `scope`
        (types, strings DFA or None) is what the positive ones so far allow: a combination
        no value satisfies is no cell."""
        if len(kept) + len(dropped) > MAX_VALUES + MAX_CELLS:
            return
        if g is False:
            dropped.append(dict(truths))
            return
        if i == len(general) or not self.asks(g, key):
            kept.append((g, dict(truths)))
            return
        j = general[i]
        for sign in (True, False):
            narrowed = self._narrow(scope, key, j) if sign else scope
            if narrowed is None:
                continue  # no value of any JSON type: a cell with nothing in it
            truths[j] = sign
            self._explore(self.judged(g, key, j, sign), key, general, i + 1, truths, narrowed, kept, dropped)
            del truths[j]

    def _narrow(self, scope: tuple, key: Any, j: int) -> Optional[tuple]:
        """scope ∧ key's j-th schema, or None when provably empty (no common type; for string
        schemas, no common string: discriminating patterns such as `^pkg:cargo/`)."""
        types = scope[0] & types_of(self.schemas[key][j], self.tr)
        if not types:
            return None
        strings = scope[1]
        if types == {"string"}:
            dfa = self._strings(key, j)
            if dfa is False:
                return None
            if dfa is not None:
                try:
                    strings = dfa if strings is None else intersect(strings, dfa)
                except EmptyLanguageError:
                    return None
                except ConstrainError:
                    pass  # (too large to tell: no pruning)
        return types, strings

    def _strings(self, key: Any, j: int) -> Any:
        """The quoted spellings key's j-th schema allows, when it only allows strings (False:
        none; None: not worked out)."""
        schema = self.schemas[key][j]
        known = self.tr.string_languages
        skey = _semantic_key(schema, self.tr)
        if skey not in known:
            found: Any = None
            if types_of(schema, self.tr) == {"string"}:
                try:
                    found = key_language(self.tr, schema, self.pointer)
                    found = False if found is None else found
                except ConstrainError:
                    found = None
            known[skey] = found
        return known[skey]

    def union_schema(self, key: Any, inside: list[dict], outside: list[dict]) -> Any:
        """A schema true on the cells `inside` and on none of `outside` (cells as truths over
        key's schema positions; a missing position is free): a few cubes of those schemas."""
        schemas = self.schemas[key]
        cubes: list[dict] = []
        for cell in inside:
            cube = dict(cell)
            for j in list(cell):
                trial = {i: b for i, b in cube.items() if i != j}
                if not any(_compatible(trial, o) for o in outside):
                    cube = trial
            if cube not in cubes:
                cubes.append(cube)
        cubes = [c for c in cubes if not any(o is not c and o.items() <= c.items() for o in cubes)]
        if any(not c for c in cubes):
            return True
        parts = [_all_of([schemas[j] if b else {"not": schemas[j]} for j, b in sorted(c.items())]) for c in cubes]
        return parts[0] if len(parts) == 1 else {"anyOf": parts}


def _compatible(a: dict, b: dict) -> bool:
    return all(b.get(j, v) == v for j, v in a.items())


class MemberConditions:
    """What the object automaton asks (containers.object_graph): per member, the value rules
    that lead to distinct residuals; the residual after an absent key, after some other key."""

    def __init__(self, cond: KeyConditions, bases: dict[str, tuple[list, str]], tr: "Translator") -> None:
        self.cond, self.bases, self.tr = cond, bases, tr  # bases: key -> (value schemas, pointer)
        self._values: dict[tuple, Any] = {}
        self._present: dict[tuple, list] = {}

    def start(self) -> Any:
        """The formula, closed over the object's keys, with keys that cannot be members
        (forbidden ones) absent."""
        f = self.cond.close(self.cond.formula)
        for k in self.cond.schemas:
            if k not in self.bases:
                f = self.cond.absent(f, k)
        return f

    def present(self, f: Any, key: str) -> list[tuple[Any, Any]]:
        """(value rule or None for the member's own, residual) per group of cells of `key`."""
        hit = self._present.get((f, key))
        if hit is not None:
            return hit
        if key not in self.cond.schemas:
            after = self.other(f)
            hit = [] if after is False else [(None, after)]
        else:
            kept, dropped = self.cond.cells(f, key)
            groups: dict[Any, list[dict]] = {}
            for g, truths in kept:
                groups.setdefault(g, []).append(truths)
            hit = []
            for g, inside in groups.items():
                outside = dropped + [t for h, ts in groups.items() if h != g for t in ts]
                hit.append((self._value(key, inside, outside), self.cond.count(g)))
        self._present[(f, key)] = hit
        return hit

    def absent(self, f: Any, key: str) -> Any:
        return self.cond.count(self.cond.absent(f, key)) if key in self.cond.schemas else f

    def other(self, f: Any) -> Any:
        return self.cond.count(self.cond.present(f, OTHER))

    def final(self, f: Any, absent: list[str]) -> bool:
        """Does the residual hold once the keys in `absent` (and other keys) are absent?"""
        for k in absent:
            f = self.absent(f, k)
        return self.cond.absent(f, OTHER) is True

    def _value(self, key: str, inside: list[dict], outside: list[dict]) -> Any:
        if not outside:
            return None
        union = self.cond.union_schema(key, inside, outside)
        if union is True:
            return None
        cache_key = (key, self.tr._key(union))
        hit = self._values.get(cache_key)
        if hit is None:
            schemas, ptr = self.bases[key]
            hit = self._values[cache_key] = self.tr.rule(f"{ptr}#cells", {"allOf": [*schemas, union]})
        return hit


def _semantic_key(schema: Any, tr: "Translator") -> Any:
    """Equal schemas (by their text, key order included: it is the member order of objects;
    top-level annotations such as descriptions aside) are one, wherever they are written, unless
    an `$id` could make equal `$ref`s mean different things."""
    if isinstance(schema, dict) and any(k in ANNOTATIONS for k in schema):
        schema = {k: v for k, v in schema.items() if k not in ANNOTATIONS}
    try:
        text = json.dumps(schema)
    except (TypeError, ValueError):
        return tr._key(schema)
    return tr._key(schema) if '"$id"' in text or '"id"' in text else ("text", text)


def _all_of(parts: list) -> Any:
    return True if not parts else parts[0] if len(parts) == 1 else {"allOf": parts}


def _same(a: Any, b: Any) -> bool:
    from .literals import json_equal

    return json_equal(a, b)
