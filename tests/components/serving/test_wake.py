"""How a model at zero replicas comes back: a cron trigger for `replicas.wake`, and for a
model that serves only HTTP the KEDA HTTP add-on (HTTPScaledObject, an external-push
trigger in the model's one ScaledObject, the load balancer beside the interceptor).

Reference blueprint: nightly-embed is a gRPC/HTTP Triton batch model at zero with a wake
schedule; chat keeps warm replicas (a waiver's expiry would lapse in a shipped example), so
the HTTP path is tested on staging with chat at zero (`cold_staging`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from crd_schema import errors
from serving_fixtures import NETWORK_POLICY, SERVICE, args_of, k8s_object, serve, with_model

from inferplane.app.offline import Recording
from inferplane.blueprint import naming
from inferplane.blueprint import wake as wake_paths
from inferplane.blueprint.model import Environment, Wake
from inferplane.components.serving.scaling import autoscaling, wake
from inferplane.components.serving.spec import ServingEnvironment

NS = "support-assistant"
SCALED_OBJECT = "kubernetes:keda.sh/v1alpha1:ScaledObject"
HTTP_SCALED_OBJECT = "kubernetes:http.keda.sh/v1alpha1:HTTPScaledObject"
STAGING_CHAT_LB = "support-assistant-staging-chat-lb"


def spec_of(env: Environment, model: str) -> dict[str, Any]:
    return autoscaling.scaled_object_spec(*args_of(env, model), NS, model)


def so_object(env: Environment, model: str) -> dict[str, Any]:
    return {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject", "spec": spec_of(env, model)}


def triggers_by_type(env: Environment, model: str) -> dict[str, dict[str, Any]]:
    return {t["type"]: t for t in spec_of(env, model)["triggers"]}


def named(rec: Recording, type_: str, name: str) -> Any:
    (found,) = [r for r in rec.of_type(type_) if r.get("metadata", "name") == name]
    return found


@pytest.fixture(scope="session")
def cold_staging(reference_env: Callable[[str], Environment]) -> Environment:
    """Staging with chat (vLLM, HTTP only) at zero replicas."""
    env = reference_env("staging")
    replicas = dataclasses.replace(env.models["chat"].replicas, min=0)
    return with_model(env, "chat", replicas=replicas)


@pytest.fixture(scope="session")
def served_cold(cold_staging: Environment) -> Recording:
    return serve(cold_staging)


# --- a schedule --------------------------------------------------------------------------
@pytest.mark.parametrize("env_name", ["staging", "prod"])
def test_a_wake_schedule_becomes_a_cron_trigger(
    env_name: str, reference_env: Callable[[str], Environment]
) -> None:
    env = reference_env(env_name)
    cron = triggers_by_type(env, "nightly-embed")["cron"]
    assert cron == {
        "type": "cron",
        "name": "wake-schedule",
        "metricType": "AverageValue",
        "metadata": {
            "timezone": "UTC",
            "start": "0 2 * * *",
            "end": "0 5 * * *",
            "desiredReplicas": "1",
        },
    }
    assert errors(so_object(env, "nightly-embed")) == []
    # Beside the load signal, which brings more replicas once one is up; and fallback stays
    # valid (every trigger AverageValue).
    assert triggers_by_type(env, "nightly-embed")["prometheus"]["name"] == "queue-depth"
    assert "fallback" in spec_of(env, "nightly-embed")


def test_the_schedule_is_read_in_the_named_time_zone(
    reference_env: Callable[[str], Environment],
) -> None:
    env = reference_env("prod")
    late = Wake(schedule="30 22 * * 1-5", duration_s=3 * 3600, timezone="Europe/Berlin")
    env = with_model(env, "nightly-embed", wake=late)
    cron = triggers_by_type(env, "nightly-embed")["cron"]["metadata"]
    # A window past midnight ends on the next day of the week.
    assert cron == {
        "timezone": "Europe/Berlin",
        "start": "30 22 * * 1-5",
        "end": "30 1 * * 2,3,4,5,6",
        "desiredReplicas": "1",
    }
    assert errors(so_object(env, "nightly-embed")) == []


def test_no_cron_trigger_above_zero(reference_env: Callable[[str], Environment]) -> None:
    env = reference_env("prod")
    env = with_model(
        env,
        "ranker",
        wake=Wake(schedule="0 2 * * *", duration_s=3600, timezone="UTC"),
    )
    assert "cron" not in triggers_by_type(env, "ranker")  # min 2: a floor of 1 adds nothing


@pytest.mark.parametrize(
    ("schedule", "minutes", "end"),
    [
        ("0 2 * * *", 180, "0 5 * * *"),
        ("45 23 * * *", 30, "15 0 * * *"),
        ("0 22 * * 6", 240, "0 2 * * 0"),
        ("0 22 * * 0,6", 240, "0 2 * * 0,1"),
        ("15 * * * *", 30, "45 * * * *"),
        ("50 * * * *", 20, "10 * * * *"),
        ("0 9 1 * *", 60, "0 10 1 * *"),
    ],
)
def test_window_end(schedule: str, minutes: int, end: str) -> None:
    assert wake_paths.window_end(schedule, minutes * 60) == end


# --- HTTP traffic ---------------------------------------------------------------------------
def test_http_model_at_zero_gets_an_external_push_trigger(cold_staging: Environment) -> None:
    env = cold_staging
    found = triggers_by_type(env, "chat")
    assert found["external-push"] == {
        "type": "external-push",
        "name": "http-requests",
        "metricType": "AverageValue",
        "metadata": {
            "scalerAddress": "keda-add-ons-http-external-scaler.keda.svc.cluster.local:9090",
            "httpScaledObject": "chat",
        },
    }
    assert set(found) == {"prometheus", "external-push"}
    assert errors(so_object(env, "chat")) == []


def test_warm_or_non_http_models_have_no_http_path(
    reference_env: Callable[[str], Environment],
) -> None:
    prod = reference_env("prod")
    assert "external-push" not in triggers_by_type(prod, "chat")  # min 2
    assert "external-push" not in triggers_by_type(prod, "nightly-embed")  # http and grpc


def test_http_scaled_object_routes_the_lb_and_in_cluster_hosts(
    served: Callable[[str], Recording], served_cold: Recording
) -> None:
    rec = served_cold
    httpso = named(rec, HTTP_SCALED_OBJECT, "chat")
    obj = {k: httpso.inputs[k] for k in ("apiVersion", "kind", "spec")}
    assert errors(obj) == []
    metadata = httpso.inputs["metadata"]
    assert metadata["namespace"] == NS
    # Two ScaledObjects must not drive one Deployment: the add-on creates none of its own.
    assert metadata["annotations"] == {wake.SKIP_SCALED_OBJECT: "true"}
    spec = httpso.inputs["spec"]
    assert spec["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "chat",
        "service": "chat",
        "port": 8000,
    }
    address = rec.outputs["chat.endpoint"]  # the load balancer's hostname
    assert address.endswith(".elb.us-east-1.amazonaws.com")
    assert spec["hosts"] == [
        address,
        f"{STAGING_CHAT_LB}.keda",
        f"{STAGING_CHAT_LB}.keda.svc",
        f"{STAGING_CHAT_LB}.keda.svc.cluster.local",
    ]
    assert spec["scalingMetric"] == {"concurrency": {"targetValue": 64}}  # vllm.max_num_seqs
    # Held while the first replica starts (startup_timeout_s); headers awaited for
    # max_request_s (60) + 30 s, not the interceptor's 300 s default.
    assert spec["timeouts"] == {"conditionWait": "1200s", "responseHeader": "90s"}
    # The route exists before the ScaledObject that names it.
    so = named(rec, SCALED_OBJECT, "chat")
    assert httpso.urn in so.depends_on


def test_long_requests_and_own_names_reach_the_route(cold_staging: Environment) -> None:
    """A 15-minute request is not answered 504 after the interceptor's 300 s default
    (http-add-on v0.15.0 interceptor/config/timeouts.go), and a client's own DNS name is
    routed first, before the load balancer's names."""
    env = with_model(
        cold_staging, "chat", max_request_s=900, wake_hosts=("chat.example.com", "llm.corp.dev")
    )
    httpso = named(serve(env), HTTP_SCALED_OBJECT, "chat")
    spec = httpso.inputs["spec"]
    assert spec["timeouts"] == {"conditionWait": "1200s", "responseHeader": "930s"}
    assert spec["hosts"][:2] == ["chat.example.com", "llm.corp.dev"]
    assert spec["hosts"][-1] == f"{STAGING_CHAT_LB}.keda.svc.cluster.local"
    assert errors({k: httpso.inputs[k] for k in ("apiVersion", "kind", "spec")}) == []


