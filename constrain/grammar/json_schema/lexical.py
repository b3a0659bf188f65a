"""JSON's lexical pieces as IR: whitespace, strings (every valid spelling), numbers, literals.

Strings are built over *decoded* characters and then encoded: each character becomes every
JSON spelling of it (itself where RFC 8259 allows it unescaped, its short escape, `\\uXXXX`, a
surrogate pair), so a key or pattern constrains what the string means, not how it is spelled,
and lengths count characters as JSON Schema does.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

from ...automata import ir
from ...automata.charset import Ranges, normalize
from .hex_ranges import unicode_escapes

UNESCAPED: Ranges = ((0x20, 0x21), (0x23, 0x5B), (0x5D, 0x10FFFF))
SHORT_ESCAPES = {0x22: '\\"', 0x5C: "\\\\", 0x2F: "\\/", 0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"}
ANY_CHAR: Ranges = ((0, 0x10FFFF),)

NUMBER = ir.concat(
    ir.repeat(ir.literal("-"), 0, 1),
    ir.alt(ir.literal("0"), ir.concat(ir.chars([(0x31, 0x39)]), ir.repeat(ir.chars([(0x30, 0x39)]), 0, None))),
    ir.repeat(ir.concat(ir.literal("."), ir.repeat(ir.chars([(0x30, 0x39)]), 1, None)), 0, 1),
    ir.repeat(
        ir.concat(ir.chars([(0x45, 0x45), (0x65, 0x65)]), ir.repeat(ir.chars([(0x2B, 0x2B), (0x2D, 0x2D)]), 0, 1),
                  ir.repeat(ir.chars([(0x30, 0x39)]), 1, None)),
        0, 1,
    ),
)
TRUE, FALSE, NULL = ir.literal("true"), ir.literal("false"), ir.literal("null")
BOOLEAN = ir.alt(TRUE, FALSE)


def _intersect(a: Ranges, b: Ranges) -> Ranges:
    out = []
    for lo, hi in a:
        for lo2, hi2 in b:
            s, e = max(lo, lo2), min(hi, hi2)
            if s <= e:
                out.append((s, e))
    return normalize(out)


@lru_cache(maxsize=4096)
def encode_chars(ranges: Ranges, canonical: bool = False) -> ir.Node:
    """The JSON spellings of one character from `ranges`: every spelling, or with `canonical`
    only the one `json.dumps(..., ensure_ascii=False)` writes (raw where allowed, else the short
    escape, else `\\u00xx`). Canonical is narrower, never wider, and keeps automata small
    where a pattern or length multiplies the spellings."""
    parts: list[ir.Node] = []
    plain = _intersect(ranges, UNESCAPED)
    if plain:
        parts.append(ir.Chars(plain))
    for cp, esc in SHORT_ESCAPES.items():
        if any(lo <= cp <= hi for lo, hi in ranges) and not (canonical and cp == 0x2F):
            parts.append(ir.literal(esc))
    if canonical:
        for cp in range(0x20):
            if cp not in SHORT_ESCAPES and any(lo <= cp <= hi for lo, hi in ranges):
                parts.append(ir.literal(f"\\u{cp:04x}"))
    else:
        for lo, hi in ranges:
            parts.append(unicode_escapes(lo, hi))
    return ir.alt(*parts) if parts else ir.NOTHING


def encode(node: ir.Node, canonical: bool = False) -> ir.Node:
    """Map an IR over decoded characters to the IR of their JSON string spellings."""
    if isinstance(node, ir.Chars):
        return _encoded_char(node.ranges, canonical)
    if isinstance(node, ir.Concat):
        return ir.Concat(tuple(encode(n, canonical) for n in node.items))
    if isinstance(node, ir.Alt):
        return ir.Alt(tuple(encode(n, canonical) for n in node.items))
    if isinstance(node, ir.Repeat):
        return ir.Repeat(encode(node.item, canonical), node.min, node.max)
    if isinstance(node, ir.Graph):  # patterns with lookarounds (see automata/assertions.py)
        edges = tuple((u, v, encode(n, canonical)) for u, v, n in node.edges)
        return ir.Graph(node.n_states, node.start, node.finals, edges)
    raise TypeError(f"cannot JSON-encode IR node {type(node).__name__}")


@lru_cache(maxsize=4096)
def _encoded_char(ranges: Ranges, canonical: bool) -> ir.Node:
    """encode_chars, as its minimal DFA where the set is wide (`.`, `[^/]`, `\\S`): one
    character of a pattern is then a dozen states copied in, not some fifteen UTF-8
    sequences and escapes built node by node at every use."""
    spelled = encode_chars(ranges, canonical)
    if sum(hi - lo for lo, hi in ranges) < 0x80:
        return spelled
    from ...automata import compile_ir

    return ir.Embedded(compile_ir(spelled))


def string_body(min_len: int = 0, max_len: Optional[int] = None, canonical: bool = False) -> ir.Node:
    """The inside of a JSON string of min_len..max_len characters (any characters). Bounded
    lengths count characters with a direct (count, position-in-character) automaton."""
    if min_len == 0 and max_len is None:
        return ir.repeat(encode_chars(ANY_CHAR, canonical), 0, None)
    return ir.Embedded(_bounded_body(min_len, max_len, canonical))


@lru_cache(maxsize=256)
def _char_dfa(canonical: bool):
    from ...automata import compile_ir

    return compile_ir(encode_chars(ANY_CHAR, canonical))


@lru_cache(maxsize=256)
def _bounded_body(min_len: int, max_len: Optional[int], canonical: bool):
    from ...automata.algebra import bounded_repeat

    return bounded_repeat(_char_dfa(canonical), min_len, max_len)


@lru_cache(maxsize=2)
def any_string(canonical: bool = False) -> ir.Node:
    """Every JSON string, one shared node (a plain `{"type": "string"}` is in most schemas,
    hundreds of times in some: the facts the compiler keeps on a node are learned once)."""
    return quoted(string_body(canonical=canonical))


def quoted(body: ir.Node) -> ir.Node:
    return ir.concat(ir.literal('"'), body, ir.literal('"'))


@lru_cache(maxsize=8192)
def string_literal(text: str, canonical: bool = False) -> ir.Node:
    """The spellings (all, or the canonical one) of the JSON string whose value is `text`.
    One node per key or value, shared: property names and enum values recur across schemas,
    and what the compiler learns about a node (its size, its hash) is kept on it."""
    return quoted(ir.concat(*(encode_chars(((ord(c), ord(c)),), canonical) for c in text)) if text else ir.EMPTY)


def whitespace(mode: str, max_run: int = 16) -> ir.Node:
    """Between tokens: nothing ("compact") or a bounded run of JSON whitespace ("flexible")."""
    if mode == "compact":
        return ir.EMPTY
    return ir.repeat(ir.chars([(0x20, 0x20), (0x09, 0x0A), (0x0D, 0x0D)]), 0, max_run)
