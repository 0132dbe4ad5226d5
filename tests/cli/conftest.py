"""The fixtures of the CLI tests."""

from __future__ import annotations

import pytest
from bundled_check import BundledCheck, run_bundled_check


@pytest.fixture(scope="session")
def bundled_check() -> BundledCheck:
    """`inferplane check` of every bundled blueprint together with the platform's policy
    config, once a session: its exit and JSON report (bundled_check.py)."""
    return run_bundled_check()
