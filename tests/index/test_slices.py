"""Slices are exact: where a slice lets the walk skip its tokens, the mask still equals a plain
walk of the whole trie on every token (and the byte-level oracle where it is cheap).

The states that exercise each path of the slice depth analysis: free text (all slice tokens),
length counters (exactly the tokens of at most L characters, inside regexes and inside rules),
keys beside named keys (a difference automaton), non-ASCII text, and rules that may return in
the middle of a slice token (an exit on the way forbids the shortcut).
"""

from __future__ import annotations

import random
import string
from typing import Callable, Optional

import numpy as np
import pytest

from constrain import Compiler, Vocabulary
from constrain.automata import compile_ir, ir, regex_to_dfa
from constrain.automata.algebra import difference
from constrain.automata.dfa import DFA
from constrain.automata.rules import compile_rules
from constrain.grammar.json_schema.any_value import json_value_rules
from constrain.grammar.json_schema.lexical import quoted, string_body, string_literal
from constrain.index.slice_choice import SliceChooser, SliceProofs
from constrain.index.slice_depth import state_depths
from constrain.index.slices import DEFAULT_UNITS, byte_units, utf8_text_units
from constrain.index.stack_index import StackTokenAutomaton
from constrain.index.token_index import DFATokenAutomaton
from constrain.index.vocab_index import VocabIndex
from constrain.vocab.special_bytes import trie_token_bytes

WIDE = "é中😀ß€"


def _synthetic_vocab(seed: int = 0) -> Vocabulary:
    """A small vocabulary with every kind of token a slice must sort: identifier text, ASCII
    text, non-ASCII text, quotes/backslashes/controls, cut UTF-8 sequences, every single byte."""
    rng = random.Random(seed)
    ident = string.ascii_letters + string.digits + " _"
    text = ident + "-.,:;!?/()[]{}'#@~\x7f"
    pools = ((ident, 1600), (text, 1300), (text + WIDE, 1300), (text + WIDE + '"\\\n\t\x01', 600))
    tokens: set[bytes] = {bytes([b]) for b in range(256)}
    for alphabet, count in pools:
        for _ in range(count):
            length = rng.choice((1, 2, 3, 4, 5, 6, 8, 12, 20, 40))
            tokens.add("".join(rng.choice(alphabet) for _ in range(length)).encode())
    for ch in WIDE:
        data = ch.encode()
        for cut in range(1, len(data)):
            tokens.update((data[:cut], data[cut:], b"ab" + data[:cut], data[cut:] + b"cd"))
    table = sorted(tokens) + [b"<eos>"]
    return Vocabulary(table, {len(table) - 1}, {len(table) - 1}, name="synthetic")


@pytest.fixture(scope="module")
def synthetic() -> Vocabulary:
    return _synthetic_vocab()


def _plain(index: VocabIndex) -> VocabIndex:
    """The same vocabulary index with no slices: every walk covers the whole trie."""
    plain = object.__new__(VocabIndex)
    plain.trie, plain.slices, plain.eos_ids = index.trie, (), index.eos_ids
    plain.proofs = SliceProofs()
    return plain


def _units_of(data: bytes, unit_next: np.ndarray) -> int:
    """Reference unit count (0: not a slice token), by decoding rather than the automaton."""
    if unit_next.shape[0] > 1:  # the UTF-8 text automaton
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return 0
        return len(text) if all(ch >= " " and ch not in '"\\' for ch in text) else 0
    allowed = set(np.nonzero(unit_next[0] >= 0)[0].tolist())
    return len(data) if all(b in allowed for b in data) else 0


