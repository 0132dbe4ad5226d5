"""GPU nodes launched by the cluster's Karpenter: the exact NodePools and EC2NodeClass,
checked against the Karpenter v1 CRDs of aws/karpenter-provider-aws v1.14.1, and what
the capacity rules read from them."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest
import yaml
from cloud_fixtures import attached, cloud_recording, with_pool
from serving.crd_schema import CRDS, errors

from inferplane.app.check import stack_of
from inferplane.app.offline import RecordedResource
from inferplane.blueprint import naming
from inferplane.blueprint.addons import resolve_addons
from inferplane.blueprint.model import Environment
from inferplane.policies.rules import warm_replicas
from inferplane.policies.stack import KARPENTER_GPU_COUNT

NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
KARPENTER = {
    "karpenter": {
        "mode": "existing",
        "node_role": "KarpenterNodeRole-shared-eks",
        "ami_alias": "al2023@v20260714",
    }
}


def on_karpenter(env: Environment) -> Environment:
    """Staging attached to a cluster whose Karpenter launches the GPU nodes (whole H100s:
    validation refuses MIG there)."""
    env = with_pool(attached(env, "shared-eks"), "h100", sharing="exclusive", mig_profile=None)
    cluster = dataclasses.replace(env.cluster, addons=resolve_addons(KARPENTER))
    return dataclasses.replace(env, cluster=cluster)


@pytest.fixture(scope="session")
def env(staging: Environment) -> Environment:
    return on_karpenter(staging)


def body(r: RecordedResource) -> dict[str, Any]:
    return {k: r.inputs[k] for k in ("apiVersion", "kind", "metadata", "spec")}


def test_one_node_pool_per_pool_and_zone_and_no_node_group(env: Environment) -> None:
    rec = cloud_recording(env)
    assert rec.of_type("aws:eks/nodeGroup:NodeGroup") == []
    assert rec.of_type("aws:autoscaling/tag:Tag") == []
    pools = {r.inputs["metadata"]["name"]: r for r in rec.of_type(NODE_POOL)}
    assert sorted(pools) == ["support-assistant-staging-h100-a", "support-assistant-staging-l4-a"]
    l4 = pools["support-assistant-staging-l4-a"]
    assert l4.inputs["spec"] == {
        "template": {
            "metadata": {
                "labels": {
                    naming.POOL_LABEL: "l4",
                    naming.BLUEPRINT_LABEL: "support-assistant",
                    naming.GPU_LABEL: "nvidia-l4",
                    naming.ZONE_LABEL: "us-east-1a",
                }
            },
            "spec": {
                "nodeClassRef": {
                    "group": "karpenter.k8s.aws",
                    "kind": "EC2NodeClass",
                    "name": "support-assistant-staging-l4",
                },
                "requirements": [
                    {
                        "key": "topology.kubernetes.io/zone",
                        "operator": "In",
                        "values": ["us-east-1a"],
                    },
                    {
                        "key": "node.kubernetes.io/instance-type",
                        "operator": "In",
                        "values": ["g6.2xlarge"],
                    },
                    {
                        "key": "karpenter.sh/capacity-type",
                        "operator": "In",
                        "values": ["on-demand"],
                    },
                    {"key": KARPENTER_GPU_COUNT, "operator": "In", "values": ["1"]},
                ],
                "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
                "expireAfter": "Never",
            },
        },
        # A total over the NodePool: staging's nodes.max 7 per zone, one GPU each.
        "limits": {"nvidia.com/gpu": "7"},
        "disruption": {
            "consolidationPolicy": "WhenEmpty",
            "consolidateAfter": "10m",
            "budgets": [{"nodes": "1"}],
        },
    }
    h100 = pools["support-assistant-staging-h100-a"].inputs["spec"]
    assert h100["limits"] == {"nvidia.com/gpu": "16"}  # nodes.max 2 x 8 GPUs
    assert h100["template"]["spec"]["requirements"][1]["values"] == ["p5.48xlarge"]


def test_the_node_class_pins_the_ami_and_uses_the_environment_s_subnets(
    env: Environment,
) -> None:
    rec = cloud_recording(env)
    classes = {r.inputs["metadata"]["name"]: r for r in rec.of_type(NODE_CLASS)}
    assert sorted(classes) == ["support-assistant-staging-h100", "support-assistant-staging-l4"]
    spec = classes["support-assistant-staging-l4"].inputs["spec"]
    (subnet,) = spec["subnetSelectorTerms"]
    assert re.fullmatch(r"subnet-[0-9a-f]+", subnet["id"])
    assert spec == {
        "role": "KarpenterNodeRole-shared-eks",
        "amiSelectorTerms": [{"alias": "al2023@v20260714"}],
        "subnetSelectorTerms": [subnet],
        # Not the cluster security group alone: the groups tagged for Karpenter's discovery
        # with the cluster's name, which include a separate node security group.
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "shared-eks"}}],
        "blockDeviceMappings": [
            {
                "deviceName": "/dev/xvda",
                "ebs": {
                    "volumeSize": "200Gi",
                    "volumeType": "gp3",
                    "encrypted": True,
                    "deleteOnTermination": True,
                },
            }
        ],
        "metadataOptions": {
            "httpEndpoint": "enabled",
            "httpTokens": "required",
            "httpPutResponseHopLimit": 1,
        },
        "tags": {
            "inferplane.dev/blueprint": "support-assistant",
            "inferplane.dev/environment": "staging",
            "managed-by": "inferplane",
            "owner": "ml-platform@example.com",
            naming.POOL_LABEL: "l4",
        },
    }


def test_the_node_class_selects_the_security_groups_the_blueprint_names(
    staging: Environment,
) -> None:
    env = on_karpenter(staging)
    raw = {
        "karpenter": {
            **KARPENTER["karpenter"],
            "security_group_selector": [
                {"id": "sg-0123456789abcdef0"},
                {"tags": {"team": "ml", "tier": "gpu"}},
                {"name": "shared-eks-node"},
            ],
        }
    }
    cluster = dataclasses.replace(env.cluster, addons=resolve_addons(raw))
    env = dataclasses.replace(env, cluster=cluster)
    rec = cloud_recording(env)
    terms = {
        r.inputs["metadata"]["name"]: r.inputs["spec"]["securityGroupSelectorTerms"]
        for r in rec.of_type(NODE_CLASS)
    }
    expected = [
        {"id": "sg-0123456789abcdef0"},
        {"tags": {"team": "ml", "tier": "gpu"}},
        {"name": "shared-eks-node"},
    ]
    assert terms == {
        "support-assistant-staging-h100": expected,
        "support-assistant-staging-l4": expected,
    }
    for r in rec.of_type(NODE_CLASS):
        assert errors(body(r)) == []


@pytest.mark.parametrize("kind", [NODE_POOL, NODE_CLASS])
def test_the_objects_validate_against_the_karpenter_crds(env: Environment, kind: str) -> None:
    rec = cloud_recording(env)
    objects = rec.of_type(kind)
    assert objects
    for r in objects:
        assert errors(body(r)) == []


def test_crd_validation_catches_a_snake_case_key(env: Environment) -> None:
    (r, *_) = cloud_recording(env).of_type(NODE_POOL)
    broken = body(r)
    broken["spec"] = {**broken["spec"], "node_class_ref": {}}
    assert errors(broken)


def _allowed(rule: str) -> list[str]:
    return re.findall(r'\\"([^"\\]+)\\"', rule) or re.findall(r'"([^"]+)"', rule)


def test_labels_and_requirement_keys_pass_the_crd_s_restricted_domains(env: Environment) -> None:
    """The CRD's CEL rules (which the API server runs, and jsonschema does not) restrict
    the karpenter.sh and karpenter.k8s.aws domains to a list of keys."""
    crd = yaml.safe_load(CRDS["NodePool"].read_text())
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    template = schema["properties"]["spec"]["properties"]["template"]["properties"]
    rules = template["spec"]["properties"]["requirements"]["items"]["properties"]["key"][
        "x-kubernetes-validations"
    ]
    allowed = {k for rule in rules for k in _allowed(rule["rule"])}
    assert KARPENTER_GPU_COUNT in allowed and "karpenter.sh/capacity-type" in allowed
    restricted = ("karpenter.sh", "karpenter.k8s.aws", "kubernetes.io/hostname")
    for r in cloud_recording(env).of_type(NODE_POOL):
        spec = r.inputs["spec"]["template"]
        keys = [q["key"] for q in spec["spec"]["requirements"]]
        keys += list(spec["metadata"]["labels"])
        for key in keys:
            if key.split("/")[0].endswith(restricted[:2]) or key == restricted[2]:
                assert key in allowed, key


def test_no_cluster_autoscaler_with_karpenter(env: Environment) -> None:
    rec = cloud_recording(env)
    releases = [r.inputs["name"] for r in rec.of_type("kubernetes:helm.sh/v3:Release")]
    assert "cluster-autoscaler" not in releases
    roles = [r.name for r in rec.of_type("aws:iam/role:Role")]
    assert not [n for n in roles if n.endswith("-cluster-autoscaler")]


def test_the_capacity_rule_reads_the_node_pool_limit(env: Environment) -> None:
    """Karpenter keeps no idle nodes: warm replicas and spare GPUs get nodes up to the
    NodePool's limit, which the rule turns back into nodes.max."""
    stack = stack_of(env)
    (l4,) = [g for g in stack.node_groups if g.pool == "l4"]
    assert (l4.zones, l4.min_nodes, l4.max_nodes, l4.on_demand) == (("us-east-1a",), 7, 7, True)
    short = on_karpenter_with_max(env, 2)
    findings = warm_replicas.RULE.run(stack_of(short))
    capacity = [f for f in findings if f.field[-1] == "max"]
    assert [(f.target, f.field, f.message) for f in capacity] == [
        (
            "gpu_pools.l4",
            ("gpu_pools", "l4", "nodes", "max"),
            "in zone us-east-1a, nodes.max 2 (2 GPUs, the limit of the Karpenter NodePool) "
            "cannot hold the 4 GPUs of the warm replicas placed there and its spare GPUs "
            "(chat 1, ranker 1, toxicity 1, spare_gpus 1); raise nodes.max to 4",
        )
    ]


def on_karpenter_with_max(env: Environment, most: int) -> Environment:
    pool = env.pools["l4"]
    nodes = dataclasses.replace(pool.nodes, min=1, max=most)
    return with_pool(env, "l4", nodes=nodes)
