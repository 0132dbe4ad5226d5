"""The ScaledObject of every reference model, against KEDA's CRD and its semantics."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
from crd_schema import errors
from promql_checks import parse, single_element, unknown_metrics
from serving_fixtures import args_of, component_args

from inferplane.blueprint import naming
from inferplane.blueprint.model import Autoscaling, Environment, MinMax, Model, Signal, Wake
from inferplane.components.serving.scaling import autoscaling
from inferplane.components.serving.scaling.autoscaling import ModelAutoscaler, ModelAutoscalerArgs
from inferplane.components.stack_serving import serving_environment

NS = "support-assistant"
MODELS = [
    (e, m) for e in ("staging", "prod") for m in ("chat", "ranker", "toxicity", "nightly-embed")
]


def scaled_object(env: Environment, model: Model) -> dict[str, Any]:
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": model.name, "namespace": NS},
        "spec": autoscaling.scaled_object_spec(*args_of(env, model), NS, model.name),
    }


def with_model(env: Environment, name: str, **changes: Any) -> Environment:
    models = dict(env.models)
    models[name] = dataclasses.replace(models[name], **changes)
    return dataclasses.replace(env, models=models)


@pytest.fixture(params=MODELS, ids=[f"{e}-{m}" for e, m in MODELS])
def case(
    request: pytest.FixtureRequest, reference_env: Callable[[str], Environment]
) -> tuple[Environment, Model]:
    env_name, model_name = request.param
    env = reference_env(env_name)
    return env, env.models[model_name]


def test_scaled_object_validates_against_the_keda_crd(case: tuple[Environment, Model]) -> None:
    assert errors(scaled_object(*case)) == []


def test_crd_validation_catches_snake_case_keys(case: tuple[Environment, Model]) -> None:
    obj = scaled_object(*case)
    obj["spec"]["min_replica_count"] = obj["spec"].pop("minReplicaCount")
    assert any("min_replica_count" in e for e in errors(obj))


def test_replica_bounds_are_always_rendered(case: tuple[Environment, Model]) -> None:
    env, model = case
    spec = scaled_object(env, model)["spec"]
    assert spec["minReplicaCount"] == model.replicas.min  # even 0: KEDA's default is 0 anyway
    assert spec["maxReplicaCount"] == model.replicas.max
    assert "idleReplicaCount" not in spec
    assert spec["pollingInterval"] == 15
    assert spec["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": model.name,
    }


def test_cooldown_and_activation_only_when_the_model_may_scale_to_zero(
    case: tuple[Environment, Model],
) -> None:
    env, model = case
    spec = scaled_object(env, model)["spec"]
    metadata = spec["triggers"][0]["metadata"]
    if model.replicas.min == 0:
        assert spec["cooldownPeriod"] == model.autoscaling.scale_down_stabilization_s
        assert "activationThreshold" in metadata
        assert metadata["ignoreNullValues"] == "true"
    else:
        assert "cooldownPeriod" not in spec
        assert "activationThreshold" not in metadata
        # Replicas should exist: an empty answer is an error that engages the fallback.
        assert metadata["ignoreNullValues"] == "false"


def test_one_prometheus_trigger_per_blueprint_signal(case: tuple[Environment, Model]) -> None:
    env, model = case
    triggers = [
        t for t in scaled_object(env, model)["spec"]["triggers"] if t["type"] == "prometheus"
    ]
    assert len(triggers) == len(model.autoscaling.signals)
    for trigger, signal in zip(triggers, model.autoscaling.signals, strict=True):
        metadata = trigger["metadata"]
        assert metadata["serverAddress"] == naming.PROMETHEUS_URL
        assert all(isinstance(v, str) for v in metadata.values())
        assert float(metadata["threshold"]) == signal.target
        query = metadata["query"]
        parse(query)
        assert single_element(query), query
        assert not unknown_metrics(query)
        expected = "AverageValue" if signal.metric == "queue_depth" else "Value"
        assert trigger["metricType"] == expected


def test_two_listed_signals_give_two_triggers_of_one_scaled_object(
    reference_env: Callable[[str], Environment],
) -> None:
    env = reference_env("prod")
    signals = (Signal("queue_depth", 4.0), Signal("ttft_p95_ms", 300.0))
    chat = dataclasses.replace(
        env.models["chat"], autoscaling=Autoscaling(signals, scale_down_stabilization_s=600)
    )
    env = with_model(env, "chat", autoscaling=chat.autoscaling)
    obj = scaled_object(env, env.models["chat"])
    assert errors(obj) == []
    triggers = obj["spec"]["triggers"]
    assert [t["name"] for t in triggers] == ["queue-depth", "ttft-p95-ms"]
    assert [t["metadata"]["threshold"] for t in triggers] == ["4", "300"]
    assert [t["metricType"] for t in triggers] == ["AverageValue", "Value"]
    assert "time_to_first_token" in triggers[1]["metadata"]["query"]


def test_scale_down_is_slow_and_scale_up_fast(case: tuple[Environment, Model]) -> None:
    env, model = case
    behavior = scaled_object(env, model)["spec"]["advanced"]["horizontalPodAutoscalerConfig"][
        "behavior"
    ]
    down = behavior["scaleDown"]
    assert down["stabilizationWindowSeconds"] == model.autoscaling.scale_down_stabilization_s
    assert all(p["type"] == "Pods" and p["value"] <= 1 for p in down["policies"])
    assert behavior["scaleUp"]["stabilizationWindowSeconds"] == 0


def test_fallback_keeps_the_current_replicas(case: tuple[Environment, Model]) -> None:
    # Prometheus unreachable: keep what the model has, at least its minimum, instead of
    # jumping to a static count. keda-docs 2.20 scaledobject-spec.md "fallback.behavior":
    # currentReplicasIfHigher = current if current > fallback.replicas, else fallback.replicas
    # (KEDA >= 2.17; CRD keda.sh_scaledobjects.yaml enum, checked by the CRD test above).
    env, model = case
    fallback = scaled_object(env, model)["spec"]["fallback"]  # KEDA 2.20: any metric type
    assert fallback == {
        "failureThreshold": 3,
        "replicas": model.replicas.min,
        "behavior": "currentReplicasIfHigher",
    }


def test_fallback_replicas() -> None:
    def model(low: int, high: int, latency_class: str) -> Any:
        return dataclasses.make_dataclass("M", ["replicas", "realtime"])(
            MinMax(low, high), latency_class == "realtime"
        )

    assert autoscaling.fallback_replicas(model(2, 8, "realtime")) == 5
    assert autoscaling.fallback_replicas(model(2, 2, "realtime")) == 2
    assert autoscaling.fallback_replicas(model(0, 4, "batch")) == 1
    assert autoscaling.fallback_replicas(model(3, 4, "batch")) == 3


@pytest.mark.parametrize("keda", ["2.17.1", "v2.15.0"])
def test_older_keda_gets_no_fallback_on_value_triggers(
    keda: str, reference_env: Callable[[str], Environment]
) -> None:
    # KEDA < 2.18's admission webhook rejects fallback with a Value trigger.
    env = reference_env("prod")
    env = dataclasses.replace(env, versions=dataclasses.replace(env.versions, keda=keda))
    assert autoscaling.keda_version(serving_environment(env)) < (2, 18)
    ranker = scaled_object(env, env.models["ranker"])["spec"]  # p95 latency: Value
    assert ranker["triggers"][0]["metricType"] == "Value"
    assert "fallback" not in ranker
    chat = scaled_object(env, env.models["chat"])["spec"]  # queue depth: AverageValue
    if autoscaling.keda_version(serving_environment(env)) >= (2, 17):
        assert chat["fallback"]["behavior"] == "currentReplicasIfHigher"
        assert chat["fallback"]["replicas"] == env.models["chat"].replicas.min
    else:  # no fallback.behavior before KEDA 2.17: the static count
        assert "behavior" not in chat["fallback"]
        assert chat["fallback"]["replicas"] == 5


def test_realtime_model_at_zero_still_never_gets_idle_replicas(
    reference_env: Callable[[str], Environment],
) -> None:
    env = reference_env("staging")
    chat = env.models["chat"]  # realtime; at min 0 (which needs a waiver) in this test
    chat = dataclasses.replace(chat, replicas=dataclasses.replace(chat.replicas, min=0))
    spec = scaled_object(env, chat)["spec"]
    assert spec["minReplicaCount"] == 0
    assert "idleReplicaCount" not in spec


def test_gpu_utilization_activation_ignores_an_idle_gpu(
    reference_env: Callable[[str], Environment],
) -> None:
    nightly = Wake(schedule="0 2 * * *", duration_s=3600, timezone="UTC")
    env = with_model(reference_env("staging"), "toxicity", replicas=MinMax(0, 2), wake=nightly)
    metadata = scaled_object(env, env.models["toxicity"])["spec"]["triggers"][0]["metadata"]
    assert metadata["activationThreshold"] == "5"


def test_component_registers_one_scaled_object(
    reference_env: Callable[[str], Environment], run_mocked: Callable[..., Any]
) -> None:
    env = reference_env("prod")

    def program() -> None:
        provider = k8s.Provider("k8s", kubeconfig="{}")
        scaler = ModelAutoscaler(
            "support-assistant-prod-ranker-autoscaling",
            ModelAutoscalerArgs(
                **component_args(env, "ranker"),
                namespace=NS,
                provider=provider,
                deployment_name="ranker",
            ),
        )
        pulumi.export("hpa", scaler.hpa_name)
        pulumi.export("so", scaler.scaled_object_name)

    rec = run_mocked(program, env=env)
    component = rec.named(
        "support-assistant-prod-ranker-autoscaling", "inferplane:serving:ModelAutoscaler"
    )
    (so,) = rec.children(component)
    assert so.type == "kubernetes:keda.sh/v1alpha1:ScaledObject"
    assert so.name == "support-assistant-prod-ranker-autoscaling-scaledobject"
    assert so.provider is not None and so.provider.endswith("::k8s")
    assert so.get("metadata", "name") == "ranker"
    assert so.get("metadata", "namespace") == NS
    labels = so.get("metadata", "labels")
    assert labels[naming.LATENCY_CLASS_LABEL] == "realtime"
    assert labels[naming.MODEL_LABEL] == "ranker"
    spec = so.get("spec")
    assert spec["minReplicaCount"] == 2 and spec["maxReplicaCount"] == 6
    assert spec == autoscaling.scaled_object_spec(*args_of(env, "ranker"), NS, "ranker")
    assert rec.outputs == {"hpa": "keda-hpa-ranker", "so": "ranker"}


def test_scaled_object_waits_for_what_the_component_waits_for(
    reference_env: Callable[[str], Environment], run_mocked: Callable[..., Any]
) -> None:
    env = reference_env("prod")

    def program() -> None:
        provider = k8s.Provider("k8s", kubeconfig="{}")
        keda = k8s.core.v1.Namespace(
            "keda-release-stand-in", opts=pulumi.ResourceOptions(provider=provider)
        )
        ModelAutoscaler(
            "chat-autoscaling",
            ModelAutoscalerArgs(
                **component_args(env, "chat"),
                namespace=NS,
                provider=provider,
                deployment_name="chat",
            ),
            opts=pulumi.ResourceOptions(depends_on=[keda]),
        )

    rec = run_mocked(program, env=env)
    keda = rec.named("keda-release-stand-in")
    so = rec.of_type("kubernetes:keda.sh/v1alpha1:ScaledObject")[0]
    assert keda.urn in so.depends_on
