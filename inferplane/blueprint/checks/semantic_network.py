"""Semantic checks of addresses and dates: what the cloud (or a later stage) would refuse.

CIDRs are parsed strictly (``ipaddress`` with ``strict=True``: no host bits), so a value
that the schema's pattern lets through never reaches `ipaddress` inside a component. The
VPC layouts checked here are the ones the components carve (`cluster_eks.subnet_plan`,
`cluster_gke.ip_plan`); the numbers live here so the blueprint layer can check them
without importing Pulumi.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from typing import TYPE_CHECKING

from inferplane.blueprint.errors import Diagnostic, YamlPath
from inferplane.blueprint.source import Document

if TYPE_CHECKING:
    from inferplane.blueprint.checks.semantic_env import EnvView

EKS_MAX_VPC_PREFIX = 22
"""`cluster_eks.subnet_plan` splits the VPC into eight blocks (one private block per zone,
the last cut into eight public /+6 subnets); a /22 gives /25 private and /28 public
subnets, the smallest public subnet AWS allows (/28, "Subnet sizing" in
https://docs.aws.amazon.com/vpc/latest/userguide/subnet-sizing.html)."""
EKS_MAX_ZONES = 7
"""Eight blocks, the last one public: seven private blocks, so seven zones at most."""
GKE_MAX_VPC_PREFIX = 20
"""`cluster_gke.ip_plan`: nodes and services each get a sixteenth, pods the upper half
(one /24 per node), so a /20 gives /24 node and service ranges and a /21 pod range."""


def strict_network(
    text: str, *, ipv4_only: bool = False
) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network | None, str]:
    """(network, "") or (None, why not) for `text` parsed strictly."""
    try:
        net = ipaddress.ip_network(text, strict=True)
    except ValueError as exc:
        reason = str(exc)
        if "has host bits set" in reason:
            fixed = ipaddress.ip_network(text, strict=False)
            return None, f"has host bits set (the network is {fixed})"
        return None, "is not a valid CIDR block"
    if ipv4_only and net.version != 4:
        return None, "is an IPv6 block; the cluster network is IPv4"
    return net, ""


def check_vpc(env: EnvView) -> None:
    """`cluster.vpc_cidr` of a created cluster: strict, and large enough for the layout;
    on AWS also few enough zones for the layout."""
    cluster = env.spec.get("cluster") or {}
    if not cluster.get("create"):
        return
    cloud = env.spec["cloud"]
    text = cluster.get("vpc_cidr")
    if text is not None:
        path: YamlPath = ("environments", env.name, "cluster", "vpc_cidr")
        net, why = strict_network(text, ipv4_only=True)
        if net is None:
            env.error(path, f"{text!r} {why}", "write the network address, e.g. 10.64.0.0/16")
            return
        limit = EKS_MAX_VPC_PREFIX if cloud == "aws" else GKE_MAX_VPC_PREFIX
        if net.prefixlen > limit:
            layout = (
                "one private subnet per zone and public subnets for NAT"
                if cloud == "aws"
                else "the node, service and pod ranges"
            )
            env.error(
                path,
                f"{text} is too small for {layout}",
                f"use a /{limit} or larger, e.g. {net.supernet(new_prefix=limit)}",
            )
            return
    if cloud == "aws":
        _zones_fit(env, EKS_MAX_ZONES)


GKE_ZONAL_AFFINITY_MINOR = (1, 33)
"""Internal passthrough load balancers keep clients in their zone (zonal affinity) from GKE
1.33.3-gke.1392000, with GKE subsetting
(https://cloud.google.com/kubernetes-engine/docs/how-to/internal-load-balancing, "Using
zonal affinity"); `cluster_gke.min_master_version` raises a created 1.33 cluster to that
patch. An attached cluster is checked at preview time (`cluster_gke`)."""


def check_gke_zonal_affinity(env: EnvView) -> None:
    """A GKE cluster inferplane creates for internal load balancers runs a minor that has
    zonal affinity: on an earlier one every client's connections spread over all zones."""
    cluster = env.spec.get("cluster") or {}
    lb = env.data.get("load_balancer") or {}
    if env.spec["cloud"] != "gcp" or not cluster.get("create"):
        return
    if lb.get("scheme", "internal") != "internal" or "kubernetes_version" not in cluster:
        return
    text = str(cluster["kubernetes_version"])
    major, minor = (int(n) for n in text.split(".")[:2])
    if (major, minor) < GKE_ZONAL_AFFINITY_MINOR:
        floor = ".".join(map(str, GKE_ZONAL_AFFINITY_MINOR))
        env.error(
            ("environments", env.name, "cluster", "kubernetes_version"),
            f"GKE {text} has no zonal affinity for internal load balancers, so clients' "
            "connections would cross zones (it needs GKE 1.33.3-gke.1392000 or later)",
            f"use {floor} or later",
        )


def _zones_fit(env: EnvView, most: int) -> None:
    zones = env.spec["zones"]
    if len(zones) > most:
        env.error(
            ("environments", env.name, "zones", most),
            f"{len(zones)} zones do not fit the VPC layout (at most {most} zones, one private "
            "subnet each)",
            f"use at most {most} zones",
        )


def check_allowed_cidrs(env: EnvView) -> None:
    """`load_balancer.allowed_cidrs`: each a valid IPv4 or IPv6 network without host bits
    (Kubernetes validates ``loadBalancerSourceRanges`` as CIDRs, and the cloud controllers
    turn them into security group / firewall rules that take network addresses)."""
    lb = env.data.get("load_balancer") or {}
    for i, text in enumerate(lb.get("allowed_cidrs") or []):
        net, why = strict_network(text)
        if net is None:
            env.error(
                ("load_balancer", "allowed_cidrs", i),
                f"{text!r} {why}",
                "write a network address such as 10.0.0.0/8 or fd00::/8",
            )


def check_waiver_dates(doc: Document) -> list[Diagnostic]:
    """Every waiver's `expires` is a date that exists (the pattern allows 2027-02-31)."""
    out = []
    for i, waiver in enumerate((doc.data.get("policies") or {}).get("waivers") or []):
        text = str(waiver.get("expires", ""))
        try:
            dt.date.fromisoformat(text)
        except ValueError:
            path: YamlPath = ("policies", "waivers", i, "expires")
            out.append(
                Diagnostic(
                    doc.source.value(path),
                    path,
                    f"{text} is not a date in the calendar",
                    "use a day that exists in that month (YYYY-MM-DD)",
                )
            )
    return out
