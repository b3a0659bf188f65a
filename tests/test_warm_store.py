"""Warm stores: with a cache_dir, what one Compiler's masks learned is stored when requests end
(and at exit), and a later Compiler's grammar starts with it; its masks stay exact."""

from __future__ import annotations

import numpy as np

from constrain import Compiler, Matcher, grammars
from constrain.index.warm_codec import learned
from constrain.warm_store import MIN_NEW, _store_all

QUERY = "SELECT a, b FROM t WHERE b IN (SELECT b FROM s WHERE s.c = 'x') ORDER BY a DESC;"
OTHER = "SELECT CASE WHEN x IS NULL THEN 0 ELSE x * 2 END AS y FROM t GROUP BY y;"


def _chars(vocab, text: str) -> list[int]:
    return [vocab.token_id(ch) for ch in text]


def _run(grammar, vocab, text: str, eos: bool = True) -> list[np.ndarray]:
    """Masks along `text`, then an EOS accepted (a request's end) when `eos`."""
    m = Matcher(grammar)
    masks = []
    for tid in _chars(vocab, text):
        bm = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
        m.fill_next_token_bitmask(bm)
        masks.append(bm)
        assert m.accept_token(tid)
    if eos:
        assert m.accept_token(min(vocab.eos_token_ids))
    return masks


def test_a_later_compiler_starts_with_what_requests_taught_an_earlier_one(llama3, tmp_path):
    first = Compiler(llama3, cache_dir=tmp_path).compile_lark(grammars.load("sql"))
    assert first.warm is not None and first.warm.stored == 0
    _run(first, llama3, QUERY)
    first.warm.wait()
    assert first.warm.stored == learned(first.automaton) >= MIN_NEW  # (stored at the EOS)

    later = Compiler(llama3, cache_dir=tmp_path).compile_lark(grammars.load("sql"))
    assert later.warm.stored == first.warm.stored == learned(later.automaton)  # (before any mask)
    plain = Compiler(llama3).compile_lark(grammars.load("sql"))
    assert plain.warm is None
    for text in (QUERY, OTHER):
        assert all(np.array_equal(a, b) for a, b in zip(_run(later, llama3, text), _run(plain, llama3, text)))


def test_small_growth_waits_and_exit_stores_the_rest(llama3, tmp_path):
    g = Compiler(llama3, cache_dir=tmp_path).compile_lark(grammars.load("sql"))
    _run(g, llama3, QUERY)
    g.warm.wait()
    stored = g.warm.stored
    m = Matcher(g)  # one more mask somewhere new: too little to store at a request's end
    for tid in _chars(llama3, "SELECT z FROM w LIMIT 3"):
        m.fill_next_token_bitmask(np.zeros((llama3.size + 31) // 32, dtype=np.int32))
        assert m.accept_token(tid)
    grown = learned(g.automaton)
    assert stored < grown < stored + max(MIN_NEW, stored // 4)
    g.request_ended()
    g.warm.wait()
    assert g.warm.stored == stored
    _store_all()  # (what runs at interpreter exit)
    assert g.warm.stored == grown
    assert Compiler(llama3, cache_dir=tmp_path).compile_lark(grammars.load("sql")).warm.stored == grown


def test_json_schemas_keep_warm_tables_too(llama3, tmp_path):
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}}}
    doc = '{"name":"Ada","tags":["x","y"]}'
    g = Compiler(llama3, cache_dir=tmp_path).compile_json_schema(schema)
    _run(g, llama3, doc, eos=False)
    _store_all()
    later = Compiler(llama3, cache_dir=tmp_path).compile_json_schema(schema)
    assert later.warm.stored == learned(g.automaton) > 0


