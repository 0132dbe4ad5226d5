"""How trusted-registries reads an image reference (the fixtures cover the rule end to end)."""

from __future__ import annotations

import pytest

from inferplane.policies.rules import rule
from inferplane.policies.rules.trusted_registries import ecr_patterns, repository, trusted

DEFAULTS = rule("trusted-registries").defaults()["registries"]
AWS = {"region": "us-east-1"}
GCP = {"region": "us-central1", "project": "acme-ml-prod"}


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        ("vllm/vllm-openai:v0.10.2", ("docker.io", "vllm/vllm-openai")),
        ("busybox:1.36", ("docker.io", "library/busybox")),
        ("nvcr.io/nvidia/tritonserver:25.08-py3", ("nvcr.io", "nvidia/tritonserver")),
        ("localhost:5000/x@sha256:" + "0" * 64, ("localhost:5000", "x")),
        ("NVCR.IO/nvidia/x:1", ("nvcr.io", "nvidia/x")),
    ],
)
def test_repository(image: str, expected: tuple[str, str]) -> None:
    assert repository(image) == expected


@pytest.mark.parametrize(
    ("image", "facts", "ok"),
    [
        ("nvcr.io/nvidia/tritonserver:25.08-py3", AWS, True),
        ("nvcr.io/someone/tritonserver:25.08-py3", AWS, False),
        ("vllm/vllm-openai:v0.10.2", AWS, True),
        ("docker.io/vllm/vllm-openai:v0.10.2", AWS, True),
        ("vllm-openai:v0.10.2", AWS, False),
        ("registry.k8s.io/pause:3.10", AWS, True),
        ("registry.k8s.io/pause-evil:3.10", AWS, False),
        ("docker.io/valkey/valkey:9.0.8-alpine", AWS, True),
        ("valkey/valkey:9.0.8-alpine", GCP, True),
        ("docker.io/valkey/valkey-evil:9.0.8", AWS, False),
        ("valkey:9.0.8", AWS, False),  # docker.io/library/valkey: not the project's own
        # The llm-d router's picker and its Envoy proxy, as its chart renders them.
        ("ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.10.0", AWS, True),
        ("ghcr.io/llm-d/llm-d-router-endpoint-picker-evil:v0.10.0", AWS, False),
        ("ghcr.io/someone/llm-d-router-endpoint-picker:v0.10.0", AWS, False),
        ("docker.io/envoyproxy/envoy:distroless-v1.33.2", GCP, True),
        ("envoyproxy/envoy-contrib:v1.33.2", GCP, False),
        # No default trusts an ECR registry: the platform lists its accounts (ecr_accounts).
        ("123456789012.dkr.ecr.us-east-1.amazonaws.com/vllm:1", AWS, False),
        ("123456789012.dkr.ecr.us-east-1.amazonaws.com.evil.io/vllm:1", AWS, False),
        # A wildcard of the host never spans into the path.
        ("evil.io/x.dkr.ecr.us-east-1.amazonaws.com/vllm:1", AWS, False),
        ("us-central1-docker.pkg.dev/acme-ml-prod/models/vllm:1", GCP, True),
        ("us-central1-docker.pkg.dev/someone-else/models/vllm:1", GCP, False),
        ("gcr.io/acme-ml-prod/vllm:1", GCP, True),
        ("gcr.io/acme-ml-prod/vllm:1", {"region": "us-central1"}, False),  # project unknown
    ],
)
def test_trusted(image: str, facts: dict[str, str], ok: bool) -> None:
    assert trusted(image, DEFAULTS, facts) is ok


def test_ecr_is_trusted_only_for_the_accounts_the_platform_lists_per_environment() -> None:
    accounts = {"search/prod": ["111111111111"], "*": ["222222222222"]}
    prod = ecr_patterns(accounts, "search", "prod")
    staging = ecr_patterns(accounts, "search", "staging")
    image = "{}.dkr.ecr.us-east-1.amazonaws.com/ml/vllm:1"
    assert trusted(image.format("111111111111"), prod, AWS)
    assert not trusted(image.format("111111111111"), staging, AWS)
    assert trusted(image.format("222222222222"), staging, AWS)
    assert not trusted(image.format("333333333333"), prod, AWS)  # any other account
    assert not trusted(
        "111111111111.dkr.ecr.eu-west-1.amazonaws.com/ml/vllm:1", prod, AWS
    )  # the listed account, another region


def test_ecr_accounts_are_granted_to_a_blueprint_never_to_an_environment_name() -> None:
    """A blueprint names its own environments: another blueprint's `prod` (or a key that
    reads like an environment) grants nothing to an environment that calls itself prod."""
    accounts = {"search/prod": ["111111111111"], "chat": ["444444444444"]}
    image = "{}.dkr.ecr.us-east-1.amazonaws.com/ml/vllm:1"
    other_prod = ecr_patterns(accounts, "attacker", "prod")
    assert not trusted(image.format("111111111111"), other_prod, AWS)
    assert not trusted(image.format("444444444444"), other_prod, AWS)
    chat_any = ecr_patterns(accounts, "chat", "whatever")
    assert trusted(image.format("444444444444"), chat_any, AWS)
    assert not trusted(image.format("111111111111"), chat_any, AWS)
    assert ecr_patterns(accounts, None, "prod") == []  # online without facts: nothing
