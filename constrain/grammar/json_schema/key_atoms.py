"""Boolean formulas over key atoms, kept canonical so that equal residuals are equal values.

Atoms are ("has", key, j, absent_ok): the key is absent (and absent_ok says) or present with a
value valid under the key's j-th schema (j = ANY: any value). and/or are flattened frozensets,
`one` is "exactly one of", constants fold away; ("closed", names) waits for the object's keys
(key_conditions.py expands it). Substitution settles one key's atoms and simplifies.
"""

from __future__ import annotations

from typing import Any, Optional

ANY = -1  # schema index of "any value" (the key is present)


def _has(key: Any, j: int, absent_ok: bool) -> Any:
    return ("has", key, j, absent_ok)


def _and(parts: list) -> Any:
    return _junction("and", parts, True)


def _or(parts: list) -> Any:
    return _junction("or", parts, False)


def _junction(tag: str, parts: list, unit: bool) -> Any:
    """and/or of parts, flattened and deduplicated; `unit` is the constant that drops out
    (True for and), its negation absorbs everything."""
    items: set = set()
    for p in parts:
        if p is unit:
            continue
        if p is (not unit):
            return not unit
        if p[0] == tag:
            items.update(p[1])
        else:
            items.add(p)
    if not items:
        return unit
    if len(items) == 1:
        return next(iter(items))
    return (tag, frozenset(items))


def _not(p: Any) -> Any:
    if isinstance(p, bool):
        return not p
    if p[0] == "not":
        return p[1]
    return ("not", p)


def _one(parts: list) -> Any:
    """Exactly one of `parts` holds."""
    trues = sum(1 for p in parts if p is True)
    rest = [p for p in parts if not isinstance(p, bool)]
    if trues > 1:
        return False
    seen: set = set()
    dups: set = set()
    for p in rest:
        (dups if p in seen else seen).add(p)
    if dups:  # a repeated part must be false (two copies holding make two)
        return _and([_not(d) for d in dups] + [_one([p for p in rest if p not in dups] + [True] * trues)])
    if trues == 1:
        return _and([_not(p) for p in rest])
    if not rest:
        return False
    if len(rest) == 1:
        return rest[0]
    return ("one", frozenset(rest))


def _subst(f: Any, key: Any, j: Optional[int], value: bool) -> Any:
    """j None: the key is absent; j ANY: present; else its value is (not) valid under schema j."""
    if j is None:
        return _rewrite(f, key, lambda atom: atom[3])
    if j == ANY:
        return _rewrite(f, key, lambda atom: True if atom[2] == ANY else atom)
    return _rewrite(f, key, lambda atom: value if atom[2] == j else atom)


def _subst_all(f: Any, key: Any, truths: dict) -> Any:
    """f with the (present) key's value judged under several of its schemas at once."""
    return _rewrite(f, key, lambda atom: True if atom[2] == ANY else truths.get(atom[2], atom))


def _rewrite(f: Any, key: Any, atom_value: Any) -> Any:
    """f with each atom of `key` replaced by atom_value(atom), simplified."""
    if isinstance(f, bool):
        return f
    tag = f[0]
    if tag == "has":
        return atom_value(f) if f[1] == key else f
    if tag == "closed":
        return f
    if tag == "not":
        return _not(_rewrite(f[1], key, atom_value))
    parts = [_rewrite(p, key, atom_value) for p in f[1]]
    return _and(parts) if tag == "and" else _or(parts) if tag == "or" else _one(parts)


def _asked(f: Any, key: Any, out: set) -> None:
    if isinstance(f, bool):
        return
    tag = f[0]
    if tag == "has":
        if f[1] == key:
            out.add(f[2])
    elif tag == "not":
        _asked(f[1], key, out)
    elif tag != "closed":
        for p in f[1]:
            _asked(p, key, out)
