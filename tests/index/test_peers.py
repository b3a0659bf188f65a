"""Cross-check our masks against XGrammar and llguidance on the real Llama 3 vocabulary.

Each regex is walked with the same accepted tokens in every engine (the tokens of a matching
sample string, then a seeded random walk over tokens that all three engines allow). At every
step our mask is compared with each peer's; every token where they differ must be explained by
a named category, otherwise the test fails and prints a sample:

  special_as_text   a special/added token (never text for us) that the peer lets through as
                    text; XGrammar treats Llama 3's added tokens as ordinary text.
  eos               an id in our EOS set or the peer's where the two sets differ; each engine
                    allows exactly its own EOS ids at accepting states. The peers are built the
                    way a user would (EOS from tokenizer_config.json: only <｜end▁of▁sentence｜>).
  dialect           the peer reads the regex differently; explained only when our mask for the
                    case's declared dialect variant (e.g. XGrammar's '.' = '(.|\\n)') agrees
                    with the peer on that token.
  forced_prefix     text is forced here and the token's bytes are a proper prefix of the forced
                    bytes: llguidance allows only the canonical tokenization of forced text
                    (no '{' when '{"' is a token), we allow every token the regex allows.

Peers are configured with their defaults from the tokenizer files; nothing here changes them.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import pytest

from constrain import Compiler, Matcher

pytestmark = pytest.mark.peers

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


@dataclass(frozen=True)
class Case:
    name: str
    pattern: str
    sample: str
    dialect: Optional[dict[str, str]] = None  # peer name -> our regex for the peer's reading


CASES = [
    Case("number", r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?",
         "-123456789012345678.0001234567e+12"),
    Case("json_object",
         r'\{"name": "[^"\\]{0,20}", "age": (0|[1-9][0-9]{0,2}), "tags": \[("[a-z]+"(, "[a-z]+"){0,3})?\]\}',
         '{"name": "Ada Lovelace", "age": 36, "tags": ["math", "poetry"]}'),
    Case("free_text", r'[^"\\]*', "Free text with accents (café), dashes — and 東京, but no quotes."),
    Case("json_string", r'"([^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"',
         '"say \\"hi\\"\\n\\u00e9 café \\\\ ok"'),
    Case("enum", r"(red|green|blue|magenta|maroon|black|blue-green)", "magenta"),
    Case("cjk_emoji", "[一-鿿]{1,8}( [😀-🙏]{1,3})?", "结构化输出 😀🙏"),
    Case("dot", r".{0,30}", "any char but newline: é, 東, 🙂!",
         dialect={"xgrammar": r"(.|\n){0,30}"}),
]

RANDOM_STEPS = 16  # per random walk
RANDOM_WALKS = 3
CATEGORIES = ("special_as_text", "eos", "dialect", "forced_prefix")


# ---------------------------------------------------------------------------------------------
# Peers, built once per module the way a user would build them from the tokenizer files
# ---------------------------------------------------------------------------------------------


class _XGrammar:
    name = "xgrammar"

    def __init__(self, hf_tok: Any) -> None:
        import xgrammar as xgr

        self.xgr = xgr
        self.info = xgr.TokenizerInfo.from_huggingface(hf_tok)
        self.compiler = xgr.GrammarCompiler(self.info, cache_enabled=False)
        self.eos = frozenset(self.info.stop_token_ids)

    def matcher(self, pattern: str) -> Any:
        return self.xgr.GrammarMatcher(self.compiler.compile_regex(pattern))

    def fill(self, m: Any, buf: Any) -> None:
        m.fill_next_token_bitmask(buf, 0)

    def accept(self, m: Any, tid: int) -> bool:
        return m.accept_token(tid)


class _LLGuidance:
    name = "llguidance"

    def __init__(self, hf_tok: Any) -> None:
        import llguidance
        import llguidance.hf
        import llguidance.torch

        self.llg = llguidance
        self.tok = llguidance.hf.from_tokenizer(hf_tok)
        self._fill = llguidance.torch.fill_next_token_bitmask
        self.eos = frozenset(self.tok.eos_tokens)

    def matcher(self, pattern: str) -> Any:
        m = self.llg.LLMatcher(self.tok, self.llg.grammar_from("regex", pattern), log_level=0)
        assert not m.is_error(), m.get_error()
        return m

    def fill(self, m: Any, buf: Any) -> None:
        self._fill(m, buf, 0)

    def accept(self, m: Any, tid: int) -> bool:
        return m.consume_token(tid)


@pytest.mark.parametrize("module", ["xgrammar", "llguidance"])
def test_peer_available(module):
    """Says which peer is missing (the cross-checks then run against the other one only)."""
    mod = pytest.importorskip(module, reason=f"{module} is not installed (pip install {module})")
    assert mod is not None


@pytest.fixture(scope="module")
def hf_llama3(tokenizer_files):
    import logging

    logging.getLogger("transformers").setLevel(logging.ERROR)
    return transformers.AutoTokenizer.from_pretrained(str(tokenizer_files["llama3"]))


@pytest.fixture(scope="module")
def peers(hf_llama3):
    found = []
    for module, cls in (("xgrammar", _XGrammar), ("llguidance", _LLGuidance)):
        try:
            __import__(module)
        except ImportError:
            continue
        found.append(cls(hf_llama3))
    if not found:
        pytest.skip("neither xgrammar nor llguidance is installed (pip install xgrammar llguidance)")
    return found


@pytest.fixture(scope="module")
def llama3_compiler(llama3):
    return Compiler(llama3)


# ---------------------------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------------------------


def _unpack(words: np.ndarray, size: int) -> np.ndarray:
    return np.unpackbits(np.ascontiguousarray(words).view(np.uint8), bitorder="little")[:size].astype(bool)


def _classify(
    tid: int, ours: bool, theirs: bool, *, vocab, peer_eos: frozenset[int], accepting: bool,
    forced: bytes, variant: Optional[np.ndarray],
) -> Optional[str]:
    """The category explaining ours != theirs at token `tid`, or None if nothing does."""
    our_eos = vocab.eos_token_ids
    special = tid in vocab.special_ids
    if tid in our_eos or tid in peer_eos:
        # Each side must follow its own rule: EOS allowed iff accepting.
        if ours != (accepting and tid in our_eos):
            return None
        if theirs == (accepting and tid in peer_eos):
            return "eos"
        if theirs and special and tid not in peer_eos:
            return "special_as_text"
        return None
    if special:
        return "special_as_text" if theirs and not ours else None
    data = vocab.token_bytes[tid]
    if variant is not None and variant[tid] == theirs:
        return "dialect"
    if ours and not theirs and forced and len(data) < len(forced) and forced.startswith(data):
        return "forced_prefix"
    return None


def _compare_walk(case, vocab, compiler, peers, choose, counts, unexplained, label) -> int:
    """Walk one path (tokens from `choose(step, allowed_by_all)`, None = stop) in every engine at
    once, comparing masks at each step. Returns the number of tokens walked."""
    size = vocab.size
    buf = torch.zeros((1, (size + 31) // 32), dtype=torch.int32)
    text_ids = np.ones(size, dtype=bool)
    text_ids[list(vocab.special_ids)] = False
    text_ids[list(vocab.eos_token_ids)] = False

    ours_m = Matcher(compiler.compile_regex(case.pattern))
    peer_ms = [p.matcher(case.pattern) for p in peers]
    variants = {
        p.name: Matcher(compiler.compile_regex(case.dialect[p.name]))
        for p in peers if case.dialect and p.name in case.dialect
    }
    walk: list[int] = []
    while True:
        step = len(walk)
        ours_m.fill_next_token_bitmask(buf, 0)
        ours = _unpack(buf[0].numpy(), size)
        accepting = ours_m.is_accepting()
        forced = ours_m.forced_bytes()
        allowed_by_all = ours & text_ids
        for p, pm in zip(peers, peer_ms):
            p.fill(pm, buf)
            theirs = _unpack(buf[0].numpy(), size)
            allowed_by_all &= theirs
            variant = None
            if p.name in variants:
                variants[p.name].fill_next_token_bitmask(buf, 0)
                variant = _unpack(buf[0].numpy(), size)
            for tid in np.nonzero(ours != theirs)[0].tolist():
                cat = _classify(
                    tid, bool(ours[tid]), bool(theirs[tid]), vocab=vocab, peer_eos=p.eos,
                    accepting=accepting, forced=forced, variant=variant,
                )
                if cat is None:
                    unexplained[p.name].append(
                        f"{label} step {step} after {vocab.decode(walk)[-30:]!r}: id {tid} "
                        f"{vocab.token_bytes[tid]!r} ours={bool(ours[tid])} {p.name}={bool(theirs[tid])}"
                    )
                    cat = "UNEXPLAINED"
                counts[p.name][cat] += 1
            counts[p.name]["masks"] += 1

        tid = choose(step, allowed_by_all)
        if tid is None:
            return step
        assert ours_m.accept_token(tid), f"{label}: we reject walk token {tid} {vocab.token_bytes[tid]!r}"
        for v in variants.values():
            assert v.accept_token(tid)
        for p, pm in zip(peers, peer_ms):
            assert p.accept(pm, tid), f"{label}: {p.name} rejects walk token {tid} {vocab.token_bytes[tid]!r}"
        walk.append(tid)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_masks_match_peers_up_to_named_categories(case, llama3, llama3_compiler, peers, hf_llama3):
    sample = hf_llama3.encode(case.sample, add_special_tokens=False)
    rng = random.Random(f"peers:{case.name}")

    def from_sample(step, allowed_by_all):
        return sample[step] if step < len(sample) else None

    def at_random(step, allowed_by_all):
        choices = np.nonzero(allowed_by_all)[0]
        if step >= RANDOM_STEPS or choices.size == 0:
            return None
        return int(choices[rng.randrange(choices.size)])

    counts = {p.name: Counter() for p in peers}
    unexplained: dict[str, list[str]] = {p.name: [] for p in peers}
    n = _compare_walk(case, llama3, llama3_compiler, peers, from_sample, counts, unexplained, "sample")
    assert n == len(sample)
    for k in range(RANDOM_WALKS):
        _compare_walk(case, llama3, llama3_compiler, peers, at_random, counts, unexplained, f"random{k}")

    report = "; ".join(
        f"{name}: {c['masks']} masks, "
        + ", ".join(f"{k}={c[k]}" for k in CATEGORIES + ("UNEXPLAINED",))
        for name, c in counts.items()
    )
    print(f"\n[{case.name}] {report}")
    bad = {name: lines for name, lines in unexplained.items() if lines}
    assert not bad, (
        f"[{case.name}] unexplained mask differences ({report}):\n"
        + "\n".join(f"  {name}: {len(lines)} ids, e.g.\n    " + "\n    ".join(lines[:8])
                    for name, lines in bad.items())
    )


def test_special_tokens_are_never_text_for_us(llama3, llama3_compiler):
    """The premise of category special_as_text: our masks never allow a non-EOS special token."""
    m = Matcher(llama3_compiler.compile_regex(r'[^"\\]*'))
    allowed = set(m.allowed_token_ids().tolist())
    leaked = sorted((allowed & set(llama3.special_ids)) - set(llama3.eos_token_ids))
    assert not leaked, [llama3.token_bytes[t] for t in leaked[:5]]


def test_dialect_variant_is_needed_only_for_dot():
    """Cases without a declared dialect never use '.', \\d, \\w or \\s (peers read them otherwise)."""
    for case in CASES:
        if case.dialect:
            continue
        stripped = re.sub(r"\\.|\[(\\.|[^\]])*\]", "", case.pattern)  # drop escapes and classes
        assert "." not in stripped, case.name
        assert not re.search(r"\\[dws]", case.pattern, re.I), case.name
