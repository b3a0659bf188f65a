#!/usr/bin/env bash
# Set up (if needed) and run the whole test suite, then the numba-touching tests once more with
# bounds checking on (numba does none by default: an out-of-range write corrupts the heap).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/pytest -q --durations=15 "$@"
BC_CACHE=$(mktemp -d)
NUMBA_BOUNDSCHECK=1 NUMBA_CACHE_DIR="$BC_CACHE" .venv/bin/pytest -q --durations=10 -m "not slow" tests/index tests/automata
rm -rf "$BC_CACHE"
