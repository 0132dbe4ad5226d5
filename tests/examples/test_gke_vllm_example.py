"""examples/gke-vllm: a plain Pulumi program with no blueprint, run offline under the mocks
the way `pulumi up -s example` would run it (its directory, its project, its stack config)."""

from __future__ import annotations

import json
import runpy
from pathlib import Path
from typing import Any

import pytest
import yaml

from inferplane.app.offline import SECRET, RecordedResource, Recording, run_callable
from inferplane.app.offline_mocks import CloudFacts
from inferplane.blueprint import naming
from inferplane.components.serving.store.weights import HubSource

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gke-vllm"
PROJECT = yaml.safe_load((EXAMPLE / "Pulumi.yaml").read_text())["name"]
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
SERVICE = "kubernetes:core/v1:Service"
SCALED_OBJECT = "kubernetes:keda.sh/v1alpha1:ScaledObject"
JOB = "kubernetes:batch/v1:Job"
REVISION = "989aa7980e4cf806f80c7fef2b1adb7bc71aa306"
STAGED = f"gs://acme-ml-dev-models/.inferplane/hub/llm-demo/Qwen/Qwen2.5-1.5B-Instruct/{REVISION}/"
JOB_NAME = HubSource("Qwen/Qwen2.5-1.5B-Instruct", REVISION).job_name


def example_config() -> dict[str, str]:
    """Pulumi.example.yaml as the CLI hands it to the program (structured values as JSON)."""
    config = yaml.safe_load((EXAMPLE / "Pulumi.example.yaml").read_text())["config"]
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}


def run_example(monkeypatch: pytest.MonkeyPatch, extra: dict[str, str] | None = None) -> Recording:
    config = {**example_config(), **(extra or {})}
    monkeypatch.chdir(EXAMPLE)
    return run_callable(
        lambda: runpy.run_path(str(EXAMPLE / "__main__.py"), run_name="__main__"),
        stack="example",
        facts=CloudFacts(
            cloud="gcp",
            region=config[f"{PROJECT}:region"],
            zones=tuple(json.loads(config[f"{PROJECT}:zones"])),
            project=config[f"{PROJECT}:project"],
        ),
        config=config,
        secret_config=frozenset(k for k in (extra or {}) if k.endswith(":hfToken")),
        project=PROJECT,
    )


@pytest.fixture(scope="session")
def recording() -> Any:
    # The run changes directory; the context puts it back before the other tests run.
    with pytest.MonkeyPatch.context() as monkeypatch:
        return run_example(monkeypatch)


def one(rec: Recording, type_: str, name: str) -> RecordedResource:
    found = [r for r in rec.of_type(type_) if r.get("metadata", "name") == name]
    assert len(found) == 1, f"{len(found)} {type_} named {name!r}"
    return found[0]


def test_deployment_serves_the_model_with_vllm_on_one_l4(recording: Recording) -> None:
    deployment = one(recording, DEPLOYMENT, "qwen")
    assert deployment.get("metadata", "namespace") == "llm"
    assert deployment.get("spec", "replicas") == 1  # the first rollout is warm
    pod = deployment.get("spec", "template", "spec")
    (server,) = pod["containers"]
    assert server["name"] == "vllm"
    assert server["image"] == "vllm/vllm-openai:" + _pinned_vllm()
    assert server["command"] == ["vllm", "serve"]
    assert server["args"] == [
        "/models/qwen",
        "--port", "8000",
        "--served-model-name", "qwen",
        "--tensor-parallel-size", "1",
        "--dtype", "bfloat16",
        "--max-model-len", "8192",
        "--enable-prefix-caching",
        "--middleware", "inferplane_route_guard.RouteGuard",
    ]  # fmt: skip
    # One GPU; CPU and memory are the replica's share of a g2-standard-8 node
    # (`containers.NODE_SIZES`, less the node's reservations).
    assert server["resources"] == {
        "requests": {"nvidia.com/gpu": "1", "cpu": "6500m", "memory": "21504Mi"},
        "limits": {"nvidia.com/gpu": "1", "memory": "21504Mi"},
    }
    # Placement by the cluster's own GPU label, in the configured zones, tolerating the taint.
    assert pod["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-l4"}
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == [
        "us-central1-a",
        "us-central1-b",
    ]
    assert {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present",
            "effect": "NoSchedule"} in pod["tolerations"]  # fmt: skip
    assert pod["serviceAccountName"] == naming.MODEL_READER_SA
    # The replica copies the staged weights from the store (Workload Identity on GKE).
    (fetch,) = pod["initContainers"]
    assert {"name": "MODEL_URI", "value": STAGED} in fetch["env"]
    assert {"name": "HF_HUB_OFFLINE", "value": "1"} in server["env"]
    assert not [e for e in server["env"] if e["name"].startswith("HF_TOKEN")]


