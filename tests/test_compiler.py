"""Compiler: caching by source, options and vocabulary; the disk cache survives a new Compiler."""

from __future__ import annotations

import numpy as np
import pytest

from constrain import Compiler, Limits, LimitExceededError, Matcher, RegexSyntaxError


def test_same_source_returns_the_same_compiled_object(llama3):
    c = Compiler(llama3)
    g1 = c.compile_regex("[0-9]+")
    assert c.compile_regex("[0-9]+") is g1
    assert c.compile_regex("[0-9]*") is not g1
    info = c.cache_info()
    assert (info.hits, info.misses, info.entries) == (1, 2, 2)
    c.clear_cache()
    assert c.compile_regex("[0-9]+") is not g1


def test_disk_cache_is_used_by_a_new_compiler(llama3, tmp_path):
    c1 = Compiler(llama3, cache_dir=tmp_path)
    g1 = c1.compile_regex(r"[a-f0-9]{8}-[a-f0-9]{4}")
    assert c1.cache_info().disk_files == 1
    c2 = Compiler(llama3, cache_dir=tmp_path)
    g2 = c2.compile_regex(r"[a-f0-9]{8}-[a-f0-9]{4}")
    assert c2.cache_info().disk_hits == 1
    assert (g1.dfa.table == g2.dfa.table).all()
    m1, m2 = Matcher(g1), Matcher(g2)
    assert (m1.allowed_token_ids() == m2.allowed_token_ids()).all()
    c2.clear_cache(disk=True)
    assert c2.cache_info().disk_files == 0


def test_compiled_grammar_shares_rows_between_matchers(llama3):
    g = Compiler(llama3).compile_regex("[a-z]+")
    Matcher(g).allowed_token_ids()
    Matcher(g).allowed_token_ids()
    stats = g.stats()
    assert stats["rows_cached"] == 1
    assert stats["row_memory_bytes"] <= 2 * 16_032  # the row plus the EOS-only row


def test_limits_flow_from_the_compiler(llama3):
    c = Compiler(llama3, limits=Limits(max_dfa_states=50))
    with pytest.raises(LimitExceededError, match="max_dfa_states"):
        c.compile_regex("(a|b)*a(a|b){8}")


@pytest.mark.parametrize("knob", ["max_nfa_states", "max_dfa_states", "max_compile_seconds", "max_stack_depth",
                                  "max_stacks", "max_mask_seconds", "max_accept_seconds"])
def test_a_limit_that_is_not_positive_is_refused_by_name(knob):
    with pytest.raises(ValueError, match=f"Limits.{knob} must be positive"):
        Limits(**{knob: 0})


def test_bad_inputs(llama3):
    with pytest.raises(TypeError, match="Vocabulary"):
        Compiler("llama3")  # type: ignore[arg-type]
    c = Compiler(llama3)
    with pytest.raises(TypeError):
        c.compile_regex(b"[0-9]")  # type: ignore[arg-type]
    with pytest.raises(RegexSyntaxError, match="position 3"):
        c.compile_regex("abc(")


def test_compiled_grammar_is_shareable_between_threads(llama3):
    """Matchers of one grammar in several threads fill rows concurrently; all agree."""
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np

    g = Compiler(llama3).compile_regex(r"[a-z]{1,8}( [a-z]{1,8}){0,3}")
    word = llama3.token_id("hello")
    space_word = llama3.token_id(" world")

    def run(_):
        m = Matcher(g)
        rows = [m.allowed_token_ids()]
        for tid in (word, space_word, space_word):
            assert m.accept_token(tid)
            rows.append(m.allowed_token_ids())
        return rows

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(run, range(8)))
    for rows in results[1:]:
        assert all(np.array_equal(a, b) for a, b in zip(rows, results[0]))


def test_process_wide_cache_info_and_clear(llama3):
    import constrain

    c1, c2 = Compiler(llama3), Compiler(llama3)
    constrain.clear_cache()
    c1.compile_regex("x+")
    c2.compile_regex("y+")
    c2.compile_regex("y+")
    info = constrain.cache_info()
    assert info.entries >= 2 and info.hits >= 1
    constrain.clear_cache()
    assert c1.cache_info().entries == 0 and c2.cache_info().entries == 0


