"""The shipped grammars' masks against llguidance's (which reads Lark too), with Lark as judge.

Random walks over tokens both engines allow, on the real Llama 3 vocabulary. At every step:
- every token llguidance allows, we allow (two independent engines; none of its extras is ours
  to miss);
- tokens only we allow are sampled, and each one is *witnessed*: our matcher accepts it, a
  masked walk completes the text, and Lark's own Earley parser parses the whole text. So each
  extra is a real prefix of the grammar's language as Lark defines it. (The extras seen: ignored
  text at the start or end, which Lark allows and llguidance does not; tokens that split forced
  text, where llguidance keeps the canonical tokenization only; a keyword glued to a name,
  which Lark's dynamic lexer reads: docs/lark.md.)
SQL is left out: llguidance refuses its keyword lookahead.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import lark
import numpy as np
import pytest

from constrain import Compiler, Matcher
from constrain.grammars import load

from token_choices import short_or_all, text_ids  # tests/support

pytestmark = pytest.mark.peers

NAMES = ["json", "arithmetic", "csv", "python_expr", "tool_call"]
WALKS, STEPS = 3, 24
WITNESSES_PER_STEP, WITNESSES_PER_WALK = 1, 4
CLOSERS = {b";", b"}", b"]", b")", b'"', b"'", b"1", b"}}", b">"}


@pytest.fixture(scope="module")
def llg(tokenizer_files, llama3):
    llguidance = pytest.importorskip("llguidance", reason="llguidance is not installed (pip install llguidance)")
    import llguidance.hf
    import llguidance.torch  # noqa: F401
    import logging

    transformers = pytest.importorskip("transformers")
    logging.getLogger("transformers").setLevel(logging.ERROR)
    hf = transformers.AutoTokenizer.from_pretrained(str(tokenizer_files["llama3"]))
    return llguidance, llguidance.hf.from_tokenizer(hf, n_vocab=llama3.size, eos_token=sorted(llama3.eos_token_ids)), hf


def _allowed(words: np.ndarray, size: int) -> np.ndarray:
    return np.unpackbits(words.view(np.uint8), bitorder="little")[:size].astype(bool)


def _llg_mask(llguidance: Any, m: Any, size: int) -> np.ndarray:
    import torch

    buf = torch.zeros((1, (size + 31) // 32), dtype=torch.int32)
    llguidance.torch.fill_next_token_bitmask(m, buf, 0)
    return _allowed(buf.numpy()[0], size)


def _witnessed(matcher: Matcher, tid: int, vocab, parser: lark.Lark, prefix: bytes, rng, masked_walk) -> bool | None:
    """Does Lark parse prefix + token + a completion our masks allow? (None: no attempt ended
    in an accepting state.)"""
    for _ in range(3):
        m = matcher.fork()
        assert m.accept_token(tid)
        rest = masked_walk(m, vocab, rng, 90, CLOSERS)
        if m.is_accepting():
            text = (prefix + vocab.token_bytes[tid] + b"".join(vocab.token_bytes[t] for t in rest)).decode("utf-8")
            try:
                parser.parse(text)
            except lark.exceptions.LarkError:
                return False
            return True
    return None


@pytest.mark.parametrize("name", NAMES)
def test_masks_cover_llguidance_and_our_extras_are_lark_prefixes(name, llg, llama3, masked_walk):
    llguidance, llg_tok, _ = llg
    vocab = llama3
    grammar = Compiler(vocab).compile_lark(load(name))
    parser = lark.Lark(load(name), parser="earley")
    peer_grammar = llguidance.grammar_from("lark", load(name))
    rng = random.Random(name)
    eos = vocab.eos_token_ids
    words = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    extras = witnessed = 0
    inconclusive: list[str] = []
    for walk in range(WALKS):
        ours_m = Matcher(grammar)
        peer = llguidance.LLMatcher(llg_tok, peer_grammar, log_level=0)
        assert not peer.is_error(), peer.get_error()
        prefix = b""
        tried = 0
        for step in range(STEPS):
            ours_m.fill_next_token_bitmask(words)
            ours = _allowed(words, vocab.size)
            theirs = _llg_mask(llguidance, peer, vocab.size)
            missing = np.flatnonzero(theirs & ~ours)
            assert missing.size == 0, (
                f"{name} walk {walk} step {step} after {prefix[-40:]!r}: llguidance allows "
                f"{[vocab.token_bytes[t] for t in missing[:8]]} ({missing.size} tokens), we do not"
            )
            only_ours = text_ids(np.flatnonzero(ours & ~theirs), vocab, eos).tolist()
            extras += len(only_ours)
            for tid in rng.sample(only_ours, min(WITNESSES_PER_STEP, len(only_ours), WITNESSES_PER_WALK - tried)):
                tried += 1
                verdict = _witnessed(ours_m, tid, vocab, parser, prefix, rng, masked_walk)
                assert verdict is not False, (
                    f"{name}: we allow {vocab.token_bytes[tid]!r} after {prefix!r} (llguidance does not), "
                    "and Lark refuses the text our masks completed it to"
                )
                if verdict is None:
                    inconclusive.append(repr(prefix + vocab.token_bytes[tid]))
                else:
                    witnessed += 1
            both = text_ids(np.flatnonzero(ours & theirs), vocab, eos)
            if not both.size or (step > STEPS // 2 and ours_m.is_accepting() and rng.random() < 0.3):
                break
            short = short_or_all(both, vocab, 3)
            tid = int(rng.choice(short))
            assert ours_m.accept_token(tid) and peer.consume_token(tid), (name, prefix, vocab.token_bytes[tid])
            prefix += vocab.token_bytes[tid]
    assert len(inconclusive) <= max(2, witnessed // 5), f"{name}: completions that never ended: {inconclusive[:5]}"
    print(f"{name}: {extras} extra tokens, {witnessed} witnessed by Lark, {len(inconclusive)} inconclusive")


# What Lark refuses and llguidance reads: `""` as nothing, a terminal that matches the empty
# text as optional where used, rule options `[lazy]`, `[suffix=...]`, `[capture]`, counts in
# braces `x{m,n}`, `&` and `~` in terminals (docs/lark.md, llguidance/vLLM extensions).
LLGUIDANCE_READINGS = [
    ('start: "x" T "y"\nT: /(ab)*c?/', "xyabc"),
    ('start: T T "b"\nT: /a*/', "ab"),
    ('start: "(" T? ")" T\nT: /[ab]*/', "()ab"),
    ('start: ("a" | "" | "b" "")* "c"', "abc"),
    ('start: x "c"\nx: "" | "a" x', "ac"),
    ('start: T U\nT: /a*/\nU: /[ab]*c/', "abc"),
    ('start: foo "b"\nfoo: /a*/ foo | "c"\n', "abc"),  # (left recursion through a terminal that may match nothing)
    ('start: foo\nfoo: foo /[ab]*/ "," | W "c"\nW: /a?/', "ac,"),
    ('start: (T ",")* T\nT: /[0-9]*/', "12,"),
    ('start: w*\nw[lazy]: /[ab]*!/', "ab!"),
    ('start: w "."\nw[suffix="!"]: /[ab!]*/', "ab!."),
    ('start: w+\nw[capture, suffix=END]: /[a!]*/\nEND: "!!"', "a!"),
    ('start: foo foo "b"\nfoo[lazy]: /a*/', "ab"),
    ('start: foo /[ab]*/\nfoo[lazy, capture="n"]: /[ab]+/', "ab"),
    ('start: (x | y)*\nx[lazy]: /a+/ "b"?\ny[capture]: "b"', "ab"),
    ('start: "a"{2,3} "b"{,2}', "ab"),  # (counts in braces)
    ('start: x{3,}\nx: "a" | "bc"', "abc"),
    ('start: A ","\nA: ("a" | "b"){1,2} "c"{2,}', "abc,"),
    ('start: (x ","){0,2} x\nx: /[0-9]/', "1,"),
    ('start: A\nA: /[ab\\n]*/ & ~/(?s:.*)\\n\\n(?s:.*)/', "a\n"),  # (& and ~ in terminals)
    ('start: A "!"\nA: /[ab]+/ & ~/(?s:.*)ab(?s:.*)/', "ab!"),
    ('start: A ("," A)*\nA: (~/a+/ & /[ab]{1,2}/)+ | "c"', "abc,"),
    ('start: my-rule+\nmy-rule: "a" | B-C\nB-C: "b"', "abc"),  # (names with dashes)
    ('start: [x] x? "b"\nx: "a"', "ab"),  # (alternatives the same through brackets: Lark refuses them)
    ('start: (x | ",")*\nx[lazy]: /a|b/ "c"', "abc,"),  # (a lazy body's parts are groups)
    ('start[suffix="!"]: /[ab]*/', "ab!"),  # (a lazy start)
    ('start: %json {"type": "array", "items": {"type": "integer"}}', "[1, ]"),  # (%json's whitespace)
    ('start: "x" %json {"type": "array", "x-guidance": {"whitespace_flexible": false}}', "x[1, ]"),
]


@pytest.mark.parametrize("grammar, alphabet", LLGUIDANCE_READINGS)
def test_llguidance_readings_accept_the_texts_llguidance_accepts(grammar, alphabet, llg, llama3):
    """Every text of up to five characters over the grammar's own: accepted alike."""
    import itertools

    llguidance, tokenizer, hf = llg
    peer = llguidance.LLMatcher(tokenizer, llguidance.LLMatcher.grammar_from_lark(grammar), log_level=0)
    ours = Compiler(llama3).compile_lark(grammar)
    differ, accepted = [], 0
    for n in range(6):
        for chars in itertools.product(alphabet, repeat=n):
            text = "".join(chars)
            ids = hf.encode(text, add_special_tokens=False)
            peer.reset()
            theirs = peer.validate_tokens(ids) == len(ids) and (peer.consume_tokens(ids) or True) and peer.is_accepting()
            mine = ours.accepts(text.encode())
            accepted += mine
            if mine != theirs:
                differ.append((text, mine, theirs))
    assert not differ, differ[:10]
    assert accepted >= 3  # (the comparison saw texts both accept, not only refusals)


