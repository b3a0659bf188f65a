"""The pushdown walk (index/pushdown_walk.py; its driver pushdown_summary.py, its tables
pushdown_tables.py): frame summaries over small items computed in one numba walk give exactly
the masks the frame-by-frame Python summaries give; full buffers, lazily built rules and the
limits take their documented paths; the flattened tables are the rules' DFAs."""

from __future__ import annotations

import random

import numpy as np
import pytest

from constrain import Compiler, LimitExceededError, Limits, Matcher, Vocabulary, grammars
from constrain.automata.nfa import nfa_states
from constrain.automata.rules import EAGER_NFA_STATES
from constrain.index.frame_summaries import FrameSummaries
from constrain.index.name_runs import name_closed_states

SQL_QUERY = "SELECT u.name, -(-x) AS n FROM users u WHERE u.age BETWEEN 18 AND 65 -- adults\nORDER BY n DESC;"
PY_EXPR = "f(1, *args, key=[1, 2], **kw).attr[0:n] if not -x else {'k': (a, b,)}"


def _mask(matcher, vocab) -> np.ndarray:
    bm = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    matcher.fill_next_token_bitmask(bm)
    return bm


def _python_only(grammar) -> None:
    """Give the grammar's automaton summaries that never walk with a stack (every item is
    'large'): the frame-by-frame Python summaries, the reference here."""
    a = grammar.automaton
    a.summaries = FrameSummaries(a, a.summaries.max_nesting, a.summaries.max_stacks, small_item=-1)


@pytest.mark.parametrize("name, text", [("sql", SQL_QUERY), ("python_expr", PY_EXPR)])
def test_pushdown_summaries_give_the_python_summaries_masks(name, text, llama3):
    """Along the text's real tokens and along its characters one by one (the dash runs of
    Llama 3's vocabulary, nested calls, comments after every terminal)."""
    fast, slow = _walked_beside_python(llama3, grammars.load(name), _tokens_and_bytes(llama3, text))
    assert fast.automaton.summaries.pushdown.tables.n_states  # (the fast one did walk with a stack)
    assert not slow.automaton.summaries.pushdown.tables.n_states


def _walked_beside_python(vocab, grammar: str, id_lists, complete: bool = False):
    """(fast, slow): the grammar compiled twice, the second with Python summaries only; along
    each list of token ids both give equal masks and accept each token (and end complete)."""
    fast, slow = Compiler(vocab).compile_lark(grammar), Compiler(vocab).compile_lark(grammar)
    _python_only(slow)
    for ids in id_lists:
        m_fast, m_slow = Matcher(fast), Matcher(slow)
        for k, tid in enumerate(ids):
            assert np.array_equal(_mask(m_fast, vocab), _mask(m_slow, vocab)), (ids, k)
            assert m_fast.accept_token(tid) and m_slow.accept_token(tid), (ids, k)
        assert m_fast.is_accepting() or not complete, ids
    return fast, slow


def _tokens_and_bytes(vocab, text: str) -> list[list[int]]:
    """The text as longest-match tokens, and as one token per byte."""
    data = text.encode()
    return [[vocab.token_bytes.index(t) for t in _greedy_tokens(vocab, data)], [vocab.token_bytes.index(bytes([c])) for c in data]]


def _greedy_tokens(vocab, data: bytes) -> list[bytes]:
    """Longest-match tokens of `data` (any split will do: these are the texts' own bytes)."""
    spelled = set(vocab.token_bytes)
    out, i = [], 0
    while i < len(data):
        j = min(len(data), i + 16)
        while data[i:j] not in spelled:
            j -= 1
        out.append(data[i:j])
        i = j
    return out


def test_full_buffers_are_retried_with_larger_ones(llama3):
    """Buffers far too small for the SQL grammar's stacks: the walks stop, the buffers grow,
    and the masks come out the same."""
    small = Compiler(llama3).compile_lark(grammars.load("sql"))
    small.automaton.summaries.pushdown.caps = (2, 2, 2, 2)
    plain = Compiler(llama3).compile_lark(grammars.load("sql"))
    m_small, m_plain = Matcher(small), Matcher(plain)
    for tid in [llama3.token_bytes.index(t) for t in _greedy_tokens(llama3, SQL_QUERY.encode())][:12]:
        assert np.array_equal(_mask(m_small, llama3), _mask(m_plain, llama3))
        assert m_small.accept_token(tid) and m_plain.accept_token(tid)
    assert all(c > 2 for c in small.automaton.summaries.pushdown.caps)


