"""A pool's ordered capacity sources as generated objects: EKS node groups (one per source
and zone, the first at the floor, reservations and Capacity Blocks through launch templates)
with the Cluster Autoscaler's priority expander, Karpenter NodePools weighted in order with
the reservations selected on the EC2NodeClass (checked against the vendored v1.14.1 CRDs),
and GKE node pools with reservation affinity and flex-start."""

from __future__ import annotations

import dataclasses
import types
from typing import Any

import pulumi
import pytest
from cloud_fixtures import cloud_recording, with_pool
from serving.crd_schema import errors
from test_karpenter import NODE_CLASS, NODE_POOL, body, on_karpenter

from inferplane.app.check import stack_of
from inferplane.blueprint.model import CapacitySource, Environment
from inferplane.components import capacity_sources
from inferplane.policies.rules import gpu_budget, warm_replicas
from inferplane.policies.stack import most_nodes

EKS_GROUP = "aws:eks/nodeGroup:NodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
GKE_POOL = "gcp:container/nodePool:NodePool"
RELEASE = "kubernetes:helm.sh/v3:Release"
AT = ("gpu_pools", "x", "capacity")
RESERVATION = CapacitySource("reservation", AT, reservation="cr-0123456789abcdef0")
BLOCK = CapacitySource(
    "capacity_block", AT, reservation="cr-0fedcba9876543210", ends="2026-12-20T11:30:00Z"
)
ON_DEMAND = CapacitySource("on_demand", AT)
SPOT = CapacitySource("spot", AT)


@pytest.fixture(scope="module")
def eks(staging: Environment) -> Environment:
    """Staging's l4 pool (one zone, us-east-1a; nodes 4..7) with four sources."""
    return with_pool(staging, "l4", capacity_sources=(RESERVATION, BLOCK, ON_DEMAND, SPOT))


def groups(env: Environment) -> dict[str, dict[str, Any]]:
    rec = cloud_recording(env)
    return {
        r.inputs["nodeGroupName"]: r.inputs
        for r in rec.of_type(EKS_GROUP)
        if r.inputs.get("labels", {}).get("inferplane.dev/pool") == "l4"
    }


def test_one_eks_node_group_per_source_in_order_the_first_at_the_floor(eks: Environment) -> None:
    base = "support-assistant-staging-l4-a"
    order = [base, f"{base}-cb-76543210", f"{base}-od", f"{base}-spot"]
    named = groups(eks)
    assert set(named) == set(order)
    found = {n: named[n] for n in order}
    assert [g["capacityType"] for g in found.values()] == [
        "ON_DEMAND",
        "CAPACITY_BLOCK",
        "ON_DEMAND",
        "SPOT",
    ]
    assert [g["scalingConfig"] for g in found.values()] == [
        {"minSize": 4, "maxSize": 7, "desiredSize": 4},
        {"minSize": 0, "maxSize": 7, "desiredSize": 0},
        {"minSize": 0, "maxSize": 7, "desiredSize": 0},
        {"minSize": 0, "maxSize": 7, "desiredSize": 0},
    ]
    # A launch template carries the disk, so the group may not set diskSize.
    assert [("launchTemplate" in g, g.get("diskSize")) for g in found.values()] == [
        (True, None),
        (True, None),
        (False, 200),
        (False, 200),
    ]
    # Every group carries the same labels and autoscaler node template: one pool, one zone.
    labels = [g["labels"] for g in found.values()]
    assert all(lbl == labels[0] for lbl in labels)