CONVERTED = Path(__file__).resolve().parents[3] / "shared" / "data" / "lark-grammars" / "llguidance" / "sample_parser" / "data" / "from-llama.cpp" / "converted-to-lark"


def _converted() -> list:
    if not CONVERTED.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{CONVERTED} not found"), id="missing")]
    return [pytest.param(p, id=p.name) for p in sorted(CONVERTED.glob("*.lark"))]


@pytest.mark.parametrize("path", _converted())
def test_llguidance_s_gbnf_conversions_compile_and_their_texts_are_llguidance_s(path, llg, llama3, masked_walk):
    """llama.cpp's GBNF grammars as llguidance's converter writes them (`%llguidance {}`, `WS: ""`,
    `x{4,4}`): each compiles, and every text a random masked walk of ours completes, llguidance
    accepts too."""
    llguidance, tokenizer, _ = llg
    text = path.read_text()
    ours = Compiler(llama3).compile_lark(text)
    peer = llguidance.LLMatcher(tokenizer, llguidance.LLMatcher.grammar_from_lark(text), log_level=0)
    rng = random.Random(path.name)
    finished = 0
    for _ in range(4):
        m = Matcher(ours)
        tokens = masked_walk(m, llama3, rng, 40, CLOSERS | {b"\n"})
        if not m.is_accepting():
            continue
        finished += 1
        peer.reset()
        assert peer.validate_tokens(tokens) == len(tokens), b"".join(llama3.token_bytes[t] for t in tokens)
        peer.consume_tokens(tokens)
        assert peer.is_accepting(), b"".join(llama3.token_bytes[t] for t in tokens)
    assert finished


