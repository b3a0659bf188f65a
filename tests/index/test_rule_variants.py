"""rule_variants.py: an any-order object's rule without its comma or closing brace."""

from __future__ import annotations

import numpy as np
import pytest

from constrain import Compiler
from constrain.index.object_rules import after_value_states
from constrain.index.stack_index import StackTokenAutomaton

KEYS = [f"key{i}" for i in range(12)]


@pytest.fixture(scope="module")
def keyed(llama3):
    schema = {"type": "object", "properties": {k: {"type": "integer"} for k in KEYS}, "additionalProperties": True}
    return Compiler(llama3).compile_json_schema(schema, property_order="any").automaton


def test_variants_keep_states_and_refuse_only_structural_bytes(keyed):
    rules = keyed.rules
    (r,) = rules.marked
    base = rules.rule(r)
    no_comma, no_brace = rules.variant(r, False, True), rules.variant(r, True, False)
    assert rules.variant(r, True, True) == r and {rules.base_of(no_comma), rules.base_of(no_brace)} == {r}
    assert rules.n_rules == rules.base.n_rules + 2 and rules.names[no_comma].endswith("!no_comma")
    with pytest.raises(ValueError):
        rules.variant(r, False, False)
    after = after_value_states(base.dfa, base.calls)
    for v, byte, other in ((no_comma, b",", b"}"), (no_brace, b"}", b",")):
        variant = rules.rule(v)
        assert variant.dfa.n_states == base.dfa.n_states and variant.calls is base.calls
        for q in range(base.dfa.n_states):
            refused = variant.dfa.walk(q, byte) < 0
            assert refused == (q in after or base.dfa.walk(q, byte) < 0)
            assert variant.dfa.walk(q, other) == base.dfa.walk(q, other)
        # inside a key (other keys are any string), the byte is text as before
        inside = base.dfa.walk(0, b'{"a')
        assert variant.dfa.walk(inside, byte + b'"') == base.dfa.walk(inside, byte + b'"') >= 0
    assert rules.built(no_comma) and rules.same[no_comma] == no_comma
    assert rules.callees[no_brace] == rules.base.callees[r]


def test_rows_over_variants_match_the_base_rules(keyed, llama3):
    """The same stacks give the same rows whether walked over the base rules or the view."""
    base = StackTokenAutomaton(keyed.rules.base, keyed.inner.index)
    for text in (b"", b"{", b'{"key1":', b'{"key1":12', b'{"ab', b'{"key1":1,"key2":"'[:-1]):
        state = keyed.inner.advance(keyed.inner.initial_state(), text)
        assert state is not None
        assert np.array_equal(keyed.inner.mask_row(state), base.mask_row(state)), text
