"""The system nodes a created cluster starts with in each zone: one for the add-ons, plus
what the zone's llm-aware routing pods need (`inferplane.blueprint.system_nodes`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from inferplane.blueprint import system_nodes
from inferplane.blueprint.model import Environment, MinMax
from inferplane.blueprint.model_scaling import Traffic
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


# --- the routing pods sized from the llm-d router's sizing guide -----------------------------


def with_traffic(env: Environment, traffic: Traffic | None, **changes: object) -> Environment:
    """`env` with its llm-aware model's `traffic` (and any other `changes` to it)."""
    (model,) = (m for m in env.models.values() if m.routing.llm_aware)
    models = {model.name: dataclasses.replace(model, traffic=traffic, **changes)}
    return dataclasses.replace(env, models=models)


def sizes(env: Environment) -> system_nodes.RoutingSizes:
    (model,) = env.models.values()
    return system_nodes.routing_sizes(env, model)


def attached(env: Environment) -> Environment:
    """`env` on a cluster it does not create: nothing caps the routing pods."""
    return dataclasses.replace(env, cluster=dataclasses.replace(env.cluster, create=False))


def test_without_traffic_the_routing_pods_keep_the_floors(routed: Environment) -> None:
    # llm-routing's chat states no traffic: four pods per zone cost 0.3 CPU of scraping.
    found = sizes(with_traffic(routed, None))
    assert (found.picker, found.proxy) == (PICKER, PROXY)
    assert found.pods == 4 and found.rps is None and not found.capped
    # A peak without prompt sizes says nothing of the prompt tokens either.
    found = sizes(with_traffic(routed, Traffic(peak_rps=100)))
    assert (found.picker, found.proxy) == (PICKER, PROXY)


@pytest.mark.parametrize(
    ("rps", "prompt", "output", "picker_cores", "proxy_cores"),
    [
        # The guide's EPP table (100 pods, 100k-token prompts, 1k output tokens).
        (98.7, 100_000, 1000, 35.17, None),  # small prefix limit
        (98.8, 100_000, 1000, 46.50, None),  # large prefix limit, the release's default
        (5.0, 100_000, 1000, 3.82, None),
        # The guide's Envoy table.
        (100.0, 100_000, 1000, None, 7.27),
        (892.0, 10_000, 1000, None, 8.78),
    ],
)
def test_the_guides_own_rows_are_covered(
    routed: Environment,
    rps: float,
    prompt: int,
    output: int,
    picker_cores: float | None,
    proxy_cores: float | None,
) -> None:
    # One zone of 100 serving pods, as the guide measured, on a cluster it does not create.
    env = attached(with_traffic(routed, Traffic(rps * 2, prompt, output), replicas=MinMax(2, 200)))
    found = sizes(env)
    assert found.pods == 100 and found.rps == pytest.approx(rps)
    assert found.prompt_tokens_s == pytest.approx(rps * prompt)
    assert not found.capped
    if picker_cores is not None:
        assert found.picker.cpu_millis >= picker_cores * 1000
    if proxy_cores is not None:
        assert found.proxy.cpu_millis >= proxy_cores * 1000
    assert found.proxy.memory_mib == 2048  # "allocate at least 2 GiB"


def test_a_zones_share_of_100_rps_of_4000_tokens(routed: Environment) -> None:
    # 50 req/s x 4,000 tokens = 200k prompt tokens/s per zone, 25k output tokens/s:
    # picker 4 pods x 75m + 0.2 x 4710m = 1242m -> 1300m, 25 x 154 MiB = 3850 -> 4096 MiB;
    # Envoy max(0.2 x 985m, 50 x 10m) = 500m, its floor.
    found = sizes(with_traffic(routed, Traffic(100, 4000, 500)))
    assert found.picker == SystemPod("endpoint picker", 1300, 4096)
    assert found.proxy == SystemPod("router proxy", 500, 2048)
    assert not found.capped


def test_more_zones_share_the_load(routed: Environment) -> None:
    # The same 100 req/s and 8 replicas in one zone: twice the tokens and the pods per picker.
    two = sizes(with_traffic(routed, Traffic(100, 4000, 500)))
    one_zone = dataclasses.replace(routed.pools["l4"], zones=("eu-west-1a",))
    env = with_traffic(routed, Traffic(100, 4000, 500))
    one = sizes(dataclasses.replace(env, pools={"l4": one_zone}))
    assert one.rps == 2 * two.rps
    assert one.picker == SystemPod("endpoint picker", 2500, 7936)  # 600m + 1884m; 50 x 154
    assert two.picker == SystemPod("endpoint picker", 1300, 4096)
    # Envoy: 100 req/s of 4,000 tokens costs more per request (1 CPU) than per token.
    assert one.proxy == SystemPod("router proxy", 1000, 2048)


def test_the_system_nodes_grow_with_the_traffic(routed: Environment) -> None:
    counts = [
        system_nodes.nodes_per_zone(with_traffic(routed, traffic))
        for traffic in (None, Traffic(100, 4000, 500), Traffic(400, 4000, 500))
    ]
    # Floors: one routing node. 1.3 CPU, 4 GiB pickers and 0.5 CPU, 2 GiB Envoys: two.
    # 200 req/s per zone: each picker asks 4.1 CPU, capped to a node of its own, and the
    # 2 CPU Envoys (10m per request/s) one each.
    assert counts == [2, 3, 5]


def test_a_created_cluster_caps_a_pod_at_one_system_node(routed: Environment) -> None:
    # 98.7 req/s of 100k-token prompts per zone: the guide's 35.17 cores and more.
    traffic = Traffic(98.7 * 2, 100_000, 1000)
    found = sizes(with_traffic(routed, traffic))
    assert found.capped
    assert found.picker_need.cpu_millis >= 35_170
    assert found.picker == SystemPod("endpoint picker", 3520, 15391 - 1024)
    assert found.proxy == SystemPod("router proxy", 3520, 2048)
    assert found.proxy_need.cpu_millis >= 7270
    # What the cap leaves fits: each routing pod on a node of its own.
    assert system_nodes.nodes_per_zone(with_traffic(routed, traffic)) == 1 + 4
    # On GKE memory is capped too: 13622 MiB less 1 GiB of room for the DaemonSets.
    gke = dataclasses.replace(with_traffic(routed, Traffic(200, 4000, 2000)), cloud="gcp")
    assert sizes(gke).picker.memory_mib == 13622 - 1024
    # An attached cluster's nodes are unknown: the guide's size stands.
    free = sizes(attached(with_traffic(routed, traffic)))
    assert free.picker == found.picker_need and not free.capped
