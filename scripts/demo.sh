#!/usr/bin/env bash
# Set up (if needed) and run the demo: constrained generation with the embedded SmolLM2 model.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The console script runs the installed package (python -m from here would find the source tree).
.venv/bin/constrain-demo "$@"
