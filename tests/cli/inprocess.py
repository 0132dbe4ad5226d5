"""`inferplane <args>` run in this test process, answered as `subprocess.run` would.

A CLI test in a child process pays for importing Pulumi and the cloud providers each time
(about 2 s on the project's 2-core machines); here it pays once per worker. `main` is the
entry point `python -m inferplane` calls, so the exit code, stdout and stderr are the ones a
user sees. `tests/test_distribution.py` still runs the commands from an installed copy in
a child process.

`INFERPLANE_JOBS=1`: `check` runs every environment in this process instead of forking
workers from a process whose test runner holds threads.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path

from inferplane.app.cli import main


class _Stream(io.StringIO):
    """A captured stream that says it is UTF-8, as a child's pipe with
    ``PYTHONIOENCODING=utf-8`` does (`diff` prints → only to a UTF-8 stream)."""

    encoding = "utf-8"


@contextlib.contextmanager
def _environment(changes: Mapping[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in changes}
    os.environ.update(changes)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run(
    *args: str, cwd: Path | str | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`inferplane *args` in `cwd` with `env` added to the environment."""
    out, err = _Stream(), _Stream()
    here = Path.cwd()
    thresholds = gc.get_threshold()
    with _environment({"INFERPLANE_JOBS": "1", **(env or {})}):
        try:
            if cwd is not None:
                os.chdir(cwd)
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(list(args))
        finally:
            os.chdir(here)
            gc.set_threshold(*thresholds)
    return subprocess.CompletedProcess(["inferplane", *args], code, out.getvalue(), err.getvalue())
