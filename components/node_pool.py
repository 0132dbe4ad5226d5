"""GPU node pools: one node group per pool and zone, never spanning zones.

A zone-pinned node group lets serving pods pin to their clients' zone and lets a zonal GPU
stockout take out only that zone's group. Nodes carry the pool, GPU and zone labels the
serving Deployments select on, the GPU taint, and the MIG / device-plugin configuration
labels the GPU Operator acts on.

Drivers: on EKS the AL2023 NVIDIA AMI brings the driver and container toolkit. On GKE the
driver comes from Google's COS driver installer (deployed with the add-ons) on pools that
opt out of GKE's own device plugin, because the GPU Operator's device plugin replaces it:
MIG, time slicing and DCGM then behave the same on both clouds. GKE's managed driver
install is part of its device-plugin pod, so it is disabled here rather than left to a
pod that never runs on these nodes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws
import pulumi_gcp as gcp

from inferplane.blueprint import naming
from inferplane.blueprint.model import Environment, GpuPool
from inferplane.components.cloud import aws_tags, cluster_name, gcp_labels
from inferplane.components.cluster_eks import GPU_AMI_TYPE
from inferplane.components.cluster_gke import NODE_IMAGE, NODE_OAUTH_SCOPES

AWS_ACCELERATOR_LABEL = "k8s.amazonaws.com/accelerator"
"""The cluster autoscaler's GPU label on AWS: a node with it is a GPU node still
starting up (not an empty one) until its device plugin reports GPUs."""
GKE_NO_DEVICE_PLUGIN_LABEL = "gke-no-default-nvidia-gpu-device-plugin"
GKE_DRIVER_VERSION = "INSTALLATION_DISABLED"
"""GKE's installer runs inside its device-plugin pod, which the label above keeps off
these nodes; Google's standalone COS installer (an add-on) installs the driver instead."""
CA_TAG = "k8s.io/cluster-autoscaler"
EKS_NODE_GROUP_NAME_MAX = 63
GKE_NODE_POOL_NAME_MAX = 40


def node_labels(env: Environment, pool: GpuPool, zone: str) -> dict[str, str]:
    """Kubernetes labels of the nodes of `pool` in `zone`."""
    labels = {
        naming.POOL_LABEL: pool.name,
        naming.GPU_LABEL: pool.gpu.id,
        naming.ZONE_LABEL: zone,
    }
    if pool.mig_config:
        labels[naming.MIG_CONFIG_LABEL] = pool.mig_config
    if pool.sharing == "time_slicing":
        labels[naming.DEVICE_PLUGIN_CONFIG_LABEL] = pool.name
    if env.cloud == "aws":
        labels[AWS_ACCELERATOR_LABEL] = pool.gpu.id
    else:
        labels[GKE_NO_DEVICE_PLUGIN_LABEL] = "true"
    return labels


def gpu_taint() -> tuple[str, str, str]:
    """(key, value, effect) of the taint on every GPU node."""
    return naming.GPU_TAINT_KEY, naming.GPU_TAINT_VALUE, naming.GPU_TAINT_EFFECT


def autoscaler_tags(env: Environment, pool: GpuPool, zone: str) -> dict[str, str]:
    """Cluster Autoscaler tags of an EKS node group: auto-discovery, plus node-template
    labels, taint and GPU resources so it can scale the group up from zero nodes."""
    template = f"{CA_TAG}/node-template"
    key, value, effect = gpu_taint()
    tags = {
        f"{CA_TAG}/enabled": "true",
        f"{CA_TAG}/{cluster_name(env)}": "owned",
        f"{template}/taint/{key}": f"{value}:{effect}",
        f"{template}/resources/{pool.gpu_resource}": str(pool.gpu_units_per_node),
    }
    tags.update({f"{template}/label/{k}": v for k, v in node_labels(env, pool, zone).items()})
    return tags


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


@dataclass(frozen=True)
class GpuNodePoolArgs:
    """Arguments of `GpuNodePool`."""

    env: Environment
    pool: GpuPool
    """The pool; one node group is created in each of `pool.zones`."""
    cluster_name: pulumi.Input[str]
    node_role_arn: pulumi.Input[str] | None = None
    """AWS: the nodes' IAM role (required on AWS)."""
    subnet_ids_by_zone: Mapping[str, pulumi.Input[str]] | None = None
    """AWS: one private subnet per zone (required on AWS); each group uses only its own."""
    cluster_location: pulumi.Input[str] | None = None
    """GCP: the cluster's location (default: the environment's cluster location)."""
    node_service_account: pulumi.Input[str] | None = None
    """GCP: the nodes' service account email (default: the project's Compute default)."""


