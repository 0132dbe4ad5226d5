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
from typing import Literal

import pulumi
import pulumi_aws as aws
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from inferplane.blueprint import defaults, naming
from inferplane.blueprint.catalog import GpuType
from inferplane.blueprint.derived.node_shape import gpu_node_labels
from inferplane.blueprint.model import (
    CapacitySource,
    pool_gpu_resource,
    pool_mig_config,
    pool_slices_per_gpu,
)
from inferplane.components import capacity_sources, karpenter
from inferplane.components.cloud import Cloud, Ownership, aws_tags, gcp_labels
from inferplane.components.cluster_eks import GPU_AMI_TYPE
from inferplane.components.cluster_gke import NODE_IMAGE, NODE_OAUTH_SCOPES

AWS_ACCELERATOR_LABEL = "k8s.amazonaws.com/accelerator"
"""The cluster autoscaler's GPU label on AWS (``GPULabel`` in cluster-autoscaler
``cloudprovider/aws/aws_cloud_provider.go``): a node with it is a GPU node still starting
up (not an empty one) until its device plugin reports GPUs, so the autoscaler does not
scale out again while the plugin comes up (``cloudprovider/aws/README.md``, "Special note
on GPU instances"). Only pools whose nodes advertise ``nvidia.com/gpu`` get it: see
`labels_gpu_for_autoscaler`."""
PLAIN_GPU_RESOURCE = "nvidia.com/gpu"
GKE_NO_DEVICE_PLUGIN_LABEL = "gke-no-default-nvidia-gpu-device-plugin"
GKE_DRIVER_VERSION = "INSTALLATION_DISABLED"
"""GKE's managed install (``DEFAULT``/``LATEST``) goes with GKE's own device plugin, which
the label above keeps off these nodes; Google's standalone COS installer (an add-on,
`inferplane.components.gke_driver.GKE_INSTALLER_COMMAND`) installs the driver instead: the
default of the node's COS build, as ``DEFAULT`` would, or its latest where a model's serving
release needs more (`inferplane.blueprint.upstream.gke_drivers.installer_version`). The two setups
are exclusive: the GPU Operator on GKE needs ``gpu-driver-version=disabled`` plus this
label (https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-operator; NVIDIA's
"GKE GPU Setup", https://docs.nvidia.com/aicr/integrator-guide/gke-gpu-setup: exactly one
``nvidia.com/gpu`` advertiser per node)."""
CA_TAG = "k8s.io/cluster-autoscaler"
EKS_NODE_GROUP_NAME_MAX = 63
GKE_NODE_POOL_NAME_MAX = 40


