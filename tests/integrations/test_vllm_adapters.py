"""The vLLM adapters under the call sequences vLLM makes, without vLLM (its own BatchUpdate,
SamplingParams and enums are used when it is installed, as in .venv-vllm).

Logits processor: rows added with live output lists, removed, moved (condense's one-way moves and
swaps), a resumed request, apply on a logits batch. Backend: the scheduler's accept after each
step and the speculative path's validate, advance-per-position fill and rollback, termination
and reset. Every mask is checked against a Matcher driven directly, compiled by a Compiler the
test builds itself, with the request's stop ids as its EOS ids.
"""

from __future__ import annotations

import dataclasses
import enum
import json

import pytest
import torch

from constrain import Compiler, GrammarError, Matcher, RegexSyntaxError, Vocabulary
from constrain.errors import EngineOptionsError
from constrain.integrations.vllm_backend import ConstrainBackend, spec_from_structured_output
from constrain.integrations.vllm_logits_processor import ConstrainLogitsProcessor
from constrain.integrations.vllm_options import GrammarSpec, choice_regex, parse_options, spec_from_extra_args

try:  # vLLM's own request and batch-update types where it is installed
    from vllm import SamplingParams
    from vllm.v1.sample.logits_processor import BatchUpdate, MoveDirectionality
    from vllm.v1.structured_output.backend_types import StructuredOutputOptions
except ImportError:

    @dataclasses.dataclass
    class SamplingParams:  # type: ignore[no-redef]
        """The two fields the adapters read from vLLM's SamplingParams."""

        extra_args: dict | None = None
        stop_token_ids: list[int] | None = None

        @property
        def all_stop_token_ids(self) -> set[int]:
            return set(self.stop_token_ids or ())

    @dataclasses.dataclass(frozen=True)
    class BatchUpdate:  # type: ignore[no-redef]
        batch_size: int
        removed: list
        added: list
        moved: list

    MoveDirectionality = enum.Enum("MoveDirectionality", "UNIDIRECTIONAL SWAP")  # type: ignore[misc]
    StructuredOutputOptions = enum.Enum(  # type: ignore[misc]
        "StructuredOutputOptions", "JSON JSON_OBJECT REGEX GRAMMAR CHOICE STRUCTURAL_TAG"
    )

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 12}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name", "age"],
    "additionalProperties": False,
}
LARK = 'start: "SELECT " NAME (", " NAME)* " FROM " NAME\nNAME: /[a-z]+/\n'
IM_END = 2  # SmolLM2's <|im_end|>: what vLLM stops on; <|endoftext|> (0) is an EOS it does not


@pytest.fixture(scope="module")
def vocab() -> Vocabulary:
    """SmolLM2's vocabulary (the model the vLLM integration test serves)."""
    from constrain.errors import ModelLoadError
    from constrain.models import default_model_path

    try:
        return Vocabulary.from_pretrained(default_model_path())
    except ModelLoadError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def reference(vocab):
    """A Compiler of the test's own whose only EOS id is the one vLLM stops on."""
    return Compiler(Vocabulary.from_pretrained(vocab, eos_token_ids=[IM_END]))


def params(constrain=None, raw=None) -> SamplingParams:
    extra = {"constrain": raw if raw is not None else constrain} if (constrain or raw) else None
    return SamplingParams(extra_args=extra, stop_token_ids=[IM_END])


def allowed_in(scores: torch.Tensor) -> list[int]:
    return torch.isfinite(scores).nonzero().flatten().tolist()


def steer(matcher: Matcher, text: str) -> list[int]:
    """Token ids that spell `text` under `matcher` (longest allowed token first); accepted."""
    data, ids = text.encode(), []
    table = matcher.compiled.vocab.token_bytes
    while data:
        best = max((t for t in matcher.allowed_token_ids().tolist() if data.startswith(table[t]) and table[t]),
                   key=lambda t: len(table[t]))
        assert matcher.accept_token(best)
        ids.append(best)
        data = data[len(table[best]):]
    return ids


