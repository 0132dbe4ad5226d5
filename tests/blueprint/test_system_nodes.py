"""The system nodes a created cluster starts with in each zone: one for the add-ons, plus
what the zone's llm-aware routing pods need (`inferplane.blueprint.system_nodes`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from inferplane.blueprint import system_nodes
from inferplane.blueprint.model import Environment
from inferplane.blueprint.resolution.resolve import resolve_file
from inferplane.blueprint.system_nodes import PICKER, PROXY, SystemPod, nodes_for

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def routed() -> Environment:
    """llm-routing's prod: one llm-aware model, two pickers, in two zones of a new EKS."""
    return resolve_file(ROOT / "blueprints" / "llm-routing.yaml", "prod")


def with_llm_aware_models(env: Environment, count: int, pickers: int = 2) -> Environment:
    """`env` with `count` copies of its llm-aware model (each with `pickers` pickers)."""
    (model,) = (m for m in env.models.values() if m.routing.llm_aware)
    routing = dataclasses.replace(model.routing, pickers=pickers)
    models = {
        f"{model.name}{i}": dataclasses.replace(model, name=f"{model.name}{i}", routing=routing)
        for i in range(count)
    }
    return dataclasses.replace(env, models=models)


def test_requests_are_written_as_the_manifests_write_them() -> None:
    assert PICKER.requests() == {"cpu": "1", "memory": "2Gi"}
    assert PROXY.requests() == {"cpu": "500m", "memory": "512Mi"}
    assert SystemPod("x", 1250, 1536).requests() == {"cpu": "1250m", "memory": "1536Mi"}


def test_a_node_holds_3520m_and_what_the_cloud_leaves_of_16_gib() -> None:
    # 4 vCPUs less 80m kube-reserved less 400m for DaemonSets: three pickers and one proxy.
    assert system_nodes.ALLOCATABLE_CPU_MILLIS == 3920
    assert nodes_for([], "aws") == 0
    assert nodes_for([PICKER] * 3 + [PROXY], "aws") == 1
    assert nodes_for([PICKER] * 3 + [PROXY] * 2, "aws") == 2
    # Memory decides too: four 4-GiB pods fit no single GKE node (13622 MiB less 1 GiB).
    big = SystemPod("big", 100, 4096)
    assert nodes_for([big] * 3, "gcp") == 1
    assert nodes_for([big] * 4, "gcp") == 2


def test_the_pods_are_placed_one_by_one_not_summed() -> None:
    # 2 x 1800m = 3600m fits no node of 3520m... each pod alone fits, the pair does not.
    pod = SystemPod("wide", 1800, 512)
    assert nodes_for([pod, pod], "aws") == 2


def test_each_llm_aware_model_routes_in_every_zone_of_its_pool(routed: Environment) -> None:
    pods = system_nodes.routing_pods(routed)
    assert set(pods) == {"eu-west-1a", "eu-west-1b"}
    for zone_pods in pods.values():
        assert sorted(p.name for p in zone_pods) == ["endpoint picker"] * 2 + ["router proxy"] * 2


def test_a_zone_gets_a_node_for_its_routing_beside_the_add_ons(routed: Environment) -> None:
    # Two pickers and two proxies (3 CPUs, 5 GiB) fill one node besides the add-ons' one.
    assert system_nodes.nodes_per_zone(routed) == 2
    # Three models: 9 CPUs of pickers and proxies per zone take three nodes of their own.
    assert system_nodes.nodes_per_zone(with_llm_aware_models(routed, 3)) == 4
    # One picker each: three models take 4.5 CPUs, two nodes.
    assert system_nodes.nodes_per_zone(with_llm_aware_models(routed, 3, pickers=1)) == 3


def test_without_llm_aware_routing_a_zone_keeps_one_node(routed: Environment) -> None:
    plain = {
        name: dataclasses.replace(m, routing=dataclasses.replace(m.routing, mode="round_robin"))
        for name, m in routed.models.items()
    }
    assert system_nodes.nodes_per_zone(dataclasses.replace(routed, models=plain)) == 1


def test_a_kubernetes_cluster_is_not_sized(routed: Environment) -> None:
    assert system_nodes.nodes_per_zone(dataclasses.replace(routed, cloud="kubernetes")) == 1
