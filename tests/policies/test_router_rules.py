"""The llm-d router's pools and pickers in a hand-written program: the checks of
`same-zone-placement` (each pool holds one zone) and `router-high-availability` called
directly on shaped resources, with the exact findings."""

from __future__ import annotations

from typing import Any

import pytest
import shapes as S

from inferplane.blueprint import naming
from inferplane.policies import resources as R
from inferplane.policies.rules import rule
from inferplane.policies.rules.router_high_availability import picker_evictions
from inferplane.policies.stack import Stack

ZONE = "us-east-1a"
SERVICE_MODE = {"mode": "service", "replicas": 2.0}


def router(
    labels: dict[str, str],
    replicas: float = 2.0,
    fail_open: bool = True,
    proxy: dict[str, Any] | None = None,
) -> Any:
    values = {
        "router": {
            "modelServers": {"matchLabels": labels},
            "epp": {"replicas": replicas},
            "proxy": {
                "failOpen": fail_open,
                **({"mode": "service", "replicas": 2.0} if proxy is None else proxy),
            },
            "inferencePool": {"failureMode": "FailOpen" if fail_open else "FailClose"},
        }
    }
    return S.res(
        R.HELM_RELEASE,
        "chat-router",
        {
            "name": f"chat-{ZONE}",
            "chart": "oci://ghcr.io/llm-d/charts/llm-d-router-standalone",
            "values": values,
        },
    )


def picker_pdb(**budget: Any) -> Any:
    return S.res(
        R.PDB,
        "chat-epp",
        {
            "metadata": {"name": f"chat-{ZONE}-epp"},
            "spec": {
                **budget,
                "selector": {"matchLabels": {"llm-d-router-gateway": f"chat-{ZONE}-epp"}},
            },
        },
    )


def messages(rule_id: str, resources: list[Any]) -> list[str]:
    found = rule(rule_id).check(Stack.of(resources), rule(rule_id).defaults())
    return [f.message for f in found]


def zone_deployment(zones: tuple[str, ...]) -> Any:
    found = S.deployment("chat", zones=zones)
    found.props["spec"]["template"]["metadata"]["labels"][naming.ZONE_LABEL] = ZONE
    return found


def test_a_pool_of_one_zone_selecting_pods_pinned_there_passes() -> None:
    pool = {naming.MODEL_LABEL: "chat", naming.ZONE_LABEL: ZONE}
    resources = [router(pool), zone_deployment((ZONE,))]
    assert [m for m in messages("same-zone-placement", resources) if "InferencePool" in m] == []
    assert messages("router-high-availability", resources) == []


def test_a_pool_without_a_zone_or_selecting_pods_of_two_zones_is_refused() -> None:
    no_zone = [router({naming.MODEL_LABEL: "chat"}), zone_deployment((ZONE,))]
    assert [m for m in messages("same-zone-placement", no_zone) if "InferencePool" in m] == [
        f"the InferencePool chat-{ZONE} selects pods of every zone (its selector has no "
        f"{naming.ZONE_LABEL}); give each zone its own pool"
    ]
    pool = {naming.MODEL_LABEL: "chat", naming.ZONE_LABEL: ZONE}
    spread = [router(pool), zone_deployment(("us-east-1a", "us-east-1b"))]
    assert [m for m in messages("same-zone-placement", spread) if "InferencePool" in m] == [
        f"the InferencePool chat-{ZONE} of zone {ZONE} selects chat, whose pods may run in "
        f"us-east-1a, us-east-1b; pin them to {ZONE} alone"
    ]


def test_one_picker_and_a_closed_proxy_are_each_refused() -> None:
    pool = {naming.MODEL_LABEL: "chat", naming.ZONE_LABEL: ZONE}
    assert messages("router-high-availability", [router(pool, 1.0, fail_open=False)]) == [
        f"the router chat-{ZONE} runs 1 endpoint picker(s), fewer than 2: when its pod goes, "
        "requests flow unscored until a new one starts",
        f"the router chat-{ZONE} fails closed: while its endpoint picker is unreachable every "
        "request of the zone is refused; set proxy.failOpen: true and "
        "inferencePool.failureMode: FailOpen",
    ]


def test_a_proxy_beside_the_pickers_or_alone_is_refused() -> None:
    pool = {naming.MODEL_LABEL: "chat", naming.ZONE_LABEL: ZONE}
    assert messages("router-high-availability", [router(pool, proxy={})]) == [
        f"the router chat-{ZONE} enters its zone through one Ready pod: its Envoy runs "
        "beside the pickers (proxy.mode: sidecar) and under leader election only the "
        "leading picker's pod is Ready, so the zone's load balancer has one target, and the "
        "pickers' Recreate strategy takes it away on every picker change; set proxy.mode: "
        "service with proxy.replicas: 2 or more"
    ]
    one = router(pool, proxy={"mode": "service", "replicas": 1.0})
    assert messages("router-high-availability", [one]) == [
        f"the router chat-{ZONE} enters its zone through one Ready pod: it runs 1 proxy; "
        "set proxy.mode: service with proxy.replicas: 2 or more"
    ]


def test_a_budget_that_blocks_the_leading_picker_is_refused() -> None:
    pool = {naming.MODEL_LABEL: "chat", naming.ZONE_LABEL: ZONE}
    blocking = picker_pdb(minAvailable=1.0, unhealthyPodEvictionPolicy="AlwaysAllow")
    assert messages("router-high-availability", [router(pool), blocking]) == [
        f"the PodDisruptionBudget chat-{ZONE}-epp lets no drain evict a picker of the router "
        f"chat-{ZONE} (chat-{ZONE}-epp): under leader election only the leader is Ready and "
        "a budget counts Ready pods, so node drains, node group updates and autoscaler "
        "moves wait on it forever; remove it (leader election hands over to the standby)"
    ]
    assert (
        messages("router-high-availability", [router(pool), picker_pdb(maxUnavailable=2.0)]) == []
    )


@pytest.mark.parametrize(
    ("budget", "leader_and_standby"),
    [
        # disruptionsAllowed = 1 Ready - 1 desired = 0: the leader stays; AlwaysAllow lets
        # the non-ready standby go, the default policy too (currentHealthy >= desired > 0).
        ({"minAvailable": 1, "unhealthyPodEvictionPolicy": "AlwaysAllow"}, (False, True)),
        ({"minAvailable": 1}, (False, True)),
        # desired = 2 replicas - 1 = 1: the same for the leader.
        ({"maxUnavailable": 1, "unhealthyPodEvictionPolicy": "AlwaysAllow"}, (False, True)),
        # desired = 2 - 2 = 0: the leader may go; the standby only under AlwaysAllow or
        # through disruptionsAllowed (1).
        ({"maxUnavailable": 2}, (True, True)),
        ({"maxUnavailable": "100%"}, (True, True)),
        ({"minAvailable": "50%"}, (False, True)),
        # Neither: expectedCount 0, so disruptionsAllowed 0.
        ({}, (False, False)),
        ({"unhealthyPodEvictionPolicy": "AlwaysAllow"}, (False, True)),
    ],
)
def test_picker_evictions_follow_the_disruption_controller(
    budget: dict[str, Any], leader_and_standby: tuple[bool, bool]
) -> None:
    assert picker_evictions(budget, 2) == leader_and_standby
