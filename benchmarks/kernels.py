"""Bitmask application benchmark: each backend's apply time against the machine's copy bandwidth.

    python benchmarks/kernels.py [--quick] [--vocab 128256] [--batches 1,4,16,64,256]

For batch 1, 4, 16, 64 and 256 at 128,256 columns (fp32; bf16 too at batch 64), in one process:

  us        median microseconds of apply_token_bitmask_inplace(logits, bitmask, backend=...) over
            many repeats, after a warm-up (the same logits are masked again and again: the work
            is the same every time, since no backend looks at the values).
  GB/s      "bytes moved" / time, where bytes moved = 2 x logits bytes + mask bytes: what a
            straightforward kernel moves (read every logit, write every logit, read the mask), the
            same bytes as a copy of the logits plus the mask. It is a yardstick, not a count of
            memory traffic: our kernels skip all-allowed words and never read the columns they
            mask, so on a mostly-allowed mask they move far less and can beat "100%".
  copy%     that rate over the copy rate measured alongside: 2 x logits bytes / median time of
            dst.copy_(src) on tensors of the logits' size and dtype (torch threads at default),
            timed in blocks alternating with the backend's, so that both see the same load.
            An in-place kernel can beat a copy: the copy's destination lines are also read (for
            ownership) before being written. Batch 1 (0.5 MB) lives in cache, for both.
  The load average before and after is printed: on a shared machine, threads descheduled in
  the middle of a parallel region (numba's and torch's alike) turn microseconds into ms.

Masks (every row different, drawn once per case):
  dense   every bit allowed with probability 1/2 (no word is all-allowed or all-masked)
  json    a JSON-structure state: ~100 allowed tokens scattered over the vocabulary (>97% of
          words are 0)
  text    inside a JSON string: all allowed but ~300 tokens (quotes, control characters...)
          (>90% of words are -1)

Backends: "numba" (the CPU kernel), "torch" (the reference), and XGrammar's CPU kernel
(xgrammar.apply_token_bitmask_inplace(..., backend="cpu"), fp32 only) when xgrammar imports.
With a CUDA device, "triton" and "torch" are also timed there with CUDA events.
The target the project set: numba at batch 64 x 128,256 fp32 >= 50% of the copy rate.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from typing import Callable, Optional

import numpy as np
import torch

from constrain.kernels import apply_token_bitmask_inplace, bitmask_words

TARGET_BATCH, TARGET_FRACTION = 64, 0.5


def make_mask(kind: str, batch: int, vocab: int, rng: np.random.Generator) -> torch.Tensor:
    """A (batch, ceil(vocab/32)) int32 mask of the kind the module docstring describes."""
    words = bitmask_words(vocab)
    if kind == "dense":
        bits = rng.integers(0, 2**32, size=(batch, words), dtype=np.uint64).astype(np.uint32)
        return torch.from_numpy(bits.view(np.int32))
    allowed = np.zeros((batch, words * 32), dtype=bool)
    for r in range(batch):
        if kind == "json":
            allowed[r, rng.choice(vocab, size=100, replace=False)] = True
        elif kind == "text":
            allowed[r, :vocab] = True
            allowed[r, rng.choice(vocab, size=300, replace=False)] = False
        else:
            raise ValueError(f"unknown mask kind {kind!r}: dense, json or text")
    packed = np.packbits(allowed, axis=1, bitorder="little")  # bit t%8 of byte t//8: our layout
    return torch.from_numpy(packed.view(np.int32).copy())


def paired_median_us(
    fn: Callable[[], object], copy: Callable[[], object], repeats: int, rounds: int = 10, warmup: int = 5
) -> tuple[float, float]:
    """Median wall times of fn() and of copy() in microseconds (gc off). The two are timed in
    alternating blocks of repeats/rounds calls each, so both see the same machine (load from
    other processes comes and goes), while within a block each runs after itself, as it would
    in a loop of its own (each call of one right after the other would measure the cache
    evictions and thread hand-overs between them instead)."""
    for _ in range(warmup):
        fn()
        copy()
    block = max(1, repeats // rounds)
    times: list[float] = []
    copies: list[float] = []
    gc.disable()
    try:
        for _ in range(rounds):
            for f, out in ((copy, copies), (fn, times)):
                f()  # the first call after the other kind: not timed
                for _ in range(block):
                    t0 = time.perf_counter()
                    f()
                    out.append(time.perf_counter() - t0)
    finally:
        gc.enable()
    return statistics.median(times) * 1e6, statistics.median(copies) * 1e6


def cuda_median_us(fn: Callable[[], object], repeats: int, warmup: int = 5) -> float:
    """Median of CUDA-event-timed fn() in microseconds."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times)


def xgrammar_apply() -> Optional[Callable[..., None]]:
    try:
        import xgrammar
    except Exception:  # not installed, or its native part does not load
        return None
    return lambda logits, mask: xgrammar.apply_token_bitmask_inplace(logits, mask, backend="cpu")


def repeats_for(nbytes: int, quick: bool) -> int:
    """About 0.2 s (0.05 s with --quick) of copying per case, between 20 and 2000 repeats."""
    per_call_s = max(nbytes / 10e9, 5e-6)  # a rough 10 GB/s guess, refined by nothing: it only sizes the run
    budget = 0.05 if quick else 0.2
    return int(min(2000, max(20, budget / per_call_s)))


