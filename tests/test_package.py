"""Packaging: tests run against the installed package, with the layout the brief fixes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import constrain


def test_imported_from_an_installation_not_the_source_tree():
    path = Path(constrain.__file__).resolve()
    assert "site-packages" in path.parts, f"constrain imported from {path}; install it (pip install .)"


def test_kernels_and_specdec_install_under_constrain():
    import constrain.kernels
    import constrain.specdec

    assert Path(constrain.kernels.__file__).parent.parent == Path(constrain.__file__).parent
    assert Path(constrain.specdec.__file__).parent.parent == Path(constrain.__file__).parent


def test_public_api_is_the_minimal_export_list():
    assert sorted(constrain.__all__) == sorted(
        [
            "CacheInfo", "CompiledGrammar", "Compiler", "ConstrainError", "GrammarError",
            "LimitExceededError", "Limits", "Matcher", "RegexSyntaxError", "RollbackError",
            "TokenError", "UnsupportedRegexError", "SchemaError", "UnsatisfiableSchemaError", "UnsupportedGrammarError", "check_schema", "UnsupportedSchemaError", "Vocabulary", "VocabularyError", "__version__",
            "allocate_token_bitmask", "apply_token_bitmask_inplace", "cache_info", "clear_cache",
            "generate", "GenerationResult", "GenerationStats", "SamplingParams",
            "function", "TypedFunction", "FunctionResult", "Regex", "Grammar", "load_model",
            "ModelLoadError", "OutputValidationError", "TypedOutputError", "DocumentError",
        ]
    )
    for name in constrain.__all__:
        assert hasattr(constrain, name), name


def test_import_is_light(tmp_path):
    """`import constrain` must not pull in torch, numba or transformers (they load on use)."""
    code = "import sys, constrain; print(','.join(m for m in ('torch','numba','transformers') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert out.stdout.strip() == ""


def test_every_source_package_is_installed():
    """A package folder missing from pyproject's list would be left out of the wheel."""
    import importlib

    root = Path(__file__).resolve().parents[1]
    for init in sorted((root / "constrain").rglob("__init__.py")):
        name = ".".join(init.parent.relative_to(root).parts)
        importlib.import_module(name)
