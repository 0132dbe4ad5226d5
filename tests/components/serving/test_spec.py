"""The serving components' own arguments: clear ValueErrors without a blueprint, every
documented output registered, and the package's typed public names."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
from pathlib import Path
from typing import Any

import pulumi
import pytest
from serving_fixtures import args_of, serve

from inferplane.blueprint.model import Autoscaling, MinMax, Signal, TensorRt, Wake
from inferplane.components import serving
from inferplane.components.serving.model_server import ModelServer
from inferplane.components.serving.observability.monitoring import ModelMonitoring
from inferplane.components.serving.scaling.autoscaling import ModelAutoscaler
from inferplane.components.serving.secrets import secret_value
from inferplane.components.serving.spec import ServingArgsError
from inferplane.components.serving.spec_parts import ModelSecret, ServingPool, model_source
from inferplane.components.serving.tensorrt.engine_build import TensorRtEngineBuild
from inferplane.components.serving.tensorrt.engine_keys import engine_uri

POOL = ServingPool(name="l4", gpu_type="l4", zones=("us-central1-a",))


def _model(staging: Any, name: str = "chat", **changes: Any) -> Any:
    return dataclasses.replace(args_of(staging, name)[1], **changes)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"replicas": MinMax(3, 2)},
         "model 'chat': replicas: min 3 and max 2 are not a range; give 0 <= min <= max and "
         "max >= 1"),
        ({"replicas": MinMax(0, 0)},
         "model 'chat': replicas: min 0 and max 0 are not a range; give 0 <= min <= max and "
         "max >= 1"),
        ({"gpus": 0}, "model 'chat': gpus: 0 GPUs per replica; give at least 1"),
        ({"tensorrt": TensorRt((), None, 3)},
         "model 'chat': tensorrt: a Triton setting on a vLLM model; remove it, or serve with "
         "triton"),
    ],
)  # fmt: skip
def test_inconsistent_model_is_a_plain_value_error(staging, changes, message):
    with pytest.raises(ValueError) as err:
        _model(staging, **changes)
    assert isinstance(err.value, ServingArgsError)
    assert str(err.value) == message


def test_a_model_at_zero_needs_a_way_back(staging):
    with pytest.raises(ServingArgsError) as err:
        _model(staging, "ranker", replicas=MinMax(0, 2))  # gRPC, no wake schedule
    assert str(err.value) == (
        "model 'ranker': replicas.min: at 0 replicas nothing wakes this model (it does not "
        "serve HTTP only, and its own metrics vanish with its last pod); give it a wake "
        "schedule, serve HTTP only, or keep min >= 1"
    )
    nightly = Wake(schedule="0 2 * * *", duration_s=3600, timezone="UTC")
    assert _model(staging, "ranker", replicas=MinMax(0, 2), wake=nightly).wake == nightly
    assert _model(staging, "chat", replicas=MinMax(0, 2)).wakes_on_traffic  # vLLM: HTTP


@pytest.mark.parametrize(
    "host", ["*.example.com", "*", "10.0.0.1", "chat", "chat.keda.svc", "Chat.Example.com"]
)
def test_own_hosts_are_plain_dns_names(staging, host):
    """A wildcard or catch-all would take other routes' requests at the interceptor."""
    with pytest.raises(ServingArgsError) as err:
        _model(staging, "chat", wake_hosts=(host,))
    assert str(err.value) == (
        f"model 'chat': replicas.wake.hosts: {host!r} is not a DNS name of the model's own; "
        "give lowercase names such as chat.example.com: no wildcards, IP addresses or "
        "in-cluster (.svc, .cluster.local) names"
    )
    assert _model(staging, "chat", wake_hosts=("chat.example.com",)).wake_hosts == (
        "chat.example.com",
    )


def test_autoscaling_signals_checks(staging):
    twice = Autoscaling((Signal("queue_depth", 4), Signal("queue_depth", 8)), 600)
    with pytest.raises(ServingArgsError) as err:
        _model(staging, autoscaling=twice)
    assert str(err.value) == (
        "model 'chat': autoscaling: a metric is listed twice; list each metric once"
    )
    with pytest.raises(ServingArgsError) as err:
        _model(staging, autoscaling=Autoscaling((), 600))
    assert (
        str(err.value)
        == "model 'chat': autoscaling: no signal; give at least one metric and target"
    )


def test_triton_settings_checks(staging):
    with pytest.raises(ServingArgsError) as err:
        _model(staging, "ranker", vllm=args_of(staging, "chat")[1].vllm)
    assert (
        str(err.value)
        == "model 'ranker': vllm: a vLLM setting on a Triton model; remove it, or serve with vllm"
    )
    with pytest.raises(ServingArgsError) as err:
        _model(staging, "ranker", source=model_source("hf://org/model"))
    assert str(err.value) == (
        "model 'ranker': source: Triton serves ONNX from s3:// or gs://; give a store URI, or "
        "tensorrt_llm to build an LLM checkpoint"
    )


