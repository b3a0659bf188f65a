"""Compiler: grammar sources → CompiledGrammar for one vocabulary, cached.

One Compiler per vocabulary (per model). It owns the vocabulary's token trie and the caches;
everything it returns is immutable and can be shared by any number of Matchers and threads.
"""

from __future__ import annotations

import json
import os
import weakref
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence

from . import __version__
from .automata import regex_to_dfa
from .automata.dfa import DFA
from .cache import CacheInfo, DiskCache, MemoryCache, cache_key
from .compiled import CompiledGrammar
from .errors import GrammarError, UnsatisfiableSchemaError
from .index.token_index import DFATokenAutomaton
from .index.vocab_index import VocabIndex, vocab_index
from .limits import Limits
from .memos import clear_memos
from .vocab import Vocabulary

if TYPE_CHECKING:
    from .automata.rules import RuleSet

# Every live Compiler, for the process-wide cache_info() / clear_cache(); weak, so a dropped
# Compiler and its caches are freed as usual.
_LIVE: "weakref.WeakSet[Compiler]" = weakref.WeakSet()


class Compiler:
    """Compiles grammars against `vocab`; `cache_dir` adds a persistent on-disk cache."""

    def __init__(
        self,
        vocab: Vocabulary,
        cache_dir: Optional[os.PathLike[str] | str] = None,
        *,
        limits: Optional[Limits] = None,
        cache_size: int = 128,
        disk_cache_bytes: int = 512 * 2**20,
    ) -> None:
        if not isinstance(vocab, Vocabulary):
            raise TypeError(
                f"Compiler needs a constrain.Vocabulary, got {type(vocab).__name__}; "
                "build one with Vocabulary.from_pretrained(...)"
            )
        self.vocab = vocab
        self.limits = limits or Limits()
        self._memory = MemoryCache(cache_size)
        self._disk = DiskCache(cache_dir, disk_cache_bytes) if cache_dir is not None else None
        self._index: Optional[VocabIndex] = None
        _LIVE.add(self)

    @property
    def index(self) -> VocabIndex:
        """The vocabulary's token trie and slices (built on first use, shared per vocabulary)."""
        if self._index is None:
            self._index = vocab_index(self.vocab)
        return self._index

    def compile_regex(self, pattern: str) -> CompiledGrammar:
        """A grammar whose outputs are exactly the strings `pattern` fully matches."""
        if not isinstance(pattern, str):
            raise TypeError(f"compile_regex needs a str pattern, got {type(pattern).__name__}")
        return self._compile("regex", pattern, {}, lambda: regex_to_dfa(pattern, self.limits))

    def compile_json_schema(
        self,
        schema: Any,
        *,
        whitespace: str = "compact",
        property_order: str = "schema",
        additional_properties: str = "schema",
        strict: bool = True,
        resources: Optional[Mapping[str, Any]] = None,
        integer_zero_fraction: bool = True,
    ) -> CompiledGrammar:
        """A grammar of the JSON documents valid under `schema` (a dict, JSON text, or a Python
        type such as a Pydantic model). Unsupported keywords raise UnsupportedSchemaError with
        their JSON pointer; with strict=False they are relaxed and listed in `.relaxations`.
        `resources` maps URIs to other schema documents that `$ref`s may name (multi-file
        schemas); nothing is ever fetched. integer_zero_fraction=False writes integers without the
        ".0" JSON Schema allows them (what a typed output wants: 1.0000... never ends)."""
        from .automata.rules import NEAR_START_NFA_STATES, compile_rules
        from .grammar.json_schema.malformed import TRANSLATION_FAILURES, malformed
        from .grammar.json_schema.options import JsonSchemaOptions
        from .grammar.json_schema.sources import schema_to_dict
        from .grammar.json_schema.translate import Translator
        from .index.stack_index import StackTokenAutomaton

        options = JsonSchemaOptions(whitespace, property_order, additional_properties, strict,
                                    integer_zero_fraction=integer_zero_fraction)
        as_dict = schema_to_dict(schema)
        documents = {str(uri): schema_to_dict(doc) for uri, doc in (resources or {}).items()}
        # Key order is kept: the order of `properties` is the grammar's member order, so two
        # schemas that differ only in it are two grammars, not one cache entry.
        source = json.dumps(as_dict, separators=(",", ":"))
        if documents:
            source += "\n" + json.dumps(documents, separators=(",", ":"))
        key = cache_key("json_schema", source, options.key(), self.vocab.fingerprint, __version__,
                        [self.limits.max_nfa_states, self.limits.max_dfa_states, *self.limits.stack_key()])

        def compute() -> CompiledGrammar:
            stored = self._stored_rules(key)
            if stored is not None:  # (only schemas without distinct keys or items are stored)
                rule_set, body = stored
                automaton, warm = self._stack_automaton(key, rule_set)
                return CompiledGrammar(
                    "json_schema", source, options.key(), self.vocab, automaton,
                    tuple(body.get("relaxations", ())), tuple(body.get("annotations", ())), warm,
                )
            try:
                translator = Translator(as_dict, options, documents)
                rules, start = translator.translate()
            except TRANSLATION_FAILURES as exc:  # (a keyword value of the wrong type, most likely)
                error = malformed(as_dict, documents)
                if error is None:
                    raise
                raise error from exc
            try:
                rule_set = compile_rules(rules, start, self.limits)
                if translator.keyed:
                    rule_set = _without_unsatisfiable_objects(rules, start, rule_set, translator.keyed, self.limits)
            except GrammarError as exc:
                if "accepts no document" in str(exc):
                    raise UnsatisfiableSchemaError(_unsatisfiable_message(exc, translator.pointer_of)) from None
                raise
            rule_set.build_near_start(NEAR_START_NFA_STATES)
            warm = None
            if translator.keyed:
                automaton: Any = distinct_keys(rule_set, translator.keyed, translator.distinct, self.index, self.vocab, self.limits)
            elif translator.distinct:
                automaton = distinct_items(StackTokenAutomaton(rule_set, self.index, self.limits), rule_set, translator.distinct, self.vocab)
            else:  # (distinct keys and items live in automata of their own: not stored)
                self._store_rules(key, rule_set, relaxations=translator.relaxations, annotations=translator.annotations)
                automaton, warm = self._stack_automaton(key, rule_set)
            return CompiledGrammar(
                "json_schema", source, options.key(), self.vocab, automaton,
                tuple(translator.relaxations), tuple(translator.annotations), warm,
            )

        return self._memory.get_or_compute(key, compute)

    def compile_lark(self, text: str, start: str = "start", *, import_paths: Sequence[str | os.PathLike[str]] = ()) -> CompiledGrammar:
        """A grammar of the texts Lark's Earley parser accepts from rule `start` of the Lark
        grammar `text` (docs/lark.md: the dialect, and where lexing differs). `import_paths`:
        folders for `%import` of grammar files (common.lark and Lark's others are built in)."""
        import lark

        from .grammar.lark.definitions import imported_files
        from .grammar.lark.dialect import imports_anything, imports_files, read_dialect
        from .grammar.lark.split_rules import lark_rule_set
        from .index.stack_index import StackTokenAutomaton

        if not isinstance(text, str):
            raise TypeError(f"compile_lark needs the grammar as text (str), got {type(text).__name__}")
        paths = [str(p) for p in import_paths]
        options = {"start": start, "import_paths": paths}
        # The key holds the texts of the files the grammar imports (None: not known, not kept;
        # with import paths, Lark's own grammars may import files of them too)
        files = imported_files(read_dialect(text).text, paths) if imports_files(text, paths) or (
            paths and imports_anything(text)) else ()
        key = cache_key("lark", text, options, self.vocab.fingerprint, __version__, lark.__version__,
                        [self.limits.max_nfa_states, self.limits.max_dfa_states, *self.limits.stack_key()],
                        files or [])

        def build() -> RuleSet:
            specials = {self.vocab.token_bytes[t].decode("utf-8", "replace"): t for t in self.vocab.special_ids}
            return lark_rule_set(text, start, self.limits, import_paths=paths, special_tokens=specials,
                                 files=None if files is None else dict(files))

        if files is None:  # (the key cannot hold the imported files' texts: kept nowhere, memory included)
            return CompiledGrammar("lark", text, options, self.vocab, StackTokenAutomaton(build(), self.index, self.limits))

        def compute() -> CompiledGrammar:
            automaton, warm = self._stack_automaton(key, self._rule_set(key, build))
            return CompiledGrammar("lark", text, options, self.vocab, automaton, warm=warm)

        return self._memory.get_or_compute(key, compute)

    def compile_grammar_file(self, path: str | os.PathLike[str], start: str = "start") -> CompiledGrammar:
        """A grammar file by its suffix: `.lark` (its folder is searched by `%import`), or
        `.json` (a JSON Schema)."""
        file = os.fspath(path)
        suffix = os.path.splitext(file)[1].lower()
        if suffix not in (".lark", ".json"):
            raise GrammarError(f"{file}: unknown grammar file type {suffix!r} (expected .lark or .json)")
        with open(file, encoding="utf-8") as fh:
            text = fh.read()
        if suffix == ".json":
            return self.compile_json_schema(text)
        return self.compile_lark(text, start, import_paths=[os.path.dirname(os.path.abspath(file))])

    def _rule_set(self, key: str, build: Callable[[], RuleSet]) -> RuleSet:
        """build(), or the rule set a process stored on disk under `key` (a `cache_dir`): a
        later process skips the grammar's loading and lowering (Lark: most of a compile)."""
        stored = self._stored_rules(key)
        if stored is not None:
            return stored[0]
        rule_set = build()
        self._store_rules(key, rule_set)
        return rule_set

    def _stack_automaton(self, key: str, rule_set: RuleSet) -> tuple[Any, Optional[Any]]:
        """(the automaton of `rule_set`, its WarmStore where there is a cache_dir: the tables its
        masks learn in earlier processes are installed, and this process's are stored)."""
        from .index.stack_index import StackTokenAutomaton
        from .warm_store import WarmStore

        automaton = StackTokenAutomaton(rule_set, self.index, self.limits)
        if self._disk is None:
            return automaton, None
        warm = WarmStore(self._disk, key, automaton, self.limits)
        warm.load()
        return automaton, warm

    def _stored_rules(self, key: str) -> Optional[tuple[RuleSet, dict[str, Any]]]:
        """(rule set, the record's body: what _store_rules was given besides) from disk, or None."""
        from .automata.rule_set_codec import decode_rule_set

        if self._disk is None:
            return None
        return self._disk.load_record(key, "rules", lambda body, arrays: (decode_rule_set(body, arrays, self.limits), body))

    def _store_rules(self, key: str, rule_set: RuleSet, **extra: Any) -> None:
        """Keep `rule_set` (and `extra`, JSON) on disk, where there is a cache_dir and the rule
        set can be stored as it stands (encode_rule_set)."""
        from .automata.rule_set_codec import encode_rule_set

        if self._disk is None:
            return
        try:
            body, arrays = encode_rule_set(rule_set)
        except ValueError:
            return
        self._disk.store_record(key, "rules", {**body, **extra}, arrays)

    def _compile(
        self, kind: str, source: str, options: dict[str, Any], build: Callable[[], DFA]
    ) -> CompiledGrammar:
        limits = self.limits
        key = cache_key(
            kind, source, options, self.vocab.fingerprint, __version__,
            [limits.max_nfa_states, limits.max_dfa_states],
        )

        def compute() -> CompiledGrammar:
            dfa = self._disk.load(key) if self._disk is not None else None
            if dfa is None:
                dfa = build()
                if self._disk is not None:
                    self._disk.store(key, dfa)
            return CompiledGrammar(kind, source, options, self.vocab, DFATokenAutomaton(dfa, self.index))

        return self._memory.get_or_compute(key, compute)

    def cache_info(self) -> CacheInfo:
        files, size = self._disk.usage() if self._disk is not None else (0, 0)
        return CacheInfo(
            hits=self._memory.hits,
            misses=self._memory.misses,
            entries=len(self._memory),
            max_entries=self._memory.max_entries,
            disk_hits=self._disk.hits if self._disk is not None else 0,
            disk_files=files,
            disk_bytes=size,
        )

    def clear_cache(self, disk: bool = False) -> None:
        """Empty the in-memory cache (and the disk cache too with `disk=True`)."""
        self._memory.clear()
        if disk and self._disk is not None:
            self._disk.clear()


