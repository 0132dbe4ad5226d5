"""A model's rollout: its Rollout and AnalysisTemplate against the pinned Argo Rollouts
CRDs, the guard's queries, the ScaledObject that scales the Rollout, and the objects the
ModelServer records (one Rollout per Deployment, per zone for an llm-aware model)."""

from __future__ import annotations

import dataclasses
from typing import Any

from crd_schema import errors
from promql_checks import parse, single_element, unknown_metrics
from serving_fixtures import args_of, serve, with_model

from inferplane.blueprint.model import Autoscaling, Environment, Rollout, RolloutGuard, Routing
from inferplane.components.serving.observability import monitoring
from inferplane.components.serving.scaling import autoscaling, rollout

NS = "support-assistant"
ROLLOUT = Rollout(
    steps=(10, 50, 100),
    step_s=300,
    guard=RolloutGuard(p95_ms=20000, ttft_p95_ms=800, itl_p95_ms=60, error_ratio=0.01),
)
ROLLOUT_TYPE = "kubernetes:argoproj.io/v1alpha1:Rollout"
TEMPLATE_TYPE = "kubernetes:argoproj.io/v1alpha1:AnalysisTemplate"


def with_rollout(env: Environment, **changes: Any) -> Environment:
    return with_model(env, "chat", rollout=ROLLOUT, **changes)


