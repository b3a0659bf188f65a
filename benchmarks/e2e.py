"""End to end: SmolLM2-135M-Instruct on CPU, constrained vs unconstrained tokens/s.

For each grammar, `constrain.generate` produces a completion; then the same decode loop without a
grammar (same forward calls, same sampling pipeline, no mask) is run teacher-forced along the
same tokens, so both sides do exactly the same model work and the difference is what the grammar
costs: masks not hidden behind the forward pass, applying them, and matcher bookkeeping. Runs
alternate constrained / unconstrained and the figures are medians (these machines are noisy).

    python benchmarks/e2e.py [--repeats 5] [--max-new-tokens 64] [--quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings

# benchmarks/lark.py would shadow the lark library (benchmarks/ is sys.path[0] for a script)
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import torch  # noqa: E402

from constrain import Compiler, SamplingParams, Vocabulary, generate, grammars  # noqa: E402
from constrain.model_forward import cached_forward, prompt_ids
from constrain.demo import PERSON_SCHEMA
from constrain.models import default_model_path
from constrain.kernels import sample

TASKS = [
    ("json schema", "Describe Ada Lovelace as JSON with her name, age and languages.", "schema", PERSON_SCHEMA),
    ("regex", "Write an email address for Ada Lovelace.", "regex", r"[a-z]{1,10}(\.[a-z]{1,10})?@[a-z]{2,12}\.(com|org|net)"),
    ("lark sql", "Write an SQL query listing the names and ages of users older than 30, newest first.", "lark", "sql"),
    ("lark json", "Describe a cat as a JSON object with four fields.", "lark", "json"),
]


def unconstrained_replay(model, tokenizer, messages, tokens, sampling, ended_by_eos) -> tuple[float, float]:
    """(seconds, of which forward seconds) for the grammar-free loop to do the same forwards and
    draws along `tokens`."""
    forward = cached_forward(model)
    generator = torch.Generator().manual_seed(0)
    t0 = time.perf_counter()
    step_input = prompt_ids(tokenizer, messages)
    past = None
    history: list[int] = []
    forward_seconds = 0.0
    steps = len(tokens) + (1 if ended_by_eos else 0)
    with torch.no_grad():
        for i in range(steps):
            t1 = time.perf_counter()
            logits, past = forward(step_input, past)
            logits = logits[:, -1, :]
            forward_seconds += time.perf_counter() - t1
            sample(logits, sampling, history=[history], generator=None if sampling.greedy else generator)
            if i < len(tokens):
                history.append(tokens[i])
                step_input = torch.tensor([[tokens[i]]])
    return time.perf_counter() - t0, forward_seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--quick", action="store_true", help="1 repeat, 32 new tokens at most")
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.max_new_tokens = 1, min(args.max_new_tokens, 32)

    import transformers

    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    warnings.filterwarnings("ignore")
    path = default_model_path()
    tokenizer = transformers.AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    model = transformers.AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name).eval()
    vocab = Vocabulary.from_pretrained(tokenizer, logits_width=model.config.vocab_size)
    compiler = Compiler(vocab)
    print(f"SmolLM2-135M-Instruct (GGUF, fp32 on CPU, {torch.get_num_threads()} threads), vocabulary {vocab.size}")
    print("overhead: median over runs of 1 - constrained/unconstrained tok/s, each pair run back to back;")
    print("grammar cost: (time besides the forward pass per token, constrained - unconstrained) / unconstrained")
    print("time per token: the same figure without the forward passes' noise")
    print(f"{'task':<12} {'mode':<8} {'tokens':>6} {'constrained tok/s':>18} {'unconstrained tok/s':>20} {'overhead':>9} "
          f"{'grammar cost':>13}  {'besides forward ms/token':>25}  mask ms/token (wait)  stop")
    overheads, costs = [], []
    for name, prompt, kind, source in TASKS:
        grammar = {
            "schema": compiler.compile_json_schema,
            "regex": compiler.compile_regex,
            "lark": lambda s: compiler.compile_lark(grammars.load(s)),
        }[kind](source)
        messages = [{"role": "user", "content": prompt}]
        for mode, sampling in (("greedy", SamplingParams(temperature=0)), ("sampled", SamplingParams(temperature=0.8, top_p=0.95, seed=1))):
            generate(model, tokenizer, messages, grammar, sampling=sampling, max_new_tokens=4)  # warm-up
            ours, theirs, masks, waits, ours_rest, theirs_rest = [], [], [], [], [], []
            result = None
            for _ in range(args.repeats):
                result = generate(model, tokenizer, messages, grammar, sampling=sampling, max_new_tokens=args.max_new_tokens)
                n = len(result.token_ids)
                ours.append(n / result.stats.seconds)
                masks.append(result.stats.mask_seconds * 1e3 / max(1, n))
                waits.append(result.stats.mask_wait_seconds * 1e3 / max(1, n))
                ours_rest.append((result.stats.seconds - result.stats.forward_seconds) * 1e3 / max(1, n))
                seconds, forward_seconds = unconstrained_replay(model, tokenizer, messages, result.token_ids, sampling, result.stats.stop_reason == "eos")
                theirs.append(n / seconds)
                theirs_rest.append((seconds - forward_seconds) * 1e3 / max(1, n))
            c, u = statistics.median(ours), statistics.median(theirs)
            overhead = statistics.median([(1 - a / b) * 100 for a, b in zip(ours, theirs)])
            rest_c, rest_u = statistics.median(ours_rest), statistics.median(theirs_rest)
            cost = (rest_c - rest_u) / (1e3 / u) * 100
            overheads.append(overhead)
            costs.append(cost)
            print(f"{name:<12} {mode:<8} {n:>6} {c:>18.1f} {u:>20.1f} {overhead:>8.1f}% {cost:>12.2f}%  "
                  f"{rest_c:>11.2f} vs {rest_u:>9.2f}     "
                  f"{statistics.median(masks):.3f} ({statistics.median(waits):.3f})      {result.stats.stop_reason}")
    print(f"median over the cases: overhead {statistics.median(overheads):.1f}%, grammar cost "
          f"{statistics.median(costs):.2f}% (target: constrained tokens/s within 3% of unconstrained)")


if __name__ == "__main__":
    main()