def cache_info() -> CacheInfo:
    """Cache figures summed over every live Compiler in the process."""
    infos = [c.cache_info() for c in list(_LIVE)]
    return CacheInfo(
        hits=sum(i.hits for i in infos),
        misses=sum(i.misses for i in infos),
        entries=sum(i.entries for i in infos),
        max_entries=sum(i.max_entries for i in infos),
        disk_hits=sum(i.disk_hits for i in infos),
        disk_files=sum(i.disk_files for i in infos),
        disk_bytes=sum(i.disk_bytes for i in infos),
    )


def clear_cache(disk: bool = False) -> None:
    """Empty the in-memory caches of every live Compiler (and their disk caches with `disk=True`),
    and the process-wide memos they share (rule DFAs, regex languages, vocabulary indexes:
    memos.py)."""
    for compiler in list(_LIVE):
        compiler.clear_cache(disk=disk)
    clear_memos()


def _unsatisfiable_message(exc: Exception, pointer_of: dict[str, str]) -> str:
    """Name the sub-schemas that admit no value (deepest first): one of them is the cause."""
    empty = sorted(
        {pointer_of[n] for n in getattr(exc, "empty_rules", ()) if n in pointer_of and pointer_of[n] != "#"},
        key=lambda p: (-p.count("/"), p),
    )
    message = "the schema is unsatisfiable: no JSON document is valid under it"
    if empty:
        shown = ", ".join(empty[:5]) + (f" and {len(empty) - 5} more" if len(empty) > 5 else "")
        message += f"; sub-schemas that admit no value: {shown}"
    return message


