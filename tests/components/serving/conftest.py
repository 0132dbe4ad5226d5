"""Fixtures for the serving tests: ModelServers of the reference blueprint, run offline."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from serving_fixtures import serve

from inferplane.app.offline import Recording
from inferplane.blueprint.model import Environment


@pytest.fixture(scope="session")
def served(staging: Environment, prod: Environment) -> Callable[[str], Recording]:
    """`served("staging")`: every reference model's ModelServer, offline (once a session)."""
    envs = {"staging": staging, "prod": prod}
    cache: dict[str, Recording] = {}

    def get(env_name: str) -> Recording:
        if env_name not in cache:
            cache[env_name] = serve(envs[env_name])
        return cache[env_name]

    return get


@pytest.fixture(scope="session")
def served_whole(
    stored_plan: Callable[[str, Environment, Callable[[], Recording]], Recording],
) -> Callable[[Environment], Recording]:
    """`served_whole(env)`: `serve(env)`, every model's ModelServer, run once a session for
    an environment of that content (tests over every blueprint's environments share it)."""
    return lambda env: stored_plan("serve", env, lambda: serve(env))