@pytest.mark.parametrize("text", [
    grammars.load("sql"), 'start: A B C?\nA: /[a-z]+(?![0-9~])/\nB: /[0-9]|[+]|[?](?![a-z])/\nC: /x(?=y)/ "y"',
    'start: (TEXT | "{{" /[a-z]+/ "}}" | "{%" /[a-z]+/ "%}")*\nTEXT: /([^{]|\\{(?![{%]))+/',
])
def test_tables_are_the_rules_dfas(llama3, text):
    """Every state, byte and call edge of every rule, flattened (rules built on first use
    are flattened on demand), and the bytes greedy rules' ends refuse (end lookaheads)."""
    g = Compiler(llama3).compile_lark(text)
    rules = g.automaton.rules
    tables = g.automaton.summaries.pushdown.tables
    for r in range(rules.n_rules):
        rep = rules.same[r]
        dfa, calls, _ = rules.rule(rep)
        base = tables.state(rep, 0)
        (rule_of, row_off, table, cls, accepting, greedy, refused, reads_any, call_ptr, call_rule, call_ret, start,
         free, chk_ptr, chk) = tables.arrays()
        assert start[rep] == base
        for q in range(dfa.n_states):
            g_q = base + q
            got = table[row_off[g_q] + cls[rule_of[g_q], np.arange(256)]]
            want = dfa.table[q, dfa.byte_classes]
            assert np.array_equal(got, np.where(want >= 0, want + base, -1))
            assert accepting[g_q] == dfa.accepting[q] and reads_any[g_q] == (want >= 0).any()
            assert greedy[g_q] == rules.greedy[rep]
            assert free[g_q] == name_closed_states(dfa)[q]
            want_refused = 0
            if rules.greedy[rep] and dfa.accepting[q]:  # (and what it reads, but before a byte it returns on condition)
                reads = sum(1 << b for b in range(256) if want[b] >= 0)
                want_refused = (rules.refused_at(rep, q) | reads) & ~sum(1 << b for b in rules.checks[rep].get(q, ()))
            assert sum(int(w) << (64 * k) for k, w in enumerate(refused[g_q])) == want_refused & ((1 << 256) - 1)
            edges = [(int(call_rule[c]), int(call_ret[c])) for c in range(call_ptr[g_q], call_ptr[g_q + 1])]
            assert edges == [(rules.same[k], base + t) for k, t in calls[q]]
            on_condition = [(int(chk[c]) & 255, int(chk[c]) >> 8) for c in range(chk_ptr[g_q], chk_ptr[g_q + 1])]
            want_checks = rules.checks[rep].get(q, {}) if rules.greedy[rep] else {}
            assert on_condition == sorted((b, rules.same[k]) for b, k in want_checks.items())


def test_limits_stop_a_walk_with_the_knob_named(llama3):
    """Nesting deeper than max_stack_depth inside one token's bytes (Llama 3 has tokens of
    many opening parentheses), and a deadline already past, raise LimitExceededError."""
    deep = Compiler(llama3, limits=Limits(max_stack_depth=6)).compile_lark(grammars.load("sql"))
    m = Matcher(deep)
    assert m.accept_token(llama3.token_bytes.index(b"SELECT"))
    with pytest.raises(LimitExceededError, match="max_stack_depth"):
        m.allowed_token_ids()
    hurried = Compiler(llama3, limits=Limits(max_mask_seconds=1e-9)).compile_lark(grammars.load("python_expr"))
    with pytest.raises(LimitExceededError, match="max_mask_seconds"):
        Matcher(hurried).allowed_token_ids()