def test_weights_are_staged_once_by_a_job_the_deployment_waits_for(recording: Recording) -> None:
    (job,) = [j for j in recording.of_type(JOB) if j.get("metadata", "name") == JOB_NAME]
    pod = job.get("spec", "template", "spec")
    assert pod["serviceAccountName"] == naming.WEIGHTS_STAGER_SA
    upload = pod["containers"][0]
    assert {"name": "STAGED_URI", "value": STAGED} in upload["env"]
    assert job.urn in one(recording, DEPLOYMENT, "qwen").depends_on
    # The stager's ServiceAccount is bound to its own Google service account.
    sa = one(recording, "kubernetes:core/v1:ServiceAccount", naming.WEIGHTS_STAGER_SA)
    assert "iam.gke.io/gcp-service-account" in sa.get("metadata", "annotations")


def test_scaled_object_keeps_one_warm_replica_and_scales_on_queue_depth(
    recording: Recording,
) -> None:
    spec = one(recording, SCALED_OBJECT, "qwen").get("spec")
    assert spec["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "qwen"}
    assert spec["minReplicaCount"] == 1
    assert spec["maxReplicaCount"] == 4
    (trigger,) = spec["triggers"]
    assert trigger["type"] == "prometheus"
    assert trigger["name"] == "queue-depth"
    assert trigger["metricType"] == "AverageValue"
    assert trigger["metadata"]["serverAddress"] == naming.PROMETHEUS_URL
    assert trigger["metadata"]["threshold"] == "4"
    assert 'model_name="qwen"' in trigger["metadata"]["query"]


def test_services_and_outputs(recording: Recording) -> None:
    service = one(recording, SERVICE, "qwen").get("spec")
    assert service["type"] == "ClusterIP"
    assert service["ports"] == [{"name": "http", "port": 8000, "targetPort": "http",
                                 "protocol": "TCP"}]  # fmt: skip
    assert service["selector"] == {
        "app.kubernetes.io/part-of": "llm-demo",
        naming.MODEL_LABEL: "qwen",
    }
    lb = one(recording, SERVICE, "qwen-lb")
    assert lb.get("spec", "type") == "LoadBalancer"
    assert lb.get("metadata", "annotations") == {"networking.gke.io/load-balancer-type": "Internal"}
    outputs = recording.outputs
    assert outputs["deployment"] == "qwen" and outputs["service"] == "qwen"
    assert outputs["endpoint"].startswith("10.128.")  # the mocked internal LB's address


def test_every_object_uses_the_configured_provider(recording: Recording) -> None:
    custom = [r for r in recording if r.custom and r.type.startswith("kubernetes:")]
    assert custom
    for resource in custom:
        assert resource.provider is not None and resource.provider.endswith("::gke"), resource


QWEN_SHA = "989aa7980e4cf806f80c7fef2b1adb7bc71aa306"


def test_hf_token_from_config_stays_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    rec = run_example(monkeypatch, {f"{PROJECT}:hfToken": "hf_example_token_7d1c"})
    # Only the staging Job's own Secret holds the token; the model has no Secret of its own.
    secrets = rec.of_type("kubernetes:core/v1:Secret")
    assert [r.get("metadata", "name") for r in secrets if r.get("stringData")] == [
        f"{HubSource('Qwen/Qwen2.5-1.5B-Instruct', QWEN_SHA).job_name}-hub-token"
    ]
    assert all(r.get("stringData") == {"hf_token": SECRET} for r in secrets)
    assert "hf_example_token_7d1c" not in json.dumps([r.inputs for r in rec])
    (server,) = one(rec, DEPLOYMENT, "qwen").get("spec", "template", "spec", "containers")
    assert not [e for e in server["env"] if e["name"].startswith("HF_TOKEN")]
    # Only the staging Job reads the token: as the file HF_TOKEN_PATH names, from its own Secret.
    token = one(rec, "kubernetes:core/v1:Secret", f"{JOB_NAME}-hub-token")
    assert token.get("stringData") == {"hf_token": SECRET}
    (job,) = [j for j in rec.of_type(JOB) if j.get("metadata", "name") == JOB_NAME]
    download = job.get("spec", "template", "spec", "initContainers")[1]
    assert {"name": "HF_TOKEN_PATH", "value": "/var/run/secrets/inferplane/hf_token"} in download[
        "env"
    ]


def _pinned_vllm() -> str:
    from inferplane.blueprint import defaults

    return defaults.VERSIONS["vllm"]
