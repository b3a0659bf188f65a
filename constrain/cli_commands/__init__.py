"""The subcommands of the `constrain` command line, one module each (constrain/cli.py wires them).

generate.py  one constrained document from a model;    compile_cmd.py  warm the cache, show sizes;
check.py     what a schema's keywords become;          bench.py        run the shipped benchmarks.
Shared: sources.py (grammar sources from files, names, patterns), vocab_only.py (a Compiler from
the tokenizer alone), output.py (one-line errors, reading files, a spinner on a TTY).
"""