@dataclass(frozen=True)
class GpuNodePoolArgs:
    """Arguments of `GpuNodePool`: one pool of identical GPU nodes."""

    cloud: Cloud
    """``aws`` (EKS managed node groups) or ``gcp`` (GKE node pools)."""
    cluster_name: str
    """The cluster the nodes join (also named in the Cluster Autoscaler's tags on AWS)."""
    owner: Ownership
    """Tags or labels of the groups; with `pool_name` it names them
    (`naming.node_group_name`)."""
    pool_name: str
    """The pool's name: label `naming.POOL_LABEL` of its nodes."""
    gpu: GpuType
    """The GPU model (`inferplane.blueprint.catalog.GPU_TYPES`)."""
    instance_type: str
    """EC2 instance type or GCE machine type of the nodes."""
    zones: tuple[str, ...]
    """One node group per zone; a group never spans zones."""
    gpus_per_node: int = defaults.POOL_GPUS_PER_NODE
    """GPUs in one node (must match `instance_type`). Default: one GPU."""
    nodes_min_per_zone: int = defaults.POOL_NODES_MIN
    """Fewest nodes of each zone's group (the autoscaler never goes below). Default: one."""
    nodes_max_per_zone: int = defaults.POOL_NODES_MAX
    """Most nodes of each zone's group. Default: four."""
    capacity: Literal["on_demand", "spot"] = "on_demand"
    """``spot`` nodes may be reclaimed by the cloud at any time. Default: on-demand nodes."""
    capacity_sources: tuple[CapacitySource, ...] = ()
    """Where the nodes come from, in the order to try them (reservations, Capacity Blocks,
    flex-start, on-demand, spot): one node group per source and zone, the first at
    `nodes_min_per_zone`, the others from zero (`inferplane.components.capacity_sources`).
    Default: one source, `capacity`."""
    sharing: Literal["exclusive", "mig", "time_slicing"] = "exclusive"
    """How pods share a GPU: ``exclusive`` (a whole GPU each), ``mig`` (`mig_profile`
    slices) or ``time_slicing`` (`time_slices_per_gpu` pods per GPU). Default: exclusive."""
    mig_profile: str | None = None
    """MIG profile (``1g.10gb``...) of a ``mig`` pool; None for other pools."""
    time_slices_per_gpu: int = 1
    """Pods per GPU on a ``time_slicing`` pool. Default: one (no sharing)."""
    disk_size_gib: int = defaults.POOL_DISK_GIB
    """Root disk of each node (images and model caches). Default: 200 GiB."""
    node_role_arn: pulumi.Input[str] | None = None
    """AWS: the nodes' IAM role (required on AWS)."""
    subnet_ids_by_zone: Mapping[str, pulumi.Input[str]] | None = None
    """AWS: one private subnet per zone (required on AWS); each group uses only its own."""
    cluster_location: pulumi.Input[str] | None = None
    """GCP: the cluster's location (required on GCP)."""
    project: str | None = None
    """GCP: the project of the cluster (required on GCP)."""
    node_service_account: pulumi.Input[str] | None = None
    """GCP: the nodes' service account email. Default: the project's Compute default
    service account."""
    karpenter_node_role: str | None = None
    """AWS: the cluster's Karpenter launches these nodes (`inferplane.components.karpenter`)
    with this IAM role, instead of managed node groups; `karpenter_ami_alias` and
    `provider` are then required. Default: managed node groups."""
    karpenter_ami_alias: str | None = None
    """AWS with Karpenter: the pinned AMI alias (``al2023@v<release>``)."""
    karpenter_security_groups: tuple[Mapping[str, object], ...] = ()
    """AWS with Karpenter: the nodes' security groups, as ``securityGroupSelectorTerms``
    (each term one of ``tags``, ``id`` or ``name``). Required with Karpenter: a cluster's
    nodes may need a node security group besides the cluster's
    (`inferplane.blueprint.addons.discovery_terms`)."""
    provider: pulumi.ProviderResource | None = None
    """AWS with Karpenter: the Kubernetes provider of the cluster (NodePools and the
    EC2NodeClass are Kubernetes objects)."""
    own_driver_installer: bool = False
    """GCP: the blueprint runs Google's driver installer for these nodes itself (the
    cluster's GPU Operator is `existing`): they carry `naming.DRIVER_INSTALLER_LABEL`, which
    that installer selects. Default: the installer beside the GPU Operator inferplane
    installs serves them."""
    lazy_image_pull: bool = False
    """New nodes start serving images before pulling all of them: GKE image streaming on
    GCP, SOCI parallel pull (nodeadm's ``FastImagePull`` and a faster root volume) on AWS
    (`inferplane.components.image_pull`). The caller has checked that the pool's images and
    node image allow it (`inferplane.blueprint.derived.lazy_pull.lazy_pull_support`).
    Default: images are pulled whole."""

    @property
    def slices_per_gpu(self) -> int:
        """Schedulable GPU units per physical GPU (`pool_slices_per_gpu`)."""
        return pool_slices_per_gpu(
            self.gpu, self.sharing, self.mig_profile, self.time_slices_per_gpu
        )

    def sources_in(self, zone: str) -> tuple[CapacitySource, ...]:
        """The sources that launch nodes in `zone`, in order."""
        sources = self.capacity_sources or (CapacitySource(self.capacity, ()),)
        return tuple(s for s in sources if s.serves(zone) and s.launchable)

    @property
    def gpu_resource(self) -> str:
        """The extended resource a pod requests on this pool (`pool_gpu_resource`)."""
        return pool_gpu_resource(self.sharing, self.mig_profile)

    @property
    def mig_config(self) -> str | None:
        """The MIG manager's ``nvidia.com/mig.config`` label value (`pool_mig_config`)."""
        return pool_mig_config(self.sharing, self.mig_profile)


