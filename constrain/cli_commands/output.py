"""What every subcommand shares about input and output: errors as one line, reading a file or
stdin, and a spinner on stderr for work that takes a while (only when stderr is a terminal, so
pipes and logs stay clean)."""

from __future__ import annotations

import re
import sys
import threading
import time
from contextlib import contextmanager
from typing import Iterator, NoReturn, Optional

from ..errors import CommandLineError

_CARET = re.compile(r"^\s*\^+\s*(;.*)?$")  # a caret under an echoed source line, maybe more text


def fail(message: str, exit_code: int = 1) -> NoReturn:
    """Stop the command: exit_code 2 for usage errors, 1 for bad input or a failed run."""
    raise CommandLineError(message, exit_code)


def one_line(message: str) -> str:
    """A multi-line error message on one line: the echoed source and caret lines that regex and
    Lark errors add are dropped (the message already names the line, column or position)."""
    kept: list[str] = []
    for line in str(message).splitlines():
        caret = _CARET.match(line)
        if caret:
            if len(kept) > 1:
                kept.pop()  # the echoed source line above the caret
            rest = (caret.group(1) or "").strip("; ")
            if rest and kept:
                kept[-1] = f"{kept[-1]}; {rest}"
            elif rest:
                kept.append(rest)
            continue
        if line.strip():
            kept.append(line.strip())
    return "; ".join(kept) if kept else str(message).strip()


_FLAGS = (("compile with strict=False", "pass --no-strict"), ("strict=False", "--no-strict"), ("pass start=...", "pass --start RULE"))


def flag_names(message: str) -> str:
    """Library messages name keyword arguments (strict=False); on the command line, the flags."""
    for said, flag in _FLAGS:
        message = message.replace(said, flag)
    return message


def read_text(path: str, what: str) -> str:
    """The text of `path` ("-" reads stdin); a missing or unreadable file is a one-line error."""
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        fail(f"{what} file not found: {path}")
    except IsADirectoryError:
        fail(f"{what} path is a directory, not a file: {path}")
    except UnicodeDecodeError as exc:
        fail(f"{what} file {path} is not UTF-8 text (byte {exc.start})")
    except OSError as exc:
        fail(f"cannot read {what} file {path}: {exc.strerror or exc}")


def note(message: str) -> None:
    """A line on stderr (stats, progress); stdout carries only the command's result."""
    print(f"constrain: {message}", file=sys.stderr, flush=True)


@contextmanager
def spinner(label: str, delay: float = 0.5) -> Iterator[None]:
    """Show `label`, a spinner and the seconds spent on stderr while the block runs, if stderr is
    a terminal and the block takes longer than `delay`; the line is erased when it ends."""
    if not _is_tty(sys.stderr):
        yield
        return
    done = threading.Event()
    thread = threading.Thread(target=_spin, args=(label, delay, done), daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def _spin(label: str, delay: float, done: threading.Event) -> None:
    started = time.perf_counter()
    if done.wait(delay):
        return
    frames = "|/-\\"
    k = 0
    while not done.wait(0.1):
        sys.stderr.write(f"\r{frames[k % 4]} {label} {time.perf_counter() - started:.1f} s")
        sys.stderr.flush()
        k += 1
    sys.stderr.write("\r\033[K")
    sys.stderr.flush()


def _is_tty(stream: Optional[object]) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False