def test_a_damaged_record_is_a_miss(llama3, tmp_path):
    g = Compiler(llama3, cache_dir=tmp_path).compile_lark(grammars.load("sql"))
    _run(g, llama3, QUERY)
    g.warm.wait()
    record = tmp_path / f"{g.warm.key}.cdfa.npz"
    data = bytearray(record.read_bytes())
    data[len(data) // 2] ^= 0xFF
    record.write_bytes(bytes(data))
    later = Compiler(llama3, cache_dir=tmp_path).compile_lark(grammars.load("sql"))
    assert later.warm.stored == 0 == learned(later.automaton)
    plain = Compiler(llama3).compile_lark(grammars.load("sql"))
    assert all(np.array_equal(a, b) for a, b in zip(_run(later, llama3, OTHER), _run(plain, llama3, OTHER)))


def test_no_store_without_a_cache_dir(llama3):
    assert Compiler(llama3).compile_lark(grammars.load("csv")).warm is None


def test_a_grammar_importing_files_is_kept_under_their_texts(llama3, tmp_path):
    (tmp_path / "words.lark").write_text("WORD: /[a-z]+/\n")
    text = "%import .words.WORD\nstart: WORD\n"
    compiler = Compiler(llama3, cache_dir=tmp_path / "cache")
    first = compiler.compile_lark(text, import_paths=[tmp_path])
    assert first.warm is not None and first.accepts(b"ab")
    (tmp_path / "words.lark").write_text("WORD: /[0-9]+/\n")  # (an edit: a new key, in memory and on disk)
    edited = compiler.compile_lark(text, import_paths=[tmp_path])
    assert edited.warm.key != first.warm.key
    assert edited.accepts(b"42") and not edited.accepts(b"ab")
    # Lark's own lark.lark imports common, which a file of the import paths replaces: our reader
    # leaves that to Lark's loader, so the files read are not known and nothing is stored
    (tmp_path / "common.lark").write_text('SIGNED_INT: "7"\nESCAPED_STRING: "s"\nWS_INLINE: " "\n')
    other = compiler.compile_lark("start: NUMBER\n%import lark.NUMBER\n", import_paths=[tmp_path])
    assert other.warm is None and other.accepts(b"7") and not other.accepts(b"8")


def test_tables_past_an_eighth_of_the_disk_budget_are_not_stored(llama3, tmp_path):
    g = Compiler(llama3, cache_dir=tmp_path, disk_cache_bytes=8 * 2**20).compile_lark(grammars.load("sql"))
    assert g.warm.max_bytes == 2**20
    _run(g, llama3, QUERY)  # (SQL's tables after one query: a few MB)
    g.warm.wait()
    assert g.warm.full and g.warm.stored == 0
    assert Compiler(llama3, cache_dir=tmp_path).compile_lark(grammars.load("sql")).warm.stored == 0


def test_a_store_while_masks_are_computed_writes_a_record_that_fits(llama3, tmp_path):
    """encode_warm copies the tables, then the items: masks computed meanwhile on another
    thread can only add entries the record leaves out, never names it lacks."""
    import threading

    g = Compiler(llama3, cache_dir=tmp_path).compile_lark(grammars.load("sql"))
    _run(g, llama3, QUERY, eos=False)
    stop = threading.Event()

    def store_again_and_again():
        while not stop.is_set():
            g.warm.stored = 0  # (so each call writes)
            g.warm.store()

    writer = threading.Thread(target=store_again_and_again)
    writer.start()
    try:
        _run(g, llama3, OTHER, eos=False)
    finally:
        stop.set()
        writer.join()
    later = Compiler(llama3, cache_dir=tmp_path).compile_lark(grammars.load("sql"))
    assert later.warm.stored > 0
    plain = Compiler(llama3).compile_lark(grammars.load("sql"))
    text = "SELECT name FROM t WHERE x BETWEEN 1 AND 2 ORDER BY name;"
    assert all(np.array_equal(a, b) for a, b in zip(_run(later, llama3, text), _run(plain, llama3, text)))


def test_what_two_processes_learn_adds_up(llama3, tmp_path):
    """Two Compilers on one folder, each taught another query: the second store adds the
    first's record to its own tables, so a third Compiler starts with both."""
    a = Compiler(llama3, cache_dir=tmp_path).compile_lark(grammars.load("sql"))
    b = Compiler(llama3, cache_dir=tmp_path).compile_lark(grammars.load("sql"))
    _run(a, llama3, QUERY, eos=False)
    a.warm.store()
    _run(b, llama3, OTHER, eos=False)
    own = learned(b.automaton)
    b.warm.store()
    assert learned(b.automaton) > own and b.warm.stored == learned(b.automaton)
    n = learned(b.automaton)
    b.warm.stored = 0
    b.warm.store()  # (the record is its own write now: nothing to add)
    assert learned(b.automaton) == n
    later = Compiler(llama3, cache_dir=tmp_path).compile_lark(grammars.load("sql"))
    assert learned(later.automaton) == n
    plain = Compiler(llama3).compile_lark(grammars.load("sql"))
    for text in (QUERY, OTHER):
        assert all(np.array_equal(x, y) for x, y in zip(_run(later, llama3, text), _run(plain, llama3, text)))
        assert all(np.array_equal(x, y) for x, y in zip(_run(b, llama3, text), _run(plain, llama3, text)))


def test_warm_up_learns_every_byte_position_and_stores_it(llama3, tmp_path):
    """Sample outputs teach the tables at every byte (every position any tokenization reaches):
    a later Compiler then meets none of those positions' summaries for the first time."""
    g = Compiler(llama3, cache_dir=tmp_path).compile_lark(grammars.load("sql"))
    masks = g.warm_up([QUERY, OTHER.encode()])
    assert masks > len(QUERY)  # (two documents; positions they share are computed once)
    assert g.warm.stored == learned(g.automaton) > 0
    later = Compiler(llama3, cache_dir=tmp_path).compile_lark(grammars.load("sql"))
    before = learned(later.automaton)
    _run(later, llama3, OTHER)  # (a tokenization of a taught text: every position was taught)
    assert learned(later.automaton) == before
    assert g.warm_up([QUERY]) == 0  # (known rows: nothing computed)


def test_warm_up_names_the_document_and_byte_that_leave_the_grammar(llama3):
    from constrain import DocumentError

    g = Compiler(llama3).compile_lark(grammars.load("sql"))
    try:
        g.warm_up([QUERY, "SELECT a FROM t WHERE ;"])
    except DocumentError as exc:
        assert (exc.document, exc.offset) == (1, 22) and "byte 22" in str(exc)
    else:
        raise AssertionError("a document outside the grammar was accepted")
    assert g.warm is None  # (no disk cache: nothing stored, and no error for it)
