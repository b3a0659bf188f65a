"""Speculative decoding under a grammar: SmolLM2-135M-Instruct on CPU, batch 1, greedy.

Four workloads, each a few chat prompts under one grammar:

- json extraction: a JSON Schema {name, age, city, occupation} (all required, no others) filled
  from a sentence in the prompt, so the output mostly echoes the prompt;
- free-form json: "describe a cat" under a schema of several required fields of mixed types (the
  keys and punctuation are grammar-forced, the values are the model's);
- lark tool_call: the shipped Lark grammar `tool_call` (`<tool_call>{"name": ..., "arguments":
  {...}}</tool_call>`), the tool described in the prompt;
- prose: `{"story": "..."}` whose one string is 300..600 characters of free text: there is
  nothing to force and little to look up, so speculation should switch itself off (the adaptive
  γ controller) and cost next to nothing.

Modes (all greedy, temperature 0, so every constrained mode must emit the same token ids; the
script checks that and reports any difference loudly):

- plain: unconstrained decoding, done as a teacher-forced replay (as benchmarks/e2e.py does): the
  grammar-free loop (one forward pass per token, the same sampling pipeline, no mask) run along
  the token ids the constrained loop produced, so it does exactly the model work of unconstrained
  decoding of that many tokens (free-running greedy decoding would produce other text of another
  length, and the per-token cost is the same);
- constrained: `generate(..., jump_forward=False)`, one forward pass per token;
- +jump-forward: `generate(...)` (grammar-forced runs drafted and verified, the default);
- +ngram: `draft="ngram"` (token n-gram prompt lookup) on top of jump-forward;
- +lookup: `draft="lookup"` (text-level prompt lookup) on top of jump-forward;
- +model (--model-drafter): a SELF-SPECULATIVE LAYER-SKIP drafter: a copy of SmolLM2 keeping only
  its first K decoder layers (same tokenizer, no second model needed), `draft=(copy, tokenizer)`.

Per workload and mode: median tokens/s over the repeats (each repeat runs every mode once per
prompt, in an order that rotates from repeat to repeat; tokens/s of a repeat = all its prompts'
tokens over their seconds), target passes per output token, forward-pass milliseconds per target pass (what verifying several
positions costs, and a gauge of machine noise: a busy machine shows as slow passes), α (per-position acceptance, mean per
request), accepted/drafted and mean acceptance length (pooled over requests), forced tokens kept
(per repeat), and the median over the repeats of the speed ratio to `constrained` and to `plain`
measured in the same repeat.

    python benchmarks/specdec.py [--repeats 3] [--max-new-tokens 96] [--quick] [--model-drafter]
"""

from __future__ import annotations

import argparse
import copy
import datetime
import os
import statistics
import subprocess
import sys
import time
import warnings

# benchmarks/lark.py would shadow the lark library (benchmarks/ is sys.path[0] for a script)
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import torch  # noqa: E402

from constrain import SamplingParams, generate, grammars  # noqa: E402
from constrain.models import load_model  # noqa: E402
from constrain.kernels import sample  # noqa: E402
from constrain.model_forward import cached_forward, prompt_ids  # noqa: E402

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 40},
        "age": {"type": "integer", "minimum": 0, "maximum": 130},
        "city": {"type": "string", "minLength": 1, "maxLength": 40},
        "occupation": {"type": "string", "minLength": 1, "maxLength": 40},
    },
    "required": ["name", "age", "city", "occupation"],
    "additionalProperties": False,
}

CAT = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 20},
        "age_years": {"type": "integer", "minimum": 0, "maximum": 30},
        "weight_kg": {"type": "number", "minimum": 0, "maximum": 20},
        "color": {"type": "string", "enum": ["black", "white", "orange", "grey", "tabby", "calico"]},
        "indoor": {"type": "boolean"},
        "favorite_foods": {"type": "array", "items": {"type": "string", "maxLength": 16}, "minItems": 1, "maxItems": 3},
        "personality": {"type": "string", "maxLength": 60},
    },
    "required": ["name", "age_years", "weight_kg", "color", "indoor", "favorite_foods", "personality"],
    "additionalProperties": False,
}

STORY = {
    "type": "object",
    "properties": {"story": {"type": "string", "minLength": 300, "maxLength": 600}},
    "required": ["story"],
    "additionalProperties": False,
}

TOOL_SYSTEM = (
    "You can call this tool: get_weather(city: string, unit: \"celsius\" or \"fahrenheit\"). "
    "Call it as <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": ..., \"unit\": ...}}</tool_call>"
)