def test_crd_validation_catches_a_missing_port(
    served: Callable[[str], Recording], served_cold: Recording
) -> None:
    httpso = named(served_cold, HTTP_SCALED_OBJECT, "chat")
    obj = {k: httpso.inputs[k] for k in ("apiVersion", "kind", "spec")}
    obj["spec"] = {**obj["spec"], "scaleTargetRef": {"name": "chat", "service_name": "chat"}}
    assert any("service" in e for e in errors(obj))


def test_the_load_balancer_of_a_model_at_zero_targets_the_interceptor(
    served: Callable[[str], Recording], served_cold: Recording
) -> None:
    rec = served_cold
    lb = named(rec, SERVICE, STAGING_CHAT_LB)
    assert lb.get("metadata", "namespace") == naming.KEDA_NAMESPACE
    spec = lb.inputs["spec"]
    assert spec["type"] == "LoadBalancer"
    assert spec["selector"] == {
        "app.kubernetes.io/component": "interceptor",
        "app.kubernetes.io/name": "http-add-on",
        "app.kubernetes.io/instance": "keda-add-ons-http",
    }
    assert spec["ports"] == [
        {"name": "http", "port": 8000, "targetPort": "proxy", "protocol": "TCP"}
    ]
    # Same client ranges and NLB settings as a model's own load balancer.
    assert spec["loadBalancerSourceRanges"] == ["10.0.0.0/8"]
    annotations = lb.inputs["metadata"]["annotations"]
    assert annotations["service.beta.kubernetes.io/aws-load-balancer-scheme"] == "internal"
    assert not [s for s in rec.of_type(SERVICE) if s.get("metadata", "name") == "chat-lb"]
    assert named(rec, SERVICE, "chat").get("metadata", "namespace") == NS  # ClusterIP stays


