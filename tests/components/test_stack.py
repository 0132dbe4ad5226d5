"""InferenceStack: the whole program for both reference environments — every resource
under the stack, explicit providers, the environment ConfigMap, dependency order, and the
stack's outputs."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from inferplane.app.offline import RecordedResource, Recording
from inferplane.blueprint import naming
from inferplane.blueprint.derived import facts
from inferplane.blueprint.model import Environment
from inferplane.components.stack import environment_data

ENVS = ("staging", "prod")
Get = Callable[[str], Recording]


def stack_of(rec: Recording) -> RecordedResource:
    (stack,) = rec.of_type("inferplane:stack:InferenceStack")
    return stack


def ancestors(rec: Recording, resource: RecordedResource) -> list[RecordedResource]:
    chain = []
    parent = rec.parent_of(resource)
    while parent is not None:
        chain.append(parent)
        parent = rec.parent_of(parent)
    return chain


@pytest.mark.parametrize("env_name", ENVS)
def test_everything_descends_from_the_stack(reference_recording: Get, env_name: str) -> None:
    rec = reference_recording(env_name)
    stack = stack_of(rec)
    assert stack.name == f"support-assistant-{env_name}"
    assert [r.name for r in rec if r.parent is None] == [stack.name]
    for resource in rec:
        if resource is not stack:
            assert ancestors(rec, resource)[-1].urn == stack.urn, resource.name


@pytest.mark.parametrize("env_name", ENVS)
def test_direct_children_of_the_stack(
    reference_recording: Get, reference_env: Callable[[str], Environment], env_name: str
) -> None:
    rec = reference_recording(env_name)
    env = reference_env(env_name)
    name = f"support-assistant-{env_name}"
    children = {(r.type, r.name) for r in rec.children(stack_of(rec))}
    expected = {
        (
            "pulumi:providers:aws" if env.cloud == "aws" else "pulumi:providers:gcp",
            f"{name}-{env.cloud}",
        ),
        ("inferplane:cluster:Cluster", name),
        ("inferplane:addons:ClusterAddons", name),
        ("inferplane:identity:ModelStoreAccess", name),
        ("kubernetes:core/v1:Namespace", f"{name}-namespace"),
        ("kubernetes:core/v1:ConfigMap", f"{name}-environment"),
        ("kubernetes:networking.k8s.io/v1:NetworkPolicy", f"{name}-default-deny"),
        ("kubernetes:networking.k8s.io/v1:NetworkPolicy", f"{name}-allow-dns"),
    }
    expected |= {("inferplane:node_pool:GpuNodePool", f"{name}-{p}") for p in env.pools}
    expected |= {("inferplane:serving:ModelServer", f"{name}-{m}") for m in env.models}
    # Per pool a model uses: its pre-pull DaemonSet, and its placeholders when it keeps
    # spare GPUs (l4, one per zone).
    used = {m.pool for m in env.models.values()}
    expected |= {("inferplane:serving:ImagePrePull", f"{name}-{p}-image-prepull") for p in used}
    expected |= {("inferplane:serving:SpareGpus", f"{name}-l4-spare-gpus")}
    assert children == expected


@pytest.mark.parametrize("env_name", ENVS)
def test_every_resource_uses_an_explicit_provider(reference_recording: Get, env_name: str) -> None:
    rec = reference_recording(env_name)
    (kubernetes,) = rec.of_type("pulumi:providers:kubernetes")
    cloud = "aws" if env_name == "staging" else "gcp"
    (cloud_provider,) = rec.of_type(f"pulumi:providers:{cloud}")
    for resource in rec:
        if not resource.custom or resource.type.startswith("pulumi:providers:"):
            continue
        if resource.type.startswith("kubernetes:"):
            assert resource.provider == kubernetes.urn, resource.name
        else:
            assert resource.type.startswith(f"{cloud}:"), resource.type
            assert resource.provider == cloud_provider.urn, resource.name


def test_the_cloud_provider_comes_from_the_blueprint(reference_recording: Get) -> None:
    (aws,) = reference_recording("staging").of_type("pulumi:providers:aws")
    assert aws.inputs["region"] == "us-east-1"
    (gcp,) = reference_recording("prod").of_type("pulumi:providers:gcp")
    assert gcp.inputs["project"] == "acme-ml-prod"
    assert gcp.inputs["region"] == "us-central1"


@pytest.mark.parametrize("env_name", ENVS)
def test_namespace_and_environment_configmap(
    reference_recording: Get, reference_env: Callable[[str], Environment], env_name: str
) -> None:
    rec = reference_recording(env_name)
    env = reference_env(env_name)
    (namespace,) = [
        r for r in rec.of_type("kubernetes:core/v1:Namespace") if rec.parent_of(r) == stack_of(rec)
    ]
    assert namespace.inputs["metadata"]["name"] == naming.namespace(env.blueprint)
    gate = namespace.inputs["metadata"]["labels"].get("elbv2.k8s.aws/pod-readiness-gate-inject")
    assert gate == ("enabled" if env.cloud == "aws" else None)
    (configmap,) = [
        r for r in rec.of_type("kubernetes:core/v1:ConfigMap") if r.name.endswith("-environment")
    ]
    assert configmap.inputs["metadata"]["name"] == naming.ENVIRONMENT_CONFIGMAP
    assert configmap.inputs["metadata"]["namespace"] == naming.namespace(env.blueprint)
    assert configmap.inputs["data"] == environment_data(env)


def test_environment_data_publishes_the_environments_waivers(
    waived_env: Callable[[str], Environment],
) -> None:
    env = waived_env("staging")
    data = environment_data(env)
    assert json.loads(data["waivers"]) == [
        {
            "rule": "warm-replicas",
            "target": "models.chat",
            "environments": ["staging"],
            "reason": "Staging has no customer traffic; a cold start there is acceptable.",
            "expires": "2027-03-31",
            "path": ["policies", "waivers", 0],
        }
    ]
    read = facts.from_config_map(data)  # what the CrossGuard pack reads online
    assert [w.rule for w in read.waivers] == ["warm-replicas"]


def test_environment_data_of_prod(prod: Environment) -> None:
    data = environment_data(prod)
    assert {k: v for k, v in data.items() if k not in {"pools", "models"}} == {
        "version": "5",
        "blueprint": "support-assistant",
        "environment": "prod",
        "cloud": "gcp",
        "region": "us-central1",
        "zones": '["us-central1-a", "us-central1-b"]',
        "waivers": "[]",  # the reference carries no waiver
    }
    assert json.loads(data["pools"]) == {
        "h100": {
            "gpu": "nvidia-h100-80gb",
            "gpus_per_node": 8,
            "gpu_resource": "nvidia.com/gpu",
            "slices_per_gpu": 1,
            "units_per_node": 8,
            "sharing": "exclusive",
            "zones": ["us-central1-a"],
            "nodes_min": 0,
            "nodes_max": 2,
        },
        "l4": {
            "gpu": "nvidia-l4",
            "gpus_per_node": 1,
            "gpu_resource": "nvidia.com/gpu",
            "slices_per_gpu": 1,
            "units_per_node": 1,
            "sharing": "exclusive",
            "zones": ["us-central1-a", "us-central1-b"],
            "nodes_min": 4,
            "nodes_max": 10,
        },
    }
    assert facts.from_config_map(data) == facts.environment_facts(prod)


@pytest.mark.parametrize("env_name", ENVS)
def test_models_wait_for_add_ons_namespace_and_identities(
    reference_recording: Get, env_name: str
) -> None:
    rec = reference_recording(env_name)
    releases = {r.urn for r in rec.of_type("kubernetes:helm.sh/v3:Release")}
    accounts = {r.urn for r in rec.of_type("kubernetes:core/v1:ServiceAccount")}
    namespace = next(
        r.urn for r in rec.of_type("kubernetes:core/v1:Namespace") if r.name.endswith("-namespace")
    )
    servers = rec.of_type("inferplane:serving:ModelServer")
    assert len(servers) == 4
    for server in servers:
        deps = set(server.depends_on)
        assert releases <= deps
        assert accounts <= deps
        assert namespace in deps


def test_node_pools_wait_for_the_cluster(reference_recording: Get) -> None:
    rec = reference_recording("staging")
    (eks,) = rec.of_type("aws:eks/cluster:Cluster")
    for pool in rec.of_type("inferplane:node_pool:GpuNodePool"):
        assert eks.urn in pool.depends_on


@pytest.mark.parametrize("env_name", ENVS)
def test_dependency_graph_stays_shallow(reference_recording: Get, env_name: str) -> None:
    """Long chains of dependent resources make the SDK recurse deeply; keep them short."""
    rec = reference_recording(env_name)
    known = {r.urn for r in rec}
    depth: dict[str, int] = {}

    def longest(urn: str) -> int:
        if urn not in depth:
            depth[urn] = 0  # guards the recursion only; the graph has no cycles
            deps = rec.by_urn(urn).depends_on if urn in known else ()
            depth[urn] = 1 + max((longest(d) for d in deps), default=0)
        return depth[urn]

    assert max(longest(r.urn) for r in rec) <= 25


def test_stack_outputs(reference_recording: Get) -> None:
    staging = reference_recording("staging").outputs
    assert staging["cluster_name"] == "support-assistant-staging"
    assert staging["cluster_endpoint"].startswith("https://")
    assert staging["namespace"] == "support-assistant"
    assert set(staging["model_endpoints"]) == {"chat", "ranker", "toxicity", "nightly-embed"}
    prod = reference_recording("prod").outputs
    assert prod["cluster_name"] == "prod-gke"
    assert prod["cluster_endpoint"].startswith("https://")


def test_node_groups_of_the_reference_environments(reference_recording: Get) -> None:
    staging = reference_recording("staging")
    groups = {
        r.inputs["nodeGroupName"]
        for r in staging.of_type("aws:eks/nodeGroup:NodeGroup")
        if naming.POOL_LABEL in r.inputs.get("labels", {})
    }
    assert groups == {"support-assistant-staging-l4-a", "support-assistant-staging-h100-a"}
    prod = reference_recording("prod")
    pools = {r.inputs["name"] for r in prod.of_type("gcp:container/nodePool:NodePool")}
    assert pools == {
        "support-assistant-prod-l4-a",
        "support-assistant-prod-l4-b",
        "support-assistant-prod-h100-a",
    }