MISTRAL_TOOLS = [
    ("get_weather", {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}),
    ("search", {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"], "additionalProperties": False}),
]


@pytest.mark.parametrize("template", ["base_grammar.lark.jinja", "think_grammar.lark.jinja"])
def test_mistral_s_tool_call_grammars_compile_and_their_texts_are_llguidance_s(template, llg, llama3, masked_walk):
    """mistral-common's own grammar templates (rendered with jinja2, as its GrammarFactory does, with
    two tools and Llama 3's reserved special tokens standing in for [TOOL_CALLS], [ARGS], [THINK]):
    free text, tool calls with %json arguments, a JSON answer. Each compiles, and every text a
    random masked walk completes there, llguidance accepts too."""
    jinja2 = pytest.importorskip("jinja2", reason="jinja2 renders mistral-common's templates")
    common = pytest.importorskip("mistral_common", reason="mistral-common holds the templates")
    import json

    path = Path(common.__file__).parent / "guidance" / "data" / template
    if not path.exists():
        pytest.skip(f"{path} not found (a mistral-common without guidance templates)")
    llguidance, tokenizer, _ = llg
    call = " | ".join(f'(<[128010]> SAFE_WS? "{name}" <[128011]> SAFE_WS? %json {json.dumps(schema)} SAFE_WS?)'
                      for name, schema in MISTRAL_TOOLS)
    answer = json.dumps({"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]})
    rng = random.Random(template)
    finished = 0
    for mode in ("auto", "required", "none"):
        for schema in (None, answer):
            text = jinja2.Template(path.read_text()).render(
                mode=mode, fcall=f"({call})+", json_schema_str=schema, parallel_tool_calls=True, json_only=False,
                think_with_json=False, begin_think_token="<[128012]>", end_think_token="<[128013]>")
            ours = Compiler(llama3).compile_lark(text)
            peer = llguidance.LLMatcher(tokenizer, llguidance.LLMatcher.grammar_from_lark(text), log_level=0)
            for _ in range(2):
                m = Matcher(ours)
                tokens = masked_walk(m, llama3, rng, 50, {b"}", b'"', b"]"})
                if not m.is_accepting():
                    continue
                finished += 1
                peer.reset()
                assert peer.validate_tokens(tokens) == len(tokens), (mode, b"".join(llama3.token_bytes[t] for t in tokens))
                peer.consume_tokens(tokens)
                assert peer.is_accepting(), (mode, b"".join(llama3.token_bytes[t] for t in tokens))
    assert finished >= 4