@pytest.mark.parametrize("which", ["synthetic", "llama3"])
def test_slice_masks_hold_the_tokens_of_at_most_l_units(which, synthetic, request):
    vocab = synthetic if which == "synthetic" else request.getfixturevalue("llama3")
    index = Compiler(vocab).index
    assert len(index.slices) == len(DEFAULT_UNITS)
    for sl in index.slices:
        units = np.array([
            0 if tid in vocab.special_ids else _units_of(data, sl.unit_next)
            for tid, data in enumerate(vocab.token_bytes)
        ])
        assert sl.max_units == units.max() and sl.n_tokens == int((units > 0).sum())
        rest = set(sl.rest.tok_ids.tolist())
        # the rest trie holds the other tokens as the full trie does: special tokens under their
        # virtual spellings, no token with a byte UTF-8 never holds (vocab/special_bytes.py)
        spelled = trie_token_bytes(vocab.token_bytes, vocab.special_ids)
        assert rest == {t for t, data in enumerate(spelled) if data and units[t] == 0}
        for limit in sorted({0, 1, 2, 3, 7, sl.max_units // 2, sl.max_units}):
            bits = np.unpackbits(sl.masks_upto[limit].view(np.uint8), bitorder="little")[: vocab.size]
            assert np.array_equal(bits.astype(bool), (units > 0) & (units <= limit)), limit


def _reference_checks(dfa: DFA, exits: np.ndarray, unit_next: np.ndarray, vocab: Vocabulary) -> int:
    """Check state_depths' claim at every state against the slice tokens of `vocab`, read byte
    by byte; returns how many states had a claim."""
    tokens = [(data, _units_of(data, unit_next)) for data in vocab.token_bytes[:-1]]
    tokens = [(data, n) for data, n in tokens if n > 0]
    cap = max(n for _, n in tokens)
    depths = state_depths(dfa.table, dfa.byte_classes, exits, np.ascontiguousarray(unit_next), np.int32(cap))
    rows, classes = dfa.table.tolist(), dfa.byte_classes.tolist()
    claims = 0
    for q, limit in enumerate(depths.tolist()):
        assert -1 <= limit <= cap
        if limit < 0:
            continue
        claims += 1
        for data, n in tokens:
            s, readable, exit_met = q, True, False
            for k, b in enumerate(data):
                if k and exits[s]:
                    exit_met = True
                s = rows[s][classes[b]]
                if s < 0:
                    readable = False
                    break
            assert readable == (n <= limit), (q, limit, data)
            assert limit == cap or not exit_met, (q, limit, data)
    return claims


def _random_dfa(rng: random.Random) -> DFA:
    """A random table over byte classes cut at the boundaries slices care about (letters,
    digits, quote, backslash, controls, UTF-8 lead and continuation bytes), merged at random."""
    cuts = [0, 0x20, 0x22, 0x23, 0x30, 0x3A, 0x41, 0x5B, 0x5C, 0x5D, 0x61, 0x7B, 0x7F, 0x80, 0xA0, 0xC0,
            0xC2, 0xE0, 0xE1, 0xF0, 0xF5, 0x100]
    n_classes = rng.randint(1, 5)
    byte_classes = np.zeros(256, dtype=np.int32)
    for lo, hi in zip(cuts, cuts[1:]):
        byte_classes[lo:hi] = rng.randrange(n_classes)
    n = rng.randint(1, 7)
    table = np.array([[rng.choice([-1] + list(range(n)) * 3) for _ in range(n_classes)] for _ in range(n)])
    return DFA(byte_classes, table, np.array([rng.random() < 0.3 for _ in range(n)]))


def test_state_depths_claims_hold_on_random_automata(synthetic):
    rng = random.Random(7)
    claims = 0
    for _ in range(150):
        dfa = _random_dfa(rng)
        exits = np.array([rng.random() < 0.2 for _ in range(dfa.n_states)])
        for unit_next in DEFAULT_UNITS:
            claims += _reference_checks(dfa, exits, unit_next, synthetic)
    assert claims > 100  # the analysis is not vacuous


@pytest.mark.parametrize("pattern", [r'[^"\\\x00-\x1f]{0,7}', r"[a-z_ ]{2,9}!", r"[ -~]{0,50}", r'"[^"]*"', r"é{3}x",
                                     r"(?!(?:select|from)\b)[A-Za-z_][A-Za-z0-9_]*"])
def test_state_depths_claims_hold_on_regexes(pattern, synthetic):
    dfa = regex_to_dfa(pattern)
    for unit_next in DEFAULT_UNITS:
        for exits in (np.zeros(dfa.n_states, dtype=bool), dfa.accepting.copy()):
            _reference_checks(dfa, exits, unit_next, synthetic)


def test_state_depths_of_a_counter():
    """A string of at most 5 characters: exactly L characters left; none where a return may
    interrupt (every state of `{0,5}` accepts); free text far from the bound."""
    dfa = regex_to_dfa(r'[^"\\\x00-\x1f]{0,5}')
    utf8 = utf8_text_units()
    no_exits = np.zeros(dfa.n_states, dtype=bool)
    states = [dfa.walk(0, "é中"[:k].encode()) for k in range(3)]
    assert state_depths(dfa.table, dfa.byte_classes, no_exits, utf8, np.int32(8))[states].tolist() == [5, 4, 3]
    assert state_depths(dfa.table, dfa.byte_classes, no_exits, utf8, np.int32(4))[states].tolist() == [4, 4, 3]
    assert (state_depths(dfa.table, dfa.byte_classes, dfa.accepting, utf8, np.int32(8))[states] == -1).all()
    ascii_only = byte_units(frozenset(range(0x20, 0x7F)) - {0x22, 0x5C})
    assert state_depths(dfa.table, dfa.byte_classes, no_exits, ascii_only, np.int32(8))[states].tolist() == [5, 4, 3]


# -- whole masks: slices on vs off ---------------------------------------------------------------

def _pick(rng: random.Random, vocab: Vocabulary) -> Callable[[np.ndarray], int]:
    """Choose the next token: half the time one with non-ASCII bytes, when there is one."""

    def pick(allowed: np.ndarray) -> int:
        wide = [t for t in allowed.tolist() if max(vocab.token_bytes[t]) >= 0x80]
        return int(rng.choice(wide if wide and rng.random() < 0.5 else allowed.tolist()))

    return pick


def _oracle_row(automaton, state, vocab: Vocabulary) -> np.ndarray:
    allowed = np.zeros(vocab.size, dtype=bool)
    for tid, data in enumerate(vocab.token_bytes):
        if data and tid not in vocab.special_ids and automaton.advance(state, data) is not None:
            allowed[tid] = True
    if automaton.is_accepting(state):
        allowed[list(vocab.eos_token_ids)] = True
    return allowed


def _compare(fast, plain, vocab: Vocabulary, seed: str, steps: int, oracle_steps: int = 0,
             prefix: bytes = b"") -> int:
    """Walk `steps` random tokens; at each state the fast row must equal the plain row (and
    the byte-step oracle for the first `oracle_steps`). Returns the number of slice shortcuts."""
    rng = random.Random(seed)
    pick = _pick(rng, vocab)
    state = fast.initial_state()
    if prefix:
        state = fast.advance(state, prefix)
    for step in range(steps):
        ours, theirs = fast.mask_row(state), plain.mask_row(state)
        diff = np.nonzero(np.unpackbits((ours ^ theirs).view(np.uint8), bitorder="little")[: vocab.size])[0]
        assert diff.size == 0, f"{seed} step {step}: " + ", ".join(
            f"{t}={vocab.token_bytes[t]!r}" for t in diff[:6]
        )
        bits = np.unpackbits(ours.view(np.uint8), bitorder="little")[: vocab.size].astype(bool)
        if step < oracle_steps:
            assert np.array_equal(bits, _oracle_row(fast, state, vocab)), f"{seed} step {step} (oracle)"
        allowed = np.nonzero(bits)[0]
        allowed = allowed[~np.isin(allowed, list(vocab.eos_token_ids))]
        if not allowed.size:
            break
        state = fast.advance(state, vocab.token_bytes[pick(allowed)])
        assert state is not None
    return fast.nodes_visited


REGEXES = [
    r"[a-z]{0,40}",
    r'[^"\\]{0,45}',
    r'[^"\\\x00-\x1f]{3,150}',
    r".{0,200}",
    r'"([^"\\]|\\["\\nt]){0,12}"',
    r"[a-zA-Z0-9]{8}-[a-zA-Z0-9]{4}",
    r"[ -~]{2,9}x[ -~]*",
    r"(?s).{5}",
    # Names: no slice applies at the start (a digit may not come first), the name slice after it.
    r"[a-zA-Z_][a-zA-Z0-9_]*",
    r"(?i)(?!(select|from|as)(?![a-z0-9_]))[a-z_][a-z0-9_]*",
    r"[a-z][a-z0-9]{0,5}",
    r"[a-z][a-zA-Z0-9_]{0,5}",
    r"_?[a-z][a-z0-9_]*(\.[a-z]+)?",
]


@pytest.mark.parametrize("which", ["synthetic", "llama3"])
@pytest.mark.parametrize("pattern", REGEXES)
def test_regex_masks_with_slices_equal_plain_walks(which, pattern, synthetic, request):
    vocab = synthetic if which == "synthetic" else request.getfixturevalue("llama3")
    index = Compiler(vocab).index
    dfa = regex_to_dfa(pattern)
    fast, plain = DFATokenAutomaton(dfa, index), DFATokenAutomaton(dfa, _plain(index))
    oracle_steps = 25 if which == "synthetic" else 0
    for walk in range(3):
        _compare(fast, plain, vocab, f"{which}:{pattern}:{walk}", steps=25, oracle_steps=oracle_steps)


def _byte_dfa(paths: list[bytes], loop: Optional[bytes] = None) -> DFA:
    """A DFA over raw bytes accepting exactly `paths`, then (with `loop`) any repetition of
    bytes from `loop`: lets a rule end in the middle of a UTF-8 character."""
    trie: dict[bytes, int] = {b"": 0}
    for path in paths:
        for k in range(1, len(path) + 1):
            trie.setdefault(path[:k], len(trie))
    n = len(trie)
    byte_classes = np.arange(256, dtype=np.int32)
    table = np.full((n, 256), -1, dtype=np.int32)
    for prefix, s in trie.items():
        if prefix:
            table[trie[prefix[:-1]], prefix[-1]] = s
    accepting = np.zeros(n, dtype=bool)
    for path in paths:
        accepting[trie[path]] = True
        if loop:
            table[trie[path], list(loop)] = trie[path]
    return DFA(byte_classes, table, accepting)


def _string(lo: int, hi: Optional[int]) -> ir.Node:
    return quoted(string_body(lo, hi))


def _other_keys(names: list[str]) -> ir.Node:
    any_key = compile_ir(_string(0, None))
    named = compile_ir(ir.alt(*(string_literal(n) for n in names)))
    return ir.Embedded(difference(any_key, named))


TEXT = ir.chars([(0x20, 0x21), (0x23, 0x5B), (0x5D, 0x10FFFF)])
RULE_SETS: dict[str, tuple[dict[str, ir.Node], str]] = {
    # A maxLength string as a value: every character typed is a new counter state.
    "bounded_string": ({
        "start": ir.concat(ir.literal('{"k":'), ir.RuleRef("s"), ir.literal(',"n":'), ir.RuleRef("t"), ir.literal("}")),
        "s": _string(0, 12),
        "t": _string(2, 160),
    }, "start"),
    # Keys beside named keys: the other-keys automaton follows the named keys' prefixes.
    "other_keys": ({
        **json_value_rules(),
        "start": ir.concat(
            ir.literal("{"),
            ir.alt(ir.concat(string_literal("name"), ir.literal(":"), ir.RuleRef("json_string")),
                   ir.concat(string_literal("nickname"), ir.literal(":"), ir.RuleRef("json_value")),
                   ir.concat(_other_keys(["name", "nickname"]), ir.literal(":"), ir.RuleRef("json_value"))),
            ir.literal("}"),
        ),
    }, "start"),
    # A rule that may return after any of its characters, then the caller reads more text:
    # a token may leave the callee in its middle.
    "return_mid_token": ({
        "start": ir.concat(ir.RuleRef("sub"), ir.repeat(ir.chars([(0x61, 0x7A)]), 0, None), ir.literal(";")),
        "sub": ir.repeat(ir.chars([(0x61, 0x7A)]), 0, 3),
    }, "start"),
    "return_mid_text": ({
        "start": ir.concat(ir.RuleRef("sub"), ir.repeat(TEXT, 0, 20), ir.literal('"')),
        "sub": ir.repeat(TEXT, 0, 3),
    }, "start"),
    # A rule that returns in the middle of a UTF-8 character: the caller reads its last bytes.
    "return_mid_character": ({
        "start": ir.concat(ir.RuleRef("lead"), ir.Embedded(_byte_dfa([b"\xa9", b"\xadx"], loop=b"abc\xc3\xa9"))),
        "lead": ir.alt(ir.repeat(TEXT, 0, 2), ir.concat(ir.repeat(TEXT, 0, 2), ir.Embedded(_byte_dfa([b"\xc3"])))),
    }, "start"),
    # Names: a letter first, then name bytes; the rule returns after any of them.
    "names": ({
        "start": ir.concat(ir.RuleRef("name"), ir.repeat(ir.concat(ir.literal(", "), ir.RuleRef("name")), 0, None), ir.literal(";")),
        "name": ir.concat(ir.chars([(0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)]),
                          ir.repeat(ir.chars([(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)]), 0, None)),
    }, "start"),
    # Nested calls in free text: JSON values, with non-ASCII strings.
    "json": (json_value_rules(), "json_value"),
}


@pytest.mark.parametrize("which", ["synthetic", "llama3"])
@pytest.mark.parametrize("name", list(RULE_SETS))
def test_rule_masks_with_slices_equal_plain_walks(which, name, synthetic, request):
    vocab = synthetic if which == "synthetic" else request.getfixturevalue("llama3")
    index = Compiler(vocab).index
    rules, start = RULE_SETS[name]
    rule_set = compile_rules(rules, start)
    fast, plain = StackTokenAutomaton(rule_set, index), StackTokenAutomaton(rule_set, _plain(index))
    oracle_steps = 20 if which == "synthetic" else 2
    for walk in range(3):
        _compare(fast, plain, vocab, f"{which}:{name}:{walk}", steps=20, oracle_steps=oracle_steps)
    assert fast.nodes_visited <= plain.nodes_visited


@pytest.mark.parametrize("name,prefix,texts", [
    ("bounded_string", b'{"k":"ab","n":"', [b"x", "é".encode(), b"hello world", b"!" * 140]),
    ("other_keys", b'{"', [b"n", b"i", b"ck", b"na", b"me", b"s"]),
])
def test_new_states_of_wide_rules_skip_the_slice(name, prefix, texts, llama3):
    """Along a bounded string or a key beside named keys every character is a new state; the
    walk covers only the rest trie of the UTF-8 text slice, not the whole vocabulary."""
    index = Compiler(llama3).index
    rule_set = compile_rules(RULE_SETS[name][0], "start")
    fast, plain = StackTokenAutomaton(rule_set, index), StackTokenAutomaton(rule_set, _plain(index))
    state = fast.advance(fast.initial_state(), prefix)
    for text in texts:
        state = fast.advance(state, text)
        assert state is not None
        before = fast.nodes_visited
        assert np.array_equal(fast.mask_row(state), plain.mask_row(state))
        assert fast.nodes_visited - before < index.slices[0].rest.n_nodes


def test_slice_proofs_are_shared_per_dfa_object_and_exits(llama3):
    """Two automata over the same rule DFA (rules.py shares them between grammars) reuse one
    depth analysis; other exits or another DFA object with the same id never do."""
    from constrain.automata.dfa import DFA

    index = Compiler(llama3).index
    proofs = SliceProofs()
    table = np.array([[0, -1], [1, 1]], dtype=np.int32)
    dfa = DFA(np.zeros(256, dtype=np.int32), table, np.array([True, False]))
    exits = np.array([True, False])
    a = SliceChooser(index.slices, proofs)._analyse(0, 0, dfa, exits)
    assert SliceChooser(index.slices, proofs)._analyse(5, 0, dfa, exits) is a
    other = SliceChooser(index.slices, proofs)._analyse(0, 0, dfa, np.array([False, False]))
    assert other is not a and np.array_equal(other, state_depths(
        dfa.table, dfa.byte_classes, np.array([False, False]), index.slices[0].unit_next,
        np.int32(index.slices[0].max_units)))
    twin = DFA(np.zeros(256, dtype=np.int32), table, np.array([True, False]))
    assert proofs.get("depths", 0, twin, exits.tobytes()) is None