def labels_gpu_for_autoscaler(pool: GpuNodePoolArgs) -> bool:
    """Whether `pool`'s EKS nodes carry `AWS_ACCELERATOR_LABEL`.

    The cluster autoscaler decides a labelled node's GPU is ready only from allocatable
    ``nvidia.com/gpu`` (``FilterOutNodesWithUnreadyResources`` in
    ``processors/customresources/gpu_processor.go`` with ``NodeHasGpuAllocatable`` in
    ``utils/gpu/gpu.go``). A MIG pool (mixed strategy: ``nvidia.com/mig-<profile>``) or a
    time-slicing pool with renamed resources (``nvidia.com/gpu.shared``) never reports it,
    so a labelled node stays "unready" for good, and once the unready count passes the
    autoscaler's limit it stops scaling the whole cluster (kubernetes/autoscaler#8095,
    open; the fixes kubernetes/autoscaler#9673 and kubernetes-sigs/cluster-autoscaler#92
    are unmerged, so no autoscaler release can be pinned instead).

    The trade-off for these pools: without the label a node that has just joined looks
    like a node without GPUs until the MIG manager and device plugin publish its slices,
    and the autoscaler may add one more node for pods still pending in that window (the
    README's "scale out multiple times"). The extra node is empty and scaled down after
    the scale-down delay; a stalled autoscaler would need an operator. Scale-up from zero
    is unaffected: it reads the node-template resource tags (`autoscaler_tags`), not this
    label. Time-slicing pools here keep ``nvidia.com/gpu`` (``renameByDefault: false`` in
    `inferplane.components.addon_values`) and keep the label."""
    return pool.gpu_resource == PLAIN_GPU_RESOURCE


def node_labels(pool: GpuNodePoolArgs, zone: str) -> dict[str, str]:
    """Kubernetes labels of the nodes of `pool` in `zone`. Both clouds update them in place
    (EKS ``UpdateNodegroupConfig`` ``labels``; GKE node pools since terraform-provider-google
    4.48.0, GoogleCloudPlatform/magic-modules#6941), so adding one replaces no node."""
    labels = gpu_node_labels(
        pool=pool.pool_name,
        blueprint=pool.owner.blueprint,
        gpu=pool.gpu.id,
        zone=zone,
        mig_config=pool.mig_config,
        time_slicing=pool.sharing == "time_slicing",
    )
    if pool.cloud == "aws":
        # The label speaks to the Cluster Autoscaler, which does not scale Karpenter's nodes.
        if labels_gpu_for_autoscaler(pool) and pool.karpenter_node_role is None:
            labels[AWS_ACCELERATOR_LABEL] = pool.gpu.id
    else:
        labels[GKE_NO_DEVICE_PLUGIN_LABEL] = "true"
        if pool.own_driver_installer:
            labels[naming.DRIVER_INSTALLER_LABEL] = pool.owner.blueprint
    return labels


def gpu_taint() -> tuple[str, str, str]:
    """(key, value, effect) of the taint on every GPU node."""
    return naming.GPU_TAINT_KEY, naming.GPU_TAINT_VALUE, naming.GPU_TAINT_EFFECT


def autoscaler_tags(pool: GpuNodePoolArgs, zone: str) -> dict[str, str]:
    """Cluster Autoscaler tags of an EKS node group: auto-discovery, plus node-template
    labels, taint and GPU resources so it can scale the group up from zero nodes."""
    template = f"{CA_TAG}/node-template"
    key, value, effect = gpu_taint()
    tags = {
        f"{CA_TAG}/enabled": "true",
        f"{CA_TAG}/{pool.cluster_name}": "owned",
        f"{template}/taint/{key}": f"{value}:{effect}",
        f"{template}/resources/{pool.gpu_resource}": str(pool.gpus_per_node * pool.slices_per_gpu),
    }
    tags.update({f"{template}/label/{k}": v for k, v in node_labels(pool, zone).items()})
    return tags


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


