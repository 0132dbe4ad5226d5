"""capacity-reservations on hand-written resources: the three places a reservation is named."""

from __future__ import annotations

from typing import Any

from shapes import res

from inferplane.blueprint import naming
from inferplane.policies.rules import capacity_reservations as rule
from inferplane.policies.stack import Stack

BLOCK = "cr-0fedcba9876543210"


def _findings(resources: list[Any], allowed: dict[str, list[str]] | None = None) -> list[Any]:
    config = {"allowed_reservations": allowed or {}}
    return list(rule.check(Stack.of(resources), config))


def _template(name: str, reservation: str) -> Any:
    return res(
        rule.LAUNCH_TEMPLATE,
        name,
        {
            "capacityReservationSpecification": {
                "capacityReservationTarget": {"capacityReservationId": reservation}
            },
            "tags": {naming.POOL_LABEL: "h100"},
        },
    )


def test_a_karpenter_node_class_selecting_a_reservation_by_id_is_refused() -> None:
    node_class = res(
        rule.NODE_CLASS,
        "h100-class",
        {
            "spec": {
                "capacityReservationSelectorTerms": [{"id": BLOCK}],
                "tags": {naming.POOL_LABEL: "h100"},
            }
        },
    )
    (finding,) = _findings([node_class])
    assert finding.target == "gpu_pools.h100"
    assert BLOCK in finding.message
    assert _findings([node_class], {"*": [BLOCK]}) == []


def test_an_eks_launch_template_targeting_a_reservation_is_refused_unless_granted() -> None:
    (finding,) = _findings([_template("h100-a-template", BLOCK)])
    assert finding.field == ("gpu_pools", "h100", "capacity")
    assert _findings([_template("h100-a-template", BLOCK)], {"*": [BLOCK]}) == []


def test_a_gke_node_pool_with_a_reservation_affinity_is_refused() -> None:
    pool = res(
        rule.GKE_NODE_POOL,
        "h100-a",
        {
            "nodeConfig": {
                "reservationAffinity": {"values": ["h100-reserved"]},
                "resourceLabels": {"pool": "h100"},
            }
        },
    )
    (finding,) = _findings([pool])
    assert "h100-reserved" in finding.message


def test_the_template_of_a_block_the_stack_buys_is_left_to_capacity_block_purchase() -> None:
    block = res(rule.BOUGHT_BLOCK, "h100-a-block", {"tags": {naming.POOL_LABEL: "h100"}})
    assert _findings([block, _template("h100-a-template", "h100-a-block-1234")]) == []