def test_large_rules_whose_limits_were_checked_are_built_at_compile(llama3):
    """A rule over EAGER_NFA_STATES that no cheaper construction takes (1,500 case-insensitive
    words, each with an optional recursive tail: 12,009 NFA states) meets its limits at compile
    by a subset construction; the DFA it makes is kept, so no mask builds it again. (SQL's select
    clause was such a rule before its expansions were factored: 13,130 NFA states, now ~700.)"""
    rnd = random.Random(0)
    words = sorted({"".join(rnd.choice("abcdefgh") for _ in range(8)) for _ in range(1500)})
    text = 'start: "(" big ")"\nbig: ' + " | ".join(f'"{w}"i (big | "-" big)?' for w in words) + "\n"
    rules = Compiler(llama3).compile_lark(text).automaton.rules
    big = rules.names.index("big")
    assert nfa_states(rules.nodes[big]) > EAGER_NFA_STATES  # (near-start building leaves it)
    assert rules.built(big)


def _summary_words(fs, summary, n_words) -> np.ndarray:
    words = np.zeros(n_words, dtype=np.uint32)
    summary.or_into(words)
    return words


def _pop_nodes(fs, summary) -> set:
    return {int(n) for p in summary.pops for n in fs.items.get(p)[1]}


def _allowed_below(trie, node: int, words: np.ndarray) -> bool:
    ids = trie.tok_ids[trie.tok_ptr[node] : trie.tok_ptr[trie.end[node]]].astype(np.int64)
    return bool(((words[ids >> 5] >> (ids & 31).astype(np.uint32)) & 1).all())


@pytest.mark.parametrize("name", ["sql", "python_expr"])
def test_one_summary_by_walk_equals_the_python_summary(name, llama3):
    """Each rule's summary from the nodes after a first byte (tokens starting with '1', 'a',
    '-', '(' or a quote): the same tokens, and for greedy rules (Lark terminals: a return only
    before a byte the terminal cannot read) the same pop nodes, but where every token below
    a node is allowed (both walks leave some of those out)."""
    g = Compiler(llama3).compile_lark(grammars.load(name))
    a = g.automaton
    fast = FrameSummaries(a, 10_000, 10_000)
    slow = FrameSummaries(a, 10_000, 10_000, small_item=-1)
    trie = a.tries[0]
    rules = a.rules
    checked = 0
    for first in b"1a-('\"":
        node = trie.root[first]
        children = np.arange(node + 1, trie.end[node], dtype=np.int32)
        children = children[trie.depth[children] == 2]
        for rep in sorted(set(rules.same)):
            dfa = rules.rule(rep).dfa
            for q0 in range(dfa.n_states):
                q = dfa.table[q0, dfa.byte_classes[first]]
                if q < 0:
                    continue
                sf = fast.get(rep, int(q), fast.items.nodes(0, children), float("inf"))
                ss = slow.get(rep, int(q), slow.items.nodes(0, children), float("inf"))
                assert np.array_equal(_summary_words(fast, sf, trie.n_words), _summary_words(slow, ss, trie.n_words)), (
                    rules.names[rep], q, chr(first))
                if rules.greedy[rep]:  # (a pop left out lies where every token below is allowed: name_runs.py)
                    words = _summary_words(fast, sf, trie.n_words)
                    for node in _pop_nodes(fast, sf) ^ _pop_nodes(slow, ss):
                        assert _allowed_below(trie, node, words), (rules.names[rep], q, chr(first), node)
                checked += 1
    assert checked > 20 and fast.pushdown.tables.n_states


def test_a_union_cell_holds_its_two_parents_the_bottom_frame_included():
    """A union's state encodes its first parent, the bottom frame's return (-1) too: no union
    may read as a rule state (a state of -1 once did, for a union whose first parent was -1)."""
    from constrain.index.pushdown_cells import UNION, _cons, _union

    cap = 16
    cell_g, cell_p, cell_d = (np.zeros(cap, dtype=np.int32) for _ in range(3))
    hkeys, hvals = np.full(32, -1, dtype=np.int64), np.zeros(32, dtype=np.int32)
    mask = np.int64(31)
    c, n = _cons(7, -1, 1, cell_g, cell_p, cell_d, hkeys, hvals, mask, 0)
    for a, b in ((-1, c), (c, -1)):
        u, n = _union(a, b, cell_g, cell_p, cell_d, hkeys, hvals, mask, n)
        assert cell_g[u] < 0 and UNION - cell_g[u] == a and cell_p[u] == b and cell_d[u] == 1
        again, n2 = _union(a, b, cell_g, cell_p, cell_d, hkeys, hvals, mask, n)
        assert again == u and n2 == n  # (hash-consed)
    assert cell_g[c] == 7  # (a rule state: never below 0)