# -- request options ------------------------------------------------------------------------------
def test_options_parse_from_a_dict_or_its_json_text():
    assert parse_options({"regex": "[0-9]+"}) == GrammarSpec("regex", "[0-9]+")
    assert parse_options('{"regex": "[0-9]+"}') == GrammarSpec("regex", "[0-9]+")
    spec = parse_options({"json_schema": PERSON, "whitespace": "flexible"})
    assert json.loads(spec.source) == PERSON and spec.option("whitespace", "compact") == "flexible"
    assert parse_options({"grammar": "sql"}).kind == "grammar"
    assert parse_options({"gbnf": 'root ::= "a"'}).kind == "gbnf"
    assert spec_from_extra_args({"other": 1}) is None and spec_from_extra_args(None) is None


@pytest.mark.parametrize(
    "value, message",
    [
        ({"regex": "a", "lark": "b"}, "exactly one grammar.*regex and lark"),
        ({}, "exactly one grammar.*none"),
        ({"regex": "a", "start": "x"}, r"unknown option\(s\) \['start'\] for 'regex'"),
        ({"json_schema": {}, "whitespace": "wide"}, "'whitespace'.*'compact' or 'flexible'"),
        ({"grammar": "cobol"}, "no shipped grammar 'cobol'"),
        ({"choice": []}, "non-empty list of strings"),
        ("{not json", "text but not JSON"),
        (["regex"], "must be a dict"),
    ],
)
def test_malformed_options_are_named(value, message):
    with pytest.raises(EngineOptionsError, match=message):
        parse_options(value)


def test_choice_regex_matches_exactly_the_choices(reference):
    choices = ["yes", "no", "a.b", "(x|y)", "1+1", "don't", "naïve", ""]
    grammar = reference.compile_regex(choice_regex(choices))
    assert all(grammar.accepts(c) for c in choices)
    assert not any(grammar.accepts(c) for c in ["ye", "aXb", "x", "11", "yesno"])


# -- the logits processor -------------------------------------------------------------------------
def check_rows(proc, logits, expected: dict[int, Matcher | None]):
    """apply() on `logits`; each row's finite set equals its reference matcher's mask (all
    columns for an unconstrained row)."""
    out = proc.apply(logits)
    assert out is logits
    for row, matcher in expected.items():
        want = list(range(logits.shape[1])) if matcher is None else matcher.allowed_token_ids().tolist()
        assert allowed_in(out[row]) == want, f"row {row}"


def test_processor_follows_added_removed_and_moved_rows(vocab, reference):
    width = vocab.logits_width
    proc = ConstrainLogitsProcessor.for_tokenizer(vocab, width, max_num_seqs=8)
    assert proc.is_argmax_invariant() is False
    specs = [{"regex": r"[a-z]{2,6}@example\.com"}, None, {"json_schema": PERSON}, {"lark": LARK}]
    refs = [Matcher(reference.compile_regex(specs[0]["regex"])), None,
            Matcher(reference.compile_json_schema(PERSON)), Matcher(reference.compile_lark(LARK))]
    outputs: list[list[int]] = [[] for _ in specs]
    proc.update_state(BatchUpdate(4, [], [(i, params(s), [1, 2, 3], outputs[i]) for i, s in enumerate(specs)], []))
    check_rows(proc, torch.zeros(4, width), dict(enumerate(refs)))

    # vLLM appends each step's tokens to the live lists; update_state(None) when the batch holds
    texts = ["ada@", None, '{"name":"Ada",', "SELECT id"]
    for i, text in enumerate(texts):
        if text is not None:
            outputs[i].extend(steer(refs[i].fork(), text))
            refs[i].accept_tokens(outputs[i])
    outputs[1].extend([42, 43])
    proc.update_state(None)
    check_rows(proc, torch.randn(4, width), dict(enumerate(refs)))

    # request 1 finishes (removed); condense moves row 3 into the hole; a resumed request whose
    # output list already holds tokens is added at index 3, and is replayed
    resumed: list[int] = []
    ref_resumed = Matcher(reference.compile_regex("[0-9]{3}-[0-9]{4}"))
    resumed.extend(steer(ref_resumed.fork(), "555-"))
    ref_resumed.accept_tokens(resumed)
    proc.update_state(BatchUpdate(4, [1], [], [(3, 1, MoveDirectionality.UNIDIRECTIONAL)]))
    assert proc.constrained_rows == [0, 1, 2]
    proc.update_state(BatchUpdate(4, [], [(3, params({"regex": "[0-9]{3}-[0-9]{4}"}), None, resumed)], []))
    rows = {0: refs[0], 1: refs[3], 2: refs[2], 3: ref_resumed}
    check_rows(proc, torch.zeros(4, width), rows)

    # a swap, then more tokens on the swapped rows' lists
    proc.update_state(BatchUpdate(4, [], [], [(0, 2, MoveDirectionality.SWAP)]))
    outputs[0].extend(steer(refs[0].fork(), "exa"))
    refs[0].accept_tokens(outputs[0][-len(steer(refs[0].fork(), "exa")):])
    check_rows(proc, torch.zeros(4, width), {0: refs[2], 1: refs[3], 2: refs[0], 3: ref_resumed})

    # an unconstrained request replacing a constrained row leaves it unmasked; the last row ends
    proc.update_state(BatchUpdate(4, [], [(3, params(), None, [])], []))
    check_rows(proc, torch.zeros(4, width), {3: None, 1: refs[3]})
    proc.update_state(BatchUpdate(3, [2], [], []))
    assert proc.constrained_rows == [0, 1]


