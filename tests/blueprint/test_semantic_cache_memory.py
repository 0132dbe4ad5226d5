# ruff: noqa: E501  (exact diagnostics read best unwrapped)
"""Redis response caches must fit the system nodes of a cluster the blueprint creates
(`inferplane.blueprint.checks.semantic_cache`): exact diagnostics, and the numbers behind them."""

from __future__ import annotations

import json

import pytest
from test_semantic import BASE, edit

from inferplane.blueprint import system_nodes
from inferplane.blueprint.checks.semantic import check
from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.loading.schema import SCHEMA_FILE, validate_document

TRITON = "    tensorrt: {}\n"
SECOND = (
    "  rank2:\n    server: triton\n    source: rank/model.onnx\n    pool: l4\n"
    "    tensorrt: {}\n    response_cache: {backend: redis, size_mb: 3000}\n"
)
GKE_CREATED = edit("cluster: {existing: prod-gke}", "cluster: {create: true}")


def errors(text: str) -> list[str]:
    doc = load_text(text, "bp.yaml")
    return [d.format() for d in (validate_document(doc) or check(doc))]


def cache(size_mb: int, text: str = BASE) -> str:
    """BASE with a Redis cache of `size_mb` on the Triton model `rank`."""
    return edit(
        TRITON, TRITON + f"    response_cache: {{backend: redis, size_mb: {size_mb}}}\n", text
    )


CASES = [
    pytest.param(
        cache(11000),
        [
            "bp.yaml:34:47: error: models.rank.response_cache.size_mb: in environment 'stg' the Valkey server of a 11000 MB Redis cache requests 16564 MiB (1.5 x size_mb + 64), more than the 15391 MiB one m6i.xlarge EKS system node can give, so it would stay Pending and hold back the model's rollout; use a size_mb of at most 10218, or `backend: local`"
        ],
        id="larger-than-an-eks-system-node",
    ),
    pytest.param(
        cache(9040, GKE_CREATED),
        [
            "bp.yaml:34:47: error: models.rank.response_cache.size_mb: in environment 'stg' the Redis cache of model 'rank' in zone 'us-east-1a' requests 13624 MiB, more than the 7695 MiB (half of one m6i.xlarge EKS system node) a zone keeps for Redis caches beside the add-ons on its system nodes; keep the Redis caches of a zone within 7695 MiB together (one cache alone: size_mb at most 5087), or give some models `backend: local`",
            "bp.yaml:34:47: error: models.rank.response_cache.size_mb: in environment 'prod' the Valkey server of a 9040 MB Redis cache requests 13624 MiB (1.5 x size_mb + 64), more than the 13622 MiB one e2-standard-4 GKE system node can give, so it would stay Pending and hold back the model's rollout; use a size_mb of at most 9039, or `backend: local`",
        ],
        id="larger-than-a-gke-system-node",
    ),
    pytest.param(
        cache(6000),
        [
            "bp.yaml:34:47: error: models.rank.response_cache.size_mb: in environment 'stg' the Redis cache of model 'rank' in zone 'us-east-1a' requests 9064 MiB, more than the 7695 MiB (half of one m6i.xlarge EKS system node) a zone keeps for Redis caches beside the add-ons on its system nodes; keep the Redis caches of a zone within 7695 MiB together (one cache alone: size_mb at most 5087), or give some models `backend: local`"
        ],
        id="one-cache-over-its-zone-share",
    ),
    pytest.param(
        cache(3000) + SECOND,
        [
            "bp.yaml:41:47: error: models.rank2.response_cache.size_mb: in environment 'stg' the Redis caches of models 'rank', 'rank2' in zone 'us-east-1a' request 9128 MiB, more than the 7695 MiB (half of one m6i.xlarge EKS system node) a zone keeps for Redis caches beside the add-ons on its system nodes; keep the Redis caches of a zone within 7695 MiB together (one cache alone: size_mb at most 5087), or give some models `backend: local`"
        ],
        id="caches-of-a-zone-together",
    ),
    pytest.param(cache(5087), [], id="largest-single-cache-on-eks"),
    pytest.param(
        cache(2000) + SECOND.replace("3000", "2000"), [], id="two-caches-within-the-share"
    ),
    pytest.param(
        cache(3000) + SECOND.replace("backend: redis", "backend: local"),
        [],
        id="local-caches-do-not-count",
    ),
    pytest.param(
        edit("cluster: {create: true}", "cluster: {existing: shared-eks}", cache(20000)),
        [],
        id="attached-clusters-keep-their-own-nodes",
    ),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_redis_cache_memory(text: str, expected: list[str]) -> None:
    assert errors(text) == expected


def test_allocatable_memory_of_the_system_nodes() -> None:
    # EKS AL2023: 11 * 58 + 255 MiB kube-reserved and a 100 MiB eviction threshold;
    # GKE: 25% of 4 GiB + 20% of 4 GiB + 10% of 8 GiB and the same threshold.
    assert system_nodes.ALLOCATABLE_MIB == {"aws": 16384 - 893 - 100, "gcp": 16384 - 2662 - 100}


def test_the_schema_states_the_same_numbers() -> None:
    schema = json.loads(SCHEMA_FILE.read_text())
    text = schema["$defs"]["responseCache"]["properties"]["size_mb"]["description"]
    for cloud, machine in (("aws", "m6i.xlarge"), ("gcp", "e2-standard-4")):
        assert f"{system_nodes.ALLOCATABLE_MIB[cloud]} MiB" in text
        assert machine in text


def test_a_size_set_by_an_override_is_blamed_in_the_override() -> None:
    text = edit(
        "    cluster: {create: true}\n",
        "    cluster: {create: true}\n    overrides:\n      models:\n"
        "        rank:\n          response_cache: {size_mb: 6000}\n",
        cache(256),
    )
    assert errors(text) == [
        "bp.yaml:15:37: error: environments.stg.overrides.models.rank.response_cache.size_mb: in environment 'stg' the Redis cache of model 'rank' in zone 'us-east-1a' requests 9064 MiB, more than the 7695 MiB (half of one m6i.xlarge EKS system node) a zone keeps for Redis caches beside the add-ons on its system nodes; keep the Redis caches of a zone within 7695 MiB together (one cache alone: size_mb at most 5087), or give some models `backend: local`"
    ]