def distinct_items(automaton: Any, rule_set: Any, names: list[str], vocab: Vocabulary) -> Any:
    """The JSON Schema automaton with `uniqueItems` kept by the matcher: items of the rules
    `names` compare as JSON values."""
    from .grammar.json_schema.literals import string_prefix, text_key
    from .index.distinct_calls import DistinctCallsAutomaton

    ids = [rule_set.names.index(name) for name in names]
    return DistinctCallsAutomaton(automaton, ids, text_key, string_prefix, vocab.token_bytes, vocab.special_ids)


def _without_unsatisfiable_objects(rules: Mapping[str, Any], start: str, rule_set: Any, keyed: Mapping[str, Any], limits: Limits) -> Any:
    """The rules again, with the any-order objects that no object satisfies (a required key, or
    minProperties many keys, whose values admit nothing) made empty: the matcher keeps their
    keys, so the grammar alone cannot tell. Repeated while that empties more of them."""
    from .automata import ir
    from .automata.rules import compile_rules

    while True:
        ids = {name: k for k, name in enumerate(rule_set.names)}
        dead = [
            name for name, spec in keyed.items()
            if rules[name] is not ir.NOTHING
            and not spec.satisfiable({rule_set.names[c] for c in rule_set.callees[ids[name]]})
        ]
        if not dead:
            return rule_set
        rules = {**rules, **{name: ir.NOTHING for name in dead}}
        rule_set = compile_rules(rules, start, limits)


def distinct_keys(
    rule_set: Any, keyed: Mapping[str, Any], distinct: list[str], index: VocabIndex, vocab: Vocabulary, limits: Limits
) -> Any:
    """The JSON Schema automaton with the keys of any-order objects (the rules `keyed`, see
    grammar/json_schema/any_order.py) kept distinct by the matcher, and the items of the
    arrays `distinct` too (uniqueItems, as distinct_items)."""
    from .index.distinct_keys import DistinctKeysAutomaton
    from .index.rule_variants import VariantRules
    from .index.stack_index import StackTokenAutomaton

    ids = {name: k for k, name in enumerate(rule_set.names)}
    objects = {ids[name]: (spec.named, spec.required, spec.lo, spec.hi) for name, spec in keyed.items()}
    inner = StackTokenAutomaton(VariantRules(rule_set, sorted(objects)), index, limits)
    items = distinct_items(inner, rule_set, distinct, vocab) if distinct else None
    return DistinctKeysAutomaton(inner, objects, vocab.token_bytes, vocab.special_ids, items)
