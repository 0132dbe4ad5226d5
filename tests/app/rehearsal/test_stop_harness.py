"""`inferplane rehearse` stops its harness by asking (SIGTERM) and waiting, so the harness's
own teardown stops the processes it started; a harness that does not stop is killed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from inferplane.app import rehearse

# A harness that, like e2e/rehearse_smoke.run, turns SIGTERM into an exception and tears
# down in `finally` (here: writes a file), then exits.
TEARS_DOWN = """
import signal, sys, time
from pathlib import Path
def stopped(signum, frame):
    raise RuntimeError("stopped")
signal.signal(signal.SIGTERM, stopped)
try:
    print("started", flush=True)
    time.sleep(60)
finally:
    Path(sys.argv[1]).write_text("torn down")
"""

IGNORES = """
import signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("started", flush=True)
time.sleep(60)
"""


def _start(code: str, *args: str) -> subprocess.Popen[str]:
    """A started harness (it printed its first line); its test stops it."""
    proc = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "started"
    except BaseException:
        proc.kill()
        proc.wait(timeout=10)
        raise
    return proc


def test_a_stopped_harness_tears_down_before_it_exits(tmp_path: Path) -> None:
    marker = tmp_path / "teardown"
    proc = _start(TEARS_DOWN, str(marker))
    rehearse.stop_harness(proc)
    assert proc.returncode != 0
    assert marker.read_text() == "torn down"


def test_a_harness_that_does_not_stop_is_killed_after_the_grace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rehearse, "STOP_GRACE_S", 1)
    proc = _start(IGNORES)
    rehearse.stop_harness(proc)
    assert proc.returncode == -9
