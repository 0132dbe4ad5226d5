"""LLM-aware routing: one Deployment, InferencePool and llm-d router per zone, under
Pulumi's mocks; the chart values held to the pinned chart's values.yaml, and the pool and
objectives the chart renders from them held to the pinned CRDs."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from crd_schema import errors
from promql_checks import unknown_metrics
from serving_fixtures import (
    DEPLOYMENT,
    NETWORK_POLICY,
    PDB,
    SERVICE,
    SUBNETS,
    args_of,
    k8s_object,
    serve,
    with_pool,
)
from serving_fixtures import with_model as with_model_base

from inferplane.blueprint import naming
from inferplane.blueprint.checks import semantic_routing
from inferplane.blueprint.model import Autoscaling, Environment, MinMax, Routing, Signal
from inferplane.blueprint.model_scaling import Traffic
from inferplane.components.serving.observability import dashboards, rules
from inferplane.components.serving.routing import router
from inferplane.components.serving.scaling import autoscaling
from inferplane.components.serving.spec import ServingArgsError
from inferplane.policies.rules.router_high_availability import picker_evictions

CHART = Path(__file__).resolve().parents[2] / "reference" / "llm-d-router-v0.10.0" / "charts"
"""The pinned chart, vendored verbatim (tests/reference/README.md holds each file's hash)."""
RELEASE = "kubernetes:helm.sh/v4:Chart"
SCALED_OBJECT = "kubernetes:keda.sh/v1alpha1:ScaledObject"
SERVICE_MONITOR = "kubernetes:monitoring.coreos.com/v1:ServiceMonitor"
ZONES = ("us-central1-a", "us-central1-b")
ROUTED = Routing(mode="llm_aware", flow_control=True, priorities=(("interactive", 10),))
SIGNALS = Autoscaling(
    (Signal("router_queue", 2.0), Signal("ttft_p95_ms", 800.0)), scale_down_stabilization_s=600
)


def routed(prod: Environment, routing: Routing = ROUTED) -> Environment:
    signals = SIGNALS if routing.flow_control else Autoscaling.single("ttft_p95_ms", 800.0, 600)
    return with_model_base(prod, "chat", routing=routing, autoscaling=signals)


def chart_values() -> dict[str, Any]:
    """The standalone chart's values merged over its routerlib dependency's (alias
    ``router``), as Helm merges them."""
    paths = [CHART / "llm-d-router-standalone/values.yaml", CHART / "routerlib/values.yaml"]
    standalone = yaml.safe_load(paths[0].read_text())
    library = yaml.safe_load(paths[1].read_text())
    router_values = {**library, **standalone["router"]}
    # The selected proxy preset's keys may be set at proxy's top level: `llm-d-router.proxy`
    # (routerlib/templates/_helpers.tpl) merges those over the preset (mergeOverwrite).
    proxy = router_values["proxy"]
    router_values["proxy"] = {**proxy["presets"]["envoy"], **proxy}
    return {"router": router_values}


TEMPLATE_READ = {("router", "modelServers", "matchLabels")}
"""Keys the templates read that values.yaml leaves commented out (``# matchLabels: #
REQUIRED``; ``routerlib/templates/_inferencepool.yaml`` reads it)."""


def unknown_keys(values: Any, chart: Any, path: tuple[str, ...] = ()) -> list[str]:
    problems = []
    for key, value in values.items():
        where = (*path, key)
        if where in TEMPLATE_READ:
            continue
        if not isinstance(chart, dict) or key not in chart:
            problems.append(".".join(where))
            continue
        default = chart[key]
        if isinstance(value, dict) and isinstance(default, dict) and default:
            problems += unknown_keys(value, default, where)
        elif isinstance(default, list) and not isinstance(value, list):
            problems.append(".".join(where) + " (a list in the chart)")
    return problems


def rendered_pool(release: str, namespace: str, values: dict[str, Any]) -> dict[str, Any]:
    """What ``routerlib/templates/_inferencepool.yaml`` renders from `values` (v0.10.0)."""
    servers = values["router"]["modelServers"]
    return {
        "apiVersion": "inference.networking.k8s.io/v1",
        "kind": "InferencePool",
        "metadata": {"name": release, "namespace": namespace},
        "spec": {
            "targetPorts": [{"number": p["number"]} for p in servers["targetPorts"]],
            "appProtocol": "http",
            "selector": {"matchLabels": {k: str(v) for k, v in servers["matchLabels"].items()}},
            "endpointPickerRef": {
                "name": f"{release[:40]}-epp",
                "port": {"number": 9002},
                "failureMode": values["router"]["inferencePool"]["failureMode"],
            },
        },
    }


def rendered_objectives(release: str, values: dict[str, Any]) -> list[dict[str, Any]]:
    """What ``routerlib/templates/_inferenceobjective.yaml`` renders (v0.10.0)."""
    return [
        {
            "apiVersion": "llm-d.ai/v1alpha2",
            "kind": "InferenceObjective",
            "metadata": {"name": o["name"]},
            "spec": {
                "priority": o["priority"],
                "poolRef": {"group": "inference.networking.k8s.io", "name": release},
            },
        }
        for o in values["router"]["inferenceObjectives"]
    ]


# --- values, pool and objectives against the pinned chart and CRDs ---------------------------


def test_router_values_exist_in_the_pinned_chart(prod: Environment) -> None:
    for routing in (ROUTED, Routing(mode="llm_aware"), Routing("llm_aware", "off")):
        env, model = args_of(routed(prod, routing), "chat")
        for zone in ZONES:
            assert unknown_keys(router.router_values(env, model, zone), chart_values()) == []


def test_the_pool_and_objectives_validate_against_the_pinned_crds(prod: Environment) -> None:
    env, model = args_of(routed(prod), "chat")
    for zone in ZONES:
        values = router.router_values(env, model, zone)
        release = router.release_name(model, zone)
        pool = rendered_pool(release, "support-assistant", values)
        assert errors(pool) == []
        assert pool["spec"]["selector"]["matchLabels"] == {
            "app.kubernetes.io/part-of": "support-assistant",
            naming.MODEL_LABEL: "chat",
            naming.ZONE_LABEL: zone,
        }
        objectives = rendered_objectives(release, values)
        assert [o["metadata"]["name"] for o in objectives] == [f"interactive-{zone}"]
        assert all(errors(o) == [] for o in objectives)


def test_the_values_of_one_zone(prod: Environment) -> None:
    env, model = args_of(routed(prod), "chat")
    values = router.router_values(env, model, "us-central1-b")["router"]
    assert values["epp"]["replicas"] == 2
    assert values["epp"]["image"] == {
        "registry": "ghcr.io/llm-d",
        "repository": "llm-d-router-endpoint-picker",
        "tag": "v0.10.0",
        "pullPolicy": "IfNotPresent",
    }
    assert {k: values["proxy"][k] for k in ("enabled", "mode", "replicas", "failOpen")} == {
        "enabled": True,
        "mode": "service",
        "replicas": 2,
        "failOpen": True,
    }
    assert values["epp"]["affinity"]["podAntiAffinity"] == {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 100,
                "podAffinityTerm": {
                    "labelSelector": {
                        "matchLabels": {"llm-d-router-gateway": "chat-us-central1-b-epp"}
                    },
                    "topologyKey": "kubernetes.io/hostname",
                },
            }
        ]
    }
    assert values["proxy"]["configMap"]["name"] == "chat-us-central1-b-envoy"
    assert values["proxy"]["volumes"][0]["configMap"]["name"] == "chat-us-central1-b-envoy"
    assert values["inferencePool"] == {"create": True, "failureMode": "FailOpen"}
    term = values["epp"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    assert term["nodeSelectorTerms"] == [
        {
            "matchExpressions": [
                {
                    "key": "topology.kubernetes.io/zone",
                    "operator": "In",
                    "values": ["us-central1-b"],
                }
            ]
        }
    ]
    config = yaml.safe_load(values["epp"]["pluginsCustomConfig"][router.PLUGINS_FILE])
    assert values["epp"]["pluginsConfigFile"] == router.PLUGINS_FILE
    assert config["featureGates"] == ["flowControl"]
    assert [p["pluginRef"] for p in config["schedulingProfiles"][0]["plugins"]] == [
        "queue-scorer",
        "kv-cache-utilization-scorer",
        "prefix-cache-scorer",
    ]


def test_the_pickers_and_envoys_are_sized_from_the_models_traffic(prod: Environment) -> None:
    # Without traffic: the floors. With 100 req/s of 4,000-token prompts and 500-token
    # answers over two zones (`system_nodes.routing_sizes`): 1.3 CPU and 4 GiB per
    # picker, 2 GiB per Envoy, the memory limits never below the requests.
    env, model = args_of(routed(prod), "chat")
    values = router.router_values(env, model, "us-central1-a")["router"]
    assert values["epp"]["resources"] == {
        "requests": {"cpu": "1", "memory": "2Gi"},
        "limits": {"memory": "4Gi"},
    }
    assert values["proxy"]["resources"] == {
        "requests": {"cpu": "500m", "memory": "512Mi"},
        "limits": {"memory": "2Gi"},
    }
    busy = with_model_base(routed(prod), "chat", traffic=Traffic(100, 4000, 500))
    env, model = args_of(busy, "chat")
    values = router.router_values(env, model, "us-central1-a")["router"]
    assert values["epp"]["resources"] == {
        "requests": {"cpu": "1300m", "memory": "4Gi"},
        "limits": {"memory": "4Gi"},
    }
    assert values["proxy"]["resources"] == {
        "requests": {"cpu": "500m", "memory": "2Gi"},
        "limits": {"memory": "2Gi"},
    }
    # A picker asking more memory than the limit gets its request as the limit.
    heavy = with_model_base(routed(prod), "chat", traffic=Traffic(200, 8000, 1000))
    env, model = args_of(heavy, "chat")
    epp = router.router_values(env, model, "us-central1-a")["router"]["epp"]["resources"]
    # 100 req/s x 1,000 output tokens per zone: 100 x 154 MiB = 15,400 -> 15,616 MiB.
    assert epp["requests"] == {"cpu": "4100m", "memory": "15616Mi"}  # attached: not capped
    assert epp["limits"] == {"memory": "15616Mi"}


def test_the_charts_own_scorers_serve_the_default_and_off_drops_the_prefix_scorer(
    prod: Environment,
) -> None:
    env, model = args_of(routed(prod, Routing(mode="llm_aware")), "chat")
    assert "pluginsCustomConfig" not in router.router_values(env, model, ZONES[0])["router"]["epp"]
    off = dataclasses.replace(model, routing=Routing(mode="llm_aware", prefix_cache="off"))
    config = router.plugins_config(off)
    assert config is not None and "featureGates" not in config
    assert "prefix-cache-scorer" not in {p["type"] for p in config["plugins"]}


def test_a_routing_change_rolls_the_pickers(prod: Environment) -> None:
    """The chart renders ``router.epp.podAnnotations`` on the picker's pod template
    (``routerlib/templates/_deployment.yaml``), so a new checksum is a new pod template."""
    env, model = args_of(routed(prod), "chat")
    values = router.router_values(env, model, ZONES[0])["router"]
    rendered = {
        "pluginsConfigFile": router.PLUGINS_FILE,
        "pluginsCustomConfig": values["epp"]["pluginsCustomConfig"],
        "proxy": values["proxy"],
    }
    digest = hashlib.sha256(json.dumps(rendered, sort_keys=True).encode()).hexdigest()
    assert values["epp"]["podAnnotations"] == {"inferplane.dev/config-sha256": digest}
    annotations = set()
    for routing in (ROUTED, Routing(mode="llm_aware"), Routing("llm_aware", "off")):
        env, changed = args_of(routed(prod, routing), "chat")
        epp = router.router_values(env, changed, ZONES[0])["router"]["epp"]
        annotations.add(epp["podAnnotations"]["inferplane.dev/config-sha256"])
    assert len(annotations) == 3


def test_a_routed_triton_model_is_refused(prod: Environment) -> None:
    _, model = args_of(prod, "ranker")
    with pytest.raises(ServingArgsError) as refused:
        dataclasses.replace(model, routing=Routing(mode="llm_aware"))
    assert str(refused.value) == (
        "model 'ranker': routing.mode: LLM-aware routing scores vLLM replicas only; remove "
        "it, or serve with vllm"
    )


def test_precise_prefix_scoring_is_refused_with_validations_reason(prod: Environment) -> None:
    _, model = args_of(prod, "chat")
    with pytest.raises(ServingArgsError) as refused:
        dataclasses.replace(model, routing=Routing(mode="llm_aware", prefix_cache="precise"))
    assert str(refused.value) == (
        f"model 'chat': routing.prefix_cache: {semantic_routing.PRECISE_REFUSAL}; "
        f"{semantic_routing.PRECISE_FIX}"
    )
    assert "--enable-scale-out" in semantic_routing.PRECISE_REFUSAL


# --- the program under mocks ----------------------------------------------------------------


@pytest.fixture(scope="session")
def recording(prod: Environment) -> Any:
    return serve(routed(prod), ["chat"])


def test_one_deployment_per_zone_pinned_to_it(recording: Any) -> None:
    names = sorted(r.get("metadata", "name") for r in recording.of_type(DEPLOYMENT))
    assert names == ["chat-us-central1-a", "chat-us-central1-b"]
    for zone in ZONES:
        deployment = k8s_object(recording, DEPLOYMENT, f"chat-{zone}")
        selector = deployment.get("spec", "selector", "matchLabels")
        assert selector[naming.ZONE_LABEL] == zone
        assert deployment.get("spec", "template", "metadata", "labels")[naming.ZONE_LABEL] == zone
        assert deployment.get("spec", "replicas") == 1  # min 2 over two zones
        affinity = deployment.get("spec", "template", "spec", "affinity", "nodeAffinity")
        terms = affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        zones = [
            e["values"]
            for term in terms
            for e in term["matchExpressions"]
            if e["key"] == "topology.kubernetes.io/zone"
        ]
        assert zones == [[zone]]
        pdb = k8s_object(recording, PDB, f"chat-{zone}")
        assert pdb.get("spec", "selector", "matchLabels") == selector


def test_one_scaled_object_per_zone_on_its_routers_signal(recording: Any) -> None:
    for zone in ZONES:
        scaled = k8s_object(recording, SCALED_OBJECT, f"chat-{zone}")
        spec = scaled.get("spec")
        assert spec["scaleTargetRef"]["name"] == f"chat-{zone}"
        assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == (1, 4)
        hpa = spec["advanced"]["horizontalPodAutoscalerConfig"]["name"]
        assert hpa == f"keda-hpa-chat-{zone}"
        queue = spec["triggers"][0]
        assert queue["metricType"] == "AverageValue"
        # A warm model's trigger errors on an empty answer (ignoreNullValues: false), and
        # the gauge has no series until a request was queued: 0 while a picker is scraped.
        assert queue["metadata"]["ignoreNullValues"] == "false"
        assert queue["metadata"]["query"] == (
            "sum(llm_d_epp_flow_control_queue_size"
            f'{{namespace="support-assistant", service="chat-{zone}-epp"}}) or '
            f'max(up{{namespace="support-assistant", service="chat-{zone}-epp"}} == 1) * 0'
        )


def test_one_router_release_per_zone_with_its_monitor_and_load_balancer(
    recording: Any,
) -> None:
    releases = {r.get("name"): r for r in recording.of_type(RELEASE)}
    assert sorted(releases) == ["chat-us-central1-a", "chat-us-central1-b"]
    for zone in ZONES:
        release = releases[f"chat-{zone}"]
        assert release.get("chart") == "oci://ghcr.io/llm-d/charts/llm-d-router-standalone"
        assert release.get("version") == "v0.10.0"
        # Awaited: the next zone waits for this zone's proxies (the pickers are not).
        assert release.get("skipAwait") is None
        labels = release.get("values", "router", "modelServers", "matchLabels")
        assert labels[naming.ZONE_LABEL] == zone
        monitor = k8s_object(recording, SERVICE_MONITOR, f"chat-{zone}-epp")
        assert (
            errors(
                {
                    "apiVersion": "monitoring.coreos.com/v1",
                    "kind": "ServiceMonitor",
                    "spec": monitor.get("spec"),
                }
            )
            == []
        )
        lb = k8s_object(recording, SERVICE, f"chat-{zone}-lb")
        # The proxies, each Ready, not the pickers, of which only the leader is.
        assert lb.get("spec", "selector") == {"llm-d-router-proxy": f"chat-{zone}-proxy"}
        assert lb.get("spec", "ports") == [
            {"name": "http", "port": 8000, "targetPort": 8081, "protocol": "TCP"}
        ]
        assert lb.get("metadata", "annotations") == {
            "networking.gke.io/load-balancer-type": "Internal"
        }
    assert [r.get("metadata", "name") for r in recording.of_type(SERVICE)].count("chat-lb") == 0


def evictable(recording: Any, pod_labels: dict[str, str], ready: bool, replicas: int) -> bool:
    """Whether the eviction API lets a drain evict a Running picker pod with `pod_labels`,
    under the recorded budgets that select it (none: always; see `picker_evictions` for
    the disruption controller's and the eviction API's rules)."""
    budgets = [
        b.get("spec")
        for b in recording.of_type(PDB)
        if (b.get("spec", "selector", "matchLabels") or {}).items() <= pod_labels.items()
        and b.get("spec", "selector", "matchLabels")
    ]
    leader_or_standby = 0 if ready else 1
    return all(picker_evictions(spec, replicas)[leader_or_standby] for spec in budgets)


def test_a_drain_may_evict_the_leading_picker_and_its_standby(recording: Any) -> None:
    for zone in ZONES:
        labels = {"llm-d-router-gateway": f"chat-{zone}-epp"}
        assert [evictable(recording, labels, ready, 2) for ready in (True, False)] == [True, True]


def test_each_zones_nlb_lives_in_its_own_subnet_and_drains_as_a_proxy(
    staging: Environment,
) -> None:
    aws = "service.beta.kubernetes.io/aws-load-balancer-"
    zones = ("us-east-1a", "us-east-1b")
    two_zones = with_pool(dataclasses.replace(staging, zones=zones), "l4", zones=zones)
    two_zones = with_model_base(two_zones, "chat", replicas=MinMax(2, 4))
    recorded = serve(routed(two_zones), ["chat"])
    for zone, subnet in zip(zones, SUBNETS, strict=True):
        annotations = k8s_object(recorded, SERVICE, f"chat-{zone}-lb").get(
            "metadata", "annotations"
        )
        assert annotations[f"{aws}subnets"] == subnet
        # The proxy pod's grace period: preStop 15 s + the longest request 60 s + 15 s.
        assert annotations[f"{aws}target-group-attributes"] == (
            "deregistration_delay.timeout_seconds=90,"
            "deregistration_delay.connection_termination.enabled=true"
        )


def test_the_pickers_are_scraped_as_often_as_the_model(recording: Any) -> None:
    for zone in ZONES:
        monitor = k8s_object(recording, SERVICE_MONITOR, f"chat-{zone}-epp")
        assert monitor.get("spec", "endpoints") == [
            {"port": "http-metrics", "path": "/metrics", "interval": "5s", "scrapeTimeout": "5s"}
        ]


def test_the_routers_reach_the_model_pods(recording: Any) -> None:
    policy = k8s_object(recording, NETWORK_POLICY, "chat")
    rule = policy.get("spec", "ingress")[-1]
    assert rule == {
        "from": [
            {
                "podSelector": {
                    "matchExpressions": [
                        {
                            "key": "llm-d-router-gateway",
                            "operator": "In",
                            "values": ["chat-us-central1-a-epp", "chat-us-central1-b-epp"],
                        }
                    ]
                }
            },
            {
                "podSelector": {
                    "matchExpressions": [
                        {
                            "key": "llm-d-router-proxy",
                            "operator": "In",
                            "values": ["chat-us-central1-a-proxy", "chat-us-central1-b-proxy"],
                        }
                    ]
                }
            },
        ],
        "ports": [{"protocol": "TCP", "port": 8000}],
    }


# --- observability ------------------------------------------------------------------------


def test_the_router_down_alert_reads_the_pickers_readiness(prod: Environment) -> None:
    env, model = args_of(routed(prod), "chat")
    groups = rules.rule_groups(env, model, "support-assistant")
    alerts = {r["alert"]: r for g in groups for r in g["rules"] if "alert" in r}
    down = alerts["InferenceRouterDown"]
    assert down["expr"] == (
        "min by (deployment) (kube_deployment_status_replicas_ready"
        '{namespace="support-assistant", deployment=~"chat-us-central1-a-epp|'
        'chat-us-central1-b-epp"}) < 1'
    )
    assert (down["for"], down["labels"]["severity"]) == ("5m", "warning")
    for rule in (r for g in groups for r in g["rules"]):
        assert unknown_metrics(rule["expr"]) == set(), rule
    round_robin = rules.rule_groups(*args_of(prod, "chat"), "support-assistant")
    assert "InferenceRouterDown" not in {r.get("alert") for g in round_robin for r in g["rules"]}


def test_the_dashboard_has_a_router_row_per_zone_series(prod: Environment) -> None:
    env, model = args_of(routed(prod), "chat")
    board = dashboards.dashboard(env, model, "support-assistant")
    titles = [p["title"] for p in board["panels"]]
    row = titles.index("Router")
    assert titles[row + 1 :] == [
        "Ready endpoints per pool",
        "Running requests per pool",
        "Pool saturation",
        "Router queue",
    ]
    exprs = dashboards.queries(board)
    assert (
        'max by (service) (llm_d_epp_flow_control_pool_saturation{namespace="support-assistant", '
        'service=~"chat-us-central1-a-epp|chat-us-central1-b-epp"})'
    ) in exprs
    assert all(unknown_metrics(e) == set() for e in exprs)
    replicas = [e for e in exprs if "kube_deployment_status_replicas_ready" in e]
    assert replicas and all(
        'deployment=~"chat-(us-central1-a|us-central1-b)"' in e for e in replicas
    )


def test_a_local_copy_of_the_chart_replaces_the_registry(prod: Environment) -> None:
    rec = serve(routed(prod), ["chat"], config={"inferplane:routerChart": "/charts/llm-d/"})
    for release in rec.of_type(RELEASE):
        assert release.get("chart") == "/charts/llm-d/llm-d-router-standalone"
        assert release.get("version") is None
        # Every zone renders the same copy: resolving its dependency there would race.
        assert release.get("dependencyUpdate") is None


def test_a_local_copy_must_carry_its_dependency(tmp_path: Path) -> None:
    copy = tmp_path / "charts"
    shutil.copytree(CHART, copy)
    problem = router.local_chart_problem(str(copy))
    assert problem == (
        f"{copy}/llm-d-router-standalone/charts has no 'router' dependency; copy it in "
        f"once: cp -r {copy}/routerlib {copy}/llm-d-router-standalone/charts/router "
        f"(or run `helm dependency build {copy}/llm-d-router-standalone`)"
    )
    shutil.copytree(copy / "routerlib", copy / "llm-d-router-standalone/charts/router")
    assert router.local_chart_problem(str(copy)) is None
    assert router.local_chart_problem(str(tmp_path)) == (
        f"{tmp_path} has no llm-d-router-standalone/Chart.yaml; point it at the folder "
        "holding the pinned chart source (llm-d-router-standalone beside routerlib)"
    )


def test_a_zone_at_zero_wakes_on_its_routers_queue(prod: Environment) -> None:
    signals = Autoscaling.single("ttft_p95_ms", 800.0, 600)
    env = with_model_base(
        prod,
        "chat",
        routing=Routing(mode="llm_aware", flow_control=True),
        autoscaling=signals,
        replicas=MinMax(0, 4),
    )
    serving_env, model = args_of(env, "chat")
    zoned = router.zone_model(model, "us-central1-a")
    found = autoscaling.triggers(
        serving_env, zoned, "support-assistant", "chat-us-central1-a", "us-central1-a"
    )
    queue = [t for t in found if t.get("name") == "router-queue"]
    assert queue == [
        {
            "type": "prometheus",
            "name": "router-queue",
            "metricType": "AverageValue",
            "metadata": {
                "serverAddress": serving_env.prometheus_url,
                "query": "sum(llm_d_epp_flow_control_queue_size"
                '{namespace="support-assistant", service="chat-us-central1-a-epp"}) or '
                'max(up{namespace="support-assistant", service="chat-us-central1-a-epp"} == 1)'
                " * 0",
                "threshold": "1",
                "ignoreNullValues": "true",
                "activationThreshold": "0",
            },
        }
    ]
