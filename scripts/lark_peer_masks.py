"""Our Lark masks against llguidance's over the shared grammars (../shared/data/lark-grammars).

For every grammar both engines compile: seeded random walks over tokens both allow (Llama 3
vocabulary), and at each step the tokens only llguidance allows ("missing": a bug of ours unless
Lark refuses them too) and only we allow ("extra"). Prints per grammar the counts and the first
missing sample (prefix, tokens), for a person to judge against Lark. A tool, not a test: the
shared data may be absent, and each difference needs a verdict (docs/lark.md has the ones seen).

    .venv/bin/python scripts/lark_peer_masks.py [name-filter ...] [--walks 3] [--steps 20]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from engines import LLGuidanceEngine, tokenizer_dir  # noqa: E402
from lark_workload import shared_cases  # noqa: E402

sys.path.pop(0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("filters", nargs="*", help="only grammars whose path contains one of these")
    ap.add_argument("--walks", type=int, default=3)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=30.0, help="per grammar")
    ap.add_argument("--context", type=int, default=60, help="bytes of the prefix shown")
    args = ap.parse_args()

    import logging

    import torch
    import transformers

    from constrain import Compiler, ConstrainError, Limits, Matcher, Vocabulary

    logging.getLogger("transformers").setLevel(logging.ERROR)
    tok_dir = tokenizer_dir("llama3")
    vocab = Vocabulary.from_pretrained(tok_dir)
    hf = transformers.AutoTokenizer.from_pretrained(str(tok_dir))
    llg = LLGuidanceEngine(hf, vocab.size, sorted(vocab.eos_token_ids))  # (as benchmarks/lark.py builds it)
    compiler = Compiler(vocab, limits=Limits(max_mask_seconds=3.0))
    size, eos = vocab.size, vocab.eos_token_ids
    n_words = (size + 31) // 32

    def unpack(words: np.ndarray) -> np.ndarray:
        return np.unpackbits(words.view(np.uint8), bitorder="little")[:size].astype(bool)

    cases = [c for c in shared_cases() if not args.filters or any(f in c.name for f in args.filters)]
    if not cases:
        sys.exit("no shared grammars found (../shared/data/lark-grammars)")
    for case in cases:
        try:
            peer_grammar = llg.compile_lark(case.text, case.start)
            llg.matcher(peer_grammar)
            grammar = compiler.compile_lark(case.text, case.start, import_paths=[case.folder] if case.folder else ())
        except (ConstrainError, ValueError):
            continue
        rng = random.Random(case.name)
        steps = missing = extra = 0
        sample, stopped = None, ""
        t0 = time.perf_counter()
        try:
            for _ in range(args.walks):
                ours_m, peer = Matcher(grammar), llg.matcher(peer_grammar)
                prefix = b""
                for _ in range(args.steps):
                    words = np.zeros(n_words, dtype=np.int32)
                    ours_m.fill_next_token_bitmask(words)
                    buf = torch.zeros((1, n_words), dtype=torch.int32)
                    llg.fill(peer, buf)
                    ours, theirs = unpack(words), unpack(buf.numpy()[0])
                    steps += 1
                    only_theirs = np.flatnonzero(theirs & ~ours)
                    if only_theirs.size:
                        missing += 1
                        if sample is None:
                            sample = (prefix, [vocab.token_bytes[t] for t in only_theirs[:6]], only_theirs.size)
                    extra += bool((ours & ~theirs).any())
                    both = [int(t) for t in np.flatnonzero(ours & theirs) if t not in eos]
                    if not both:
                        break
                    tid = rng.choice([t for t in both if len(vocab.token_bytes[t]) <= 3] or both)
                    assert ours_m.accept_token(tid) and llg.accept(peer, tid)
                    prefix += vocab.token_bytes[tid]
                    if time.perf_counter() - t0 > args.seconds:
                        raise TimeoutError
        except TimeoutError:
            stopped = " (time)"
        except ConstrainError as exc:
            stopped = f" ({type(exc).__name__}: {exc})"
        print(f"{case.name[-64:]:64} steps {steps:3} missing {missing:3} extra {extra:3}{stopped}")
        if sample:
            print(f"    first missing after {sample[0][-args.context:]!r}: {sample[1]} ({sample[2]} tokens)")


if __name__ == "__main__":
    main()
