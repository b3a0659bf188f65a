"""Our reader of Lark grammars (grammar/lark/reader.py) against Lark's own loader: on the shipped
grammars and on ../shared/data/lark-grammars (skipped where absent), every terminal has the same
language both ways, and texts from random byte walks over either loader's rules are accepted by
the other's exactly when by its own (the same lowering after either loader: only the loader
differs). Texts the reader leaves to Lark are read by Lark."""

from __future__ import annotations

import csv
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lark.load_grammar import eval_escaping

from constrain import GrammarError, LimitExceededError, UnsupportedGrammarError
from constrain.errors import EmptyLanguageError
from constrain.automata.algebra import difference
from constrain.automata.rules import compile_rules
from constrain.automata.stack_semantics import StackSemantics
from constrain.grammar.lark import translate
from constrain.grammar.lark.dialect import read_dialect
from constrain.grammar.lark.reader import _evaluated, read_grammar
from constrain.grammar.lark.syntax import Unread, parse
from constrain.grammar.lark.terminals import lower_terminal
from constrain.grammars import NAMES, load
from constrain.limits import Limits

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "lark-grammars"
WALKS = 12


def _shared_rows() -> list:
    index = SHARED / "INDEX.tsv"
    if not index.exists():
        return [pytest.param(None, None, None, marks=pytest.mark.skip(reason=f"{index} not found"), id="shared-missing")]
    with index.open() as fh:
        rows = [r for r in csv.DictReader(fh, delimiter="\t") if r["kind"] == "grammar" and r["loads_in_lark_1.3.1_earley"] == "yes"]
    return [pytest.param(SHARED / r["file"], r["start_rule_used"] or "start", None, id=r["file"]) for r in rows]


SHIPPED = Path(__file__).resolve().parents[2] / "grammars"


def _cases() -> list:
    shipped = [pytest.param(SHIPPED / f"{name}.lark", "start", None, id=f"shipped/{name}") for name in NAMES]
    return shipped + _shared_rows()


def _both(path: Path, start: str):
    text = read_dialect(path.read_text()).text
    try:
        ours = read_grammar(text, start, [str(path.parent)], str(path))
    except Unread as exc:
        pytest.skip(f"left to Lark's loader: {exc}")
    theirs = translate._load_with_lark(text, start, [str(path.parent)], str(path))
    return text, ours, theirs


@pytest.mark.parametrize("path,start,_", _cases())
def test_terminals_have_the_languages_lark_gives_them(path, start, _):
    _, ours, theirs = _both(path, start)
    named = {n for n, p in ours.terminals.items() if p is not None and not n.startswith("__ANON")}  # (and __IGNORE_k)
    assert named <= set(theirs.terminals)
    # A literal in a rule is a terminal of its own, named differently (Lark: `"fill"` is FILL)
    anonymous = {p for n, p in ours.terminals.items() if n not in named and p is not None}
    assert anonymous <= set(theirs.terminals.values())
    assert {p for n, p in theirs.terminals.items() if n not in named} <= set(ours.terminals.values())
    limits = Limits()
    for name in sorted(named):
        a, b = ours.terminals[name], theirs.terminals[name]
        if a is None or b is None:
            assert a is b
            continue
        try:
            ta, tb = lower_terminal(name, a, limits), lower_terminal(name, b, limits)
        except (UnsupportedGrammarError, GrammarError) as exc:
            with pytest.raises(type(exc)):
                lower_terminal(name, b, limits)
            continue
        assert ta.greedy == tb.greedy, name
        assert _empty(lambda: difference(ta.dfa, tb.dfa)) and _empty(lambda: difference(tb.dfa, ta.dfa)), name


def _empty(make) -> bool:
    try:
        dfa = make()
    except EmptyLanguageError:
        return True
    return not dfa.accepting.any()


def _semantics(text: str, start: str, folder: Path, reader: bool):
    try:
        lowered = translate.lark_rules(text, start, import_paths=[folder], reader=reader, limits=Limits(max_mask_seconds=2.0))
        rules = compile_rules(lowered.rules, lowered.start, Limits(), lowered.greedy, lowered.refused)
    except (UnsupportedGrammarError, GrammarError) as exc:
        return exc
    return StackSemantics(rules, max_stacks=2_000)