class GpuNodePool(pulumi.ComponentResource):
    """One GPU node group per zone of a pool (`naming.node_group_name`).

    Outputs:
      node_groups: zone -> the node group of the zone's first capacity source
        (`aws.eks.NodeGroup` / `gcp.container.NodePool` / Karpenter NodePool).
      node_group_names: zone -> that node group's name.
      source_groups: zone -> the names of the zone's node groups (NodePools with
        Karpenter), one per capacity source (Karpenter: per market) in the pool's order.
    """

    node_groups: dict[str, pulumi.CustomResource]
    node_group_names: dict[str, str]
    source_groups: dict[str, tuple[str, ...]]

    def __init__(
        self, name: str, args: GpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("inferplane:node_pool:GpuNodePool", name, None, opts)
        if args.cloud == "kubernetes":
            raise ValueError(
                "a kubernetes environment's nodes exist already: GpuNodePool creates none "
                "(`inferplane.blueprint.derived.node_shape.required_node_shape` says what "
                "they carry)"
            )
        self.node_groups = {}
        self.node_group_names = {}
        self.source_groups = {}
        owner = args.owner
        limit = EKS_NODE_GROUP_NAME_MAX if args.cloud == "aws" else GKE_NODE_POOL_NAME_MAX
        karpenter_class = self._karpenter_class(name, args) if args.karpenter_node_role else None
        for zone in args.zones:
            group = naming.node_group_name(
                owner.blueprint, owner.environment, args.pool_name, zone, limit
            )
            resource_name = f"{name}-{naming.zone_suffix(zone)}"
            sources = args.sources_in(zone)
            if karpenter_class is not None:
                self._karpenter_pools(resource_name, group, zone, args, karpenter_class, limit)
                continue
            names: list[str] = []
            for i, source in enumerate(sources):
                group_i = capacity_sources.group_name(group, source, i, limit)
                suffix = "" if i == 0 else "-" + capacity_sources.source_suffix(source)
                if args.cloud == "aws":
                    made: pulumi.CustomResource = self._eks(
                        resource_name + suffix, group_i, zone, args, source, first=i == 0
                    )
                else:
                    made = self._gke(resource_name + suffix, group_i, zone, args, source, i == 0)
                if i == 0:
                    self.node_groups[zone] = made
                    self.node_group_names[zone] = group_i
                names.append(group_i)
            self.source_groups[zone] = tuple(names)
        self.register_outputs(
            {
                "node_groups": self.node_groups,
                "node_group_names": self.node_group_names,
                "source_groups": self.source_groups,
            }
        )

    def _karpenter_pools(
        self, name: str, group: str, zone: str, args: GpuNodePoolArgs, node_class: str, limit: int
    ) -> None:
        """One NodePool per market of the zone's sources, weighted in the pool's order; one
        source keeps today's single unweighted NodePool."""
        markets = capacity_sources.karpenter_markets(args.sources_in(zone))
        if len(markets) < 2:
            single = markets[0][0] if markets else None
            self.node_groups[zone] = self._karpenter_pool(
                name, group, zone, args, node_class, single
            )
            self.node_group_names[zone] = group
            self.source_groups[zone] = (group,)
            return
        names: list[str] = []
        for i, (market, weight) in enumerate(markets):
            suffix = "" if i == 0 else "-" + market
            group_i = group if i == 0 else group[: limit - len(suffix)].rstrip("-") + suffix
            made = self._karpenter_pool(
                name + suffix, group_i, zone, args, node_class, market, weight
            )
            if i == 0:
                self.node_groups[zone] = made
                self.node_group_names[zone] = group_i
            names.append(group_i)
        self.source_groups[zone] = tuple(names)

    def _karpenter_opts(self, args: GpuNodePoolArgs) -> pulumi.ResourceOptions:
        if (
            args.provider is None
            or not args.karpenter_ami_alias
            or not args.karpenter_security_groups
            or not args.subnet_ids_by_zone
        ):
            raise ValueError(
                "GpuNodePool with Karpenter needs provider, karpenter_ami_alias, "
                "karpenter_security_groups and subnet_ids_by_zone"
            )
        return pulumi.ResourceOptions(parent=self, provider=args.provider)

    def _karpenter_class(self, name: str, args: GpuNodePoolArgs) -> str:
        """The pool's EC2NodeClass; returns its name."""
        opts = self._karpenter_opts(args)
        subnets = args.subnet_ids_by_zone or {}
        missing = [z for z in args.zones if z not in subnets]
        if missing:
            raise ValueError(f"pool {args.pool_name}: no subnet for zone {missing[0]}")
        owner = args.owner
        class_name = karpenter.node_class_name(owner.blueprint, owner.environment, args.pool_name)
        k8s.apiextensions.CustomResource(
            f"{name}-node-class",
            api_version=karpenter.NODE_CLASS_API,
            kind=karpenter.NODE_CLASS_KIND,
            metadata={"name": class_name, "labels": {naming.POOL_LABEL: args.pool_name}},
            spec=karpenter.node_class_spec(
                node_role=args.karpenter_node_role or "",
                ami_alias=args.karpenter_ami_alias or "",
                subnet_ids=[subnets[z] for z in args.zones],
                security_groups=args.karpenter_security_groups,
                disk_gib=args.disk_size_gib,
                tags=aws_tags(owner, **{naming.POOL_LABEL: args.pool_name}),
                capacity_reservations=capacity_sources.karpenter_reservation_terms(
                    [s for z in args.zones for s in args.sources_in(z)]
                ),
                fast_image_pull=args.lazy_image_pull,
            ),
            opts=opts,
        )
        return class_name

    def _karpenter_pool(
        self,
        name: str,
        group: str,
        zone: str,
        args: GpuNodePoolArgs,
        node_class: str,
        capacity_type: str | None = None,
        weight: int | None = None,
    ) -> k8s.apiextensions.CustomResource:
        """One zone's NodePool, named like the node group it replaces."""
        return k8s.apiextensions.CustomResource(
            name,
            api_version=karpenter.NODE_POOL_API,
            kind="NodePool",
            metadata={"name": group, "labels": {naming.POOL_LABEL: args.pool_name}},
            spec=karpenter.node_pool_spec(
                node_class=node_class,
                zone=zone,
                instance_type=args.instance_type,
                capacity=args.capacity,
                gpus_per_node=args.gpus_per_node,
                nodes_max=args.nodes_max_per_zone,
                labels=node_labels(args, zone),
                taint=gpu_taint(),
                capacity_type=capacity_type,
                weight=weight,
            ),
            opts=self._karpenter_opts(args),
        )

    def _eks(
        self,
        name: str,
        group: str,
        zone: str,
        args: GpuNodePoolArgs,
        source: CapacitySource,
        first: bool,
    ) -> aws.eks.NodeGroup:
        """One source's node group in `zone`: the first holds the zone's minimum, the others
        start empty; a reservation or Capacity Block launches through its launch template, as
        does every group of a pool that pulls images lazily (its user data and root volume)."""
        if args.node_role_arn is None or not args.subnet_ids_by_zone:
            raise ValueError("GpuNodePool on AWS needs node_role_arn and subnet_ids_by_zone")
        if zone not in args.subnet_ids_by_zone:
            raise ValueError(f"pool {args.pool_name}: no subnet for zone {zone}")
        key, value, _ = gpu_taint()
        ca_tags = autoscaler_tags(args, zone)
        floor = source.floor(0 if first else 1, args.nodes_min_per_zone)
        template = None
        reservation: pulumi.Input[str] | None = None
        if source.reserved:
            reservation = source.reservation or ""
            if source.reservation is None:  # offering: auto, buy: true
                reservation = capacity_sources.eks_bought_block(
                    f"{name}-block",
                    source,
                    zone=zone,
                    instance_type=args.instance_type,
                    instance_count=args.nodes_max_per_zone,
                    tags=aws_tags(args.owner, **{naming.POOL_LABEL: args.pool_name}),
                    opts=pulumi.ResourceOptions(parent=self),
                )
        if source.reserved or args.lazy_image_pull:
            lt = capacity_sources.eks_launch_template(
                f"{name}-template",
                source,
                reservation_id=reservation,
                disk_gib=args.disk_size_gib,
                tags=aws_tags(args.owner, **{naming.POOL_LABEL: args.pool_name}),
                opts=pulumi.ResourceOptions(parent=self),
                fast_image_pull=args.lazy_image_pull,
            )
            template = aws.eks.NodeGroupLaunchTemplateArgs(
                id=lt.id, version=lt.latest_version.apply(str)
            )
        node_group = aws.eks.NodeGroup(
            name,
            cluster_name=args.cluster_name,
            node_group_name=group,
            node_role_arn=args.node_role_arn,
            subnet_ids=[args.subnet_ids_by_zone[zone]],
            instance_types=[args.instance_type],
            ami_type=GPU_AMI_TYPE,
            capacity_type=capacity_sources.EKS_CAPACITY_TYPES[source.kind],
            disk_size=None if template else args.disk_size_gib,
            launch_template=template,
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                min_size=floor,
                max_size=args.nodes_max_per_zone,
                desired_size=floor,
            ),
            update_config=aws.eks.NodeGroupUpdateConfigArgs(max_unavailable=1),
            labels=node_labels(args, zone),
            taints=[aws.eks.NodeGroupTaintArgs(key=key, value=value, effect="NO_SCHEDULE")],
            tags=aws_tags(
                args.owner,
                **{naming.POOL_LABEL: args.pool_name, naming.ZONE_LABEL: zone},
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
        self,
        name: str,
        group: str,
        zone: str,
        args: GpuNodePoolArgs,
        source: CapacitySource,
        first: bool,
    ) -> gcp.container.NodePool:
        if args.gpu.gcp_accelerator is None:
            raise ValueError(f"pool {args.pool_name}: {args.gpu.id} is not offered on GCP")
        if args.cluster_location is None or args.project is None:
            raise ValueError("GpuNodePool on GCP needs cluster_location and project")
        key, value, _ = gpu_taint()
        floor = source.floor(0 if first else 1, args.nodes_min_per_zone)
        affinity = capacity_sources.gke_reservation_affinity(source)
        return gcp.container.NodePool(
            name,
            name=group,
            cluster=args.cluster_name,
            location=args.cluster_location,
            project=args.project,
            node_locations=[zone],
            initial_node_count=floor,
            # Per zone; with one zone per pool these are the pool's node counts.
            autoscaling=gcp.container.NodePoolAutoscalingArgs(
                min_node_count=floor, max_node_count=args.nodes_max_per_zone
            ),
            management=gcp.container.NodePoolManagementArgs(auto_repair=True, auto_upgrade=True),
            upgrade_settings=gcp.container.NodePoolUpgradeSettingsArgs(
                strategy="SURGE", max_surge=1, max_unavailable=0
            ),
            node_config=gcp.container.NodePoolNodeConfigArgs(
                machine_type=args.instance_type,
                image_type=NODE_IMAGE,
                disk_size_gb=args.disk_size_gib,
                disk_type="pd-balanced",
                spot=source.kind == "spot",
                # pulumi-gcp 10.2.0 NodePoolNodeConfigArgs.flex_start: "Enables Flex Start
                # provisioning model for the node pool" (GKE's Dynamic Workload Scheduler).
                flex_start=True if source.kind == "flex_start" else None,
                reservation_affinity=gcp.container.NodePoolNodeConfigReservationAffinityArgs(
                    **affinity
                )
                if affinity
                else None,
                labels=node_labels(args, zone),
                resource_labels=gcp_labels(args.owner, pool=args.pool_name, zone=zone),
                taints=[
                    gcp.container.NodePoolNodeConfigTaintArgs(
                        key=key, value=value, effect="NO_SCHEDULE"
                    )
                ],
                guest_accelerators=[
                    gcp.container.NodePoolNodeConfigGuestAcceleratorArgs(
                        type=args.gpu.gcp_accelerator,
                        count=args.gpus_per_node,
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
                # Image streaming (`inferplane.components.image_pull`).
                gcfs_config=gcp.container.NodePoolNodeConfigGcfsConfigArgs(enabled=True)
                if args.lazy_image_pull
                else None,
            ),
            opts=pulumi.ResourceOptions(
                parent=self, ignore_changes=["initialNodeCount", "nodeCount"]
            ),
        )