def test_launch_templates_target_the_reservation_and_the_block(eks: Environment) -> None:
    rec = cloud_recording(eks)
    templates = {r.name: r.inputs for r in rec.of_type(LAUNCH_TEMPLATE)}
    name = "support-assistant-staging-l4-a"
    reservation = templates[f"{name}-template"]
    block = templates[f"{name}-cb-76543210-template"]
    assert reservation["capacityReservationSpecification"] == {
        "capacityReservationTarget": {"capacityReservationId": "cr-0123456789abcdef0"}
    }
    assert "instanceMarketOptions" not in reservation
    assert block["capacityReservationSpecification"] == {
        "capacityReservationTarget": {"capacityReservationId": "cr-0fedcba9876543210"}
    }
    assert block["instanceMarketOptions"] == {"marketType": "capacity-block"}
    for template in (reservation, block):
        assert template["blockDeviceMappings"] == [
            {
                "deviceName": "/dev/xvda",
                "ebs": {
                    "volumeSize": 200,
                    "volumeType": "gp3",
                    "encrypted": "true",
                    "deleteOnTermination": "true",
                },
            }
        ]
        assert "imageId" not in template and "instanceType" not in template
    assert set(templates) == {f"{name}-template", f"{name}-cb-76543210-template"}


def test_the_cluster_autoscaler_expands_by_priority_in_the_pool_s_order(eks: Environment) -> None:
    rec = cloud_recording(eks)
    (ca,) = [r for r in rec.of_type(RELEASE) if r.inputs["name"] == "cluster-autoscaler"]
    values = ca.inputs["values"]
    assert values["extraArgs"]["expander"] == "priority,least-waste"
    base = "support-assistant-staging-l4-a"
    assert values["expanderPriorities"] == {
        "10": [f"^eks-{base}-spot-[0-9a-f-]+$"],
        "20": [f"^eks-{base}-od-[0-9a-f-]+$"],
        "30": [f"^eks-{base}-cb-76543210-[0-9a-f-]+$"],
        "40": [f"^eks-{base}-[0-9a-f-]+$"],
    }


def test_one_source_keeps_least_waste_and_one_group(staging: Environment) -> None:
    env = with_pool(staging, "l4", capacity_sources=(SPOT,), capacity="spot")
    rec = cloud_recording(env)
    (ca,) = [r for r in rec.of_type(RELEASE) if r.inputs["name"] == "cluster-autoscaler"]
    assert ca.inputs["values"]["extraArgs"]["expander"] == "least-waste"
    assert "expanderPriorities" not in ca.inputs["values"]
    found = groups(env)
    assert list(found) == ["support-assistant-staging-l4-a"]
    assert found["support-assistant-staging-l4-a"]["capacityType"] == "SPOT"
    assert not rec.of_type(LAUNCH_TEMPLATE)


def test_expander_priorities_leave_single_source_zones_out() -> None:
    table = capacity_sources.expander_priorities([["a-1"], ["b-1", "b-1-spot"]])
    assert table == {10: ["^eks-b-1-spot-[0-9a-f-]+$"], 20: ["^eks-b-1-[0-9a-f-]+$"]}


# --- Karpenter -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def karpenter(staging: Environment) -> Environment:
    return with_pool(
        on_karpenter(staging), "h100", capacity_sources=(RESERVATION, BLOCK, ON_DEMAND, SPOT)
    )


def test_karpenter_node_pools_per_market_weighted_in_order(karpenter: Environment) -> None:
    rec = cloud_recording(karpenter)
    pools = {
        r.inputs["metadata"]["name"]: r.inputs["spec"]
        for r in rec.of_type(NODE_POOL)
        if r.inputs["metadata"]["labels"]["inferplane.dev/pool"] == "h100"
    }
    base = "support-assistant-staging-h100-a"
    order = [base, f"{base}-on-demand", f"{base}-spot"]
    assert set(pools) == set(order)
    pools = {n: pools[n] for n in order}
    capacity = [
        next(
            q["values"]
            for q in spec["template"]["spec"]["requirements"]
            if q["key"] == "karpenter.sh/capacity-type"
        )
        for spec in pools.values()
    ]
    assert capacity == [["reserved"], ["on-demand"], ["spot"]]
    assert [spec["weight"] for spec in pools.values()] == [100, 90, 80]
    for r in rec.of_type(NODE_POOL):
        assert errors(body(r)) == []