def _walk(sem: StackSemantics, rng: random.Random, steps: int) -> bytes:
    """A text from random bytes the rules allow, ending where they may end (or where stuck)."""
    stacks = sem.initial()
    out = bytearray()
    for _ in range(steps):
        if sem.is_complete(stacks) and rng.random() < 0.08:
            break
        choices = sorted(sem.next_bytes(stacks))
        if not choices:
            break
        printable = [b for b in choices if 0x20 <= b < 0x7F] or choices
        b = rng.choice(printable)
        nxt = sem.advance(stacks, bytes([b]))
        assert nxt is not None
        stacks = nxt
        out.append(b)
    return bytes(out)


def _accepts(sem: StackSemantics, text: bytes) -> bool:
    stacks = sem.advance(sem.initial(), text)
    return stacks is not None and sem.is_complete(stacks)


@pytest.mark.parametrize("path,start,_", _cases())
def test_random_texts_of_either_loader_are_texts_of_the_other(path, start, _):
    text = path.read_text()
    _both(path, start)
    ours, theirs = _semantics(text, start, path.parent, True), _semantics(text, start, path.parent, False)
    if isinstance(ours, Exception) or isinstance(theirs, Exception):
        assert type(ours) is type(theirs), (ours, theirs)
        return
    rng = random.Random(str(path))
    for _ in range(WALKS):
        for sem in (ours, theirs):
            try:
                sample = _walk(sem, rng, 60)
                assert _accepts(ours, sample) == _accepts(theirs, sample), sample
            except LimitExceededError:  # (an ambiguous grammar's stacks: a walk ends there)
                pass


def test_the_reader_reads_the_shipped_grammars_itself():
    for name in NAMES:
        read_grammar(read_dialect(load(name)).text, "start")  # (no Unread)


@pytest.mark.parametrize(
    "text",
    [
        'start: "a"\nstart: "b"\n',  # defined twice
        "start: b\n",  # b not defined
        'start: A\nA: b\nb: "x"\n',  # a rule inside a terminal
        'start: A\nA: "x" A\n',  # a recursive terminal
        'start: "a\n',  # a newline in a string
        'start: x{"a"}\nx{p, q}: p q\n',  # a template's arguments miscounted
        '_start: "a" -> b\n',  # an alias of an inlined rule
        'start: "a" ~ 3..2\n',  # a bad range
        "start: A\n%ignore B\nA: \"a\"\n",  # an ignored terminal not defined
    ],
)
def test_texts_lark_refuses_are_left_to_lark(text):
    with pytest.raises(Unread):
        read_grammar(read_dialect(text).text, "start")
    with pytest.raises(GrammarError):
        translate.lark_rules(text)


@pytest.mark.parametrize("braces, tilde", [
    ('"a"{2,3}', '"a" ~ 2..3'), ('"a"{2}', '"a" ~ 2'), ('x{,2}', 'x ~ 0..2'), ('A{1,}', 'A+'), ('(x | "b"){0,}', '(x | "b")*'),
])
def test_counts_in_braces_read_as_lark_s_tilde(braces, tilde):
    """llguidance's `x{m,n}` (Lark has `x ~ m..n`); a rule name before braces of values stays a template."""
    rest = 'x: "x"\nA: "a"\n'
    ours, lark_s = (read_grammar(f"start: {e} \"!\"\n{rest}", "start") for e in (braces, tilde))
    assert (ours.rules, ours.terminals) == (lark_s.rules, lark_s.terminals)
    three = read_grammar(f'start: x{{3,}}\n{rest}', "start").rules["start"]
    assert [len(exp) for exp in three] == [4, 3]  # (x x x x+, x x x)


def test_names_may_hold_dashes_as_in_llguidance():
    """`json-value` is a rule and `MY-TERM` a terminal (llguidance's names); `a->b` stays an alias."""
    loaded = read_grammar('start: json-value x->y\njson-value: MY-TERM\nx: "x"\nMY-TERM: "b"\n', "start")
    assert loaded.rules["start"] == [("json-value", "x")] and loaded.rules["json-value"] == [("MY-TERM",)]
    assert loaded.terminals["MY-TERM"].value == "b"


def test_alternatives_made_the_same_by_brackets_are_one():
    """Lark refuses `[x] x?` (its trees tell the copies apart); llguidance reads it, and so do we."""
    loaded = read_grammar('start: [A] A? "b"\n  | "c" -> one\n  | "c" -> two\nA: "a"\n', "start")
    assert len(loaded.rules["start"]) == 4  # (b, A b, A A b, c)