class GpuNodePool(pulumi.ComponentResource):
    """One GPU node group per zone of a pool (`naming.node_group_name`).

    Outputs:
      node_groups: zone -> node group (`aws.eks.NodeGroup` / `gcp.container.NodePool`).
      node_group_names: zone -> node group name.
    """

    node_groups: dict[str, pulumi.CustomResource]
    node_group_names: dict[str, str]

    def __init__(
        self, name: str, args: GpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("inferplane:node_pool:GpuNodePool", name, None, opts)
        env, pool = args.env, args.pool
        self.node_groups = {}
        self.node_group_names = {}
        for zone in pool.zones:
            limit = EKS_NODE_GROUP_NAME_MAX if env.cloud == "aws" else GKE_NODE_POOL_NAME_MAX
            group = naming.node_group_name(env.blueprint, env.name, pool.name, zone, limit)
            resource_name = f"{name}-{naming.zone_suffix(zone)}"
            if env.cloud == "aws":
                self.node_groups[zone] = self._eks(resource_name, group, zone, args)
            else:
                self.node_groups[zone] = self._gke(resource_name, group, zone, args)
            self.node_group_names[zone] = group
        self.register_outputs({"node_group_names": self.node_group_names})

    def _eks(self, name: str, group: str, zone: str, args: GpuNodePoolArgs) -> aws.eks.NodeGroup:
        env, pool = args.env, args.pool
        if args.node_role_arn is None or not args.subnet_ids_by_zone:
            raise ValueError("GpuNodePool on AWS needs node_role_arn and subnet_ids_by_zone")
        if zone not in args.subnet_ids_by_zone:
            raise ValueError(f"pool {pool.name}: no subnet for zone {zone}")
        key, value, _ = gpu_taint()
        ca_tags = autoscaler_tags(env, pool, zone)
        node_group = aws.eks.NodeGroup(
            name,
            cluster_name=args.cluster_name,
            node_group_name=group,
            node_role_arn=args.node_role_arn,
            subnet_ids=[args.subnet_ids_by_zone[zone]],
            instance_types=[pool.instance_type],
            ami_type=GPU_AMI_TYPE,
            capacity_type="SPOT" if pool.capacity == "spot" else "ON_DEMAND",
            disk_size=pool.disk_gib,
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                min_size=pool.nodes.min,
                max_size=pool.nodes.max,
                desired_size=pool.nodes.min,
            ),
            update_config=aws.eks.NodeGroupUpdateConfigArgs(max_unavailable=1),
            labels=node_labels(env, pool, zone),
            taints=[aws.eks.NodeGroupTaintArgs(key=key, value=value, effect="NO_SCHEDULE")],
            tags=aws_tags(
                env,
                **{naming.POOL_LABEL: pool.name, naming.ZONE_LABEL: zone},
                **ca_tags,
            ),
            opts=pulumi.ResourceOptions(
                parent=self,
                # The autoscaler owns the size once the group exists.
                ignore_changes=["scalingConfig.desiredSize"],
            ),
        )
        # EKS copies only its own tags to the group's Auto Scaling group; the autoscaler
        # reads node templates from the ASG, so copy them there too.
        asg = node_group.resources.apply(lambda r: r[0].autoscaling_groups[0].name)
        template = f"{CA_TAG}/node-template/"
        for tag_key, tag_value in ca_tags.items():
            if not tag_key.startswith(template):
                continue
            aws.autoscaling.Tag(
                f"{name}-{_slug(tag_key.removeprefix(template))}",
                autoscaling_group_name=asg,
                tag=aws.autoscaling.TagTagArgs(
                    key=tag_key, value=tag_value, propagate_at_launch=False
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
        return node_group

    def _gke(
        self, name: str, group: str, zone: str, args: GpuNodePoolArgs
    ) -> gcp.container.NodePool:
        env, pool = args.env, args.pool
        if pool.gpu.gcp_accelerator is None:
            raise ValueError(f"pool {pool.name}: {pool.gpu.id} is not offered on GCP")
        key, value, _ = gpu_taint()
        return gcp.container.NodePool(
            name,
            name=group,
            cluster=args.cluster_name,
            location=args.cluster_location or env.cluster.location,
            project=env.project,
            node_locations=[zone],
            initial_node_count=pool.nodes.min,
            # Per zone; with one zone per pool these are the pool's node counts.
            autoscaling=gcp.container.NodePoolAutoscalingArgs(
                min_node_count=pool.nodes.min, max_node_count=pool.nodes.max
            ),
            management=gcp.container.NodePoolManagementArgs(auto_repair=True, auto_upgrade=True),
            upgrade_settings=gcp.container.NodePoolUpgradeSettingsArgs(
                strategy="SURGE", max_surge=1, max_unavailable=0
            ),
            node_config=gcp.container.NodePoolNodeConfigArgs(
                machine_type=pool.instance_type,
                image_type=NODE_IMAGE,
                disk_size_gb=pool.disk_gib,
                disk_type="pd-balanced",
                spot=pool.capacity == "spot",
                labels=node_labels(env, pool, zone),
                resource_labels=gcp_labels(env, pool=pool.name, zone=zone),
                taints=[
                    gcp.container.NodePoolNodeConfigTaintArgs(
                        key=key, value=value, effect="NO_SCHEDULE"
                    )
                ],
                guest_accelerators=[
                    gcp.container.NodePoolNodeConfigGuestAcceleratorArgs(
                        type=pool.gpu.gcp_accelerator,
                        count=pool.gpus_per_node,
                        gpu_driver_installation_config=gcp.container.NodePoolNodeConfigGuestAcceleratorGpuDriverInstallationConfigArgs(
                            gpu_driver_version=GKE_DRIVER_VERSION
                        ),
                    )
                ],
                workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(
                    mode="GKE_METADATA"
                ),
                service_account=args.node_service_account,
                oauth_scopes=list(NODE_OAUTH_SCOPES),
            ),
            opts=pulumi.ResourceOptions(
                parent=self, ignore_changes=["initialNodeCount", "nodeCount"]
            ),
        )
