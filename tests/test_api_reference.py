"""docs/api.md is generated (scripts/api_reference.py): it must equal what the installed package
renders now, cover every public name, and carry nothing machine-specific."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "api_reference.py"
PAGE = REPO / "docs" / "api.md"


@pytest.fixture(scope="module")
def api_reference():
    spec = importlib.util.spec_from_file_location("api_reference_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.fixture(scope="module")
def rendered(api_reference) -> str:
    return api_reference.render()


def test_page_is_up_to_date(rendered, api_reference):
    current = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
    if current != rendered:
        old, new = current.splitlines(), rendered.splitlines()
        first = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
        pytest.fail(
            f"docs/api.md is out of date (first difference at line {first + 1}: "
            f"{old[first] if first < len(old) else '<end>'!r} vs {new[first] if first < len(new) else '<end>'!r}); "
            f"refresh it with `{api_reference.REFRESH}` and commit docs/api.md",
            pytrace=False,
        )


def test_every_public_name_has_an_entry(rendered, api_reference):
    import constrain

    for module_name, module, names in api_reference.modules():
        for name in names:
            assert f"`{module_name}.{name}`" in rendered, f"{module_name}.{name} is missing from the API reference"
    assert set(constrain.__all__) <= {n for m, _, names in api_reference.modules() if m == "constrain" for n in names}
    # Real signatures and docstrings, not placeholders.
    assert "def compile_json_schema(" not in rendered  # methods are listed under their class
    assert re.search(r"- `Compiler\.compile_json_schema\(schema: Any, \*, whitespace: str = 'compact'", rendered)
    assert "Matcher.fill_next_token_bitmask(" in rendered


def test_output_is_deterministic_and_portable(rendered, api_reference):
    assert api_reference.render() == rendered
    assert not re.search(r"0x[0-9a-f]{6,}", rendered), "a memory address leaked into the page"
    for path in {str(REPO), str(Path.home()), "site-packages"}:
        assert path not in rendered, f"a machine path ({path}) leaked into the page"
    names = [line for line in rendered.splitlines() if line.startswith("### `constrain.")]
    per_module: dict[str, list[str]] = {}
    for line in names:
        qual = line[5:-1]
        per_module.setdefault(qual.rsplit(".", 1)[0], []).append(qual.rsplit(".", 1)[1])
    for module, entries in per_module.items():
        assert entries == sorted(entries, key=api_reference._sort_key), f"{module}'s entries are not sorted"
