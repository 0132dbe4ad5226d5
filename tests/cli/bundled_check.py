"""One `inferplane check` of every bundled blueprint together, which several CLI tests read:
run once a session by the `bundled_check` fixture (conftest.py), on one worker (the tests
that read it carry `BUNDLED_CHECK`)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import inprocess
import pytest

ROOT = Path(__file__).resolve().parents[2]

BUNDLED = sorted(
    str(p.relative_to(ROOT))
    for folder in ("blueprints", "e2e/blueprints")
    for p in (ROOT / folder).glob("*.yaml")
)
"""Every bundled blueprint, as the pull-request workflow names them (relative paths)."""

BUNDLED_CHECK = pytest.mark.xdist_group("bundled-check")

BundledCheck = tuple[subprocess.CompletedProcess[str], dict[str, Any]]


def run_bundled_check() -> BundledCheck:
    """What the pull-request workflow runs: every bundled blueprint, together, with the
    platform's policy config (policies/platform-config.yaml); its exit and JSON report.

    By the command's entry point in this process (inprocess.py), as the other CLI tests
    run it: a child process would pay for importing the program again, and would plan
    again the environments the session has planned already (the conftest's `bundled_check`
    shares them). tests/test_distribution.py runs `check` from an installed copy in a
    child process."""
    proc = inprocess.run(
        "check",
        "--policy-config",
        "policies/platform-config.yaml",
        "--format",
        "json",
        "--",
        *BUNDLED,
        cwd=ROOT,
        env={"HF_TOKEN": "hf_e2e_check", "INFERPLANE_TODAY": "2026-06-01"},
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc, json.loads(proc.stdout) if proc.stdout.strip() else {}