def test_schemas_differing_in_property_order_are_two_grammars(llama3):
    """The order of `properties` is the member order of the grammar: a schema that lists the
    same properties in another order must not be served the first one's cached grammar."""
    c = Compiler(llama3)
    props = {"a": {"type": "integer"}, "b": {"type": "integer"}}
    ab = {"type": "object", "properties": props, "additionalProperties": False}
    ba = {"type": "object", "properties": dict(reversed(props.items())), "additionalProperties": False}
    g_ab, g_ba = c.compile_json_schema(ab), c.compile_json_schema(ba)
    assert g_ab is not g_ba
    assert g_ab.accepts('{"a":1,"b":2}') and not g_ab.accepts('{"b":2,"a":1}')
    assert g_ba.accepts('{"b":2,"a":1}') and not g_ba.accepts('{"a":1,"b":2}')
    assert c.compile_json_schema(dict(ab)) is g_ab  # equal schemas still share one entry


def _masks_along(grammar, vocab, text: bytes) -> list[np.ndarray]:
    """The allowed ids at each step of `text`, written with the longest allowed token each time."""
    m, out = Matcher(grammar), []
    while text:
        allowed = m.allowed_token_ids()
        out.append(allowed)
        tid = max((t for t in allowed.tolist() if text.startswith(vocab.token_bytes[t])), key=lambda t: len(vocab.token_bytes[t]))
        assert m.accept_token(tid)
        text = text[len(vocab.token_bytes[tid]):]
    out.append(m.allowed_token_ids())
    return out


def test_lark_grammars_are_read_back_from_the_disk_cache(llama3, tmp_path):
    """A new Compiler (a new process, in use) reads the grammar's rules from disk instead of
    loading and lowering it again, and its masks are the same."""
    from constrain.grammars import load

    c1 = Compiler(llama3, cache_dir=tmp_path)
    g1 = c1.compile_lark(load("sql"))
    assert c1.cache_info().disk_files == 1 and c1.cache_info().disk_hits == 0
    c2 = Compiler(llama3, cache_dir=tmp_path)
    g2 = c2.compile_lark(load("sql"))
    assert c2.cache_info().disk_hits == 1
    query = b"SELECT name, COUNT(*) AS n FROM users WHERE age > 18 GROUP BY name;"
    for a, b in zip(_masks_along(g1, llama3, query), _masks_along(g2, llama3, query), strict=True):
        assert np.array_equal(a, b)
    # Another start rule is another grammar.
    c2.compile_lark(load("sql"), start="select_stmt")
    assert (c2.cache_info().disk_hits, c2.cache_info().disk_files) == (1, 2)


def test_lark_grammars_importing_files_are_kept_under_the_files_texts(llama3, tmp_path):
    """The key holds the texts of the files a grammar imports: an edited import is a new key,
    never served from a stale record."""
    folder = tmp_path / "grammars"
    folder.mkdir()
    (folder / "words.lark").write_text('WORD: /[a-z]+/\n')
    main = folder / "main.lark"
    main.write_text('start: WORD ("," WORD)*\n%import .words.WORD\n')
    cache = tmp_path / "cache"
    c = Compiler(llama3, cache_dir=cache)
    g = c.compile_grammar_file(main)
    assert g.accepts(b"ab,c")
    assert c.cache_info().disk_files == 1
    again = Compiler(llama3, cache_dir=cache)
    assert again.compile_grammar_file(main).accepts(b"ab,c") and again.cache_info().disk_hits == 1
    (folder / "words.lark").write_text('WORD: /[0-9]+/\n')
    edited = Compiler(llama3, cache_dir=cache)
    g = edited.compile_grammar_file(main)
    assert g.accepts(b"12,3") and not g.accepts(b"ab,c")
    assert edited.cache_info().disk_hits == 0 and edited.cache_info().disk_files == 2
    # Lark's own grammars are part of the installed lark: those imports are kept too.
    c.compile_lark('start: NUMBER\n%import common.NUMBER\n')
    assert c.cache_info().disk_files == 3