def test_a_lazy_rule_s_parts_are_groups_as_in_llguidance():
    """Lark joins a terminal's regexes as they are (`/a|b/ "c"` is `a|bc`); llguidance groups
    them, and what only llguidance has (a lazy rule's body, `suffix=`, `&`) reads as it does."""
    plain = read_grammar('start: A\nA: /a|b/ "c"\n', "start")
    assert plain.terminals["A"].to_regexp() == "a|bc"
    lazy = read_grammar('start: x\nx[lazy]: /a|b/ "c"\n', "start")
    assert lazy.terminals["x"].to_regexp() == "(?:a|b)(?:c)" and lazy.shortest == {"x"}
    algebra = read_grammar('start: A\nA: /a|b/ "c" & ~"ac"\n', "start").terminals["A"]
    assert algebra.parts[0].to_regexp() == "(?:a|b)(?:c)"
    started = read_grammar('start[suffix="!"]: /a|b/\n', "start")
    assert started.rules["start"] == [("start%lexeme",)] and started.shortest == {"start%lexeme"}


def test_an_empty_literal_is_nothing_as_llguidance_reads_it():
    """Lark refuses `""`; llguidance reads it as the empty text, and so do we."""
    loaded = read_grammar('start: ("" | "b") "a" ""\nT: ""\n', "start")  # (a group first: multiplied out)
    assert [[loaded.terminals[s].value for s in exp] for exp in loaded.rules["start"]] == [["a"], ["b", "a"]]


@pytest.mark.parametrize(
    "text",
    [
        "start: a b? c* d+ [e] (f | g) h ~ 2 i ~ 1..3\n" + "".join(f'{c}: "{c}"\n' for c in "abcdefghi"),
        'start: sep{A, ","}\nsep{x, s}: x (s x)*\nA: "a"\n',
        "start: NUMBER WORD\n%import common (NUMBER, WORD)\n%import common.WS\n%ignore WS\n",
        'start: N\n%import common.SIGNED_NUMBER -> N\n',
        "?start: x\n  | y // a comment\n  # another\n  | z\nx: \"x\"\ny: \"y\"\nz.2: \"z\" -> zed\n",
        'start: KW\nKW: "select"i | /from/i\n',
        'start: A\nA: "a".."c" ~ 2 B?\nB: /[0-9]+/\n%declare C\n',
        # groups after a terminal stay one item: nested, optional, holding nullable rules
        'start: "a" (b | c)? d? ("x" (e | "f")? )* "z"\nb: "b"\nc: "c"?\nd: "d"\ne: "e"? "e"?\n',
        'start: x\nx: x "+" (t | "(" x ")") | t\nt: "t" ("!" | "?")?\n',  # left recursion, a group in its tail
        # left recursion after a nullable rule: groups multiplied out before the empty string goes
        'start: s\ns: n s "x" ("y" | n)? | "q"\nn: "n"?\n',
        'start: s\ns: n s "x" ("y" | n) | "q"\nn: "n"?\n',
        'start: "a" [b] (b | "c")\nb: "b"\n',  # [..]: multiplied out as Lark does
        'start: "a" b? ("c" | b) -> one\n  | "e" -> two\nb: "b"\n',  # aliases: likewise
        'start: (a | b) "k" (a | b)+\na: "a"\nb: "b" a?\n',  # a group before the first terminal
    ],
)
def test_constructs_the_reader_reads_like_lark(text, tmp_path):
    read_grammar(read_dialect(text).text, "start")  # (read by us, not left to Lark)
    path = tmp_path / "g.lark"
    path.write_text(text)
    test_terminals_have_the_languages_lark_gives_them(path, "start", None)
    test_random_texts_of_either_loader_are_texts_of_the_other(path, "start", None)


def test_syntax_errors_are_left_to_lark_which_names_the_line():
    with pytest.raises(Unread):
        parse("start: (a\n")
    with pytest.raises(GrammarError, match="line"):
        translate.lark_rules('start: "a"\nx: ( "b"\n')


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab é\\'\"\r\n\t\x00xu0{}"), max_size=8) | st.text(max_size=8))
def test_a_literal_reads_as_lark_reads_it(body):
    """_evaluated skips Lark's eval_escaping (a literal_eval) where the text reads as itself:
    the same value, or the same refusal, as Lark's."""
    try:
        expected = eval_escaping(body)
    except Exception as exc:  # (Lark's GrammarError on a bad escape; ValueError on a NUL)
        with pytest.raises(type(exc)):
            _evaluated(body)
        return
    assert _evaluated(body) == expected


def _files(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)