def test_the_model_admits_the_interceptor(
    served: Callable[[str], Recording], served_cold: Recording
) -> None:
    policy = k8s_object(served_cold, NETWORK_POLICY, "chat")
    env = ServingEnvironment(part_of="x", environment="e", cloud="aws", region="us-east-1")
    interceptor = wake.interceptor_ingress(env)
    assert interceptor in policy.inputs["spec"]["ingress"]
    assert interceptor["ports"] == [{"protocol": "TCP", "port": 8000}]
    warm = k8s_object(served("prod"), NETWORK_POLICY, "chat")
    assert interceptor not in warm.inputs["spec"]["ingress"]


def test_a_warm_model_keeps_its_own_load_balancer(served: Callable[[str], Recording]) -> None:
    rec = served("prod")
    lb = k8s_object(rec, SERVICE, "chat-lb")
    assert lb.get("metadata", "namespace") == NS
    assert lb.inputs["spec"]["selector"][naming.MODEL_LABEL] == "chat"
    assert not rec.of_type(HTTP_SCALED_OBJECT)


def test_gke_http_model_at_zero_routes_its_lb_ip(prod: Environment) -> None:
    chat = dataclasses.replace(
        prod.models["chat"], replicas=dataclasses.replace(prod.models["chat"].replicas, min=0)
    )
    env = dataclasses.replace(prod, models={**prod.models, "chat": chat})
    rec = serve(env, ["chat"])
    lb = named(rec, SERVICE, "support-assistant-prod-chat-lb")
    ip = rec.outputs["chat.endpoint"]  # GKE: an address, sent as Host (port stripped)
    httpso = named(rec, HTTP_SCALED_OBJECT, "chat")
    assert httpso.inputs["spec"]["hosts"][0] == ip
    assert lb.inputs["metadata"]["annotations"] == {
        "networking.gke.io/load-balancer-type": "Internal"
    }