@pytest.mark.parametrize("ignored", ["", "%declare B\n%ignore B\n"])  # (our reader; Lark's loader)
def test_a_grammar_is_built_from_the_imported_texts_its_key_holds(llama3, tmp_path, monkeypatch, ignored):
    """A file edited between the key's read and the build's must not be built under the old
    key: the build imports the texts the key was made of (the edit gets its own key later)."""
    from constrain.grammar.lark import definitions

    words = tmp_path / "words.lark"
    words.write_text("WORD: /[a-z]+/\n")
    read = definitions.imported_files

    def then_edited(*args, **kwargs):
        found = read(*args, **kwargs)
        words.write_text("WORD: /[0-9]+/\n")
        return found

    monkeypatch.setattr(definitions, "imported_files", then_edited)
    text = "%import .words.WORD\nstart: WORD\n" + ignored
    c = Compiler(llama3, cache_dir=tmp_path / "cache")
    g = c.compile_lark(text, import_paths=[tmp_path])
    assert g.accepts(b"ab") and not g.accepts(b"42")
    monkeypatch.setattr(definitions, "imported_files", read)
    assert Compiler(llama3, cache_dir=tmp_path / "cache").compile_lark(text, import_paths=[tmp_path]).accepts(b"42")


def test_a_grammar_whose_imports_are_not_known_is_not_kept_in_memory(llama3, tmp_path):
    """Lark's lark.lark imports common, which a file of the import paths replaces: our reader
    leaves that to Lark's loader, so the key cannot hold the files read; an edit shows at once."""
    common = tmp_path / "common.lark"
    common.write_text('SIGNED_INT: "7"\nESCAPED_STRING: "s"\nWS_INLINE: " "\n')
    c = Compiler(llama3)
    text = "start: NUMBER\n%import lark.NUMBER\n"
    assert c.compile_lark(text, import_paths=[tmp_path]).accepts(b"7")
    common.write_text('SIGNED_INT: "8"\nESCAPED_STRING: "s"\nWS_INLINE: " "\n')
    g = c.compile_lark(text, import_paths=[tmp_path])
    assert g.accepts(b"8") and not g.accepts(b"7")


def test_json_schemas_are_read_back_from_the_disk_cache_with_their_reports(llama3, tmp_path):
    schema = {"type": "object", "properties": {
        "id": {"type": "integer", "multipleOf": 0.123456789},  # relaxed (strict=False)
        "site": {"type": "string", "format": "uri", "minLength": 1, "maxLength": 65536},  # annotated
        "tags": {"type": "array", "items": {"enum": ["a", "bc"]}, "maxItems": 3},
    }, "required": ["id", "tags"]}
    g1 = Compiler(llama3, cache_dir=tmp_path).compile_json_schema(schema, strict=False)
    c2 = Compiler(llama3, cache_dir=tmp_path)
    g2 = c2.compile_json_schema(schema, strict=False)
    assert c2.cache_info().disk_hits == 1
    assert g1.relaxations == g2.relaxations and g1.relaxations
    assert g1.annotations == g2.annotations and g1.annotations
    doc = b'{"id":-12,"site":"https://example.com/a","tags":["bc","a"]}'
    for a, b in zip(_masks_along(g1, llama3, doc), _masks_along(g2, llama3, doc), strict=True):
        assert np.array_equal(a, b)
    # Options are part of the key: strict compiles refuse what strict=False relaxed, from disk or not.
    with pytest.raises(Exception, match="multipleOf"):
        c2.compile_json_schema(schema)


def test_json_schemas_with_distinct_items_stay_off_disk(llama3, tmp_path):
    """uniqueItems over an open domain (and any-order objects) live in automata beside the rule
    set: recompiled. (Over a small enum they are spelled out in the rules: stored.)"""
    c = Compiler(llama3, cache_dir=tmp_path)
    g = c.compile_json_schema({"type": "array", "items": {"type": "string"}, "uniqueItems": True})
    assert c.cache_info().disk_files == 0
    assert g.accepts(b'["a","b"]') and not g.accepts(b'["a","a"]')
    g = c.compile_json_schema({"type": "array", "items": {"enum": [1, 2, 3]}, "uniqueItems": True})
    assert c.cache_info().disk_files == 1
    g = Compiler(llama3, cache_dir=tmp_path).compile_json_schema({"type": "array", "items": {"enum": [1, 2, 3]}, "uniqueItems": True})
    assert g.accepts(b"[1,2]") and not g.accepts(b"[1,1]")
