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
