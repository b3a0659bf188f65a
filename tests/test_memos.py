"""constrain.clear_cache() empties the process-wide memos too, and compiling afterwards gives the
same masks."""

from __future__ import annotations

import constrain
from constrain import Compiler, Matcher, grammars
from constrain.automata import rules
from constrain.index import vocab_index
from constrain.memos import clear_memos

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "integer"}}, "required": ["name"]}


def _masks(grammar, text: bytes, vocab) -> list[bytes]:
    m = Matcher(grammar)
    out = [m.allowed_token_ids().tobytes()]
    for tid in _ids(text, vocab):
        assert m.accept_token(tid)
        out.append(m.allowed_token_ids().tobytes())
    return out


def _ids(text: bytes, vocab) -> list[int]:
    """Byte-sized tokens spelling `text` (every real vocabulary has them)."""
    by_bytes = {b: t for t, b in enumerate(vocab.token_bytes) if len(b) == 1 and t not in vocab.special_ids}
    return [by_bytes[bytes([c])] for c in text]


def test_clear_cache_empties_the_memos_and_masks_stay(llama3):
    before = [
        _masks(Compiler(llama3).compile_lark(grammars.load("sql")), b"SELECT a, -b FROM t", llama3),
        _masks(Compiler(llama3).compile_json_schema(SCHEMA), b'{"name":"x","n":1}', llama3),
    ]
    assert rules._rule_dfa.cache_info().currsize and vocab_index.vocab_index.cache_info().currsize
    constrain.clear_cache()
    assert rules._rule_dfa.cache_info().currsize == 0 and vocab_index.vocab_index.cache_info().currsize == 0
    after = [
        _masks(Compiler(llama3).compile_lark(grammars.load("sql")), b"SELECT a, -b FROM t", llama3),
        _masks(Compiler(llama3).compile_json_schema(SCHEMA), b'{"name":"x","n":1}', llama3),
    ]
    assert before == after


def test_every_loaded_memo_is_found():
    assert clear_memos() >= 20  # (36 lru caches at module level when all modules are loaded)
    assert rules._rule_dfa.cache_info().currsize == 0
