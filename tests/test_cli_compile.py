"""`constrain compile`: the figures it reports checked against the library called directly, the
disk cache it fills and reads (rule sets, warm tables, `--warm-up`), and its one-line errors."""

from __future__ import annotations

import json
import re

import pytest

from cli_cases import EMAIL, PERSON, SUM_LARK, cache_dir, files, needs_vocab, one_error, run, smollm2_vocab  # noqa: F401 - fixtures (tests/support)
from constrain import Compiler, Matcher
from constrain.cli_commands import vocab_only


@needs_vocab
def test_compile_regex_reports_the_dfa_and_then_the_disk_cache(capsys, cache_dir):
    code, out, err = run(capsys, "compile", "--regex", EMAIL, "--json")
    first = json.loads(out)
    grammar = Compiler(smollm2_vocab()).compile_regex(EMAIL)
    allowed = Matcher(grammar).allowed_token_ids()
    assert code == 0 and err == ""
    assert first["dfa_states"] == grammar.dfa.n_states and first["byte_classes"] == grammar.dfa.n_classes
    assert first["first_mask_allowed"] == len(allowed) > 0
    assert first["cache"] == "compiled and stored" and first["cache_dir"] == str(cache_dir)
    assert list(cache_dir.glob("*.npz"))
    code, out, _ = run(capsys, "compile", "--regex", EMAIL)  # same process, same compiler
    assert code == 0 and re.search(r"^cache\s+already compiled in this process", out, re.M)
    vocab_only._compilers.clear()  # a new compiler: what a second process sees
    code, out, _ = run(capsys, "compile", "--regex", EMAIL)
    assert code == 0 and re.search(r"^cache\s+loaded from the disk cache", out, re.M)
    assert re.search(rf"^size\s+{grammar.dfa.n_states} DFA states, {grammar.dfa.n_classes} byte classes$", out, re.M)


@needs_vocab
def test_compile_schema_and_lark_files_report_rules_and_states(capsys, files):
    compiler = Compiler(smollm2_vocab())
    for argv, grammar, cache in [
        ([files["person"]], compiler.compile_json_schema(PERSON), "compiled and stored"),
        ([files["sum"]], compiler.compile_lark(SUM_LARK), "compiled and stored"),
        (["--grammar", "csv"], None, "compiled and stored"),
    ]:
        code, out, err = run(capsys, "compile", *argv, "--json")
        figures = json.loads(out)
        assert code == 0 and err == "", err
        assert figures["rules"] >= figures["rules_built"] > 0 and figures["dfa_states"] > 0
        if grammar is not None:
            stats = grammar.stats()
            assert (figures["rules"], figures["rules_built"], figures["dfa_states"]) == (stats["rules"], stats["rules_built"], stats["dfa_states"])
        assert figures["cache"] == cache
    vocab_only._compilers.clear()  # a new compiler: what a second process sees
    code, out, _ = run(capsys, "compile", "--grammar", "csv", "--json")
    assert code == 0 and json.loads(out)["cache"] == "disk"


@needs_vocab
def test_compile_warm_up_teaches_the_disk_cache_and_names_a_bad_line(capsys, tmp_path):
    docs = tmp_path / "queries.txt"
    docs.write_text("SELECT a FROM t;\n\nSELECT b, c FROM u WHERE b > 1;\n")
    code, out, err = run(capsys, "compile", "--grammar", "sql", "--warm-up", str(docs), "--json")
    figures = json.loads(out)
    assert code == 0 and err == "" and figures["warm_up_documents"] == 2 and figures["warm_up_masks"] > 20
    assert figures["warm_stored"] > 0
    vocab_only._compilers.clear()
    code, out, _ = run(capsys, "compile", "--grammar", "sql", "--json")
    assert json.loads(out)["warm_entries"] == figures["warm_stored"]
    docs.write_text("SELECT a FROM t;\n\nSELECT FROM;\n")
    code, out, err = run(capsys, "compile", "--grammar", "sql", "--warm-up", str(docs))
    assert code == 1 and "queries.txt: line 3" in err and "byte 11" in err  # (at the `;`: FROM could have begun a name)


@needs_vocab
def test_compile_reports_the_warm_tables_an_earlier_process_stored(capsys):
    from constrain.warm_store import _store_all

    code, out, _ = run(capsys, "compile", "--grammar", "sql", "--json")
    assert code == 0 and json.loads(out)["warm_entries"] == 0  # (its first mask learned some)
    _store_all()  # (what its exit does)
    vocab_only._compilers.clear()  # a new compiler: what a second process sees
    code, out, _ = run(capsys, "compile", "--grammar", "sql")
    found = re.search(r"^warm\s+(\d+) mask table entries that earlier processes learned", out, re.M)
    assert code == 0 and found and int(found.group(1)) > 0


@needs_vocab
@pytest.mark.parametrize("argv, code, needles", [
    (["--regex", "ab(c"], 1, ["--regex 'ab(c'", "position 2"]),
    (["--regex", r"(a)\1"], 1, ["backreferences", "position 3"]),
    (["{refused}"], 1, ["refused.json", "#/properties/a/pattern", "--no-strict does not relax it"]),
    (["{bad}"], 1, ["bad.json", "line 2 column"]),
    (["{broken}"], 1, ["broken.lark", "line 1"]),
    (["{sum}", "--start", "nope"], 1, ["nope", "--start RULE"]),
    (["--grammar", "cobol"], 1, ["unknown grammar 'cobol'", "json, arithmetic, csv, sql, python_expr, tool_call"]),
    (["{text}"], 2, ["notes.txt", "unknown grammar file type", ".json", ".lark"]),
    (["nope.lark"], 1, ["not found", "nope.lark"]),
    (["--regex", "a", "--model", "/no/such/model.gguf"], 1, ["--model", "/no/such/model.gguf"]),
])
def test_compile_bad_input(capsys, files, argv, code, needles):
    argv = [a.format(**{k: str(v) for k, v in files.items()}) for a in argv]
    got, out, err = run(capsys, "compile", *argv)
    assert got == code and out == ""
    one_error(err, *needles)
