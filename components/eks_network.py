"""The network plan of a created EKS cluster and the subnet lookups of an attached one.

Pure functions over CIDRs and zone names (tested directly), kept apart from the
`EksCluster` component that creates what they plan.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Sequence

import pulumi_aws as aws

INTERNAL_ELB_TAG = "kubernetes.io/role/internal-elb"
PUBLIC_ELB_TAG = "kubernetes.io/role/elb"
CONTROL_PLANE_MIN_ZONES = 2
"""EKS: "When you create a cluster, you specify a VPC and at least two subnets that are in
different Availability Zones"; one subnet, or several in one zone, fail with
``InvalidParameterException: Subnets specified must be in at least two different AZs``
(https://docs.aws.amazon.com/eks/latest/userguide/network-reqs.html)."""
EKS_UNSUPPORTED_ZONE_IDS = ("use1-az3", "usw1-az2", "cac1-az3")
"""Zone IDs where EKS places no control plane (network-reqs.html, "Subnet requirements for
clusters"; the API answers ``UnsupportedAvailabilityZoneException``). Zone IDs, not names:
names map to different physical zones per account."""


def subnet_plan(vpc_cidr: str, zones: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    """zone -> (private CIDR, public CIDR).

    The VPC splits into eight blocks: one large private block per zone (pod IPs come from
    it with the VPC CNI) and the last block cut into eight small public ones (NAT gateways
    and public load balancers only)."""
    net = ipaddress.IPv4Network(vpc_cidr)
    if net.prefixlen > 22:
        raise ValueError(
            f"vpc_cidr {vpc_cidr} is too small for per-zone subnets; use a /22 or larger"
        )
    blocks = list(net.subnets(prefixlen_diff=3))
    if len(zones) > len(blocks) - 1:
        raise ValueError(f"at most {len(blocks) - 1} zones fit one VPC, got {len(zones)}")
    public = list(blocks[-1].subnets(prefixlen_diff=3))
    return {zone: (str(blocks[i]), str(public[i])) for i, zone in enumerate(zones)}


def control_plane_cidr(vpc_cidr: str) -> str:
    """The CIDR of the extra control-plane subnet: the eighth small block of the public
    block, which `subnet_plan` never hands out (seven zones at most), so it cannot collide
    with a zone's subnets whatever the zones become. A /22 VPC makes it a /28, the smallest
    AWS subnet, with 11 usable addresses: EKS needs at least six free
    (network-reqs.html)."""
    net = ipaddress.IPv4Network(vpc_cidr)
    return str(list(list(net.subnets(prefixlen_diff=3))[-1].subnets(prefixlen_diff=3))[-1])


def pick_control_plane_zone(region_zones: Sequence[str], zones: Sequence[str]) -> str:
    """The zone of the extra control-plane subnet: the first, in name order, of the
    region's zones that EKS supports and the environment does not use. Name order keeps the
    choice stable: a region's new zones get later letters."""
    candidates = sorted(set(region_zones) - set(zones))
    if not candidates:
        raise ValueError(
            f"EKS needs control-plane subnets in {CONTROL_PLANE_MIN_ZONES} zones, but the "
            f"region offers no zone besides {', '.join(zones)} that EKS supports; add a second "
            "zone to the environment"
        )
    return candidates[0]


def one_subnet(zone: str, cluster: str) -> Callable[[Sequence[str] | None], str]:
    def pick(ids: Sequence[str] | None) -> str:
        if not ids:
            raise ValueError(
                f"cluster {cluster}: no subnet in {zone} is tagged {INTERNAL_ELB_TAG}=1 in the "
                f"cluster's VPC; tag one private subnet per zone of the environment with it"
            )
        return sorted(ids)[0]

    return pick


def subnet_filters(vpc_id: str, zone: str) -> list[aws.ec2.GetSubnetsFilterArgs]:
    return [
        aws.ec2.GetSubnetsFilterArgs(name="vpc-id", values=[vpc_id]),
        aws.ec2.GetSubnetsFilterArgs(name="availability-zone", values=[zone]),
        aws.ec2.GetSubnetsFilterArgs(name=f"tag:{INTERNAL_ELB_TAG}", values=["1"]),
    ]
