"""The fixtures of the CLI tests."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from bundled_check import BundledCheck, run_bundled_check


@pytest.fixture(scope="session")
def bundled_check(plan_sharing: Callable[[pytest.MonkeyPatch], None]) -> BundledCheck:
    """`inferplane check` of every bundled blueprint together with the platform's policy
    config, once a session: its exit and JSON report (bundled_check.py). An environment
    the session has planned already is not planned again (`plan_sharing`)."""
    with pytest.MonkeyPatch.context() as patch:
        plan_sharing(patch)
        return run_bundled_check()
