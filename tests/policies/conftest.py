"""Policy tests run environments in this process: forking a test runner that may hold other
threads' locks is not worth the speed (the CLI tests cover the forked path)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INFERPLANE_JOBS", "1")
