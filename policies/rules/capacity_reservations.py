"""capacity-reservations: the stack launches GPU nodes only into the On-Demand Capacity
Reservations, Capacity Blocks and GKE reservations the platform grants the blueprint."""

from __future__ import annotations

from collections.abc import Iterator

from inferplane.blueprint import naming
from inferplane.policies.framework import ConfigKey, Finding, Rule, RuleConfig
from inferplane.policies.resources import Resource, _dict, _list
from inferplane.policies.scoping import KEY_DESCRIPTION, KEY_PATTERN, granted
from inferplane.policies.stack import Stack

LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
"""pulumi-aws 7.51.1 ``ec2.LaunchTemplate``: ``capacityReservationSpecification
.capacityReservationTarget.capacityReservationId`` is the reservation its instances use."""
NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
"""Karpenter v1.14.1 EC2NodeClass: ``spec.capacityReservationSelectorTerms[].id``."""
GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
"""pulumi-gcp 10.2.0 ``container.NodePool``: ``nodeConfig.reservationAffinity.values`` are
the reservation names its nodes consume."""
BOUGHT_BLOCK = "aws:ec2/capacityBlockReservation:CapacityBlockReservation"
"""A Capacity Block the stack buys (`inferplane.components.capacity_sources.eks_bought_block`)."""


def _reservations(r: Resource) -> list[str]:
    """The reservation ids or names `r` launches into; values not known yet are skipped."""
    if r.type == LAUNCH_TEMPLATE:
        spec = _dict(r.props.get("capacityReservationSpecification"))
        target = _dict(spec.get("capacityReservationTarget"))
        values: list[object] = [target.get("capacityReservationId")]
    elif r.type == NODE_CLASS:
        terms = _list(_dict(r.props.get("spec")).get("capacityReservationSelectorTerms"))
        values = [_dict(t).get("id") for t in terms]
    else:
        affinity = _dict(_dict(r.props.get("nodeConfig")).get("reservationAffinity"))
        values = list(_list(affinity.get("values")))
    return [v for v in values if isinstance(v, str) and v]


def _pool(r: Resource) -> str:
    if r.type == GKE_NODE_POOL:
        labels = _dict(_dict(r.props.get("nodeConfig")).get("resourceLabels"))
        return str(labels.get("pool") or "")
    tags = _dict(r.props.get("tags"))
    if r.type == NODE_CLASS:
        tags = _dict(_dict(r.props.get("spec")).get("tags"))
    return str(tags.get(naming.POOL_LABEL) or "")


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    env = stack.env
    blueprint, environment = (env.blueprint, env.name) if env is not None else (None, None)
    allowed = {str(i) for i in granted(config["allowed_reservations"], blueprint, environment)}
    # A block the stack buys itself (`<group>-block`) is judged by capacity-block-purchase;
    # its node group's launch template (`<group>-template`) targets it by its new id.
    bought = {b.name.removesuffix("-block") for b in stack.of_type(BOUGHT_BLOCK)}
    seen: set[tuple[str, str]] = set()
    for r in stack.of_type(LAUNCH_TEMPLATE, NODE_CLASS, GKE_NODE_POOL):
        if r.type == LAUNCH_TEMPLATE and r.name.removesuffix("-template") in bought:
            continue
        pool = _pool(r)
        for reservation in _reservations(r):
            if reservation in allowed or (pool, reservation) in seen:
                continue
            seen.add((pool, reservation))
            yield Finding(
                f"gpu_pools.{pool}" if pool else r.name,
                ("gpu_pools", pool, "capacity") if pool else (),
                f"pool {pool or '?'} launches its nodes into reservation {reservation}, which "
                "the platform's policy config does not grant this blueprint: reserved "
                "capacity is prepaid and may belong to another team; remove the source, or "
                "ask the platform team to list it under "
                "capacity-reservations.allowed_reservations",
                r.ref,
            )


RULE = Rule(
    id="capacity-reservations",
    title="GPU nodes launch only into reservations the platform grants",
    level="mandatory",
    scope="stack",
    check=check,
    rationale=(
        "A capacity source may name any On-Demand Capacity Reservation or Capacity Block "
        "(`cr-...`) of the account, or any GKE reservation of the project, by id: one line "
        "of a blueprint could take the prepaid GPUs another team bought and leave its "
        "workloads without them. Which reservations a blueprint may consume is the "
        "platform's decision, written in its policy config."
    ),
    remediation=(
        "Remove the reservation or capacity_block source, or have the platform team list "
        "its id (AWS) or name (GCP) under capacity-reservations.allowed_reservations for "
        "the blueprint."
    ),
    config=(
        ConfigKey(
            "allowed_reservations",
            {},
            {
                "type": "object",
                "propertyNames": {"pattern": KEY_PATTERN},
                "additionalProperties": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1},
                },
            },
            "Reservation and Capacity Block ids (AWS `cr-...`) and GKE reservation names "
            f"the blueprint's GPU nodes may launch into, {KEY_DESCRIPTION}. The default "
            "grants none.",
        ),
    ),
    sources=(
        "Resources only: EKS launch templates' capacityReservationTarget, Karpenter "
        "EC2NodeClasses' capacityReservationSelectorTerms ids and GKE node pools' "
        "reservationAffinity values. Offline and online alike (online only the `*` "
        "entries apply: the blueprint's name is not known there)."
    ),
    passing_example="""\
environments:
  staging:
    overrides:
      gpu_pools:
        l4:
          capacity:
            - capacity_block: {offering: auto, hours: 48, buy: true}
              zone: us-east-1a
            - on_demand
""",
    failing_example="""\
environments:
  staging:
    overrides:
      gpu_pools:
        l4:
          capacity:
            - capacity_block: {id: cr-0fedcba9876543210, ends: "2026-12-20T11:30:00Z"}
              zone: us-east-1a
            - on_demand
""",
)
