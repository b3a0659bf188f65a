"""The README's quickstart runs verbatim: its Python blocks execute in order in one namespace, its
shell blocks run in bash with the installed `constrain` command, and what they print is checked."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def quickstart_blocks() -> list[tuple[str, str]]:
    text = README.read_text(encoding="utf-8")
    start = text.index("## Quickstart")
    end = text.index("\n## ", start + 1)
    return re.findall(r"```(python|bash)\n(.*?)```", text[start:end], flags=re.S)


def test_the_quickstart_has_python_and_shell_blocks():
    kinds = [kind for kind, _ in quickstart_blocks()]
    assert kinds.count("python") >= 2 and "bash" in kinds


@pytest.mark.slow
@pytest.mark.xdist_group("smollm2")
def test_quickstart_python_blocks_run_verbatim(smollm2, capsys):
    namespace: dict = {"__name__": "readme_quickstart"}
    for kind, code in quickstart_blocks():
        if kind == "python":
            exec(compile(code, "README.md", "exec"), namespace)
    printed = capsys.readouterr().out
    assert "name=" in printed and "SELECT" in printed.upper()
    assert re.search(r"^\d{4}-\d{2}-\d{2}$", printed, flags=re.M)


@pytest.mark.slow
@pytest.mark.xdist_group("smollm2")
def test_quickstart_shell_blocks_run_verbatim(tmp_path):
    import jsonschema

    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    for kind, code in quickstart_blocks():
        if kind != "bash":
            continue
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        first_line = done.stdout.splitlines()[0]
        jsonschema.validate(json.loads(first_line), json.loads((tmp_path / "person.json").read_text()))
        assert "SELECT" in done.stdout.upper()