def run_cpu(batches: list[int], vocab: int, kinds: list[str], quick: bool) -> list[dict]:
    rows: list[dict] = []
    xgr = xgrammar_apply()
    rng = np.random.default_rng(0)
    cases = [(b, torch.float32) for b in batches]
    if TARGET_BATCH in batches:
        cases.append((TARGET_BATCH, torch.bfloat16))
    for batch, dtype in cases:
        logits = torch.randn(batch, vocab).to(dtype)
        src, dst = torch.randn(batch, vocab).to(dtype), torch.empty(batch, vocab, dtype=dtype)
        logit_bytes = logits.numel() * logits.element_size()
        reps = repeats_for(logit_bytes, quick)
        for kind in kinds:
            mask = make_mask(kind, batch, vocab, rng)
            moved = 2 * logit_bytes + mask.numel() * 4
            backends: list[tuple[str, Callable[[], None]]] = [
                ("numba", lambda: apply_token_bitmask_inplace(logits, mask, backend="numba")),
                ("torch", lambda: apply_token_bitmask_inplace(logits, mask, backend="torch")),
            ]
            if xgr is not None and dtype == torch.float32:
                backends.append(("xgrammar", lambda: xgr(logits, mask)))
            for name, fn in backends:
                n = max(5, reps // 10) if name == "torch" else reps  # the reference is slow: fewer
                us, copy_us = paired_median_us(fn, lambda: dst.copy_(src), n)
                rate, copy_rate = moved / us / 1e3, 2 * logit_bytes / copy_us / 1e3  # GB/s
                rows.append(dict(device="cpu", batch=batch, dtype=str(dtype).replace("torch.", ""), mask=kind,
                                 backend=name, us=us, rate=rate, copy_us=copy_us, copy_rate=copy_rate,
                                 fraction=rate / copy_rate))
    return rows


def run_cuda(batches: list[int], vocab: int, kinds: list[str], quick: bool) -> list[dict]:
    rows: list[dict] = []
    rng = np.random.default_rng(0)
    dev = torch.device("cuda")
    for batch in batches:
        logits = torch.randn(batch, vocab, device=dev)
        src, dst = torch.randn_like(logits), torch.empty_like(logits)
        logit_bytes = logits.numel() * 4
        reps = 50 if quick else 200
        copy_us = cuda_median_us(lambda: dst.copy_(src), reps)
        copy_rate = 2 * logit_bytes / copy_us / 1e3
        for kind in kinds:
            mask = make_mask(kind, batch, vocab, rng).to(dev)
            moved = 2 * logit_bytes + mask.numel() * 4
            for name in ("triton", "torch"):
                us = cuda_median_us(lambda: apply_token_bitmask_inplace(logits, mask, backend=name), reps)
                rate = moved / us / 1e3
                rows.append(dict(device="cuda", batch=batch, dtype="float32", mask=kind, backend=name, us=us,
                                 rate=rate, copy_us=copy_us, copy_rate=copy_rate, fraction=rate / copy_rate))
    return rows


def print_table(rows: list[dict]) -> None:
    header = f"{'dev':<5}{'batch':>6} {'dtype':<9}{'mask':<6}{'backend':<9}{'us':>10}{'GB/s':>8}{'copy us':>10}{'copy GB/s':>10}{'copy%':>7}"
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['device']:<5}{r['batch']:>6} {r['dtype']:<9}{r['mask']:<6}{r['backend']:<9}{r['us']:>10.1f}"
              f"{r['rate']:>8.1f}{r['copy_us']:>10.1f}{r['copy_rate']:>10.1f}{100 * r['fraction']:>6.0f}%")


def print_target(rows: list[dict]) -> bool:
    hits = [r for r in rows if r["device"] == "cpu" and r["backend"] == "numba" and r["batch"] == TARGET_BATCH
            and r["dtype"] == "float32"]
    ok = bool(hits) and all(r["fraction"] >= TARGET_FRACTION for r in hits)
    for r in hits:
        print(f"target: numba, batch {TARGET_BATCH} fp32, {r['mask']} mask: {100 * r['fraction']:.0f}% of copy "
              f"(need {100 * TARGET_FRACTION:.0f}%)")
    print("target met" if ok else "target NOT met")
    return ok


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats: a rougher, shorter run")
    ap.add_argument("--vocab", type=int, default=128256)
    ap.add_argument("--batches", default="1,4,16,64,256")
    ap.add_argument("--masks", default="dense,json,text")
    args = ap.parse_args(argv)
    batches = [int(b) for b in args.batches.split(",")]
    kinds = args.masks.split(",")
    import numba

    print(f"torch {torch.__version__} ({torch.get_num_threads()} threads), numba {numba.__version__} "
          f"({numba.get_num_threads()} threads), vocab {args.vocab}")
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    rows = run_cpu(batches, args.vocab, kinds, args.quick)
    if torch.cuda.is_available():
        rows += run_cuda(batches, args.vocab, kinds, args.quick)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print_table(rows)
    return 0 if print_target(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