def _user(text: str, system: str | None = None) -> list[dict]:
    messages = [{"role": "system", "content": system}] if system else []
    return messages + [{"role": "user", "content": text}]


# (name, grammar kind, grammar source, prompts, target description, target ratio, target modes)
WORKLOADS = [
    ("json extraction", "schema", PERSON, [
        _user("Extract the person as JSON with name, age, city and occupation: Grace Hopper, 85 years old, "
              "a computer scientist from New York City."),
        _user("Extract the person as JSON with name, age, city and occupation: Alan Turing, 41 years old, "
              "a mathematician from London."),
        _user("Extract the person as JSON with name, age, city and occupation: Marie Curie, 66 years old, "
              "a physicist and chemist from Warsaw."),
    ], ">= 2x (best speculative mode)", 2.0, None),
    ("free-form json", "schema", CAT, [
        _user("Describe a cat as JSON."),
        _user("Describe a lazy old house cat as JSON."),
    ], ">= 1.3x (jump-forward alone)", 1.3, ("+jump-forward",)),
    ("lark tool_call", "lark", "tool_call", [
        _user("What's the weather in Paris, in celsius?", TOOL_SYSTEM),
        _user("Is it cold in Oslo right now? Use fahrenheit.", TOOL_SYSTEM),
    ], "(none set)", None, None),
    ("prose", "schema", STORY, [
        # (a lighthouse-keeper prompt was dropped: greedy SmolLM2 loops "a sailor, a sailor, ..." there,
        # which prompt lookup drafts perfectly; these two give prose that does not repeat itself)
        _user("Write a short story about a robot learning to paint as JSON with one field, story."),
        _user("Tell me a story about a dragon who is afraid of the dark. Reply as JSON: {\"story\": ...}"),
    ], ">= 0.95x (every speculative mode: no more than 5% slower)", 0.95, "all"),
]

BASE_MODES = ["plain", "constrained", "+jump-forward", "+ngram", "+lookup"]
SPECULATIVE = ["+jump-forward", "+ngram", "+lookup", "+model"]


def git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=_HERE, capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or "unknown"
    except Exception:  # noqa: BLE001 - a benchmark header; never fail on it
        return "unknown"


def layer_skip_drafter(model, keep: int):
    """Self-speculative layer-skip drafter: a copy of `model` that keeps only its first `keep`
    decoder layers (then the model's own final norm and LM head). Same tokenizer by construction."""
    draft = copy.deepcopy(model)
    layers = draft.model.layers
    if not 1 <= keep <= len(layers):
        raise SystemExit(f"--draft-layers must be in 1..{len(layers)}, got {keep}")
    draft.model.layers = torch.nn.ModuleList(list(layers)[:keep])
    draft.config.num_hidden_layers = keep
    if getattr(draft.config, "layer_types", None) is not None:
        draft.config.layer_types = list(draft.config.layer_types)[:keep]
    return draft.eval()


def plain_replay(model, tokenizer, messages, tokens, ended_by_eos) -> tuple[float, float, int]:
    """(seconds, of which forward seconds, forward passes) for grammar-free greedy decoding along `tokens`: one forward pass
    per token (plus the one that drew EOS when the constrained loop spent one on it), each followed
    by the sampling pipeline's greedy draw without a mask."""
    forward = cached_forward(model)
    sampling = SamplingParams(temperature=0)
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
            forward_seconds += time.perf_counter() - t1
            sample(logits[:, -1, :], sampling, history=[history])
            if i < len(tokens):
                history.append(tokens[i])
                step_input = torch.tensor([[tokens[i]]])
    return time.perf_counter() - t0, forward_seconds, steps


def run_mode(mode, model, tokenizer, messages, grammar, max_new_tokens, reference, draft_model):
    """One request in `mode`: a dict of its figures."""
    if mode == "plain":
        tokens = reference.token_ids[:max_new_tokens]
        seconds, forward_seconds, passes = plain_replay(
            model, tokenizer, messages, tokens, reference.stats.stop_reason == "eos" and len(tokens) == len(reference.token_ids))
        return {"tokens": len(tokens), "seconds": seconds, "forward_seconds": forward_seconds, "passes": passes, "ids": None}
    kwargs = {
        "constrained": {"jump_forward": False},
        "+jump-forward": {},
        "+ngram": {"draft": "ngram"},
        "+lookup": {"draft": "lookup"},
        "+model": {"draft": (draft_model, tokenizer)},
    }[mode]
    r = generate(model, tokenizer, messages, grammar, sampling=SamplingParams(temperature=0),
                 max_new_tokens=max_new_tokens, **kwargs)
    s = r.stats
    return {
        "tokens": len(r.token_ids), "seconds": s.seconds, "forward_seconds": s.forward_seconds, "passes": s.target_passes, "ids": r.token_ids,
        "alpha": s.alpha, "drafted": s.drafted, "accepted": s.accepted, "forced": s.forced_tokens,
        "emitted_per_pass": s.mean_acceptance_length, "text": r.text, "stop": s.stop_reason,
    }