def obj(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": rollout.API_VERSION, "kind": kind, "spec": spec}


def test_the_rollout_takes_the_deployment_through_the_steps(prod: Environment) -> None:
    _, model = args_of(with_rollout(prod), "chat")
    spec = rollout.rollout_spec(model, "chat")
    assert errors(obj("Rollout", spec)) == []
    assert spec["workloadRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "chat",
        "scaleDown": "onsuccess",
    }
    assert spec["replicas"] == model.replicas.min
    assert spec["strategy"]["canary"]["steps"] == [
        {"setWeight": 10},
        {"pause": {"duration": "300s"}},
        {"setWeight": 50},
        {"pause": {"duration": "300s"}},
        {"setWeight": 100},
    ]
    assert spec["strategy"]["canary"]["analysis"] == {
        "templates": [{"templateName": "chat"}],
        "args": [
            {"name": "canary-hash", "valueFrom": {"podTemplateHashValue": "Latest"}},
            {"name": "stable-hash", "valueFrom": {"podTemplateHashValue": "Stable"}},
        ],
    }


def test_the_analysis_template_holds_one_metric_per_bound(prod: Environment) -> None:
    env, model = args_of(with_rollout(prod), "chat")
    spec = rollout.analysis_template_spec(env, model, NS, "chat")
    assert errors(obj("AnalysisTemplate", spec)) == []
    assert spec["args"] == [{"name": "canary-hash"}, {"name": "stable-hash"}]
    assert [m["name"] for m in spec["metrics"]] == [
        "p95-ms",
        "ttft-p95-ms",
        "itl-p95-ms",
        "error-ratio",
    ]
    for metric in spec["metrics"]:
        assert metric["failureCondition"] == "len(result) > 0"
        assert "successCondition" not in metric
        assert metric["provider"]["prometheus"]["address"] == env.prometheus_url


def test_each_guard_query_compares_the_new_pods_with_the_stable_ones(prod: Environment) -> None:
    env, model = args_of(with_rollout(prod), "chat")
    spec = rollout.analysis_template_spec(env, model, NS, "chat")
    queries = {m["name"]: m["provider"]["prometheus"]["query"] for m in spec["metrics"]}
    for name, query in queries.items():
        # Argo substitutes the arguments before it sends the query.
        sent = query.replace("{{args.canary-hash}}", "5d8f").replace("{{args.stable-hash}}", "77c4")
        parse(sent)
        assert unknown_metrics(sent) == set(), name
        assert single_element(sent), name
        assert 'rollouts_pod_template_hash="5d8f"' in sent
        assert 'rollouts_pod_template_hash="77c4"' in sent
    assert queries["ttft-p95-ms"].startswith(
        "(histogram_quantile(0.95, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket"
    )
    assert " > 800 unless " in queries["ttft-p95-ms"]
    assert "vllm:inter_token_latency_seconds_bucket" in queries["itl-p95-ms"]
    assert " > 0.01 unless " in queries["error-ratio"]


def test_only_the_bounds_in_effect_become_metrics(staging: Environment) -> None:
    guard = RolloutGuard(p95_ms=50, error_ratio=0.02)
    triton = next(m for m in staging.models.values() if m.server == "triton")
    env, model = args_of(
        with_model(staging, triton.name, rollout=dataclasses.replace(ROLLOUT, guard=guard)),
        triton.name,
    )
    spec = rollout.analysis_template_spec(env, model, NS, triton.name)
    assert errors(obj("AnalysisTemplate", spec)) == []
    assert [m["name"] for m in spec["metrics"]] == ["p95-ms", "error-ratio"]


def test_the_scaled_object_scales_the_rollout(prod: Environment) -> None:
    env, model = args_of(with_rollout(prod), "chat")
    spec = autoscaling.scaled_object_spec(env, model, NS, "chat")
    assert spec["scaleTargetRef"] == {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "name": "chat",
    }
    assert errors({"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject", "spec": spec}) == []
    env, plain = args_of(prod, "chat")
    assert autoscaling.scaled_object_spec(env, plain, NS, "chat")["scaleTargetRef"]["kind"] == (
        "Deployment"
    )


def test_the_service_monitor_copies_the_template_hash(prod: Environment) -> None:
    env, model = args_of(with_rollout(prod), "chat")
    spec = monitoring.service_monitor_spec(env, model, NS, "chat")
    assert spec["podTargetLabels"] == ["rollouts-pod-template-hash"]
    body = {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor", "spec": spec}
    assert errors(body) == []
    env, plain = args_of(prod, "chat")
    assert "podTargetLabels" not in monitoring.service_monitor_spec(env, plain, NS, "chat")


def test_an_existing_controller_s_instance_id_labels_the_rollout(prod: Environment) -> None:
    env, _ = args_of(prod, "chat")
    assert rollout.rollout_labels(env, {"a": "b"}) == {"a": "b"}
    given = dataclasses.replace(env, argo_rollouts_instance_id="platform")
    assert rollout.rollout_labels(given, {"a": "b"}) == {
        "a": "b",
        "argo-rollouts.argoproj.io/controller-instance-id": "platform",
    }


def test_the_model_server_records_a_rollout_beside_its_deployment(prod: Environment) -> None:
    rec = serve(with_rollout(prod), ["chat"])
    rollouts = rec.of_type(ROLLOUT_TYPE)
    templates = rec.of_type(TEMPLATE_TYPE)
    assert [r.get("metadata", "name") for r in rollouts] == ["chat"]
    assert [t.get("metadata", "name") for t in templates] == ["chat"]
    (scaled,) = rec.of_type("kubernetes:keda.sh/v1alpha1:ScaledObject")
    assert scaled.get("spec", "scaleTargetRef", "kind") == "Rollout"


def test_an_llm_aware_model_rolls_out_each_zone_s_deployment(prod: Environment) -> None:
    signals = Autoscaling.single("ttft_p95_ms", 800.0, 600)
    env = with_rollout(prod, routing=Routing(mode="llm_aware"), autoscaling=signals)
    rec = serve(env, ["chat"])
    zones = env.pool_of(env.models["chat"]).zones
    names = sorted(r.get("metadata", "name") for r in rec.of_type(ROLLOUT_TYPE))
    assert names == sorted(f"chat-{z}" for z in zones)
    for r in rec.of_type(ROLLOUT_TYPE):
        assert r.get("spec", "workloadRef", "name") == r.get("metadata", "name")
    for t in rec.of_type(TEMPLATE_TYPE):
        query = t.get("spec", "metrics")[0]["provider"]["prometheus"]["query"]
        assert f'pod=~"{t.get("metadata", "name")}-[a-z0-9]+-[a-z0-9]+"' in query
