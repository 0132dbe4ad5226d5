"""What a rehearsal test does when its harness says it cannot run here (exit 2: a tool not
built, no network namespace): skip on a developer's machine, fail under CI (``CI=true``),
which builds every tool and runs as root, so "cannot run" there is a fault to see; and the
`inferplane rehearse` run the CLI's rehearsal tests share."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

import pytest


def cannot_run(reason: str) -> NoReturn:
    if os.environ.get("CI") == "true":
        pytest.fail(f"the rehearsal could not run under CI: {reason}")
    pytest.skip(reason)


def rehearse(
    blueprint: Path, profile: Path, out: Path, *extra: str, timeout: int = 900
) -> subprocess.CompletedProcess[str]:
    """``inferplane rehearse BLUEPRINT --env local --traffic PROFILE --time-scale 10 --out
    OUT [EXTRA...]`` in a child process; `cannot_run` when the harness says it cannot run
    here."""
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "inferplane",
            "rehearse",
            str(blueprint),
            "--env",
            "local",
            "--traffic",
            str(profile),
            "--time-scale",
            "10",
            "--out",
            str(out),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if res.returncode == 2 and "cannot run here" in res.stderr:
        cannot_run(res.stderr.strip().splitlines()[-1])
    return res
