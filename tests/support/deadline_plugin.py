"""A pytest plugin: a test that hangs ends its process after TEST_SECONDS (setup, call and
teardown together), the stacks of its threads written to stderr first.

CI then reports the test at once (pytest-xdist names the test whose worker crashed and starts
another) instead of running into its 90-minute limit with no word of where. pytest's own
`faulthandler_timeout` only dumps the stacks and lets the hang go on. The slowest test takes
about a minute; CONSTRAIN_TEST_SECONDS overrides the limit (0: none, e.g. under a debugger).
"""

from __future__ import annotations

import faulthandler
import os

import pytest

TEST_SECONDS = float(os.environ.get("CONSTRAIN_TEST_SECONDS", "600"))
_STDERR: list[int] = []


def pytest_configure(config) -> None:
    _STDERR.append(os.dup(2))  # (now, between captures: pytest redirects fd 2 while a test runs)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if TEST_SECONDS > 0:
        faulthandler.dump_traceback_later(TEST_SECONDS, exit=True, file=_STDERR[-1])
    try:
        yield
    finally:
        if TEST_SECONDS > 0:
            faulthandler.cancel_dump_traceback_later()