def test_secret_and_pool_and_source_errors():
    with pytest.raises(ValueError) as err:
        ModelSecret("hf_token", from_env="HF_TOKEN", from_pulumi_config="hfToken")
    assert str(err.value) == (
        "secret 'hf_token' needs exactly one of from_env, from_pulumi_config, from_secret_manager"
    )
    with pytest.raises(ValueError) as err:
        ServingPool(name="l4", gpu_type="l4", zones=())
    assert str(err.value) == "pool 'l4' names no zones; give the zones its nodes run in"
    with pytest.raises(ValueError) as err:
        model_source("models/chat")
    assert str(err.value) == (
        "model source 'models/chat' is not an absolute s3://, gs:// or hf:// URI; give e.g. "
        "hf://Qwen/Qwen2.5-7B-Instruct@<revision> or s3://bucket/models/chat/"
    )
    assert model_source("hf://org/model@v2").hf_revision == "v2"
    assert model_source("gs://bucket/a/b/").key == "a/b/"


def test_missing_secret_env_without_a_blueprint(staging, monkeypatch):
    monkeypatch.delenv("INFERPLANE_TEST_UNSET_TOKEN", raising=False)
    env = args_of(staging, "chat")[0]
    ref = ModelSecret("hf_token", from_env="INFERPLANE_TEST_UNSET_TOKEN")
    with pytest.raises(ValueError) as err:
        secret_value(ref, env, model="chat", offline=False)
    assert str(err.value) == (
        "model 'chat': secrets.hf_token.from_env: environment variable "
        "INFERPLANE_TEST_UNSET_TOKEN is not set (secret 'hf_token' of model 'chat' reads it "
        "when `pulumi up` runs); export INFERPLANE_TEST_UNSET_TOKEN=... before running pulumi, "
        "or store the value with `pulumi config set --secret` and use from_pulumi_config"
    )


def test_engine_without_a_model_store(staging):
    env, ranker = args_of(staging, "ranker")
    with pytest.raises(ValueError) as err:
        engine_uri(ranker, dataclasses.replace(env, model_store_uri=None))
    assert str(err.value) == (
        "model 'ranker': tensorrt: a TensorRT engine is written to the model store, and none "
        "is given; set ServingEnvironment.model_store_uri (s3:// or gs://), or drop tensorrt"
    )


def test_default_pool_selector_and_surge_room():
    assert POOL.selector == {"inferplane.dev/pool": "l4"}
    assert not POOL.mig
    mig = dataclasses.replace(POOL, gpu_resource="nvidia.com/mig-3g.40gb")
    assert mig.mig
    own = dataclasses.replace(POOL, node_selector={"cloud.google.com/gke-accelerator": "x"})
    assert own.selector == {"cloud.google.com/gke-accelerator": "x"}


# --- outputs ------------------------------------------------------------------------------

COMPONENTS = [ModelServer, TensorRtEngineBuild, ModelAutoscaler, ModelMonitoring]


def documented_outputs(cls: type) -> set[str]:
    """Names listed under ``Outputs:`` in the class docstring."""
    doc = inspect.getdoc(cls) or ""
    section = doc.split("Outputs:", 1)[1]
    return set(re.findall(r"^    (\w+):", section, flags=re.M))


def test_every_documented_output_is_registered(staging, monkeypatch):
    registered: dict[str, list[dict[str, Any]]] = {}
    original = pulumi.ComponentResource.register_outputs

    def record(self: pulumi.ComponentResource, outputs: Any) -> None:
        registered.setdefault(type(self).__name__, []).append(dict(outputs))
        # Exported too, so the run resolves every registered value.
        for key, value in outputs.items():
            if not isinstance(value, pulumi.Resource):
                pulumi.export(f"{type(self).__name__}.{self._name}.{key}", value)
        original(self, outputs)

    monkeypatch.setattr(pulumi.ComponentResource, "register_outputs", record)
    rec = serve(staging, ["ranker", "chat"])
    for cls in COMPONENTS:
        documented = documented_outputs(cls)
        assert documented, cls
        calls = registered[cls.__name__]
        assert calls
        for outputs in calls:
            assert set(outputs) == documented, cls.__name__
    out = rec.outputs
    prefix = "ModelServer.support-assistant-staging-ranker."
    assert out[prefix + "deployment_name"] == "ranker"
    assert out[prefix + "lb_service_name"] == "ranker-lb"
    assert out[prefix + "engine_uri"].startswith("s3://acme-models-use1/.inferplane/engines/")
    assert out["ModelServer.support-assistant-staging-chat.engine_uri"] is None
    build = "TensorRtEngineBuild.support-assistant-staging-ranker-engine."
    assert out[build + "job_name"].startswith("ranker-engine-")
    [build_outputs] = registered["TensorRtEngineBuild"]
    assert isinstance(build_outputs["job"], pulumi.CustomResource)
    scaler = "ModelAutoscaler.support-assistant-staging-chat-autoscaling."
    assert out[scaler + "hpa_name"] == "keda-hpa-chat"
    monitor = "ModelMonitoring.support-assistant-staging-chat-monitoring."
    assert out[monitor + "dashboard_configmap_name"] == "chat-dashboard"


# --- public names -------------------------------------------------------------------------


def test_public_names_are_typed_and_in_sync():
    tree = ast.parse(Path(serving.__file__).read_text())
    typed: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom)
                typed |= {a.name for a in stmt.names}
                for alias in stmt.names:
                    assert serving._EXPORTS[alias.name] == stmt.module
    assert typed == set(serving._EXPORTS) == set(serving.__all__)
    for name in serving.__all__:
        assert getattr(serving, name) is not None
