"""constrain: output that is guaranteed to parse, via grammars compiled to token-level automata."""

from __future__ import annotations

__version__ = "0.1.0"

from .cache import CacheInfo
from .compiled import CompiledGrammar
from .compiler import Compiler, cache_info, clear_cache
from .decode_loop import GenerationResult, GenerationStats, generate
from .errors import (
    ConstrainError,
    DocumentError,
    GrammarError,
    LimitExceededError,
    ModelLoadError,
    OutputValidationError,
    RegexSyntaxError,
    RollbackError,
    SchemaError,
    TokenError,
    TypedOutputError,
    UnsatisfiableSchemaError,
    UnsupportedGrammarError,
    UnsupportedSchemaError,
    UnsupportedRegexError,
    VocabularyError,
)
from .grammar.json_schema.report import check_schema
from .limits import Limits
from .matcher import Matcher
from .models import load_model
from .typed_function import FunctionResult, TypedFunction, function
from .typed_output import Grammar, Regex
from .vocab import Vocabulary
from .kernels.bitmask import allocate_token_bitmask, apply_token_bitmask_inplace
from .kernels.sampling_params import SamplingParams

__all__ = [
    "CacheInfo",
    "CompiledGrammar",
    "Compiler",
    "GenerationResult",
    "GenerationStats",
    "FunctionResult",
    "Grammar",
    "ModelLoadError",
    "OutputValidationError",
    "Regex",
    "TypedFunction",
    "TypedOutputError",
    "function",
    "load_model",
    "ConstrainError",
    "DocumentError",
    "GrammarError",
    "LimitExceededError",
    "Limits",
    "Matcher",
    "RegexSyntaxError",
    "RollbackError",
    "SamplingParams",
    "SchemaError",
    "TokenError",
    "UnsatisfiableSchemaError",
    "UnsupportedGrammarError",
    "UnsupportedSchemaError",
    "UnsupportedRegexError",
    "Vocabulary",
    "VocabularyError",
    "__version__",
    "allocate_token_bitmask",
    "check_schema",
    "apply_token_bitmask_inplace",
    "cache_info",
    "clear_cache",
    "generate",
]