def test_the_node_class_selects_the_reservation_and_the_block(karpenter: Environment) -> None:
    rec = cloud_recording(karpenter)
    (h100,) = [r for r in rec.of_type(NODE_CLASS) if r.inputs["metadata"]["name"].endswith("-h100")]
    assert h100.inputs["spec"]["capacityReservationSelectorTerms"] == [
        {"id": "cr-0123456789abcdef0"},
        {"id": "cr-0fedcba9876543210"},
    ]
    assert errors(body(h100)) == []
    (l4,) = [r for r in rec.of_type(NODE_CLASS) if r.inputs["metadata"]["name"].endswith("-l4")]
    assert "capacityReservationSelectorTerms" not in l4.inputs["spec"]


def test_one_karpenter_source_keeps_one_unweighted_node_pool(staging: Environment) -> None:
    env = on_karpenter(staging)
    rec = cloud_recording(env)
    assert all("weight" not in r.inputs["spec"] for r in rec.of_type(NODE_POOL))


# --- GKE -------------------------------------------------------------------------------
def test_gke_node_pools_with_reservation_affinity_and_flex_start(prod: Environment) -> None:
    zones = prod.pools["l4"].zones
    reservation = CapacitySource("reservation", AT, reservation="l4-reserved", zone=zones[0])
    env = with_pool(
        prod,
        "l4",
        capacity_sources=(reservation, CapacitySource("flex_start", AT), ON_DEMAND),
    )
    rec = cloud_recording(env)
    pools = {
        r.inputs["name"]: r.inputs
        for r in rec.of_type(GKE_POOL)
        if r.inputs["nodeConfig"]["labels"].get("inferplane.dev/pool") == "l4"
    }
    base = {z: f"support-assistant-prod-l4-{z[-1]}" for z in zones}
    assert set(pools) == {
        base[zones[0]],
        f"{base[zones[0]]}-flex",
        f"{base[zones[0]]}-od",
        base[zones[1]],
        f"{base[zones[1]]}-od",
    }
    first = pools[base[zones[0]]]
    assert first["nodeConfig"]["reservationAffinity"] == {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["l4-reserved"],
    }
    floor = prod.pools["l4"].nodes.min
    assert first["autoscaling"]["minNodeCount"] == floor
    flex = pools[f"{base[zones[0]]}-flex"]
    assert flex["nodeConfig"]["flexStart"] is True
    assert flex["autoscaling"]["minNodeCount"] == 0 and flex["initialNodeCount"] == 0
    # Zone b has no reservation: flex-start is its first source and holds the floor.
    second = pools[base[zones[1]]]
    assert second["nodeConfig"]["flexStart"] is True
    assert second["autoscaling"]["minNodeCount"] == floor
    assert "reservationAffinity" not in second["nodeConfig"]
    assert pools[f"{base[zones[1]]}-od"]["autoscaling"]["minNodeCount"] == 0


# --- what the capacity rules read --------------------------------------------------------
def test_a_zone_s_sources_count_once_in_the_capacity_rules(staging: Environment) -> None:
    """The groups of one zone are alternatives: the budget and headroom rules count the
    zone's nodes.max once, and the warm-replica rule the first source's floor."""
    env = with_pool(on_karpenter(staging), "l4", capacity_sources=(ON_DEMAND, SPOT))
    stack = stack_of(env)
    l4 = [g for g in stack.node_groups if g.pool == "l4"]
    assert len(l4) == 2
    assert most_nodes(l4) == 7
    assert gpu_budget.pool_gpus(stack)["l4"] == (7, 1, 7)
    short = with_pool(env, "l4", nodes=dataclasses.replace(env.pools["l4"].nodes, min=1, max=2))
    findings = warm_replicas.RULE.run(stack_of(short))
    assert [f.message for f in findings if f.field[-1] == "max"] == [
        "in zone us-east-1a, nodes.max 2 (2 GPUs, the limit of the Karpenter NodePool) "
        "cannot hold the 4 GPUs of the warm replicas placed there and its spare GPUs "
        "(chat 1, ranker 1, toxicity 1, spare_gpus 1); raise nodes.max to 4",
    ]
    eks = with_pool(staging, "l4", capacity_sources=(RESERVATION, ON_DEMAND, SPOT))
    assert gpu_budget.pool_gpus(stack_of(eks))["l4"] == (7, 1, 7)


