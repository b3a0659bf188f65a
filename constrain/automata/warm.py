"""Load the compile kernels once per process, before the first compile that needs them.

numba loads each kernel from its disk cache on its first call with a given argument-type
signature (8-15 ms each). The products behind patterns and formats, the joins of glued rules,
the emptiness check of embedded DFAs are first needed by whichever schema first has them:
that compile would pay for the loading. The vocabulary index (built once per vocabulary, see
constrain/index/vocab_index.py) calls this, as it loads the mask kernels.
"""

from __future__ import annotations

_DONE = False


def warm_compile_kernels() -> None:
    global _DONE
    if _DONE:
        return
    from ..limits import Limits
    from . import compile_ir, ir, parse_regex
    from .algebra import difference, intersect
    from .glue import glued_dfa
    from .rule_facts import _embedded_nonempty
    from .word_graph import word_graph_dfa

    words = compile_ir(parse_regex('"[a-z]+"'))
    short = compile_ir(parse_regex('"[a-c]{1,2}"'))
    intersect(words, short)
    difference(words, short)
    _embedded_nonempty(ir.Embedded(words))
    # A member rule (minimal prefix-free head, suffix with a call) and a string rule.
    glued_dfa(ir.Concat((ir.Embedded(words), ir.literal(":"), ir.RuleRef("v"))), {"v": 0}, Limits())
    glued_dfa(ir.Concat((ir.literal("<"), ir.Embedded(words), ir.literal(">"))), {}, Limits())
    # An object rule: `{`, a Graph of members, `}`.
    member = ir.Concat((ir.literal('"a":'), ir.call("v")))
    graph = ir.Graph(2, 0, (0, 1), ((0, 1, member),))
    word_graph_dfa(ir.Concat((ir.literal("{"), graph, ir.literal("}"))), {"v": 0}, Limits())
    _DONE = True
