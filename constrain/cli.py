"""The `constrain` command line: generate, compile, check, bench (in constrain/cli_commands/).

Exit codes: 0 success; 1 bad input (a missing file, invalid JSON, an unsupported keyword, a
grammar or regex that does not compile, an unknown model) or a failed run (a document cut at
--max-new-tokens); 2 usage errors (a missing or unknown option, options that do not go together);
130 interrupted. Every error is one line on stderr, `constrain: error: <what is wrong, where>`;
--debug shows the traceback instead.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn, Optional, Sequence

from . import __version__
from .cli_commands import bench, check, compile_cmd, generate
from .errors import CommandLineError, ConstrainError
from .cli_commands.output import flag_names, one_line

COMMANDS = (generate, compile_cmd, check, bench)


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors on one line (argparse prints the whole usage first)."""

    def error(self, message: str) -> NoReturn:
        print(f"constrain: error: {message} (see '{self.prog} --help')", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="constrain",
        description="Structured output from language models: generate documents under a JSON Schema, a Lark "
        "grammar or a regex, compile and inspect grammars, run the benchmarks.",
        epilog="Exit codes: 0 ok, 1 bad input or a failed run, 2 usage error. 'constrain COMMAND --help' for each.",
    )
    parser.add_argument("--version", action="version", version=f"constrain {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks instead of one-line errors")
    debug = _Parser(add_help=False)
    debug.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for command in COMMANDS:
        command.add_parser(_WithParents(commands, [debug]))
    return parser


class _WithParents:
    """Hands every subcommand's parser the shared options (--debug after the command too)."""

    def __init__(self, commands: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
        self._commands = commands
        self._parents = parents

    def add_parser(self, name: str, **kwargs: object) -> argparse.ArgumentParser:
        return self._commands.add_parser(name, parents=self._parents, **kwargs)  # type: ignore[arg-type]


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run one command; returns the exit code (the console script exits with it)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in args_list:  # the rest goes to the benchmark run by `bench`
        cut = args_list.index("--")
        args_list, extra = args_list[:cut], args_list[cut + 1 :]
    parser = build_parser()
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:  # --help, --version, usage errors
        return exc.code if isinstance(exc.code, int) else 2
    if args.command is None:
        parser.print_help()
        return 2
    if extra and not getattr(args, "takes_extra", False):
        return _error(f"arguments after -- go to benchmarks only (constrain bench NAME -- ...), got {' '.join(extra)}", 2)
    args.extra = extra
    try:
        return int(args.run(args))
    except CommandLineError as exc:
        if args.debug:
            raise
        return _error(str(exc), exc.exit_code)
    except ConstrainError as exc:
        if args.debug:
            raise
        return _error(flag_names(one_line(str(exc))), 1)
    except KeyboardInterrupt:
        return _error("interrupted", 130)
    except SystemExit as exc:  # argparse's error() raised inside a command
        return exc.code if isinstance(exc.code, int) else 2


def _error(message: str, code: int) -> int:
    print(f"constrain: error: {one_line(message)}", file=sys.stderr, flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
