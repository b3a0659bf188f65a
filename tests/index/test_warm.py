"""Building a vocabulary index loads every numba kernel the masks call (index/warm.py): masks
of a JSON Schema and of a regex then add no compiled signature (none loads inside a mask)."""

from __future__ import annotations

import numpy as np

from constrain import Compiler, Matcher
from constrain.index.slice_depth import state_depths
from constrain.index.vocab_index import VocabIndex
from constrain.index.walk import walk_subtrees

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 5},
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        "n": {"type": "integer"},
    },
}


def test_masks_load_no_kernel_after_the_index(llama3):
    VocabIndex(llama3)
    before = (list(walk_subtrees.signatures), list(state_depths.signatures))
    assert before[0] and before[1]
    compiler = Compiler(llama3)
    buf = np.zeros((llama3.size + 31) // 32, dtype=np.int32)
    for grammar, text in (
        (compiler.compile_json_schema(SCHEMA), '{"name":"abc","tags":["x","y"],"n":12}'),
        (compiler.compile_regex(r"[a-z ]{2,40}\d+"), "hello world 42"),
    ):
        m = Matcher(grammar)
        m.fill_next_token_bitmask(buf)
        for b in text.encode():  # byte-sized steps: every state on the way is a first visit
            tid = llama3.token_bytes.index(bytes([b]))
            assert m.accept_token(tid)
            m.fill_next_token_bitmask(buf)
    assert (list(walk_subtrees.signatures), list(state_depths.signatures)) == before
