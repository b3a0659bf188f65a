"""The SGLang backend at SGLang's interface: the call sequences its scheduler makes (batch masks,
speculative tree walks with rollback, copies for parallel sampling, jump-forward and
retokenization) give exactly the masks of a Matcher driven directly with the same tokens; bad
requests take SGLang's error paths. SGLang itself is not installed: the calls are replayed as
its scheduler makes them (sglang/srt: sampling_batch_info.update_regex_vocab_mask,
speculative/spec_utils.traverse_tree, managers/schedule_batch.check_for_jump_forward)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import lark
import numpy as np
import pytest
import torch

from constrain import Compiler, Matcher
from constrain.errors import GrammarError, RollbackError, TokenRejectedError
from constrain.integrations import sglang as sgl
from constrain.integrations.gbnf import gbnf_to_lark, looks_like_gbnf
from constrain.integrations.sglang import INVALID_GRAMMAR_OBJ, ConstrainGrammar, ConstrainGrammarBackend

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 8}, "age": {"type": "integer", "minimum": 0, "maximum": 120}},
    "required": ["name", "age"],
    "additionalProperties": False,
}
REGEX = r'\{"name": "[a-z]{1,8}é-done", "age": [0-9]{1,3}\}'
LARK = 'start: "SELECT " NAME " FROM " NAME\nNAME: /[a-z]{1,6}/\n'


@pytest.fixture(scope="module")
def backend(llama3) -> ConstrainGrammarBackend:
    return ConstrainGrammarBackend(compiler=Compiler(llama3), vocab_size=llama3.logits_width)


def compile_key(backend: ConstrainGrammarBackend, key: tuple[str, str]) -> ConstrainGrammar:
    """SGLang's path for a request: on a miss, the future from get_cached_or_future_value, whose
    result the request gets and whose copy is cached; on a hit, a copy of the cached object."""
    value, hit = backend.get_cached_or_future_value(key)
    if hit:  # compiled by an earlier test: the request gets a copy, as in SGLang
        return value
    grammar = value.result()
    assert isinstance(grammar, ConstrainGrammar)
    backend.set_cache(key, grammar.copy())
    return grammar


def row_of(matcher: Matcher, words: int) -> np.ndarray:
    row = np.zeros(words, dtype=np.int32)
    matcher.fill_next_token_bitmask(row)
    return row


def test_scheduler_steps_mask_a_mixed_batch_like_matchers(backend, llama3):
    """allocate → fill every live row → move → apply → sample → accept, for a batch of a JSON
    schema, a regex, a Lark grammar and a request without a grammar, to the end."""
    keys = [("json", json.dumps(PERSON)), ("regex", REGEX), ("ebnf", LARK)]
    grammars: list = [compile_key(backend, k) for k in keys] + [None]
    refs = [Matcher(g.compiled) for g in grammars[:3]]
    width = llama3.logits_width
    gen = torch.Generator().manual_seed(0)
    eos = min(llama3.eos_token_ids)
    for _step in range(60):
        live = [g for g in grammars if g]
        if all(g.finished for g in live):
            break
        first = next(g for g in grammars if g)
        mask = first.allocate_vocab_mask(vocab_size=width, batch_size=len(grammars), device="cpu")
        for i, g in enumerate(grammars):
            if g and not g.finished and not g.is_terminated():
                g.fill_vocab_mask(mask, i)
        mask = first.move_vocab_mask(mask, "cpu")
        logits = torch.randn(len(grammars), width, generator=gen)
        logits[:, eos] += 2.0  # end once the grammar allows it (random logits would wander)
        first.apply_vocab_mask(logits, mask)
        words = mask.shape[1]
        for i, (g, ref) in enumerate(zip(grammars, refs)):
            if g.finished:
                assert (mask[i] == -1).all()  # an ended request's row is left as allocated
                continue
            expected = row_of(ref, words)
            assert np.array_equal(mask[i].numpy(), expected)
            allowed = torch.from_numpy(np.unpackbits(expected.view(np.uint8), bitorder="little")[:width].astype(bool))
            assert torch.isinf(logits[i][~allowed]).all() and torch.isfinite(logits[i][allowed]).all()
        assert torch.isfinite(logits[3]).all()  # no grammar: unmasked
        tokens = logits.argmax(dim=1).tolist()
        for g, ref, tok in zip(grammars, refs, tokens):
            if g.finished:
                continue
            g.accept_token(tok)
            assert ref.accept_token(tok)
            if tok in llama3.eos_token_ids:
                assert g.is_terminated()
                g.finished = True  # the scheduler marks the finished request
    assert all(g.finished for g in grammars[:3]), "a bounded grammar did not end in 60 steps"
    for g, ref in zip(grammars[:3], refs):
        text = llama3.decode(g.accepted_tokens[:-1]).decode()
        assert g.compiled.accepts(text), text
        assert ref.is_terminated()


def traverse_tree(grammar, draft, next_token, next_sibling, bitmask) -> None:
    """SGLang's draft-tree walk (spec_utils.traverse_tree), as it calls the grammar: a node is
    taken if its parent's row allows it, then accepted, its row filled, children visited, and
    it is rolled back."""

    def dfs(curr: int, parent: int) -> None:
        if curr == 0:
            ok = True
        else:
            tok = draft[curr]
            ok = bool(bitmask[parent][tok // 32] >> (tok % 32) & 1)
        if ok:
            if curr != 0:
                grammar.accept_token(draft[curr])
            if not grammar.is_terminated():
                grammar.fill_vocab_mask(bitmask, curr)
                if next_token[curr] != -1:
                    dfs(next_token[curr], curr)
            if curr != 0:
                grammar.rollback(1)
        if next_sibling[curr] != -1:
            dfs(next_sibling[curr], parent)

    dfs(0, -1)


def test_speculative_tree_walk_and_rollback_match_matchers(backend, llama3):
    grammar = compile_key(backend, ("regex", REGEX))
    tid = llama3.token_id
    prefix = [tid('{"'), tid("name"), tid('":'), tid(' "')]
    for t in prefix:
        grammar.accept_token(t)
    # node 0 is the last accepted token; children of 0: "ada" (→ "bc" → "é"-first-byte), "Ada" (refused), "x"
    draft = [prefix[-1], tid("ada"), tid("bc"), llama3.token_id(b"\xc3"), tid("Ada"), tid("x"), tid("1")]
    next_token = [1, 2, 3, -1, -1, 6, -1]
    next_sibling = [-1, 4, -1, -1, 5, -1, -1]
    paths = {0: [], 1: [1], 2: [1, 2], 3: [1, 2, 3], 5: [5]}  # node → draft path (4, 6: refused)
    words = (llama3.logits_width + 31) // 32
    bitmask = grammar.allocate_vocab_mask(llama3.logits_width, len(draft), "cpu")
    bitmask[4:] = 12345  # rows of refused nodes must stay as they were
    before = bitmask.clone()
    traverse_tree(grammar, draft, next_token, next_sibling, bitmask)
    assert grammar.accepted_tokens == prefix  # every draft token was rolled back
    for node, path in paths.items():
        ref = Matcher(grammar.compiled)
        assert ref.accept_tokens(prefix + [draft[i] for i in path]) == len(prefix) + len(path)
        assert np.array_equal(bitmask[node].numpy(), row_of(ref, words)), f"node {node}"
    assert torch.equal(bitmask[4], before[4]) and torch.equal(bitmask[6], before[6])
    # verification accepted "ada", "bc": then a rollback of both, as after a rejected draft
    grammar.accept_token(draft[1])
    grammar.accept_token(draft[2])
    grammar.rollback(2)
    ref = Matcher(grammar.compiled)
    ref.accept_tokens(prefix)
    row = torch.zeros(1, words, dtype=torch.int32)
    grammar.fill_vocab_mask(row, 0)
    assert np.array_equal(row[0].numpy(), row_of(ref, words))
    grammar.rollback(0)
    assert grammar.accepted_tokens == prefix
    with pytest.raises(RollbackError):
        grammar.rollback(len(prefix) + 1)


def test_cache_hits_copy_fresh_grammars_for_parallel_sampling(backend, llama3):
    key = ("ebnf", LARK)
    backend.cache.pop(key, None)
    original = compile_key(backend, key)
    original.accept_token(llama3.token_id("SELECT"))
    copies = []
    for _ in range(3):  # n=3: three requests, each a copy of the cached object
        value, hit = backend.get_cached_or_future_value(key)
        assert hit and isinstance(value, ConstrainGrammar) and value is not backend.cache[key]
        copies.append(value)
    words = (llama3.logits_width + 31) // 32
    pieces = [["SELECT", " a", " FROM", " b"], ["SELECT", " abc", " FROM", " de"], ["SELECT", " x", " FROM", " y", "z"]]
    streams = [[llama3.token_id(p) for p in ps] for ps in pieces]
    refs = [Matcher(original.compiled) for _ in streams]
    for step in range(max(map(len, streams))):
        for g, ref, stream in zip(copies, refs, streams):
            if step < len(stream):
                g.accept_token(stream[step])
                assert ref.accept_token(stream[step])
        mask = copies[0].allocate_vocab_mask(llama3.logits_width, 3, "cpu")
        for i, g in enumerate(copies):
            g.fill_vocab_mask(mask, i)
        for i, ref in enumerate(refs):
            assert np.array_equal(mask[i].numpy(), row_of(ref, words))
    fresh = original.copy()  # copy() starts over (SGLang's per-request copy), fork() does not
    assert fresh.accepted_tokens == [] and fresh.matcher.num_accepted_tokens == 0
    mask = fresh.allocate_vocab_mask(llama3.logits_width, 1, "cpu")
    fresh.fill_vocab_mask(mask, 0)
    assert np.array_equal(mask[0].numpy(), row_of(Matcher(original.compiled), words))
    fork = copies[1].fork()
    assert fork.accepted_tokens == copies[1].accepted_tokens and fork.matcher is not copies[1].matcher
    assert backend.cache[key].accepted_tokens == []  # the cached object never advanced
    assert original.accepted_tokens == [llama3.token_id("SELECT")]


def _decoded(data: bytes) -> str:
    try:
        return data.decode()
    except UnicodeDecodeError as exc:
        return data[: exc.start].decode()


def jump_forward(grammar, tokenizer, vocab, prompt_text: str, prompt_ids: list[int], output_ids: list[int]):
    """SGLang's check_for_jump_forward + Req.jump_forward_and_retokenize, as they call the
    grammar: None, or the new output ids."""
    helper = grammar.try_jump_forward(tokenizer)
    if helper is None:
        return None
    suffix_ids, _ = helper
    decoded_text = _decoded(vocab.decode(output_ids))
    output_ids.extend(suffix_ids)  # SGLang extends the request's own list: old ids include them
    new_text = _decoded(vocab.decode(output_ids))[len(decoded_text):]
    jump_str, next_state = grammar.jump_forward_str_state(helper)
    all_ids = tokenizer.encode(prompt_text + decoded_text + new_text + jump_str).ids
    assert all_ids[: len(prompt_ids)] == prompt_ids, "token fusion with the prompt"
    new_ids = all_ids[len(prompt_ids):]
    grammar.jump_and_retokenize(output_ids, new_ids, next_state)
    return new_ids


def test_jump_forward_and_retokenize_with_a_real_tokenizer(backend, llama3, tokenizer_files):
    tokenizers = pytest.importorskip("tokenizers")
    tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_files["llama3"] / "tokenizer.json"))
    grammar = compile_key(backend, ("regex", REGEX))
    prompt_text = "Answer in JSON"
    prompt_ids = tokenizer.encode(prompt_text).ids
    words = (llama3.logits_width + 31) // 32

    def check(ids: list[int]) -> None:
        ref = Matcher(grammar.compiled)
        assert ref.accept_tokens(ids) == len(ids)
        assert grammar.accepted_tokens == ids
        row = torch.zeros(1, words, dtype=torch.int32)
        grammar.fill_vocab_mask(row, 0)
        assert np.array_equal(row[0].numpy(), row_of(ref, words))

    assert grammar.try_jump_forward(tokenizer) == ([], '{"name": "')
    output = jump_forward(grammar, tokenizer, llama3, prompt_text, prompt_ids, [])
    assert llama3.decode(output) == b'{"name": "'
    check(output)
    # the model writes "ada", then the first byte of "é": the output ends inside a character
    for tok in (llama3.token_id("ada"), llama3.token_id(b"\xc3")):
        grammar.accept_token(tok)
        output.append(tok)
    suffix_ids, text = grammar.try_jump_forward(tokenizer)
    assert [llama3.token_bytes[t] for t in suffix_ids] == [b"\xa9"] and text == '-done", "age": '
    output = jump_forward(grammar, tokenizer, llama3, prompt_text, prompt_ids, output)
    assert llama3.decode(output) == '{"name": "adaé-done", "age": '.encode()
    check(output)
    assert grammar.try_jump_forward(tokenizer) is None  # a digit: a choice
    grammar.accept_token(llama3.token_id("42"))
    assert grammar.try_jump_forward(tokenizer) is None  # "}" or another digit
    # a retokenization that spells other bytes is refused and changes nothing
    before = list(grammar.accepted_tokens)
    bad = before[:-2] + [llama3.token_id("xyz")]
    with pytest.raises(TokenRejectedError, match="not allowed"):
        grammar.jump_and_retokenize(before, bad, -1)
    check(before)


def test_jump_forward_skips_what_is_not_forced_or_too_short(backend, llama3):
    grammar = compile_key(backend, ("regex", "ab[0-9]"))
    assert grammar.try_jump_forward(None) == ([], "ab")
    grammar.jump_forward_min_bytes = 3
    assert grammar.try_jump_forward(None) is None
    grammar.jump_forward_min_bytes = 1
    grammar.accept_token(llama3.token_id("ab"))
    assert grammar.try_jump_forward(None) is None
    grammar.accept_token(llama3.token_id("7"))
    grammar.accept_token(min(llama3.eos_token_ids))
    assert grammar.is_terminated() and grammar.try_jump_forward(None) is None


def test_bad_requests_take_sglangs_error_paths(backend, llama3):
    # an unknown key type raises, as SGLang's dispatch_fallback does (its manager never sends one)
    future, hit = backend.get_cached_or_future_value(("xml", "<a/>"))
    with pytest.raises(ValueError, match="Invalid key_type"):
        future.result()
    # compile failures return the INVALID sentinel (SGLang aborts the request) and say why
    bad = {
        ("json", "{not json"): "not valid JSON",
        ("json", json.dumps({"type": "string", "pattern": "(a)\\1"})): "pattern",
        ("regex", "a(b"): "",
        ("ebnf", 'root ::= item\n'): "undefined rule 'item'",
        ("ebnf", "start: undefined_rule\n"): "",
        ("structural_tag", json.dumps({"structures": [], "triggers": []})): "not supported",
    }
    for key, why in bad.items():
        value, _ = backend.get_cached_or_future_value(key)
        assert value.result() is INVALID_GRAMMAR_OBJ, key
        assert why in backend.errors[key], backend.errors[key]
        assert INVALID_GRAMMAR_OBJ.copy() is INVALID_GRAMMAR_OBJ  # the manager copies it into the cache
    # a token the mask forbids: SGLang's accept_token raises ValueError and the state is unchanged
    grammar = compile_key(backend, ("regex", "[0-9]+"))
    with pytest.raises(ValueError, match="not allowed"):
        grammar.accept_token(llama3.token_id("abc"))
    assert grammar.accepted_tokens == [] and grammar.matcher.num_accepted_tokens == 0
    grammar.accept_token(llama3.token_id("12"))
    eos = min(llama3.eos_token_ids)
    grammar.accept_token(eos)
    grammar.accept_token(llama3.token_id("abc"))  # after EOS: ignored, as XGrammar's backend does
    assert grammar.accepted_tokens == [llama3.token_id("12"), eos] and grammar.is_terminated()
    grammar.rollback(1)
    assert not grammar.is_terminated()


def test_backend_options_and_factory(llama3):
    # the tokenizer path: SGLang's stop ids and logits width replace the tokenizer's own
    be = ConstrainGrammarBackend(llama3, vocab_size=llama3.size + 64, eos_token_ids={128009})
    assert be.compiler.vocab.eos_token_ids == {128009} and be.vocab_size == llama3.size + 64
    args = SimpleNamespace(constrained_json_disable_any_whitespace=True)
    assert sgl.create_backend(args, llama3, llama3.logits_width).whitespace == "compact"
    assert ConstrainGrammarBackend(compiler=Compiler(llama3)).whitespace == "flexible"
    with pytest.raises(TypeError, match="tokenizer"):
        ConstrainGrammarBackend()
    if not sgl.HAVE_SGLANG:
        with pytest.raises(ImportError, match="register_grammar_backend"):
            sgl.register()


GBNF = r'''
# SGLang's EBNF (GBNF): a small tool call
root   ::= "call " name "(" args? ")"   # the start rule
name   ::= [a-z_] [a-z0-9_]{0,7}
args   ::= value ("," ws value)*
value  ::= "\"" ( [^"\\\x00-\x1f] | "\\" ["\\nt] )* "\"" | [0-9]+ | "null"
ws     ::= " "?
'''
LARK_EQUIVALENT = r'''
start: "call " name "(" args? ")"
name: /[a-z_]/ /[a-z0-9_]/ ~ 0..7
args: value ("," ws value)*
value: "\"" (/[^"\\\x00-\x1f]/ | "\\" /["\\nt]/)* "\"" | /[0-9]/+ | "null"
ws: " "?
'''


def test_ebnf_reads_gbnf_as_the_same_language_as_lark(backend, llama3, masked_walk):
    assert looks_like_gbnf(GBNF) and not looks_like_gbnf(LARK_EQUIVALENT)
    translated = gbnf_to_lark(GBNF)
    ours = lark.Lark(translated)
    theirs = lark.Lark(LARK_EQUIVALENT)
    texts = ['call f()', 'call get_x("a\\"b", 12,null)', 'call f(1,2)', 'call 9()', 'call f("\\q")',
             'call abcdefghi()', 'call f( 1)', 'call f("é")', "call f(null,  1)"]
    for text in texts:
        assert _parses(ours, text) == _parses(theirs, text), text
    from_gbnf = compile_key(backend, ("ebnf", GBNF))
    from_lark = compile_key(backend, ("ebnf", LARK_EQUIVALENT))
    rng = np.random.default_rng(3)
    words = (llama3.logits_width + 31) // 32
    for _ in range(3):
        walk = masked_walk(Matcher(from_gbnf.compiled), llama3, rng, 30, {b")", b'"'})
        a, b = Matcher(from_gbnf.compiled), Matcher(from_lark.compiled)
        for tok in walk:
            assert np.array_equal(row_of(a, words), row_of(b, words))
            assert a.accept_token(tok) and b.accept_token(tok)


def test_gbnf_errors_name_the_place():
    with pytest.raises(GrammarError, match="line 2, column 11"):
        gbnf_to_lark('root ::= "a"\nx ::= "b" (= "c")\n')
    with pytest.raises(GrammarError, match="TagDispatch"):
        gbnf_to_lark('root ::= TagDispatch("a")')
    with pytest.raises(GrammarError, match="no rule 'root'"):
        gbnf_to_lark('main ::= "a"')
    with pytest.raises(GrammarError, match="unterminated string"):
        gbnf_to_lark('root ::= "a')
    with pytest.raises(GrammarError, match="reversed"):
        gbnf_to_lark("root ::= [z-a]")
    assert gbnf_to_lark('root ::= "\\u00e9" [\\x41-\\x43]{2} x\nx ::= "" | "y"{0}') == (
        'start: "é" /[A-C]/ ~ 2 g_x\ng_x: () | ()\n'
    )


def _parses(parser: lark.Lark, text: str) -> bool:
    try:
        parser.parse(text)
        return True
    except lark.exceptions.LarkError:
        return False
