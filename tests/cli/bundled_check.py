"""One `inferplane check` of every bundled blueprint together, which several CLI tests read:
run once a session by the `bundled_check` fixture (conftest.py), on one worker (the tests
that read it carry `BUNDLED_CHECK`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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
    platform's policy config (policies/platform-config.yaml); its exit and JSON report."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "inferplane",
            "check",
            "--policy-config",
            "policies/platform-config.yaml",
            "--format",
            "json",
            "--",
            *BUNDLED,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env={**os.environ, "HF_TOKEN": "hf_e2e_check", "INFERPLANE_TODAY": "2026-06-01"},
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc, json.loads(proc.stdout) if proc.stdout.strip() else {}
