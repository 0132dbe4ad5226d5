"""ServiceMonitor, PrometheusRule and dashboard ConfigMap of every reference model."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
from crd_schema import errors
from promql_checks import metric_names, parse, unknown_metrics
from serving_fixtures import args_of, component_args

from inferplane.blueprint import naming
from inferplane.blueprint.model import Autoscaling, Environment, Model, Signal, Slo
from inferplane.components.serving.observability import monitoring, promql, rules
from inferplane.components.serving.observability.monitoring import (
    ModelMonitoring,
    ModelMonitoringArgs,
)

NS = "support-assistant"
ENVS = ("staging", "prod")
MODEL_NAMES = ("chat", "ranker", "toxicity", "nightly-embed")
MODELS = [(e, m) for e in ENVS for m in MODEL_NAMES]


@pytest.fixture(params=MODELS, ids=[f"{e}-{m}" for e, m in MODELS])
def case(
    request: pytest.FixtureRequest, reference_env: Callable[[str], Environment]
) -> tuple[Environment, Model]:
    env_name, model_name = request.param
    env = reference_env(env_name)
    return env, env.models[model_name]


def observability(env: Environment, **changes: Any) -> Environment:
    return dataclasses.replace(env, observability=dataclasses.replace(env.observability, **changes))


def rule_object(env: Environment, model: Model) -> dict[str, Any]:
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "spec": monitoring.prometheus_rule_spec(*args_of(env, model), NS),
    }


def alerts_of(env: Environment, model: Model) -> dict[str, dict[str, Any]]:
    groups = monitoring.prometheus_rule_spec(*args_of(env, model), NS)["groups"]
    return {r["alert"]: r for g in groups for r in g["rules"] if "alert" in r}


def test_service_monitor_validates_and_scrapes_the_named_port(
    case: tuple[Environment, Model],
) -> None:
    env, model = case
    spec = monitoring.service_monitor_spec(*args_of(env, model), NS, model.name)
    obj = {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor", "spec": spec}
    assert errors(obj) == []
    assert spec["selector"] == {"matchLabels": naming.model_selector(env.blueprint, model.name)}
    assert spec["namespaceSelector"] == {"matchNames": [NS]}
    (endpoint,) = spec["endpoints"]
    assert endpoint["port"] == ("metrics" if model.server == "triton" else "http")
    assert endpoint["path"] == "/metrics"
    assert endpoint["interval"] == "5s"
    # The operator skips a ServiceMonitor whose timeout exceeds its interval
    # (prometheus-operator v0.85.0 promcfg.go `CompareScrapeTimeoutToScrapeInterval`).
    assert endpoint["scrapeTimeout"] == "5s"
    # The LoadBalancer Service shares the selector labels: only the ClusterIP one is kept.
    (keep,) = endpoint["relabelings"]
    assert keep == {
        "action": "keep",
        "sourceLabels": ["__meta_kubernetes_service_name"],
        "regex": model.name,
    }


def test_prometheus_rule_validates_against_the_crd(case: tuple[Environment, Model]) -> None:
    assert errors(rule_object(*case)) == []


def test_every_rule_expression_parses_and_uses_known_series(
    case: tuple[Environment, Model],
) -> None:
    env, model = case
    for group in monitoring.prometheus_rule_spec(*args_of(env, model), NS)["groups"]:
        for rule in group["rules"]:
            parse(rule["expr"])
            assert not unknown_metrics(rule["expr"]), rule


def test_recording_rules_keep_namespace_and_add_model(case: tuple[Environment, Model]) -> None:
    env, model = case
    recording = monitoring.prometheus_rule_spec(*args_of(env, model), NS)["groups"][0]
    assert recording["name"] == f"inferplane.{NS}.{model.name}.recording"
    records = {r["record"]: r for r in recording["rules"]}
    expected = {
        *promql.LATENCY_MS.values(),
        promql.QUEUE_TIME_MS,
        promql.COMPUTE_TIME_MS,
        promql.REQUEST_RATE,
        promql.ERROR_RATIO,
        promql.QUEUE_DEPTH,
        promql.GPU_UTILIZATION_PERCENT,
        promql.GPU_MEMORY_USED_RATIO,
    }
    if model.server == "vllm":
        expected |= {promql.TTFT_P95_MS, promql.TOKENS_PER_SECOND}
    assert set(records) == expected
    for rule in records.values():
        assert rule["labels"] == {"model": model.name}
        assert "by (namespace)" in rule["expr"] or "by (le, namespace)" in rule["expr"]
        assert not metric_names(rule["expr"]) & promql.RECORDED_METRICS


def test_alerts_carry_severity_and_annotations(case: tuple[Environment, Model]) -> None:
    env, model = case
    for alert in alerts_of(env, model).values():
        assert alert["labels"]["severity"] in {"critical", "warning"}
        assert alert["labels"]["model"] == model.name
        assert set(alert["annotations"]) == {"summary", "description", "runbook"}
        assert alert["for"]


def test_latency_alerts_follow_the_slo(case: tuple[Environment, Model]) -> None:
    env, model = case
    alerts = alerts_of(env, model)
    if model.slo and model.slo.p95_ms:
        p95 = alerts["InferenceP95LatencyAboveSLO"]
        assert p95["expr"] == (
            f'inferplane:model_latency_p95_ms{{namespace="{NS}", model="{model.name}"}}'
            f" > {model.slo.p95_ms}"
        )
        assert p95["for"] == "5m"
        assert p95["labels"]["severity"] == ("critical" if model.realtime else "warning")
    else:
        assert "InferenceP95LatencyAboveSLO" not in alerts
    has_ttft = model.server == "vllm" and model.slo is not None and model.slo.ttft_p95_ms
    assert ("InferenceTTFTAboveSLO" in alerts) == bool(has_ttft)


def test_queue_growing_alert(case: tuple[Environment, Model]) -> None:
    env, model = case
    alert = alerts_of(env, model)["InferenceQueueGrowing"]
    queue = f'inferplane:model_queue_depth{{namespace="{NS}", model="{model.name}"}}'
    limit = promql.threshold(rules.queue_threshold(model))
    assert alert["expr"] == f"{queue} > {limit} and deriv({queue}[5m]) > 0"
    assert alert["for"] == "10m"


def test_every_listed_signal_has_an_alert_at_its_target(
    reference_env: Callable[[str], Environment],
) -> None:
    env = reference_env("prod")
    signals = (Signal("queue_depth", 4.0), Signal("ttft_p95_ms", 300.0))
    chat = dataclasses.replace(env.models["chat"], autoscaling=Autoscaling(signals, 600))
    groups = rules.rule_groups(*args_of(env, chat), NS)
    found = [
        r
        for g in groups
        for r in g["rules"]
        if r.get("alert") == "InferenceScalingSignalAboveTarget"
    ]
    assert [a["labels"]["signal"] for a in found] == ["queue_depth", "ttft_p95_ms"]
    queue, ttft = (a["expr"] for a in found)
    # What KEDA reads: the queue per replica, the latency as it is; against each target.
    assert queue.endswith(" > 4") and "kube_deployment_spec_replicas" in queue
    assert ttft.endswith(" > 300") and "vllm:time_to_first_token_seconds_bucket" in ttft
    for alert in found:
        parse(alert["expr"])
        assert not unknown_metrics(alert["expr"])
        assert alert["labels"]["severity"] == "warning" and alert["for"] == "15m"
    # Queue depth is listed: the growing-queue alert uses its target.
    assert rules.queue_threshold(args_of(env, chat)[1]) == 4.0


def test_no_ready_replica_is_critical_within_two_minutes_for_warm_realtime_models(
    case: tuple[Environment, Model],
) -> None:
    env, model = case
    alert = alerts_of(env, model)["InferenceNoReadyReplica"]
    assert metric_names(alert["expr"]) >= {"kube_deployment_status_replicas_ready"}
    if model.realtime and model.replicas.min > 0:
        assert (alert["for"], alert["labels"]["severity"]) == ("2m", "critical")
    else:
        # Scaled to zero on purpose: alert only when replicas are wanted and none comes up.
        assert "kube_deployment_spec_replicas" in alert["expr"]
        assert alert["labels"]["severity"] == "warning"


def test_replicas_at_max_only_when_the_model_can_scale(
    reference_env: Callable[[str], Environment],
) -> None:
    env = reference_env("prod")
    assert alerts_of(env, env.models["chat"])["InferenceReplicasAtMax"]["for"] == "15m"
    fixed = dataclasses.replace(
        env.models["chat"], replicas=dataclasses.replace(env.models["chat"].replicas, max=2)
    )
    assert "InferenceReplicasAtMax" not in alerts_of(env, fixed)


def test_gpu_memory_alert_sits_above_vllm_reservation(
    reference_env: Callable[[str], Environment],
) -> None:
    env = reference_env("prod")
    chat = env.models["chat"]  # gpu_memory_utilization 0.90
    assert rules.gpu_memory_threshold(chat) == 0.95
    assert rules.gpu_memory_threshold(args_of(env, "ranker")[1]) == 0.95
    greedy = dataclasses.replace(
        chat, vllm=dataclasses.replace(chat.vllm, gpu_memory_utilization=0.95)
    )
    assert rules.gpu_memory_threshold(greedy) == 0.98
    assert alerts_of(env, greedy)["InferenceGPUMemoryHigh"]["expr"].endswith("> 0.98")


def test_no_slo_means_no_latency_alerts(reference_env: Callable[[str], Environment]) -> None:
    env = reference_env("prod")
    model = dataclasses.replace(env.models["chat"], slo=Slo(p95_ms=None, ttft_p95_ms=None))
    alerts = alerts_of(env, model)
    assert "InferenceP95LatencyAboveSLO" not in alerts
    assert "InferenceTTFTAboveSLO" not in alerts


def test_alerts_disabled_leaves_only_recording_rules(
    reference_env: Callable[[str], Environment],
) -> None:
    env = observability(reference_env("prod"), alerts_enabled=False)
    groups = monitoring.prometheus_rule_spec(*args_of(env, env.models["chat"]), NS)["groups"]
    assert [g["name"] for g in groups] == [f"inferplane.{NS}.chat.recording"]


def test_dashboard_data_is_one_json_file(reference_env: Callable[[str], Environment]) -> None:
    env = reference_env("prod")
    data = monitoring.dashboard_data(*args_of(env, env.models["chat"]), NS)
    (key,) = data
    assert key == f"{NS}-chat.json"
    assert json.loads(data[key])["title"] == "support-assistant / chat (prod)"


def _program(env: Environment, model: str) -> Callable[[], None]:
    def program() -> None:
        provider = k8s.Provider("k8s", kubeconfig="{}")
        ModelMonitoring(
            f"support-assistant-{env.name}-{model}-monitoring",
            ModelMonitoringArgs(
                **component_args(env, model), namespace=NS, provider=provider, service_name=model
            ),
        )

    return program


def test_component_registers_monitor_rules_and_dashboard(
    reference_env: Callable[[str], Environment], run_mocked: Callable[..., Any]
) -> None:
    env = reference_env("prod")
    rec = run_mocked(_program(env, "chat"), env=env)
    component = rec.named(
        "support-assistant-prod-chat-monitoring", "inferplane:serving:ModelMonitoring"
    )
    children = {r.type: r for r in rec.children(component)}
    assert set(children) == {
        "kubernetes:monitoring.coreos.com/v1:ServiceMonitor",
        "kubernetes:monitoring.coreos.com/v1:PrometheusRule",
        "kubernetes:core/v1:ConfigMap",
    }
    for child in children.values():
        assert child.provider is not None and child.provider.endswith("::k8s")
        assert child.get("metadata", "namespace") == NS
        assert child.name.startswith("support-assistant-prod-chat-monitoring-")

    monitor = children["kubernetes:monitoring.coreos.com/v1:ServiceMonitor"]
    rule = children["kubernetes:monitoring.coreos.com/v1:PrometheusRule"]
    for selected in (monitor, rule):
        assert selected.get("metadata", "name") == "chat"
        assert selected.get("metadata", "labels", "release") == naming.PROMETHEUS_RELEASE
    assert monitor.get("spec", "endpoints", 0, "port") == "http"
    assert rule.get("spec", "groups", 1, "name") == f"inferplane.{NS}.chat.alerts"

    configmap = children["kubernetes:core/v1:ConfigMap"]
    assert configmap.get("metadata", "name") == "chat-dashboard"
    assert configmap.get("metadata", "labels", "grafana_dashboard") == "1"
    assert json.loads(configmap.get("data", f"{NS}-chat.json"))["uid"].startswith("inferplane-")


def test_component_without_grafana_has_no_dashboard(
    reference_env: Callable[[str], Environment], run_mocked: Callable[..., Any]
) -> None:
    env = observability(reference_env("staging"), grafana_enabled=False)
    rec = run_mocked(_program(env, "ranker"), env=env)
    assert rec.of_type("kubernetes:core/v1:ConfigMap") == []
    assert len(rec.of_type("kubernetes:monitoring.coreos.com/v1:ServiceMonitor")) == 1
    monitor = rec.of_type("kubernetes:monitoring.coreos.com/v1:ServiceMonitor")[0]
    assert monitor.get("spec", "endpoints", 0, "port") == "metrics"


def test_children_wait_for_what_the_component_waits_for(
    reference_env: Callable[[str], Environment], run_mocked: Callable[..., Any]
) -> None:
    env = reference_env("prod")

    def program() -> None:
        provider = k8s.Provider("k8s", kubeconfig="{}")
        stack = k8s.core.v1.Namespace(
            "prometheus-release-stand-in", opts=pulumi.ResourceOptions(provider=provider)
        )
        ModelMonitoring(
            "chat-monitoring",
            ModelMonitoringArgs(
                **component_args(env, "chat"), namespace=NS, provider=provider, service_name="chat"
            ),
            opts=pulumi.ResourceOptions(depends_on=[stack]),
        )

    rec = run_mocked(program, env=env)
    stack = rec.named("prometheus-release-stand-in")
    component = rec.named("chat-monitoring", "inferplane:serving:ModelMonitoring")
    children = rec.children(component)
    assert len(children) == 3
    assert all(stack.urn in child.depends_on for child in children)