def test_processor_ends_with_the_stop_ids_vllm_stops_on(vocab, reference):
    proc = ConstrainLogitsProcessor.for_tokenizer(vocab, vocab.logits_width, max_num_seqs=2)
    out: list[int] = []
    proc.update_state(BatchUpdate(1, [], [(0, params({"choice": ["yes", "no"]}), [1], out)], []))
    ref = Matcher(reference.compile_regex("yes|no"))
    out.extend(steer(ref, "yes"))
    assert vocab.eos_token_ids > {IM_END}  # the vocabulary knows another EOS (<|endoftext|>) ...
    logits = proc.apply(torch.zeros(1, vocab.logits_width))
    assert allowed_in(logits[0]) == [IM_END]  # ... but only the one vLLM stops on may end the text
    out.append(IM_END)
    assert allowed_in(proc.apply(torch.zeros(1, vocab.logits_width))[0]) == [IM_END]


def test_processor_ends_rows_that_left_their_grammar(vocab):
    proc = ConstrainLogitsProcessor.for_tokenizer(vocab, vocab.logits_width, max_num_seqs=4)
    bad, placeholder = [vocab.token_id("x")], [-1]
    proc.update_state(BatchUpdate(3, [], [(0, params({"regex": "[0-9]+"}), [1], bad),
                                           (1, params({"regex": "[0-9]+"}), [1], placeholder),
                                           (2, params({"regex": "[0-9"}), [1], [])], []))
    logits = proc.apply(torch.zeros(3, vocab.logits_width))
    # a token the grammar rejects, async scheduling's unresolved placeholder, a grammar that did
    # not compile (validate_params was bypassed): each request may only end, the batch goes on
    assert allowed_in(logits[0]) == allowed_in(logits[1]) == allowed_in(logits[2]) == [IM_END]


def test_validate_params_refuses_bad_requests():
    ConstrainLogitsProcessor.validate_params(params({"regex": "[0-9]+"}))
    ConstrainLogitsProcessor.validate_params(params())
    with pytest.raises(EngineOptionsError, match="exactly one grammar"):
        ConstrainLogitsProcessor.validate_params(params({"regex": "a", "json_schema": {}}))
    with pytest.raises(EngineOptionsError, match="regex does not compile: unterminated character set") as caught:
        ConstrainLogitsProcessor.validate_params(params({"regex": "[0-9"}))
    assert isinstance(caught.value.__cause__, RegexSyntaxError)


# -- the structured-output backend ----------------------------------------------------------------
def spec_decode_step(grammar, bitmask, drafts: list[int]) -> int:
    """What vLLM's StructuredOutputManager.grammar_bitmask does for one request with drafts: fill
    a row, advance over the draft, per position; fill the bonus row; roll the advances back."""
    advanced = 0
    for i, token in enumerate(drafts):
        grammar.fill_bitmask(bitmask, i)
        if not grammar.is_terminated() and grammar.accept_tokens("req", [token]):
            advanced += 1
    grammar.fill_bitmask(bitmask, len(drafts))
    if advanced:
        grammar.rollback(advanced)
    return advanced


def bitmask_rows(bitmask, rows: int) -> list[list[int]]:
    from constrain.kernels.bitmask import unpack_bitmask

    bits = unpack_bitmask(bitmask[:rows], bitmask.shape[1] * 32)
    return [row.nonzero().flatten().tolist() for row in bits]