TEMPLATE = 'start: (TEXT | "{{" NAME "}}" | "{%" NAME (" " NAME)* "%}")*\nNAME: /[a-z]+/\nTEXT: /([^{]|\\{(?![{%]))+/'
HCL = 'start: "\\"" (CHARS | "${" /[a-z]+/ "}" | /\\$\\$\\{[^}]*\\}/)* "\\""\nCHARS: /(?:[^"\\\\$]|\\\\.|\\$(?!\\$?\\{))+/'


@pytest.mark.parametrize("text, doc, walked_checks", [
    (TEMPLATE, "Hi {{name}}, {x} {y{{a}}{%if b c%}{ {%z%}{{q}}{", True),
    (HCL, '"a$b${c}d$x${e}f"', True),
    (grammars.load("sql"), "SELECT CASE WHEN a THEN 1ELSE 2e5 END, x FROM t WHERE a = 1 OR 1E2 > b;", False),
])
def test_walks_pop_on_condition_as_the_python_summaries_do(llama3, text, doc, walked_checks):
    """Terminals that may end before a byte they read, on condition of the byte after it
    (template text before `{{` or `{%`, string text before `${`, a number before `E`): a walk
    puts what the frames below read there under the CHECK frame, and pops there on condition
    (checked items), giving the masks of the frame-by-frame summaries, along the text's tokens
    and byte by byte; and the walks do meet such returns."""
    fast, _ = _walked_beside_python(llama3, text, _tokens_and_bytes(llama3, doc), complete=True)
    fs = fast.automaton.summaries
    walked = [s for k, s in fs._memo.items() if fs._small_memo.get(k)]
    assert any(fs.items.get(p)[2] for s in walked for p in s.pops) or not walked_checks  # (checked pops from walks)


def test_what_is_read_after_a_return_on_condition_stays_under_its_check():
    """Inside one walk (a frame at the node after `ab`, in a token that crosses T and W):
    T ends before `P` only where `h` does not follow (`iPh` is T's longer match), and W, read
    after such a return, still ends only before a byte it cannot read. A vocabulary made for
    it (every byte, and tokens that cross those edges): the walk gives the masks of the
    frame-by-frame summaries. Without the CHECK frame on what is read after the return,
    `ab=iPhone` got through; with W's end unguarded under it, `ab=iPP1` (W is `PP`: V cannot read `1`)."""
    grammar = 'start: NAME "=" T (W V)?\nNAME: /[a-z]+/\nT: /i(Ph)?/\nW: /P+/\nV: /P[0-9]|[a-z]+/'
    crossing = [b"ab=iPhone", b"ab=iPP1", b"ab=iPa", b"ab=iPP", b"=iPP1", b"ab=iPh", b"b=iPP1", b"ab=iP1"]
    vocab = Vocabulary([bytes([b]) for b in range(256)] + crossing + [b"<eos>"], {256 + len(crossing)}, {256 + len(crossing)})
    fast, _ = _walked_beside_python(vocab, grammar, [list(b"ab=i"), list(b"ab=iPh"), list(b"x=iPPa")], complete=True)
    first = Matcher(fast).allowed_token_ids().tolist()
    assert vocab.token_bytes.index(b"ab=iPa") in first and vocab.token_bytes.index(b"ab=iPhone") not in first
    assert vocab.token_bytes.index(b"ab=iPP1") not in first
    fs = fast.automaton.summaries
    assert any(fs._small_memo.get(k) for k in fs._memo)  # (walked, not summarized frame by frame)