def test_a_block_to_buy_is_bought_from_the_offering_and_launched_into(
    staging: Environment,
) -> None:
    offer = CapacitySource("capacity_block", AT, zone="us-east-1a", offering_hours=48, buy=True)
    env = with_pool(staging, "l4", capacity_sources=(offer, ON_DEMAND))
    rec = cloud_recording(env)
    (lookup,) = [
        i
        for i in rec.invokes
        if i.token == "aws:ec2/getCapacityBlockOffering:getCapacityBlockOffering"
    ]
    assert lookup.args == {
        "capacityDurationHours": 48,
        "instanceCount": 7,
        "instanceType": "g6.2xlarge",
    }
    (block,) = rec.of_type(capacity_sources.BOUGHT_BLOCK_TYPE)
    assert block.inputs["capacityBlockOfferingId"] == "cb-0offline000000000"
    assert block.inputs["instancePlatform"] == "Linux/UNIX"
    assert block.inputs["tags"]["inferplane.dev/pool"] == "l4"
    (template,) = rec.of_type(LAUNCH_TEMPLATE)
    assert template.inputs["instanceMarketOptions"] == {"marketType": "capacity-block"}
    target = template.inputs["capacityReservationSpecification"]["capacityReservationTarget"]
    assert target["capacityReservationId"]  # the bought block's id
    first = groups(env)["support-assistant-staging-l4-a"]
    assert first["capacityType"] == "CAPACITY_BLOCK"


def test_a_capacity_block_listed_first_starts_at_zero_nodes(staging: Environment) -> None:
    """A block launches nothing before it starts or after it ends: its group has no floor,
    and the zone's later sources still start at zero."""
    env = with_pool(staging, "l4", capacity_sources=(BLOCK, ON_DEMAND))
    base = "support-assistant-staging-l4-a"
    named = groups(env)
    assert named[base]["capacityType"] == "CAPACITY_BLOCK"
    assert named[base]["scalingConfig"] == {"minSize": 0, "maxSize": 7, "desiredSize": 0}
    assert named[f"{base}-od"]["scalingConfig"] == {"minSize": 0, "maxSize": 7, "desiredSize": 0}


def test_the_floor_of_each_source() -> None:
    assert [s.floor(0, 3) for s in (RESERVATION, BLOCK, ON_DEMAND, SPOT)] == [3, 0, 3, 3]
    assert [s.floor(1, 3) for s in (RESERVATION, BLOCK, ON_DEMAND, SPOT)] == [0, 0, 0, 0]


def test_an_offering_in_another_zone_stops_the_run_with_the_source_and_a_remedy() -> None:
    source = dataclasses.replace(
        BLOCK,
        path=("environments", "staging", "overrides", "gpu_pools", "l4", "capacity", 0),
        reservation=None,
        ends=None,
        offering_hours=48,
        buy=True,
    )
    found = types.SimpleNamespace(availability_zone="us-east-1b", capacity_block_offering_id="cb-1")
    with pytest.raises(pulumi.RunError) as raised:
        capacity_sources.offering_in_zone(
            found, source, zone="us-east-1a", instance_type="p5.48xlarge"
        )
    message = str(raised.value)
    assert message.startswith("environments.staging.overrides.gpu_pools.l4.capacity[0]: ")
    assert "is in us-east-1b, not us-east-1a: nothing bought; set this source's `zone:`" in message
    here = types.SimpleNamespace(availability_zone="us-east-1a", capacity_block_offering_id="cb-1")
    assert (
        capacity_sources.offering_in_zone(
            here, source, zone="us-east-1a", instance_type="p5.48xlarge"
        )
        == "cb-1"
    )
