"""Policy tests run environments in this process: forking a test runner that may hold other
threads' locks is not worth the speed (the CLI tests cover the forked path).

Their blueprints are the golden ones changed in one place: an environment planned before in
the session is not planned again (`plans_by_environment`, tests/conftest.py)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INFERPLANE_JOBS", "1")


@pytest.fixture(autouse=True)
def _shared_plans(plans_by_environment: None) -> None:
    """Every policy test shares the session's plans."""