@pytest.mark.parametrize(
    "files",
    [
        {  # a relative import of a rule: its terminals and subrules renamed, `_` kept in front
            "g.lark": "start: pair\n%import .lib.pair\n%import common.WS\n%ignore WS\n",
            "lib.lark": 'pair: _key ":" VALUE\n_key: NAME\nNAME: /[a-z]+/\nVALUE: DIGIT+\n%import common.DIGIT\n%ignore " "\n',
        },
        {  # a module of the import paths named like Lark's own: it is the one read
            "g.lark": "start: NUMBER (\",\" NUMBER)*\n%import common.NUMBER\n",
            "common.lark": 'NUMBER: "one" | "two"\n',
        },
        {  # a module in a subfolder importing its neighbour relatively, with aliases
            "g.lark": "start: x Y\n%import .sub.a (x, Y)\n",
            "sub/a.lark": 'x: "<" z ">"\n%import .b.z\nY: "y"+\n',
            "sub/b.lark": 'z: Z+\nZ: "z"\n',
        },
    ],
    ids=["relative", "shadows-common", "nested"],
)
def test_imported_files_are_read_like_lark(files, tmp_path):
    _files(tmp_path, files)
    path = tmp_path / "g.lark"
    read_grammar(files["g.lark"], "start", [str(tmp_path)], str(path))  # (read by us, not left to Lark)
    test_terminals_have_the_languages_lark_gives_them(path, "start", None)
    test_random_texts_of_either_loader_are_texts_of_the_other(path, "start", None)


def test_a_module_lark_would_read_from_elsewhere_is_left_to_lark(tmp_path):
    _files(tmp_path, {"common.lark": 'SIGNED_INT: "7"\n'})
    with pytest.raises(Unread, match="import paths"):  # (lark.lark's own import of common: Lark
        read_grammar("start: NUMBER\n%import lark.NUMBER\n", "start", [str(tmp_path)])  # reads ours)
    with pytest.raises(Unread, match="not found"):
        read_grammar("start: x\n%import .nowhere.x\n", "start", [str(tmp_path)], str(tmp_path / "g.lark"))
    with pytest.raises(GrammarError, match="nowhere"):  # (Lark's loader: FileNotFoundError)
        translate.lark_rules("start: x\n%import .nowhere.x\n", import_paths=[str(tmp_path)])
    read_grammar("start: NUMBER\n%import lark.NUMBER\n", "start")  # (no import paths: Lark's own)
    (tmp_path / "bad.lark").write_bytes(b'X: "a"\n\xff\xfe\n')  # (not UTF-8)
    (tmp_path / "loop.lark").write_text('%import .loop.X\nX: "a"\n')  # (imports itself)
    for text in ("start: X\n%import .bad.X\n", "start: X\n%import .loop.X\n"):
        with pytest.raises(GrammarError):
            translate.lark_rules(text, import_paths=[str(tmp_path)])


def test_the_reader_reads_an_imported_file_not_lark(tmp_path):
    _files(tmp_path, {"lib.lark": 'pair: NAME "=" NAME\nNAME: /[a-z]+/\n'})
    loaded = read_grammar("start: pair\n%import .lib.pair\n", "start", [str(tmp_path)])
    assert set(loaded.rules) == {"start", "pair"}
    assert "lib__NAME" in loaded.terminals


def test_groups_after_a_terminal_are_not_multiplied_out():
    from constrain.grammar.lark.left_recursion import Group

    text = 'start: "c" ("t" | "u")? "k" ("i" "n" "e")? ("b" | "a" | "o" "f")? "x"\n'
    (expansion,) = read_grammar(text, "start").rules["start"]  # (Lark: 2 * 2 * 4 = 16 copies)
    assert sum(isinstance(x, Group) for x in expansion) == 3
    assert len(read_grammar('start: ("a" | "b") "c"\n', "start").rules["start"]) == 2  # (first: multiplied)
    assert len(read_grammar('start: "a" [("b" | "c")]\n', "start").rules["start"]) == 3  # ([..]: as Lark)


def test_a_nullable_rule_in_a_group_keeps_the_empty_text_when_left_recursion_removes_it(tmp_path):
    text = 'start: s\ns: n s "x" ("y" | n) | "q"\nn: "n"?\n'  # (qx: the group's n reads nothing)
    sem = _semantics(text, "start", tmp_path, True)
    assert all(_accepts(sem, t) for t in (b"qx", b"qxy", b"nqxn", b"qxnx"))
    assert not _accepts(sem, b"qxyy")
