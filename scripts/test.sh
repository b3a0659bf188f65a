#!/usr/bin/env bash
# Set up (if needed) and run the whole test suite, then the numba-touching tests once more with
# bounds checking on (numba does none by default: an out-of-range write corrupts the heap).
# Both passes run on TEST_WORKERS processes (pytest-xdist; default 2, CI's cores; each holds
# about 2 GB of vocabularies and tries).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
WORKERS=${TEST_WORKERS:-2}
.venv/bin/pytest -q -n "$WORKERS" --dist loadgroup --durations=15 "$@"
BC_CACHE=$(mktemp -d)
NUMBA_BOUNDSCHECK=1 NUMBA_CACHE_DIR="$BC_CACHE" .venv/bin/pytest -q -n "$WORKERS" --durations=10 -m "not slow" tests/index tests/automata tests/kernels/test_bitmask_numba.py
rm -rf "$BC_CACHE"
