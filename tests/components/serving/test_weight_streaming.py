"""Weights streamed from the model store: the serving pod of a vLLM model whose levers choose
``stream_weights``, on each cloud, and where streaming is refused."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest
from serving_fixtures import (
    DEPLOYMENT,
    args_of,
    container,
    k8s_object,
    serve,
    with_model,
    with_versions,
)
from test_k8s_validate import core_objects, invalid
from test_weights import HF

from inferplane.blueprint import naming
from inferplane.blueprint.model import (
    Environment,
    Lora,
    LoraAdapter,
    ModelSource,
    Speculative,
    VllmSettings,
)
from inferplane.blueprint.upstream import vllm_owned
from inferplane.blueprint.upstream.vllm_streaming import streaming_facts
from inferplane.components.serving.serving_pod import serving_pod_spec
from inferplane.components.serving.spec import ServedModel, ServingArgsError, ServingEnvironment
from inferplane.components.serving.store.weights import source_uri
from inferplane.components.serving.vllm import vllm_compile
from inferplane.components.serving.vllm.vllm_flags import HISTOGRAM_FLAG
from inferplane.components.serving.vllm.weight_streaming import (
    CONCURRENCY,
    MODEL_CONFIG_DIR,
    MODEL_CONFIG_FILE,
    memory_limit_bytes,
    streamed_args,
)


def streaming(env: Environment, name: str = "chat") -> tuple[ServingEnvironment, ServedModel]:
    serving_env, model = args_of(env, name)
    return serving_env, dataclasses.replace(model, stream_weights=True)


def pod(serving_env: ServingEnvironment, model: ServedModel) -> dict[str, Any]:
    return serving_pod_spec(serving_env, model, model.source.uri, with_secrets=False)


def vllm(spec: dict[str, Any]) -> dict[str, Any]:
    (found,) = [c for c in spec["containers"] if c["name"] == "vllm"]
    return found


def env_of(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def test_the_serving_container_reads_the_store_uri_with_the_streamer(staging) -> None:
    serving_env, model = streaming(staging)
    args = vllm(pod(serving_env, model))["args"]
    uri = source_uri(serving_env, model, model.source)
    assert uri.startswith("s3://") and uri.endswith("/")
    extra = {"concurrency": CONCURRENCY, "memory_limit": memory_limit_bytes(model)}
    assert args[:5] == [
        uri,
        "--load-format",
        "runai_streamer",
        "--model-loader-extra-config",
        json.dumps(extra, separators=(",", ":")),
    ]
    assert f"/models/{model.name}" not in args
    assert CONCURRENCY == 32 and memory_limit_bytes(model) > 0


def test_only_the_weights_copy_is_dropped(staging) -> None:
    """The compile cache is still copied in: the fetch container stays, without the model."""
    serving_env, model = streaming(staging)
    spec = pod(serving_env, model)
    (fetch,) = spec["initContainers"]
    assert "MODEL_URI" not in env_of(fetch)
    assert "COMPILE_CACHE_URI" in env_of(fetch)
    assert "/models/chat" not in fetch["command"][2]


def test_an_eager_model_without_copies_has_no_init_container(staging) -> None:
    eager = with_model(staging, "chat", vllm=VllmSettings(enforce_eager=True))
    spec = pod(*streaming(eager))
    assert "initContainers" not in spec
    assert spec["serviceAccountName"] == naming.MODEL_READER_SA


def test_aws_gets_the_region_and_its_pod_identity_only(staging) -> None:
    serving_env, model = streaming(staging)
    variables = env_of(vllm(pod(serving_env, model)))
    assert variables["AWS_REGION"] == serving_env.region
    assert "AWS_ENDPOINT_URL" not in variables and "AWS_ACCESS_KEY_ID" not in variables


def test_gcs_gets_no_store_variables(prod) -> None:
    serving_env, model = streaming(prod)
    container = vllm(pod(serving_env, model))
    assert container["args"][0].startswith("gs://")
    assert not {"AWS_REGION", "AWS_ENDPOINT_URL"} & set(env_of(container))


def test_an_s3_compatible_store_gets_its_endpoint_and_the_readers_keys(
    reference_env: Callable[[str], Environment],
) -> None:
    local = reference_env("local")
    serving_env, model = streaming(local)
    variables = env_of(vllm(pod(serving_env, model)))
    assert variables["AWS_ENDPOINT_URL"] == local.model_store_endpoint
    assert variables["RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING"] == "0"
    assert variables["AWS_EC2_METADATA_DISABLED"] == "true"
    secret = serving_env.store_secrets[naming.MODEL_READER_SA]
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        assert variables[key] == {"secretKeyRef": {"name": secret, "key": key}}


def test_a_staged_source_is_named_by_a_config_file_the_init_container_writes(staging) -> None:
    serving_env, model = streaming(with_model(staging, "chat", source=HF))
    spec = pod(serving_env, model)
    container = vllm(spec)
    assert container["args"][:3] == ["--config", MODEL_CONFIG_FILE, "--load-format"]
    assert {"name": "streamed-model", "mountPath": MODEL_CONFIG_DIR, "readOnly": True} in (
        container["volumeMounts"]
    )
    (fetch,) = spec["initContainers"]
    assert env_of(fetch)["MODEL_URI"] == source_uri(serving_env, model, model.source)
    assert MODEL_CONFIG_FILE in fetch["command"][2]
    assert {"name": "streamed-model", "emptyDir": {}} in spec["volumes"]


def test_a_draft_model_and_adapters_are_still_copied(staging) -> None:
    tone = LoraAdapter("tone", ModelSource("s3://b/tone/", "s3", "b", "tone/"))
    settings = VllmSettings(
        speculative=Speculative("eagle3", 3, draft_repo="a/draft", draft_revision="main"),
        lora=Lora((tone,), 1, None),
    )
    serving_env, model = streaming(with_model(staging, "chat", vllm=settings))
    (fetch,) = pod(serving_env, model)["initContainers"]
    assert {"DRAFT_URI", "LORA_URI_0"} <= set(env_of(fetch))
    assert "MODEL_URI" not in env_of(fetch)


def test_the_compile_job_streams_exactly_as_the_replicas(staging) -> None:
    """vLLM hashes the model path and its arguments into the compile key: the Job must
    serve the same command line, or the replicas miss the cache it stages. The histogram
    bounds alone are left out: vLLM's hash leaves its observability config out."""
    serving_env, model = streaming(staging)
    served = vllm(pod(serving_env, model))["args"]
    at = served.index(HISTOGRAM_FLAG)
    _, spec = vllm_compile.job_manifest(serving_env, model, "ns")
    (compile_,) = [c for c in spec["template"]["spec"]["initContainers"] if c["name"] == "compile"]
    assert compile_["command"][compile_["command"].index("--") + 1 :] == (
        served[:at] + served[at + 2 :]
    )
    assert env_of(compile_)["AWS_REGION"] == serving_env.region
    copying = args_of(staging, "chat")[1]
    assert vllm_compile.compile_key(serving_env, model) != vllm_compile.compile_key(
        serving_env, copying
    )


