"""The `constrain` command line: every command on good and bad input (exit codes, one-line errors),
generated documents checked by independent parsers (jsonschema, re.fullmatch, Lark's Earley
parser). `constrain compile` has its own file (test_cli_compile.py); what both share is in
tests/support/cli_cases.py.

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

from cli_cases import EMAIL, PERSON, SUM_LARK, cache_dir, files, needs_vocab, one_error, run  # noqa: F401 - fixtures (tests/support)
from constrain import check_schema
from constrain.cli import main
from constrain.cli_commands.output import one_line

SCRIPT = Path(sys.executable).with_name("constrain")


@pytest.fixture
def one_thread():
    """Generation tests run torch on one thread: on a busy machine (CI runs two test processes
    on two cores) a second thread spins instead of working, and tokens/s falls tenfold."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


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
