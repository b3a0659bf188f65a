"""Grammars of rules: masks through the stack equal the byte-step oracle on every token, and the
JSON grammar accepts exactly JSON (checked against json.loads)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from constrain import CompiledGrammar, Compiler, GrammarError, Matcher
from constrain.automata import ir
from constrain.automata.rules import compile_rules
from constrain.grammar.json_schema.any_value import json_value_rules
from constrain.index.stack_index import StackTokenAutomaton

from token_choices import text_ids  # tests/support


def _grammar(vocab, rules, start):
    automaton = StackTokenAutomaton(compile_rules(rules, start), Compiler(vocab).index)
    return CompiledGrammar("rules", start, {}, vocab, automaton)


@pytest.fixture(scope="module")
def json_grammar(llama3):
    return _grammar(llama3, json_value_rules(), "json_value")


def _ours(matcher, vocab) -> np.ndarray:
    bm = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    matcher.fill_next_token_bitmask(bm)
    return np.unpackbits(bm.view(np.uint8), bitorder="little")[: vocab.size].astype(bool)


JSON_PREFIXES = ['{"a": [1, {"b": null}], "c": "x\\u00e9"}', '[[[["deep"]]], -0.5e3, true]', '"plain"']


@pytest.mark.parametrize("text", JSON_PREFIXES)
def test_masks_equal_the_oracle_along_real_text(text, json_grammar, llama3, tokenizer_files, byte_step_oracle):
    from tokenizers import Tokenizer

    doc = json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False)
    tok = Tokenizer.from_file(str(tokenizer_files["llama3"] / "tokenizer.json"))
    ids = tok.encode(doc, add_special_tokens=False).ids
    m = Matcher(json_grammar)
    for step, tid in enumerate(ids[:12]):
        state = m._history[-1]
        ours, theirs = _ours(m, llama3), byte_step_oracle(json_grammar, state, llama3)
        diff = np.nonzero(ours != theirs)[0]
        assert diff.size == 0, f"step {step}: " + ", ".join(
            f"{t}={llama3.token_bytes[t]!r} ours={ours[t]}" for t in diff[:6]
        )
        assert m.accept_token(tid)
    rest = ids[12:]
    assert m.accept_tokens(rest) == len(rest)
    assert m.is_accepting()


def test_masks_equal_the_oracle_along_random_walks(json_grammar, llama3, byte_step_oracle):
    rng = random.Random(5)
    for _ in range(2):
        m = Matcher(json_grammar)
        for step in range(8):
            state = m._history[-1]
            ours = _ours(m, llama3)
            theirs = byte_step_oracle(json_grammar, state, llama3)
            assert np.array_equal(ours, theirs), f"step {step}"
            choices = text_ids(np.nonzero(ours)[0], llama3)
            if not choices.size:
                break
            assert m.accept_token(int(rng.choice(choices)))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=12,
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=json_values, ascii_only=st.booleans())
def test_json_documents_are_accepted_and_truncations_are_not_complete(value, ascii_only, json_grammar):
    doc = json.dumps(value, separators=(",", ":"), ensure_ascii=ascii_only).encode()
    sem = json_grammar.automaton.semantics
    state = sem.advance(sem.initial(), doc)
    assert state is not None and sem.is_complete(state)
    for k in range(len(doc)):
        prefix_state = sem.advance(sem.initial(), doc[:k])
        assert prefix_state is not None  # every prefix stays viable
        if sem.is_complete(prefix_state):
            json.loads(doc[:k])  # complete only where the prefix is itself a JSON document


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(st.sampled_from('{}[]",:0123456789-.eEtruefalsn \\'), max_size=14))
def test_complete_means_json(text, json_grammar):
    sem = json_grammar.automaton.semantics
    state = sem.advance(sem.initial(), text.encode())
    try:
        json.loads(text)
        valid = not _space_outside_strings(text)  # compact: no whitespace between tokens
    except ValueError:
        valid = False
    complete = state is not None and sem.is_complete(state)
    assert complete == valid, text


def _space_outside_strings(text: str) -> bool:
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch.isspace():
            return True
    return False


def test_forced_bytes_through_rules(llama3):
    rules = {
        "start": ir.concat(ir.literal('{"k":'), ir.RuleRef("v"), ir.literal("}")),
        "v": ir.alt(ir.literal("true"), ir.literal("tree")),
    }
    g = _grammar(llama3, rules, "start")
    m = Matcher(g)
    assert m.forced_bytes() == b'{"k":tr'  # then "ue" or "ee"
    assert m.accept_token(llama3.token_id('{"'))
    assert m.forced_bytes() == b'k":tr'


def test_left_recursion_and_dead_rules_are_rejected(llama3):
    with pytest.raises(GrammarError, match="left-recursive"):
        compile_rules({"e": ir.alt(ir.concat(ir.RuleRef("e"), ir.literal("+1")), ir.literal("1"))}, "e")
    with pytest.raises(GrammarError, match="accepts no document"):
        compile_rules({"s": ir.concat(ir.literal("a"), ir.RuleRef("s"))}, "s")
    with pytest.raises(GrammarError, match="unknown rule"):
        compile_rules({"s": ir.RuleRef("nope")}, "s")


def test_rules_that_derive_nothing_are_pruned(llama3):
    """A branch through a rule with no finite derivation is dropped, not an error, and the
    states that only led there are gone (every remaining state can complete)."""
    rules = {
        "start": ir.alt(ir.literal("x"), ir.concat(ir.literal("y"), ir.RuleRef("dead"))),
        "dead": ir.concat(ir.literal("a"), ir.RuleRef("dead")),
    }
    g = _grammar(llama3, rules, "start")
    assert g.accepts("x") and not g.accepts("y") and not g.accepts("ya")
    m = Matcher(g)
    assert llama3.token_id("y") not in set(m.allowed_token_ids().tolist())


def test_masks_beyond_cached_boundaries_equal_a_cold_automaton(llama3, byte_step_oracle):
    """Inside a key the top's state changes at every character while its boundaries (the closing
    quote) and the stack below stay: the frame summaries beyond them are cached and reused. A
    mask built on warm caches equals the byte-step oracle and the mask of a fresh automaton."""
    schema = {"type": "object", "properties": {"alpha": {"type": "integer"}, "alps": {"type": "string"},
                                               "beta": {"type": "boolean"}}}
    doc = '{"alpha":1,"alps":"x","other":[2],"beta":true}'
    warm = Compiler(llama3).compile_json_schema(schema)
    m = Matcher(warm)
    for step, ch in enumerate(doc[:-1]):
        assert m.accept_token(llama3.token_id(ch)), step
        ours = _ours(m, llama3)
        if step in (3, 14, 25):  # inside "alpha", "alps", "other"
            assert np.array_equal(ours, byte_step_oracle(warm, m._history[-1], llama3)), step
        cold = Matcher(Compiler(llama3).compile_json_schema(schema))
        assert cold.accept_tokens([llama3.token_id(c) for c in doc[: step + 1]]) == step + 1
        assert np.array_equal(ours, _ours(cold, llama3)), step
    assert len(warm.automaton.summaries)  # (the cache was used: the test can tell it apart)


def _greedy_rules(follow: str) -> dict:
    letters = ir.chars([(ord("a"), ord("z"))])
    hex_digits = ir.chars([(ord("0"), ord("9")), (ord("a"), ord("f"))])
    ws = ir.repeat(ir.RuleRef("WS"), 0, None)
    item = ir.concat(ir.RuleRef("NAME"), ir.RuleRef("HEX"))
    if follow == "dots":  # NAME of dots, HEX a dot then a sign: the greedy NAME leaves no dot
        letters = ir.literal(".")
        hex_digits = ir.concat(ir.literal("."), ir.chars([(ord(c), ord(c)) for c in ":;)-"]))
    if follow == "colon":  # HEX may start with a dot (refused after NAME) or a colon
        letters = ir.literal(".")
        hex_digits = ir.concat(ir.chars([(ord("."), ord(".")), (ord(":"), ord(":"))]), ir.chars([(ord(c), ord(c)) for c in ");"]))
    return {
        "start": ir.concat(item, ir.repeat(ir.concat(ws, ir.literal(","), ws, item), 0, None), ws),
        "NAME": ir.repeat(letters, 1, None),
        "HEX": ir.repeat(hex_digits, 1, None) if follow == "hex" else hex_digits,
        "WS": ir.repeat(ir.literal(" "), 1, None),
    }


@pytest.mark.parametrize("follow", ["hex", "dots", "colon"])
def test_masks_after_greedy_returns_equal_the_oracle(follow, llama3, byte_step_oracle):
    """Greedy rules (Lark terminals): a name followed by a hex number ends only before a byte
    it cannot read; the tokens after its return may not start with a letter it reads (a walk
    from the allowed first bytes; boundaries only where the rule cannot read on). With NAME a
    run of dots and HEX a dot then a sign, the grammar has no document at all, and masks still
    equal the byte steps: ".:" is refused after "." and "..:" at the start (NAME reads the dot).
    Where HEX may start with a colon too, ".)" and ".)," stay refused after "." while ":)" is
    allowed (the walk's tokens and boundaries less those under a dot)."""
    automaton = StackTokenAutomaton(
        compile_rules(_greedy_rules(follow), "start", greedy=("NAME", "HEX", "WS")), Compiler(llama3).index
    )
    grammar = CompiledGrammar("rules", "start", {}, llama3, automaton)
    rng = random.Random(11)
    for prefix in (b"", b".", b"ab", b"ab1", b"ab1, cd", b"ab1 , cd9"):
        m = Matcher(grammar)
        if m.accept_tokens([llama3.token_bytes.index(bytes([b])) for b in prefix]) < len(prefix):
            continue
        for step in range(4):
            ours = _ours(m, llama3)
            assert np.array_equal(ours, byte_step_oracle(grammar, m._history[-1], llama3)), (prefix, step)
            choices = text_ids(np.nonzero(ours)[0], llama3)
            if not choices.size:
                break
            assert m.accept_token(int(rng.choice(choices)))


def test_the_row_cache_is_bounded_and_masks_outlive_its_clearing(llama3, tokenizer_files, monkeypatch):
    from tokenizers import Tokenizer

    import constrain.index.stack_index as stack_index

    tok = Tokenizer.from_file(str(tokenizer_files["llama3"] / "tokenizer.json"))
    ids = tok.encode('{"a":[1,{"b":null}],"c":[[["deep"]]]}', add_special_tokens=False).ids
    want = []
    m = Matcher(_grammar(llama3, json_value_rules(), "json_value"))
    for tid in ids:
        want.append(_ours(m, llama3))
        assert m.accept_token(tid)
    monkeypatch.setattr(stack_index, "MAX_ROWS", 3)
    g = _grammar(llama3, json_value_rules(), "json_value")
    m = Matcher(g)
    for step, tid in enumerate(ids):
        assert (_ours(m, llama3) == want[step]).all(), step
        assert len(g.automaton.row_cache()) <= 3
        assert m.accept_token(tid)
    assert len(ids) > 6  # (the cache was cleared, more than once)


@pytest.mark.parametrize("bound", ["MAX_BELOW", "MAX_BELOW_SEEN"])
def test_the_chaining_below_is_bounded_and_masks_outlive_its_clearing(llama3, tokenizer_files, monkeypatch, bound):
    """Where the top changes over the same frames below (a name, a number), their chaining is
    kept per (frame, item), and frames hold their parents, so nesting makes ever more. Cleared
    at their bounds (the kept chainings, the pairs met once), the masks stay the same."""
    from tokenizers import Tokenizer

    import constrain.index.stack_index as stack_index
    from constrain.grammars import load

    tok = Tokenizer.from_file(str(tokenizer_files["llama3"] / "tokenizer.json"))
    text = "SELECT u.name, COUNT(*) AS n FROM users u LEFT JOIN orders o ON o.user_id = u.id WHERE u.age >= 18;"
    ids = tok.encode(text, add_special_tokens=False).ids
    g = Compiler(llama3).compile_lark(load("sql"))
    m, want = Matcher(g), []
    for tid in ids:
        want.append(_ours(m, llama3))
        assert m.accept_token(tid)
    assert len(g.automaton._below_cache) > 2 and len(g.automaton._below_seen) > 2  # (so the bound is met)
    monkeypatch.setattr(stack_index, bound, 2)
    g = Compiler(llama3).compile_lark(load("sql"))
    bounded = g.automaton._below_cache if bound == "MAX_BELOW" else g.automaton._below_seen
    m = Matcher(g)
    for step, tid in enumerate(ids):
        assert (_ours(m, llama3) == want[step]).all(), step
        assert len(bounded) <= 2
        assert m.accept_token(tid)


NESTS_EVERY_WAY = 'start: e\ne: ("a" | "(" e ")" | NAME) e? e?\nNAME: /[b-d]+/\n%ignore " "'


def test_masks_over_merged_stacks_equal_the_oracles_with_stacks_merged_and_apart(llama3, byte_step_oracle):
    """A grammar whose readings grow without bound (each `a` nests every way) keeps its stacks
    merged (stack_semantics.py): masks along random texts equal the byte-step oracle over the
    merged stacks and over the readings kept apart, and accepting every token stays cheap."""
    merged = Compiler(llama3).compile_lark(NESTS_EVERY_WAY)
    apart = Compiler(llama3).compile_lark(NESTS_EVERY_WAY + "\n")
    apart.automaton.semantics.merge = False
    rng = random.Random(5)
    for _ in range(2):
        m, ref = Matcher(merged), Matcher(apart)
        for step in range(14):
            ours = _ours(m, llama3)
            assert (ours == byte_step_oracle(merged, m.state, llama3)).all(), step
            assert (ours == byte_step_oracle(apart, ref.state, llama3)).all(), step
            choices = text_ids(np.flatnonzero(ours), llama3)
            short = [t for t in choices if len(llama3.token_bytes[t].strip()) <= 2] or list(choices)
            token = int(rng.choice(short))
            assert m.accept_token(token) and ref.accept_token(token)
            assert len(m.state) <= 4
    long = Matcher(merged)
    assert long.accept_tokens([llama3.token_bytes.index(b"a")] * 200) == 200 and long.is_accepting()