def first_difference(a: list[int], b: list[int]) -> int:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-new-tokens", type=int, default=96)
    parser.add_argument("--quick", action="store_true", help="1 repeat, 1 prompt per workload, 48 new tokens at most")
    parser.add_argument("--model-drafter", action="store_true", help="add the self-speculative layer-skip drafter (slow)")
    parser.add_argument("--draft-layers", type=int, default=8, help="decoder layers the layer-skip drafter keeps")
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    parser.add_argument("--workloads", default="", help="comma-separated name prefixes (json,free,lark,prose); all if empty")
    parser.add_argument("--modes", default="", help="comma-separated modes besides plain and constrained (e.g. +lookup); all if empty")
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.max_new_tokens = 1, min(args.max_new_tokens, 48)
    torch.set_num_threads(args.threads)

    import transformers

    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    warnings.filterwarnings("ignore")
    print(f"benchmarks/specdec.py at {git_commit()}, {datetime.datetime.now().isoformat(timespec='seconds')}")
    t0 = time.perf_counter()
    loaded = load_model(progress=False)
    model, tokenizer, compiler = loaded.model.eval(), loaded.tokenizer, loaded.compiler
    wanted = set(args.modes.split(",")) | {"plain", "constrained"}  # the ratios' denominators always run
    modes = [m for m in BASE_MODES if not args.modes or m in wanted]
    draft_model = None
    if args.model_drafter:
        draft_model = layer_skip_drafter(model, args.draft_layers)
        modes.append("+model")
    print(f"SmolLM2-135M-Instruct (GGUF, fp32 on CPU, {torch.get_num_threads()} threads), vocabulary {compiler.vocab.size}, "
          f"loaded in {time.perf_counter() - t0:.1f} s; greedy, batch 1, max {args.max_new_tokens} new tokens, "
          f"{args.repeats} repeat(s)")
    if draft_model is not None:
        print(f"+model = self-speculative layer-skip drafter: SmolLM2's first {args.draft_layers} of "
              f"{model.config.num_hidden_layers} decoder layers (same tokenizer, no second model)")

    print("tok/s: median over repeats; passes/tok: target forward passes per output token; fwd ms/pass: forward "
          "time per pass (noise gauge); alpha: per-position acceptance (mean per request); acc/drafted, mean acc "
          "len (tokens per pass): pooled; forced: grammar-forced tokens kept per repeat; ratios: median over repeats "
          "of the same repeat's ratio")

    # compile, warm up (numba compilation, lazily built indexes along each prompt's path) and take
    # each prompt's reference output (constrained, no speculation)
    work = []
    chosen = [p.strip() for p in args.workloads.split(",") if p.strip()]
    for name, kind, source, prompts, target_text, target, target_modes in WORKLOADS:
        if chosen and not any(name.startswith(p) for p in chosen):
            continue
        t1 = time.perf_counter()
        grammar = compiler.compile_json_schema(source) if kind == "schema" else compiler.compile_lark(grammars.load(source))
        compile_s = time.perf_counter() - t1
        if args.quick:
            prompts = prompts[:1]
        refs = []
        for messages in prompts:
            ref = generate(model, tokenizer, messages, grammar, sampling=SamplingParams(temperature=0),
                           max_new_tokens=args.max_new_tokens, jump_forward=False)
            for mode in modes:
                run_mode(mode, model, tokenizer, messages, grammar, 6, ref, draft_model)
            refs.append(ref)
        print(f"[{name}] grammar compiled in {compile_s:.2f} s; outputs (reference, constrained):")
        for ref in refs:
            text = ref.text if len(ref.text) <= 110 else ref.text[:107] + "..."
            print(f"    {len(ref.token_ids):>3} tokens, stop {ref.stats.stop_reason:<7} {text!r}")
        work.append((name, grammar, prompts, refs, target_text, target, target_modes))

    # timed runs: results[workload][mode] = list over repeats of lists over prompts
    results = {w[0]: {m: [] for m in modes} for w in work}
    mismatches = []
    for rep in range(args.repeats):
        for wi, (name, grammar, prompts, refs, *_rest) in enumerate(work):
            per_mode = {m: [] for m in modes}
            for pi, (messages, ref) in enumerate(zip(prompts, refs)):
                shift = (rep + wi + pi) % len(modes)
                for mode in modes[shift:] + modes[:shift]:
                    r = run_mode(mode, model, tokenizer, messages, grammar, args.max_new_tokens, ref, draft_model)
                    per_mode[mode].append(r)
                    if r["ids"] is not None and r["ids"] != ref.token_ids:
                        at = first_difference(r["ids"], ref.token_ids)
                        mismatches.append((name, pi, mode, rep, at, r["text"], ref.text))
            for mode in modes:
                results[name][mode].append(per_mode[mode])

    summaries = []
    for name, grammar, prompts, refs, target_text, target, target_modes in work:
        print()
        print(f"== {name}: {len(prompts)} prompt(s), {sum(len(r.token_ids) for r in refs)} output tokens per mode per repeat")
        print(f"{'mode':<14} {'tok/s':>7} {'passes/tok':>10} {'fwd ms/pass':>11} {'alpha':>6} {'acc/drafted':>12} {'mean acc len':>12} "
              f"{'forced':>7} {'vs constrained':>15} {'vs plain':>9}  ids")
        rate = {m: [sum(r["tokens"] for r in runs) / sum(r["seconds"] for r in runs) for runs in results[name][m]] for m in modes}
        ratios = {}
        for mode in modes:
            runs = [r for rep in results[name][mode] for r in rep]
            tokens = sum(r["tokens"] for r in runs)
            passes = sum(r["passes"] for r in runs)
            vs_c = statistics.median(a / b for a, b in zip(rate[mode], rate["constrained"]))
            vs_p = statistics.median(a / b for a, b in zip(rate[mode], rate["plain"]))
            ratios[mode] = vs_c
            if mode == "plain":
                spec = f"{'-':>6} {'-':>12} {'-':>12} {'-':>7}"
                same = "(replay)"
            else:
                drafted = sum(r["drafted"] for r in runs)
                accepted = sum(r["accepted"] for r in runs)
                alpha = statistics.mean(r["alpha"] for r in runs)
                forced = sum(r["forced"] for r in runs) / len(results[name][mode])
                acc = f"{accepted / drafted:.2f}" if drafted else "-"
                spec = f"{alpha:>6.2f} {acc:>12} {tokens / passes:>12.2f} {forced:>7.1f}"
                bad = sum(1 for m in mismatches if m[0] == name and m[2] == mode)
                same = "same" if not bad else f"DIFFER in {bad} run(s)"
            ms_pass = 1e3 * sum(r["forward_seconds"] for r in runs) / max(1, passes)
            print(f"{mode:<14} {statistics.median(rate[mode]):>7.1f} {passes / max(1, tokens):>10.3f} {ms_pass:>11.1f} {spec} "
                  f"{vs_c:>14.2f}x {vs_p:>8.2f}x  {same}")
        spec_modes = [m for m in SPECULATIVE if m in modes]
        best = max(spec_modes, key=lambda m: ratios[m])
        worst = min(spec_modes, key=lambda m: ratios[m])
        if target is None:
            verdict = ""
        else:
            checked = spec_modes if target_modes == "all" else list(target_modes or [best])
            got = min(ratios[m] for m in checked)
            verdict = f"; target {target_text}: {'met' if got >= target else 'NOT met'} ({got:.2f}x)"
        summaries.append(f"{name:<16} best speculative {best} {ratios[best]:.2f}x vs constrained "
                         f"(worst {worst} {ratios[worst]:.2f}x){verdict}")

    print()
    print("summary (speed ratio vs constrained decoding, median over repeats):")
    for line in summaries:
        print("  " + line)
    if mismatches:
        print()
        print(f"!!! TOKEN IDS DIFFER FROM THE CONSTRAINED REFERENCE IN {len(mismatches)} RUN(S) (greedy: they must not) !!!")
        for name, pi, mode, rep, at, text, ref_text in mismatches:
            print(f"  {name} prompt {pi} {mode} repeat {rep}: first difference at token {at}\n"
                  f"      got {text!r}\n      ref {ref_text!r}")
    else:
        print("token ids: identical across all constrained modes in every run")


if __name__ == "__main__":
    main()
