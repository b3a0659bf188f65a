"""Building a vocabulary index loads every numba kernel the masks call (index/warm.py): masks
of a JSON Schema, a regex and a Lark grammar then add no compiled signature (none loads inside
a mask)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from constrain import Compiler, Matcher
from constrain.index.slice_depth import state_depths
from constrain.index.vocab_index import VocabIndex
from constrain.index.pushdown_walk import summary_walk
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
    before = (list(walk_subtrees.signatures), list(state_depths.signatures), list(summary_walk.signatures))
    assert before[0] and before[1] and before[2]
    compiler = Compiler(llama3)
    buf = np.zeros((llama3.size + 31) // 32, dtype=np.int32)
    for grammar, text in (
        (compiler.compile_json_schema(SCHEMA), '{"name":"abc","tags":["x","y"],"n":12}'),
        (compiler.compile_regex(r"[a-z ]{2,40}\d+"), "hello world 42"),
        (compiler.compile_lark('start: "(" [x ("," x)*] ")"\nx: start | /[a-z]+/'), "(ab,(c,()),d)"),
        # a terminal whose lookahead reads past its end (end_window.py gathers its DFA's columns)
        (compiler.compile_lark('start: (TEXT | "{{" /[a-z]+/ "}}")*\nTEXT: /([^{]|\\{(?!\\{))+/'), "a{b{{c}}d"),
    ):
        m = Matcher(grammar)
        m.fill_next_token_bitmask(buf)
        for b in text.encode():  # byte-sized steps: every state on the way is a first visit
            tid = llama3.token_bytes.index(bytes([b]))
            assert m.accept_token(tid)
            m.fill_next_token_bitmask(buf)
    assert (list(walk_subtrees.signatures), list(state_depths.signatures), list(summary_walk.signatures)) == before


def test_a_fresh_process_has_the_pushdown_walk_loaded_by_its_first_index(tokenizer_files, tmp_path):
    """(In a process of its own: a test process has run pushdown walks long before.)"""
    script = (
        "import sys\n"
        "from constrain import Vocabulary\n"
        "from constrain.index.vocab_index import VocabIndex\n"
        "from constrain.index.pushdown_walk import summary_walk\n"
        "assert not summary_walk.signatures\n"
        "VocabIndex(Vocabulary.from_pretrained(sys.argv[1]))\n"
        "print(len(summary_walk.signatures))\n"
    )
    out = subprocess.run([sys.executable, "-c", script, str(tokenizer_files["qwen2.5"])], capture_output=True, text=True, timeout=300, cwd=tmp_path)  # (the installed package, not the checkout)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.split()[-1]) >= 1
