"""examples/eks-gpu-pool: a plain Pulumi program using the components with no blueprint,
run offline as `pulumi up -s dev` would run it (from its directory, with its stack config):
one L4 node group pinned to the configured zone of the existing cluster."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest
import yaml

from inferplane.app.offline import Recording, run_callable
from inferplane.app.offline_mocks import CloudFacts
from inferplane.blueprint import naming

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "eks-gpu-pool"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
GROUP = "eks-gpu-pool-dev-l4-b"


def stack_config(path: Path) -> dict[str, str]:
    config = yaml.safe_load(path.read_text())["config"]
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}


@pytest.fixture(scope="session")
def recording() -> Recording:
    project = yaml.safe_load((EXAMPLE / "Pulumi.yaml").read_text())
    config = stack_config(EXAMPLE / "Pulumi.dev.yaml")
    return run_callable(
        lambda: runpy.run_path(str(EXAMPLE / "__main__.py"), run_name="__main__"),
        stack="dev",
        facts=CloudFacts(cloud="aws", region="us-east-1", zones=("us-east-1a", "us-east-1b")),
        config=config,
        project=project["name"],
    )


def test_the_example_is_a_python_pulumi_project_without_a_blueprint() -> None:
    project = yaml.safe_load((EXAMPLE / "Pulumi.yaml").read_text())
    assert project["name"] == "eks-gpu-pool"
    assert project["runtime"]["name"] == "python"
    source = (EXAMPLE / "__main__.py").read_text()
    assert "inferplane.components" in source
    assert "blueprint.resolve" not in source and ".yaml" not in source


def test_one_node_group_pinned_to_the_configured_zone(recording: Recording) -> None:
    (group,) = recording.of_type(NODE_GROUP)
    assert group.inputs["nodeGroupName"] == GROUP
    assert group.inputs["clusterName"] == "shared-eks"
    assert group.inputs["instanceTypes"] == ["g6.2xlarge"]
    assert group.inputs["amiType"] == "AL2023_x86_64_NVIDIA"
    assert group.inputs["capacityType"] == "ON_DEMAND"
    # The one subnet the lookup found in us-east-1b, no other zone's.
    (lookup,) = [i for i in recording.invokes if i.token == "aws:ec2/getSubnets:getSubnets"]
    zones = [f["values"] for f in lookup.args["filters"] if f["name"] == "availability-zone"]
    assert zones == [["us-east-1b"]]
    (subnet,) = group.inputs["subnetIds"]
    assert subnet.startswith("subnet-")


def test_autoscaler_can_start_the_group_from_zero(recording: Recording) -> None:
    template = "k8s.io/cluster-autoscaler/node-template/"
    copied = {
        r.inputs["tag"]["key"].removeprefix(template): r.inputs["tag"]["value"]
        for r in recording.of_type("aws:autoscaling/tag:Tag")
    }
    assert copied == {
        "taint/nvidia.com/gpu": "present:NoSchedule",
        "resources/nvidia.com/gpu": "1",
        f"label/{naming.POOL_LABEL}": "l4",
        f"label/{naming.BLUEPRINT_LABEL}": "eks-gpu-pool",
        f"label/{naming.GPU_LABEL}": "nvidia-l4",
        f"label/{naming.ZONE_LABEL}": "us-east-1b",
        "label/k8s.amazonaws.com/accelerator": "nvidia-l4",
    }


def test_node_group_labels_taint_and_scaling(recording: Recording) -> None:
    (group,) = recording.of_type(NODE_GROUP)
    assert group.inputs["labels"] == {
        naming.POOL_LABEL: "l4",
        naming.BLUEPRINT_LABEL: "eks-gpu-pool",
        naming.GPU_LABEL: "nvidia-l4",
        naming.ZONE_LABEL: "us-east-1b",
        "k8s.amazonaws.com/accelerator": "nvidia-l4",
    }
    assert group.inputs["taints"] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}
    ]
    assert group.inputs["scalingConfig"] == {"minSize": 1, "maxSize": 3, "desiredSize": 1}
    assert group.inputs["updateConfig"] == {"maxUnavailable": 1}
    tags = group.inputs["tags"]
    assert tags["k8s.io/cluster-autoscaler/enabled"] == "true"
    assert tags["k8s.io/cluster-autoscaler/shared-eks"] == "owned"
    assert tags["inferplane.dev/blueprint"] == "eks-gpu-pool"
    assert tags["inferplane.dev/environment"] == "dev"


def test_only_the_node_role_is_created_on_the_existing_cluster(recording: Recording) -> None:
    created = {(r.type, r.name) for r in recording if r.custom and not r.read}
    role = "aws:iam/role:Role"
    attach = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
    assert created - {(t, n) for t, n in created if t == "aws:autoscaling/tag:Tag"} == {
        (role, "shared-eks-node"),
        (attach, "shared-eks-node-AmazonEKSWorkerNodePolicy"),
        (attach, "shared-eks-node-AmazonEKS_CNI_Policy"),
        (attach, "shared-eks-node-AmazonEC2ContainerRegistryReadOnly"),
        (NODE_GROUP, "eks-gpu-pool-dev-l4-b"),
    }
    # The group joins with the created role, only once its policies are attached.
    (group,) = recording.of_type(NODE_GROUP)
    assert group.inputs["nodeRoleArn"] == recording.outputs["node_role_arn"]
    assert group.inputs["nodeRoleArn"].startswith("arn:aws:iam::123456789012:role/shared-eks-node")
    for type_, name in created:
        if type_ in (role, attach):
            assert recording.named(name, type_).urn in group.depends_on
    assert recording.outputs["node_groups"] == {"us-east-1b": GROUP}
    assert not recording.of_type("aws:eks/cluster:Cluster")
    assert [
        i.args["name"] for i in recording.invokes if i.token == "aws:eks/getCluster:getCluster"
    ] == ["shared-eks"]
