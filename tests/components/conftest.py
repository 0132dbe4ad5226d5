"""Fixtures for component tests: the bundled blueprint's two environments.

staging: AWS, a new cluster, one zone (us-east-1a); pools l4 (exclusive) and h100 (MIG).
prod: GCP, the existing cluster prod-gke, zones us-central1-a/b; h100 in us-central1-a only.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from inferplane.blueprint.model import Environment


@pytest.fixture(scope="session")
def staging(reference_env: Callable[[str], Environment]) -> Environment:
    return reference_env("staging")


@pytest.fixture(scope="session")
def prod(reference_env: Callable[[str], Environment]) -> Environment:
    return reference_env("prod")