def test_backend_follows_the_scheduler_and_speculative_decoding(vocab, reference):
    backend = ConstrainBackend(None, tokenizer=vocab, vocab_size=vocab.logits_width)
    grammar = backend.compile_grammar(StructuredOutputOptions.JSON, json.dumps(PERSON), stop_token_ids={IM_END})
    ref = Matcher(reference.compile_json_schema(PERSON))
    bitmask = backend.allocate_token_bitmask(4 * (1 + 3))
    assert tuple(bitmask.shape) == (16, (vocab.logits_width + 31) // 32)

    # step 1: no drafts; the sampled tokens are accepted after the step
    spec_decode_step(grammar, bitmask, [])
    assert bitmask_rows(bitmask, 1)[0] == ref.allowed_token_ids().tolist()
    first = steer(ref.fork(), '{"name":"')
    assert grammar.accept_tokens("req", first) and ref.accept_tokens(first) == len(first)

    # step 2: three drafts, the last one illegal: validate trims it (before scheduling), then one
    # row per position and the bonus row; the state is back where it was afterwards
    name = steer(ref.fork(), "Ada Lovelace")
    assert len(name) >= 3
    good = name[:2]
    assert grammar.validate_tokens(good + [vocab.token_id("\n")]) == good  # no raw newline in a string
    assert spec_decode_step(grammar, bitmask, good) == len(good)
    expected, walker = [], ref.fork()
    for token in good:
        expected.append(walker.allowed_token_ids().tolist())
        walker.accept_token(token)
    expected.append(walker.allowed_token_ids().tolist())
    assert bitmask_rows(bitmask, len(good) + 1) == expected
    assert grammar.matcher.num_accepted_tokens == ref.num_accepted_tokens
    # the target accepted both drafts and sampled a bonus token: accepted after the step
    assert grammar.accept_tokens("req", name[:3]) and ref.accept_tokens(name[:3]) == 3
    left = "Ada Lovelace"[len(vocab.decode(name[:3])):]

    # to the end: validate stops at EOS, accept ignores what follows it
    rest = steer(ref.fork(), left + '","age":36}')
    assert grammar.validate_tokens(rest + [IM_END, IM_END, 5]) == rest + [IM_END]
    assert grammar.accept_tokens("req", rest + [IM_END, 5]) and grammar.is_terminated()
    assert grammar.validate_tokens([IM_END]) == []
    # a rollback reopens it (the rejection sampler took back the EOS draft); reset starts over
    grammar.rollback(1)
    assert not grammar.is_terminated()
    ref.accept_tokens(rest)
    grammar.fill_bitmask(bitmask, 5)
    assert bitmask_rows(bitmask, 6)[5] == ref.allowed_token_ids().tolist() == [IM_END]
    assert not grammar.accept_tokens("req", [vocab.token_id("x")])
    grammar.reset()
    grammar.fill_bitmask(bitmask, 0)
    assert bitmask_rows(bitmask, 1)[0] == Matcher(reference.compile_json_schema(PERSON)).allowed_token_ids().tolist()


@pytest.mark.parametrize(
    "kind, spec, text",
    [
        ("JSON_OBJECT", "", '{"a":[1,2]}'),
        ("REGEX", r"[0-9]{2}", "42"),
        ("CHOICE", json.dumps(["red", "green"]), "green"),
        ("GRAMMAR", LARK, "SELECT a, b FROM t"),
        ("GRAMMAR", 'root ::= "v" [0-9]+ ("." [0-9]+)?', "v1.25"),
    ],
)
def test_backend_kinds(vocab, kind, spec, text):
    backend = ConstrainBackend(None, tokenizer=vocab, vocab_size=vocab.logits_width)
    grammar = backend.compile_grammar(StructuredOutputOptions[kind], spec, stop_token_ids={IM_END})
    assert grammar.matcher.compiled.accepts(text)
    ids = steer(grammar.matcher.fork(), text)
    assert grammar.validate_tokens(ids + [IM_END]) == ids + [IM_END]


def test_backend_refuses_what_it_cannot_serve(vocab):
    with pytest.raises(EngineOptionsError, match="structural_tag"):
        spec_from_structured_output(StructuredOutputOptions.STRUCTURAL_TAG, "{}")
    backend = ConstrainBackend(None, tokenizer=vocab, vocab_size=vocab.logits_width)
    with pytest.raises(GrammarError, match="undefined rule 'foo'"):
        backend.compile_grammar(StructuredOutputOptions.GRAMMAR, "root ::= foo", stop_token_ids={IM_END})