def test_the_flags_written_exist_in_the_pinned_release(staging) -> None:
    """The user may not set them (refused in serve_flags), but they are vLLM's own."""
    serving_env, model = streaming(staging)
    args = streamed_args(serving_env, model)
    table = vllm_owned.flag_table(serving_env.vllm_version)
    for flag in ("--load-format", "--model-loader-extra-config"):
        assert flag in args and table[flag].kind == "refused"
    extra = json.loads(args[args.index("--model-loader-extra-config") + 1])
    assert set(extra) <= set(streaming_facts(serving_env.vllm_version).extra_config_keys)


def test_vllm_0_10_2_is_refused_with_the_reason(staging) -> None:
    serving_env, model = streaming(with_versions(staging, vllm="v0.10.2"))
    with pytest.raises(ServingArgsError, match="compile cache") as found:
        pod(serving_env, model)
    assert found.value.field == ("stream_weights",)


def test_a_store_whose_backend_the_image_lacks_is_refused(prod) -> None:
    eager = with_model(prod, "chat", vllm=VllmSettings(enforce_eager=True))
    serving_env, model = streaming(with_versions(eager, vllm="v0.10.2"))
    with pytest.raises(ServingArgsError, match="s3 backend only, not gcs"):
        pod(serving_env, model)


def test_a_custom_image_is_refused(staging) -> None:
    serving_env, model = streaming(staging)
    model = dataclasses.replace(model, image="registry.example.com/vllm:mine")
    with pytest.raises(ServingArgsError, match="its own image"):
        pod(serving_env, model)


def test_only_vllm_streams(staging) -> None:
    _, model = args_of(staging, "ranker")
    with pytest.raises(ServingArgsError, match="only vLLM streams"):
        dataclasses.replace(model, stream_weights=True)


def test_the_stack_streams_a_model_whose_levers_say_so_and_its_objects_validate(
    staging,
) -> None:
    chat = staging.models["chat"]
    levers = dataclasses.replace(chat.scale_out, levers=("compile_cache", "stream_weights"))
    rec = serve(with_model(staging, "chat", scale_out=levers), ["chat"])
    served = container(k8s_object(rec, DEPLOYMENT, "chat"), "vllm")
    assert served["args"][1:3] == ["--load-format", "runai_streamer"]
    assert invalid(core_objects(rec)) == []


def test_the_compile_jobs_vllm_reads_with_the_readers_keys(
    reference_env: Callable[[str], Environment],
) -> None:
    serving_env, model = streaming(reference_env("local"))
    _, spec = vllm_compile.job_manifest(serving_env, model, "ns")
    (compile_,) = [c for c in spec["template"]["spec"]["initContainers"] if c["name"] == "compile"]
    reader = serving_env.store_secrets[naming.MODEL_READER_SA]
    assert env_of(compile_)["AWS_ACCESS_KEY_ID"] == {
        "secretKeyRef": {"name": reader, "key": "AWS_ACCESS_KEY_ID"}
    }
