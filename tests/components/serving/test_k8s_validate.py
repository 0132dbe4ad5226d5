"""Every core Kubernetes object the reference blueprint generates is valid, strictly, for
Kubernetes 1.33 (kubernetes-validate: the API's own OpenAPI schemas, unknown fields
rejected). Custom resources (KEDA, prometheus-operator) are checked against their CRDs in
the autoscaling and monitoring tests."""

from __future__ import annotations

import dataclasses
from typing import Any

import kubernetes_validate
import pytest
from serving_fixtures import serve, with_model

from inferplane.app.offline import RecordedResource, Recording
from inferplane.blueprint.model import MinMax, ModelSource, SecretRef, VllmSettings
from inferplane.components.serving.store.weights import HubSource

KUBERNETES_VERSION = "1.33"
CORE_GROUPS = {
    "core",
    "apps",
    "batch",
    "policy",
    "networking.k8s.io",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "scheduling.k8s.io",
    "autoscaling",
}
# No Secret: the reference models' only secret is the Hub token, which only a staging Job's
# Secret holds (the variants below cover a model's own Secret).
SERVING_KINDS = {
    "Deployment",
    "Service",
    "Job",
    "ConfigMap",
    "PodDisruptionBudget",
    "NetworkPolicy",
}


def _ints(value: Any) -> Any:
    """Mocked inputs carry numbers as floats; the API's integers are ints."""
    if isinstance(value, dict):
        return {k: _ints(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_ints(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def core_objects(rec: Recording) -> list[RecordedResource]:
    """Registered core-API objects (``kubernetes:<group>/<version>:<Kind>``), no Helm/CRDs."""
    out = []
    for r in rec:
        parts = r.type.split(":")
        if len(parts) == 3 and parts[0] == "kubernetes" and not r.read:
            group = parts[1].split("/")[0]
            if group in CORE_GROUPS:
                out.append(r)
    return out


def manifest(resource: RecordedResource) -> dict[str, Any]:
    obj = _ints(dict(resource.inputs))
    assert obj.get("apiVersion") and obj.get("kind"), resource.type
    return obj


def invalid(objects: list[RecordedResource]) -> list[str]:
    problems = []
    for r in objects:
        try:
            kubernetes_validate.validate(manifest(r), KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as err:
            problems.append(f"{r.type} {r.name}: {err.message} at {list(err.path)}")
    return problems


@pytest.mark.parametrize("env_name", ["staging", "prod"])
def test_reference_stack_objects_are_valid(reference_recording, env_name):
    objects = core_objects(reference_recording(env_name))
    kinds = {r.type.rsplit(":", 1)[1] for r in objects}
    assert kinds >= SERVING_KINDS | {"ServiceAccount", "Namespace"}
    assert invalid(objects) == []


@pytest.mark.parametrize("env_name", ["staging", "prod"])
def test_serving_objects_are_valid(served, env_name):
    objects = core_objects(served(env_name))
    assert {r.type.rsplit(":", 1)[1] for r in objects} == SERVING_KINDS
    assert invalid(objects) == []


def test_variants_are_valid(staging, prod):
    """The branches the reference blueprint does not take: an hf:// vLLM model with every
    setting, a Triton ONNX model without TensorRT or batching, an external scheme."""
    hf = ModelSource(
        uri="hf://Qwen/Qwen2.5-7B-Instruct@abc123",
        scheme="hf",
        bucket=None,
        key=None,
        hf_repo="Qwen/Qwen2.5-7B-Instruct",
        hf_revision="abc123",
    )
    settings = VllmSettings(
        max_model_len=4096,
        max_num_batched_tokens=4096,
        enable_prefix_caching=False,
        enable_chunked_prefill=True,
        kv_cache_dtype="fp8",
        enforce_eager=True,
    )
    api_key = SecretRef(
        name="vllm_api_key",
        path=("models", "chat", "secrets", "vllm_api_key"),
        from_pulumi_config="vllmApiKey",
    )
    env = with_model(
        staging,
        "chat",
        source=hf,
        precision="bf16",
        vllm=settings,
        secrets=(*staging.models["chat"].secrets, api_key),
    )
    env = with_model(env, "toxicity", tensorrt=None, batching=None)
    recordings = [serve(env, ["chat", "toxicity"])]
    external = with_model(prod, "ranker", replicas=MinMax(1, 2))
    external = dataclasses.replace(
        external, load_balancer=dataclasses.replace(external.load_balancer, scheme="external")
    )
    recordings.append(serve(external, ["ranker"]))
    # The hf:// chat model: its own Secret (the API key) and its staging Job's (the token).
    job = HubSource("Qwen/Qwen2.5-7B-Instruct", "abc123").job_name
    secrets = [r for r in core_objects(recordings[0]) if r.type.endswith(":Secret")]
    assert sorted(r.inputs["metadata"]["name"] for r in secrets) == [
        "chat-secrets",
        f"{job}-hub-token",
    ]
    for rec in recordings:
        objects = core_objects(rec)
        assert objects
        assert invalid(objects) == []


def test_validation_catches_mistakes(served):
    """The check is strict: a misspelt field fails."""
    deployment = next(r for r in core_objects(served("staging")) if r.type.endswith("Deployment"))
    broken = manifest(deployment)
    broken["spec"]["template"]["spec"]["containers"][0]["readinessProbes"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES_VERSION, strict=True)
