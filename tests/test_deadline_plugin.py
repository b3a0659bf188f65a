"""tests/support/deadline_plugin.py: a hanging test ends its pytest process, named in the log."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

SUPPORT = Path(__file__).parent / "support"


def _pytest(folder: Path, seconds: str) -> tuple[subprocess.CompletedProcess, float]:
    env = {**os.environ, "CONSTRAIN_TEST_SECONDS": seconds, "PYTHONPATH": str(SUPPORT)}
    t0 = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "deadline_plugin", "-p", "no:cacheprovider", "--rootdir", str(folder), str(folder)],
        cwd=folder, env=env, capture_output=True, text=True, timeout=120,
    )
    return done, time.monotonic() - t0


def test_a_hanging_test_ends_the_process_with_its_stack(tmp_path: Path) -> None:
    (tmp_path / "test_hang.py").write_text("import time\n\n\ndef test_hangs():\n    time.sleep(100)\n")
    done, seconds = _pytest(tmp_path, "2")
    assert done.returncode != 0
    assert seconds < 60
    assert "Timeout (0:00:02)" in done.stderr
    assert 'test_hang.py", line 5 in test_hangs' in done.stderr


def test_the_limit_is_per_test(tmp_path: Path) -> None:
    """Three tests of 1.5 s each under a 2 s limit: the clock starts again at each."""
    body = "".join(f"def test_{i}():\n    time.sleep(1.5)\n\n\n" for i in range(3))
    (tmp_path / "test_slowish.py").write_text("import time\n\n\n" + body)
    done, _ = _pytest(tmp_path, "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout
