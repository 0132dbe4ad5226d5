"""GPU node pools: one node group per pool x zone, pinned to that zone, with the pool's
instance type, per-zone size, capacity, disk, labels, taint and GPU driver setup."""

from __future__ import annotations

import dataclasses
from typing import Any

import pulumi
import pytest
from cloud_fixtures import attached, cloud_recording, run, with_pool, with_zones

from inferplane.app.offline import RecordedResource, Recording
from inferplane.blueprint import naming
from inferplane.blueprint.model import Environment, GpuPool
from inferplane.components import stack_args
from inferplane.components.node_pool import (
    GpuNodePool,
    GpuNodePoolArgs,
    autoscaler_tags,
    node_labels,
)

EKS_GROUP = "aws:eks/nodeGroup:NodeGroup"
GKE_POOL = "gcp:container/nodePool:NodePool"
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}


def pool_args(env: Environment, pool: GpuPool) -> GpuNodePoolArgs:
    """`pool`'s args as the stack maps them (no cluster facts)."""
    return stack_args.node_pool_args(env, pool)


def gpu_groups(rec: Recording, type_: str) -> dict[str, RecordedResource]:
    """GPU node groups by name (the system group has no pool label)."""
    name_key = "nodeGroupName" if type_ == EKS_GROUP else "name"
    return {
        r.inputs[name_key]: r
        for r in rec.of_type(type_)
        if naming.POOL_LABEL in (r.get("labels") or r.get("nodeConfig", "labels") or {})
    }


# --- EKS -----------------------------------------------------------------------------------
def test_one_eks_node_group_per_pool_and_zone(staging: Environment) -> None:
    env = with_zones(staging, ("us-east-1a", "us-east-1b"))
    rec = cloud_recording(env)
    groups = gpu_groups(rec, EKS_GROUP)
    assert set(groups) == {
        "support-assistant-staging-l4-a",
        "support-assistant-staging-l4-b",
        "support-assistant-staging-h100-a",
        "support-assistant-staging-h100-b",
    }
    subnets = rec.outputs["subnets"]
    assert subnets["us-east-1a"] != subnets["us-east-1b"]
    for name, group in groups.items():
        zone = group.inputs["labels"][naming.ZONE_LABEL]
        assert name.endswith(f"-{naming.zone_suffix(zone)}")
        assert group.inputs["subnetIds"] == [subnets[zone]]


def test_eks_node_group_fields(staging: Environment) -> None:
    groups = gpu_groups(cloud_recording(staging), EKS_GROUP)
    l4 = groups["support-assistant-staging-l4-a"].inputs
    assert l4["clusterName"] == "support-assistant-staging"
    assert l4["instanceTypes"] == ["g6.2xlarge"]
    assert l4["amiType"] == "AL2023_x86_64_NVIDIA"
    assert l4["capacityType"] == "ON_DEMAND"
    assert l4["diskSize"] == 200
    assert l4["scalingConfig"] == {"minSize": 4, "maxSize": 7, "desiredSize": 4}
    assert l4["taints"] == [GPU_TAINT]
    assert l4["labels"] == {
        naming.POOL_LABEL: "l4",
        naming.BLUEPRINT_LABEL: "support-assistant",
        naming.GPU_LABEL: "nvidia-l4",
        naming.ZONE_LABEL: "us-east-1a",
        "k8s.amazonaws.com/accelerator": "nvidia-l4",
    }
    assert l4["nodeRoleArn"].startswith("arn:aws:iam::")
    h100 = groups["support-assistant-staging-h100-a"].inputs
    assert h100["instanceTypes"] == ["p5.48xlarge"]
    assert h100["scalingConfig"] == {"minSize": 0, "maxSize": 2, "desiredSize": 0}
    assert h100["labels"][naming.MIG_CONFIG_LABEL] == "all-3g.40gb"


def test_eks_node_groups_can_scale_from_zero(staging: Environment) -> None:
    rec = cloud_recording(staging)
    h100 = gpu_groups(rec, EKS_GROUP)["support-assistant-staging-h100-a"]
    tags = h100.inputs["tags"]
    template = "k8s.io/cluster-autoscaler/node-template"
    assert tags["k8s.io/cluster-autoscaler/enabled"] == "true"
    assert tags["k8s.io/cluster-autoscaler/support-assistant-staging"] == "owned"
    assert tags[f"{template}/resources/nvidia.com/mig-3g.40gb"] == "16"
    assert tags[f"{template}/taint/nvidia.com/gpu"] == "present:NoSchedule"
    assert tags[f"{template}/label/{naming.MIG_CONFIG_LABEL}"] == "all-3g.40gb"
    assert tags[f"{template}/label/{naming.ZONE_LABEL}"] == "us-east-1a"
    assert tags["owner"] == "ml-platform@example.com"
    # The templates are copied to the group's Auto Scaling group, where the autoscaler reads.
    copied = [
        t
        for t in rec.of_type("aws:autoscaling/tag:Tag")
        if rec.parent_of(t) == rec.parent_of(h100)
        and t.name.startswith("support-assistant-staging-h100-a-")
    ]
    assert {t.inputs["tag"]["key"]: t.inputs["tag"]["value"] for t in copied} == {
        k: v for k, v in tags.items() if k.startswith(template)
    }
    (asg,) = {t.inputs["autoscalingGroupName"] for t in copied}
    assert asg.startswith("eks-support-assistant-staging-h100-a-")
    assert all(t.inputs["tag"]["propagateAtLaunch"] is False for t in copied)


def test_autoscaler_templates_advertise_the_pools_gpu_resource(staging: Environment) -> None:
    l4, h100 = staging.pools["l4"], staging.pools["h100"]
    template = "k8s.io/cluster-autoscaler/node-template/resources"
    assert (
        autoscaler_tags(pool_args(staging, l4), "us-east-1a")[f"{template}/nvidia.com/gpu"] == "1"
    )
    assert (
        autoscaler_tags(pool_args(staging, h100), "us-east-1a")[
            f"{template}/nvidia.com/mig-3g.40gb"
        ]
        == "16"
    )


def test_spot_pools_request_spot_capacity(staging: Environment) -> None:
    env = with_pool(staging, "l4", capacity="spot")
    groups = gpu_groups(cloud_recording(env), EKS_GROUP)
    assert groups["support-assistant-staging-l4-a"].inputs["capacityType"] == "SPOT"
    assert groups["support-assistant-staging-h100-a"].inputs["capacityType"] == "ON_DEMAND"


def test_attached_eks_node_groups_use_the_zones_tagged_private_subnet(
    staging: Environment,
) -> None:
    env = attached(with_zones(staging, ("us-east-1a", "us-east-1b")), "shared-eks")
    rec = cloud_recording(env)
    lookups = [i for i in rec.invokes if i.token == "aws:ec2/getSubnets:getSubnets"]
    by_zone = {}
    for lookup in lookups:
        filters = {f["name"]: f["values"] for f in lookup.args["filters"]}
        assert filters["tag:kubernetes.io/role/internal-elb"] == ["1"]
        assert filters["vpc-id"][0].startswith("vpc-")
        (zone,) = filters["availability-zone"]
        by_zone[zone] = lookup
    assert set(by_zone) == {"us-east-1a", "us-east-1b"}
    groups = gpu_groups(rec, EKS_GROUP)
    assert groups["support-assistant-staging-l4-b"].inputs["clusterName"] == "shared-eks"
    for group in groups.values():
        zone = group.inputs["labels"][naming.ZONE_LABEL]
        assert group.inputs["subnetIds"] == [rec.outputs["subnets"][zone]]
    assert (
        groups["support-assistant-staging-l4-b"].inputs["tags"][
            "k8s.io/cluster-autoscaler/shared-eks"
        ]
        == "owned"
    )


# --- GKE -----------------------------------------------------------------------------------
def test_gke_pools_follow_each_pools_zones(prod: Environment) -> None:
    pools = gpu_groups(cloud_recording(prod), GKE_POOL)
    assert {name: p.inputs["nodeLocations"] for name, p in pools.items()} == {
        "support-assistant-prod-l4-a": ["us-central1-a"],
        "support-assistant-prod-l4-b": ["us-central1-b"],
        "support-assistant-prod-h100-a": ["us-central1-a"],
    }
    for pool in pools.values():
        assert pool.inputs["cluster"] == "prod-gke"
        assert pool.inputs["location"] == "us-central1"
        assert pool.inputs["project"] == "acme-ml-prod"


def test_gke_pool_fields(prod: Environment) -> None:
    pools = gpu_groups(cloud_recording(prod), GKE_POOL)
    l4 = pools["support-assistant-prod-l4-b"].inputs
    assert l4["autoscaling"] == {"minNodeCount": 4, "maxNodeCount": 10}
    assert l4["initialNodeCount"] == 4
    config = l4["nodeConfig"]
    assert config["machineType"] == "g2-standard-8"
    assert config["imageType"] == "COS_CONTAINERD"
    assert config["diskSizeGb"] == 200
    assert config["spot"] is False
    assert config["taints"] == [GPU_TAINT]
    assert config["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
    assert config["serviceAccount"].startswith("support-assistant-prod-nodes@")
    assert config["guestAccelerators"] == [
        {
            "type": "nvidia-l4",
            "count": 1,
            "gpuDriverInstallationConfig": {"gpuDriverVersion": "INSTALLATION_DISABLED"},
        }
    ]
    assert config["labels"] == {
        naming.POOL_LABEL: "l4",
        naming.BLUEPRINT_LABEL: "support-assistant",
        naming.GPU_LABEL: "nvidia-l4",
        naming.ZONE_LABEL: "us-central1-b",
        "gke-no-default-nvidia-gpu-device-plugin": "true",
    }
    assert config["resourceLabels"]["owner"] == "ml-platform_example_com"
    h100 = pools["support-assistant-prod-h100-a"].inputs
    assert h100["autoscaling"] == {"minNodeCount": 0, "maxNodeCount": 2}
    assert h100["nodeConfig"]["machineType"] == "a3-highgpu-8g"
    assert h100["nodeConfig"]["guestAccelerators"][0]["type"] == "nvidia-h100-80gb"
    assert h100["nodeConfig"]["guestAccelerators"][0]["count"] == 8
    # Whole GPUs on GKE: validation refuses MIG there (semantic_gke.check_mig).
    assert naming.MIG_CONFIG_LABEL not in h100["nodeConfig"]["labels"]


def test_gke_spot_pools(prod: Environment) -> None:
    env = with_pool(prod, "h100", capacity="spot")
    pools = gpu_groups(cloud_recording(env), GKE_POOL)
    assert pools["support-assistant-prod-h100-a"].inputs["nodeConfig"]["spot"] is True
    assert pools["support-assistant-prod-l4-a"].inputs["nodeConfig"]["spot"] is False


# --- labels -----------------------------------------------------------------------------------
def test_time_slicing_pools_select_their_device_plugin_config(staging: Environment) -> None:
    env = with_pool(staging, "l4", sharing="time_slicing", time_slices=4)
    labels = node_labels(pool_args(env, env.pools["l4"]), "us-east-1a")
    assert labels[naming.DEVICE_PLUGIN_CONFIG_LABEL] == "l4"
    assert naming.MIG_CONFIG_LABEL not in labels
    assert naming.DEVICE_PLUGIN_CONFIG_LABEL not in node_labels(
        pool_args(env, env.pools["h100"]), "us-east-1a"
    )


# --- errors -----------------------------------------------------------------------------------
def only_pool(env: Environment, pool: str) -> Any:
    def build(e: Environment, opts: pulumi.ResourceOptions) -> object:
        return GpuNodePool(
            "p",
            dataclasses.replace(
                stack_args.node_pool_args(e, e.pools[pool], cluster_location="r"),
                cluster_name="c",
            ),
            opts=opts,
        )

    return build


def test_long_gke_pool_names_are_shortened_to_fit_and_stay_distinct(prod: Environment) -> None:
    import dataclasses

    env = dataclasses.replace(prod, blueprint="a-rather-long-blueprint-name-for-gke")
    rec = run(env, only_pool(env, "l4"))
    names = {p.inputs["nodeLocations"][0]: p.inputs["name"] for p in rec.of_type(GKE_POOL)}
    assert set(names) == {"us-central1-a", "us-central1-b"}
    for zone, name in names.items():
        assert len(name) <= 40
        assert name.startswith("a-rather-long-blueprint")
        assert name.endswith(f"-{naming.zone_suffix(zone)}")
    assert names["us-central1-a"] != names["us-central1-b"]
    assert names == {
        p.inputs["nodeLocations"][0]: p.inputs["name"]
        for p in run(env, only_pool(env, "l4")).of_type(GKE_POOL)
    }


def test_eks_pools_need_the_node_role_and_subnets(staging: Environment) -> None:
    with pytest.raises(ValueError, match="node_role_arn and subnet_ids_by_zone"):
        run(staging, only_pool(staging, "l4"))


# --- the cluster autoscaler's GPU label (kubernetes/autoscaler#8095) ---------------------------
def test_mig_pools_do_not_carry_the_autoscaler_gpu_label(staging: Environment) -> None:
    """cluster-autoscaler counts a node with ``k8s.amazonaws.com/accelerator`` but no
    allocatable ``nvidia.com/gpu`` as unready for good (``FilterOutNodesWithUnreadyResources``,
    kubernetes/autoscaler#8095, open), and stalls once enough are: MIG nodes advertise
    ``nvidia.com/mig-<profile>`` only, so they must not carry the label, in the node group
    nor in the scale-from-zero template."""
    accel = "k8s.amazonaws.com/accelerator"
    template = f"k8s.io/cluster-autoscaler/node-template/label/{accel}"
    groups = gpu_groups(cloud_recording(staging), EKS_GROUP)
    h100 = groups["support-assistant-staging-h100-a"].inputs
    assert h100["labels"][naming.MIG_CONFIG_LABEL] == "all-3g.40gb"
    assert accel not in h100["labels"]
    assert template not in h100["tags"]
    l4 = groups["support-assistant-staging-l4-a"].inputs
    assert l4["labels"][accel] == "nvidia-l4"
    assert l4["tags"][template] == "nvidia-l4"


def test_time_slicing_pools_keep_the_label_as_they_advertise_nvidia_gpu(
    staging: Environment,
) -> None:
    env = with_pool(staging, "l4", sharing="time_slicing", time_slices=4)
    args = pool_args(env, env.pools["l4"])
    assert args.gpu_resource == "nvidia.com/gpu"
    assert node_labels(args, "us-east-1a")["k8s.amazonaws.com/accelerator"] == "nvidia-l4"
