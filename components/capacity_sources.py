"""A pool's ordered capacity sources as node groups, launch templates and NodePools.

Each zone of a pool gets one node group per capacity source that serves it
(`inferplane.blueprint.model.CapacitySource`), in the pool's order: the first holds the
zone's ``nodes.min`` (unless it is a Capacity Block: `CapacitySource.floor`), the others
start at zero nodes, so the node autoscaler grows a later
group only when the ones before cannot launch. The first group keeps the name a pool with
one source has always had (`naming.node_group_name`), so a pool that lists one source plans
exactly as before; each later group adds a suffix of its source (`source_suffix`).

How the order reaches each autoscaler:

- Cluster Autoscaler (EKS managed node groups): its ``priority`` expander, with a
  ``cluster-autoscaler-priority-expander`` ConfigMap in its namespace that maps priorities
  ("the highest value wins") to regular expressions of node group ids; when no group
  matches, it picks at random (kubernetes/autoscaler
  ``cluster-autoscaler/expander/priority/readme.md``). On AWS the id it matches is the
  Auto Scaling group's name, which EKS names ``eks-<node group>-<uuid>``
  (kubernetes/autoscaler#3871), hence `expander_priorities`. The pinned chart
  (cluster-autoscaler 9.50.1) writes that ConfigMap from its ``expanderPriorities`` value
  when ``extraArgs.expander`` contains ``priority``
  (``charts/cluster-autoscaler/templates/priority-expander-configmap.yaml``); the stack
  sets ``expander: priority,least-waste`` (a chain: least-waste breaks ties between
  groups of one priority) only where some pool has more than one source.
- Karpenter: one NodePool per zone and market (reserved, on-demand, spot), weighted in the
  pool's order (`karpenter.node_pool_spec`'s ``weight``): Karpenter by itself prefers
  reserved capacity and then the cheaper of spot and on-demand (Karpenter docs
  ``tasks/odcrs.md``, "Prioritization Behavior"), which is not the declared order when
  on_demand comes before spot.
- GKE: one node pool per source, the first at the floor. GKE's cluster autoscaler takes no
  user expander, so beyond the floor the order between the pools is GKE's choice; a
  ComputeClass with priorities would impose it but needs the serving pods to select the
  class.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
import pulumi_aws as aws

from inferplane.blueprint import naming
from inferplane.blueprint.errors import format_path
from inferplane.blueprint.model import CapacitySource
from inferplane.components import image_pull

EKS_CAPACITY_TYPES = {
    "reservation": "ON_DEMAND",
    "capacity_block": "CAPACITY_BLOCK",
    "on_demand": "ON_DEMAND",
    "spot": "SPOT",
}
"""EKS ``CreateNodegroup`` ``capacityType``: ``ON_DEMAND | SPOT | CAPACITY_BLOCK``. The pinned
pulumi-aws 7.51.1 docstring still lists only the first two; the bridged terraform-provider-aws
accepts ``CAPACITY_BLOCK`` since hashicorp/terraform-provider-aws#38216 (its docs lag:
hashicorp/terraform-provider-aws#40876). An instance launched into an On-Demand Capacity
Reservation is an on-demand instance."""
CAPACITY_BLOCK_MARKET = "capacity-block"
"""``instanceMarketOptions.marketType`` of a Capacity Block launch (pulumi-aws 7.51.1
``ec2.LaunchTemplateInstanceMarketOptionsArgs.market_type``: ``spot``, ``capacity-block``,
``interruptible-capacity-reservation``). EKS refuses a Capacity Block node group whose
launch template lacks it or the reservation target, or whose capacity type is not
``CAPACITY_BLOCK`` (EKS User Guide, "Create a managed node group with Capacity Blocks for
ML"; managed node groups with Capacity Blocks need a custom launch template)."""
ROOT_DEVICE = "/dev/xvda"
"""The root volume of the AL2023 EKS AMIs. With a launch template the node group may not set
``diskSize`` (EKS API ``CreateNodegroup``, field ``diskSize``: "If you specify launchTemplate,
then don't specify diskSize, or the node group deployment will fail",
https://docs.aws.amazon.com/sdk-for-kotlin/api/latest/eks/aws.sdk.kotlin.services.eks.model/-create-nodegroup-request/disk-size.html),
so the template carries the disk."""
KARPENTER_CAPACITY_TYPES = {
    "reservation": "reserved",
    "capacity_block": "reserved",
    "on_demand": "on-demand",
    "spot": "spot",
}
"""``karpenter.sh/capacity-type`` values: ``reserved`` for On-Demand Capacity Reservations
and Capacity Blocks alike ("Capacity blocks are modeled as on-demand capacity reservations
in EC2", Karpenter docs ``tasks/odcrs.md``; the ``ReservedCapacity`` feature gate is
beta and on by default, chart value ``settings.featureGates.reservedCapacity``)."""
KARPENTER_WEIGHT_TOP = 100
"""NodePool ``weight`` of a pool's first market (the CRD allows 1 to 100; higher first);
each later market gets ten less."""


def source_suffix(source: CapacitySource) -> str:
    """The suffix of a later source's node group (`naming.source_suffix`)."""
    return naming.source_suffix(source.kind, source.reservation)


def group_name(first_name: str, source: CapacitySource, index: int, max_length: int) -> str:
    """The node group name of the zone's `index`-th source: `first_name` for the first."""
    if index == 0:
        return first_name
    return naming.source_group_name(first_name, source.kind, source.reservation, max_length)


def expander_priorities(groups_in_order: Sequence[Sequence[str]]) -> dict[int, list[str]]:
    """The priority expander's table for the node groups of each pool and zone, given in the
    pool's order: the n-th source of every zone shares one priority, higher first. Groups
    with one source are left out; the expander picks among unmatched groups at random,
    which is what least-waste alone did before."""
    depth = max((len(g) for g in groups_in_order if len(g) > 1), default=0)
    table: dict[int, list[str]] = {}
    for groups in groups_in_order:
        if len(groups) < 2:
            continue
        for i, name in enumerate(groups):
            # EKS names a node group's Auto Scaling group eks-<name>-<uuid>; node group
            # names hold only [a-z0-9-], nothing a regular expression reads specially.
            table.setdefault(10 * (depth - i), []).append(f"^eks-{name}-[0-9a-f-]+$")
    return table


def karpenter_markets(sources: Sequence[CapacitySource]) -> list[tuple[str, int]]:
    """(``karpenter.sh/capacity-type`` value, NodePool weight) per market, in the order
    the zone's sources first name it."""
    out: list[str] = []
    for s in sources:
        value = KARPENTER_CAPACITY_TYPES.get(s.kind)
        if value and value not in out:
            out.append(value)
    return [(value, KARPENTER_WEIGHT_TOP - 10 * i) for i, value in enumerate(out)]


def karpenter_reservation_terms(sources: Sequence[CapacitySource]) -> list[dict[str, Any]]:
    """``capacityReservationSelectorTerms`` of the pool's EC2NodeClass: one ``id`` term per
    reservation or Capacity Block (the v1.14.1 CRD: a term with ``id`` has no other field;
    terms are ORed; at most 30)."""
    ids: list[str] = []
    for s in sources:
        if s.reserved and s.reservation and s.reservation not in ids:
            ids.append(s.reservation)
    return [{"id": i} for i in ids]


BOUGHT_BLOCK_TYPE = "aws:ec2/capacityBlockReservation:CapacityBlockReservation"
"""What buys a Capacity Block (pulumi-aws 7.51.1 ``ec2.CapacityBlockReservation``: the
offering's id and the instance platform); the ``capacity-block-purchase`` rule refuses it
unless the platform's policy config allows purchases."""


def eks_bought_block(
    name: str,
    source: CapacitySource,
    *,
    zone: str,
    instance_type: str,
    instance_count: int,
    tags: Mapping[str, str],
    opts: pulumi.ResourceOptions,
) -> pulumi.Output[str]:
    """Buy a Capacity Block for `source` (``offering: auto`` with ``buy: true``); returns its
    reservation id. The offering is looked up by type, count and length
    (``ec2.get_capacity_block_offering``, pulumi-aws 7.51.1, which takes no zone): one in
    another zone than `zone` stops the run before anything is bought, since the zone's node
    group could not launch into it. A block is paid for at once and cannot be cancelled."""
    offering = aws.ec2.get_capacity_block_offering_output(
        capacity_duration_hours=source.offering_hours,
        instance_count=instance_count,
        instance_type=instance_type,
        opts=pulumi.InvokeOutputOptions(parent=opts.parent),
    )

    block = aws.ec2.CapacityBlockReservation(
        name,
        capacity_block_offering_id=offering.apply(
            lambda found: offering_in_zone(found, source, zone=zone, instance_type=instance_type)
        ),
        instance_platform="Linux/UNIX",
        tags=dict(tags),
        opts=opts,
    )
    return block.id


def offering_in_zone(found: Any, source: CapacitySource, *, zone: str, instance_type: str) -> str:
    """The id of the offering `found` when it is in `zone`; otherwise the run stops, before
    anything is bought, with the source's YAML path and what to do (a `pulumi.RunError`:
    a message, not a traceback)."""
    if found.availability_zone and found.availability_zone != zone:
        raise pulumi.RunError(
            f"{format_path(source.path)}: the Capacity Block offering EC2 found for "
            f"{instance_type} ({source.offering_hours} hours) is in {found.availability_zone}, "
            f"not {zone}: nothing bought; set this source's `zone:` to "
            f"{found.availability_zone} if the pool runs there, try another `hours`, or "
            "buy a block in the zone outside the stack and list it with `id` and `ends`"
        )
    return str(found.capacity_block_offering_id)


def eks_launch_template(
    name: str,
    source: CapacitySource,
    *,
    reservation_id: pulumi.Input[str] | None,
    disk_gib: int,
    tags: Mapping[str, str],
    opts: pulumi.ResourceOptions,
    fast_image_pull: bool = False,
) -> aws.ec2.LaunchTemplate:
    """The launch template of a node group that launches into a reservation or a Capacity
    Block, or whose nodes pull images in parallel (`fast_image_pull`), or both.

    A reservation (`reservation_id`) becomes ``capacityReservationSpecification.
    capacityReservationTarget`` (pulumi-aws 7.51.1
    ``ec2.LaunchTemplateCapacityReservationSpecificationArgs``), a Capacity Block adds
    ``instanceMarketOptions.marketType: capacity-block``; the template carries the root disk
    the node group may no longer size itself (`ROOT_DEVICE`: an encrypted gp3 volume of the
    pool's size). `fast_image_pull` adds nodeadm's ``FastImagePull`` gate as user data and
    the faster volume it wants (`inferplane.components.image_pull`). No AMI or instance type:
    EKS still picks the GPU AMI and bootstraps the node from the node group's ``amiType``."""
    reserved = reservation_id is not None
    return aws.ec2.LaunchTemplate(
        name,
        description=f"nodes launched into {source.label}"
        if reserved
        else "GPU nodes that pull images in parallel (SOCI)",
        block_device_mappings=[
            aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                device_name=ROOT_DEVICE,
                ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                    volume_size=disk_gib,
                    volume_type="gp3",
                    encrypted="true",
                    delete_on_termination="true",
                    throughput=image_pull.FAST_PULL_THROUGHPUT_MIBPS if fast_image_pull else None,
                    iops=image_pull.FAST_PULL_IOPS if fast_image_pull else None,
                ),
            )
        ],
        capacity_reservation_specification=aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs(
            capacity_reservation_target=aws.ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs(
                capacity_reservation_id=reservation_id
            )
        )
        if reserved
        else None,
        instance_market_options=aws.ec2.LaunchTemplateInstanceMarketOptionsArgs(
            market_type=CAPACITY_BLOCK_MARKET
        )
        if reserved and source.kind == "capacity_block"
        else None,
        user_data=image_pull.eks_user_data_base64() if fast_image_pull else None,
        tags=dict(tags),
        opts=opts,
    )


def gke_reservation_affinity(source: CapacitySource) -> Mapping[str, Any] | None:
    """``node_config.reservation_affinity`` of a GKE node pool: a specific reservation by
    name (pulumi-gcp 10.2.0 ``container.NodePoolNodeConfigReservationAffinityArgs``: key
    ``compute.googleapis.com/reservation-name``, the reservation's name as the value)."""
    if source.kind != "reservation":
        return None
    return {
        "consume_reservation_type": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": [source.reservation],
    }


__all__ = [
    "BOUGHT_BLOCK_TYPE",
    "CAPACITY_BLOCK_MARKET",
    "EKS_CAPACITY_TYPES",
    "KARPENTER_CAPACITY_TYPES",
    "eks_bought_block",
    "eks_launch_template",
    "expander_priorities",
    "gke_reservation_affinity",
    "group_name",
    "karpenter_markets",
    "karpenter_reservation_terms",
    "offering_in_zone",
    "source_suffix",
]
