"""`check` runs the environments after the first in forked workers; a worker that dies (a
fork of a process that runs threads can crash in the child) must not hang the check nor
lose an environment: the rest run in the calling process instead."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from inferplane.app import check
from inferplane.blueprint.model import Environment
from inferplane.policies.config import PolicyConfig

_PARENT: list[int] = []
_REAL = check._evaluate_one


def dies_in_a_worker(index: int) -> object:
    """`check._evaluate_one`, but a forked worker ends at once, as a segmentation fault
    ends it: no result, no exception."""
    if os.getpid() != _PARENT[0]:
        os._exit(139)
    return _REAL(index)


def test_a_worker_that_dies_is_replaced_by_a_run_in_this_process(
    reference_env: Callable[[str], Environment], monkeypatch: pytest.MonkeyPatch
) -> None:
    envs = [reference_env(name) for name in ("staging", "prod", "local")]
    config = PolicyConfig.default()
    monkeypatch.setenv("INFERPLANE_JOBS", "2")
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    expected = [check.evaluate(check.stack_of(env), config) for env in envs]
    _PARENT[:] = [os.getpid()]
    monkeypatch.setattr(check, "_evaluate_one", dies_in_a_worker)
    found = check.evaluate_environments(envs, config)
    assert [[r.rule for r in results] for results in found] == [
        [r.rule for r in results] for results in expected
    ]
    assert [len(results) for results in found] == [len(results) for results in expected]
