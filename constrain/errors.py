"""Every exception constrain raises, in one small tree.

Messages say what is wrong, where, and how to fix it.
"""

from __future__ import annotations


class ConstrainError(Exception):
    """Base class of all constrain errors."""


class VocabularyError(ConstrainError):
    """A tokenizer could not be read into exact token bytes."""


class GrammarError(ConstrainError):
    """A grammar source (regex, schema, Lark) is invalid."""


class EmptyLanguageError(GrammarError):
    """A pattern or rule matches no string at all."""


class RegexSyntaxError(GrammarError):
    """A regular expression does not parse; `position` is the 0-based offset in the pattern."""

    def __init__(self, message: str, pattern: str, position: int | None) -> None:
        where = f" at position {position}" if position is not None else ""
        caret = ""
        if position is not None and len(pattern) <= 200:
            caret = f"\n  {pattern}\n  {' ' * position}^"
        super().__init__(f"{message}{where}{caret}")
        self.pattern = pattern
        self.position = position


class UnsupportedRegexError(RegexSyntaxError):
    """The regex uses a construct no finite automaton can enforce (backreference, lookaround)."""


class UnsupportedGrammarError(GrammarError):
    """A Lark grammar uses a construct constrain cannot enforce (a terminal only a postlexer
    makes, a terminal matching the empty string, left recursion through an empty rule).
    `construct` names it and `where` the rule or terminal."""

    def __init__(self, construct: str, where: str, why: str) -> None:
        super().__init__(f"{construct} in {where}: {why}")
        self.construct = construct
        self.where = where


class LimitExceededError(ConstrainError):
    """A configurable limit (states, time, depth) was exceeded; the message names the knob,
    and `rule` the grammar rule whose automaton met it (None where no one rule did)."""

    def __init__(self, what: str, limit: float, knob: str, rule: str | None = None) -> None:
        where = f" in rule {rule!r}" if rule is not None else ""
        super().__init__(f"{what} exceeded the limit of {limit:g}{where}; raise it with {knob}")
        self.what = what
        self.limit = limit
        self.knob = knob
        self.rule = rule

    def in_rule(self, rule: str) -> LimitExceededError:
        """This error, naming `rule` (kept where a rule is named already)."""
        return self if self.rule is not None else LimitExceededError(self.what, self.limit, self.knob, rule)


class TokenError(ConstrainError, ValueError):
    """A token id is out of range for the vocabulary."""


class RollbackError(ConstrainError, ValueError):
    """rollback() was asked to undo more tokens than the matcher has accepted."""


class DocumentError(ConstrainError, ValueError):
    """A document given to warm a grammar up is not one of its texts: `document` (its index)
    and `offset` (the byte where the grammar stops reading it)."""

    def __init__(self, document: int, offset: int, context: bytes) -> None:
        super().__init__(f"document {document} leaves the grammar at byte {offset} (...{context!r})")
        self.document = document
        self.offset = offset


class CacheError(ConstrainError):
    """A cache file is unreadable, of another format version, or corrupt."""


class SchemaError(GrammarError):
    """A JSON Schema is malformed (bad JSON, wrong keyword value, unknown $ref, unsatisfiable).
    `pointer` is the JSON pointer of the offending place."""

    def __init__(self, message: str, pointer: str = "") -> None:
        super().__init__(f"{message} (at {pointer or '#'})")
        self.pointer = pointer or "#"


class UnsatisfiableSchemaError(SchemaError):
    """No JSON document is valid under the schema (e.g. `false`, `{"not": {}}`, an empty enum,
    contradicting allOf members): there is nothing to generate."""


class UnsupportedSchemaError(SchemaError):
    """The schema uses a keyword (or a value of one) that cannot be enforced exactly. Where
    `relaxable`, strict=False relaxes it instead (listed in the compile's relaxations); limits
    of the translation itself (too many cases, a pattern it cannot read) stay errors."""

    def __init__(self, keyword: str, pointer: str, why: str = "", relaxable: bool = False) -> None:
        detail = f": {why}" if why else ""
        hint = "compile with strict=False to relax it" if relaxable else "strict=False does not relax it"
        super().__init__(f"keyword {keyword!r} is not supported here{detail}; {hint}", pointer)
        self.keyword = keyword
        self.relaxable = relaxable


class TooManyAlternativesError(UnsupportedSchemaError):
    """Applicators expand to more alternatives than the translator keeps; it then tries them
    as a formula over an object's keys, and raises this when that does not apply either."""


class DrafterMismatchError(ConstrainError, ValueError):
    """A speculative drafter cannot serve this target: its tokenizer differs (a token id with
    other bytes, other special tokens) or its logits are narrower than the vocabulary."""


class ModelLoadError(ConstrainError):
    """A model could not be loaded: a missing package or file, an unknown id, no tokenizer."""


class TypedOutputError(ConstrainError, TypeError):
    """A typed function's return annotation cannot become a grammar. `where` names the field
    (a dotted path from the return type) that cannot."""

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(f"{message}{f' (at {where})' if where else ''}")
        self.where = where


class OutputValidationError(ConstrainError, ValueError):
    """Generated text parsed but failed the return type's validation (a Pydantic validator, a
    value the grammar could not express), or generation stopped at max_new_tokens before the
    document was complete. `text` is what the model produced."""

    def __init__(self, message: str, text: str) -> None:
        super().__init__(f"{message}; the model produced {text[:200]!r}")
        self.text = text


class CommandLineError(ConstrainError):
    """Bad input to the `constrain` command line (a missing file, an unknown name, a document cut
    at --max-new-tokens). `exit_code`: 2 for usage errors, 1 for bad input or a failed run."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class TokenRejectedError(ConstrainError, ValueError):
    """An engine adapter was handed a token its grammar does not allow at that point (SGLang's
    accept_token after a mask was ignored, or a jump-forward retokenization whose ids spell other
    bytes). `token_id` is the token, `position` how many tokens were accepted before it."""

    def __init__(self, message: str, token_id: int, position: int) -> None:
        super().__init__(message)
        self.token_id = token_id
        self.position = position


class EngineOptionsError(ConstrainError, ValueError):
    """An engine request's constrain options are malformed (an unknown key, no grammar or two,
    a value of the wrong type) or ask for what the adapter cannot do. A ValueError, so serving
    engines answer the request with a client error instead of failing the batch."""
