"""TensorRT-LLM on Triton (blueprints/llm-serving.yaml): the engine key, the build Job, the
``tensorrtllm`` backend's config.pbtxt (parsed with Triton's ModelConfig) and the pod."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from serving_fixtures import (
    CONFIG_MAP,
    DEPLOYMENT,
    JOB,
    args_of_mf,
    container,
    job_program,
    k8s_object,
    pod_spec,
    serve,
    with_model,
    with_pool,
    with_versions,
)
from test_k8s_validate import core_objects, invalid
from test_triton_config import (
    parse,
    triton_python,  # noqa: F401 (a fixture)
)

from inferplane.blueprint.loading.loader import load
from inferplane.blueprint.model import Environment, TensorRt, VllmSettings
from inferplane.blueprint.resolution.resolve import resolve
from inferplane.blueprint.resolution.resolve_model import parse_source
from inferplane.components.serving.spec import ServingArgsError
from inferplane.components.serving.spec_parts import model_source
from inferplane.components.serving.store.store_cli import ATTEMPT_ENV
from inferplane.components.serving.store.weights import HubSource
from inferplane.components.serving.triton.triton_config import triton_args
from inferplane.components.serving.trtllm.trtllm import WARMUP_PROMPT, render_config_pbtxt
from inferplane.components.serving.trtllm.trtllm_build import (
    build_settings,
    build_spec,
    engine_key,
    engine_uri,
)

ROOT = Path(__file__).resolve().parents[3]
MODEL = "chat-70b"
_LLAMA = ("meta-llama/Llama-3.3-70B-Instruct", "6f6073b423013f6a7d4d9f39144961bfbfbc386b")


@pytest.fixture(scope="session")
def llm_env() -> Environment:
    return resolve(load(ROOT / "blueprints" / "llm-serving.yaml"), "prod")


def _llm(env: Environment, **changes: object) -> Environment:
    llm = env.models[MODEL].tensorrt_llm
    assert llm is not None
    return with_model(env, MODEL, tensorrt_llm=dataclasses.replace(llm, **changes))


def _key(env: Environment) -> str:
    return engine_key(*args_of_mf(env, env.models[MODEL]))


def test_key_covers_revision_gpu_tp_release_and_build_options(llm_env):
    base = _key(llm_env)
    other_revision = parse_source(
        "hf://meta-llama/Llama-3.3-70B-Instruct@0000000000000000000000000000000000000000", ""
    )
    assert _key(with_model(llm_env, MODEL, source=other_revision)) != base
    assert _key(with_model(llm_env, MODEL, gpus=2)) != base
    h200 = dataclasses.replace(llm_env.pools["h100x4"].gpu, id="nvidia-h200")
    assert _key(with_pool(llm_env, "h100x4", gpu=h200)) != base
    assert _key(with_versions(llm_env, triton="25.09")) != base
    for change in (
        {"quantization": "int4_awq"},
        {"kv_cache_quantization": None},
        {"max_seq_len": 16384},
        {"max_batch_size": 32},
        {"max_input_len": 4096},
        {"enable_kv_cache_reuse": False, "enable_chunked_context": False},
    ):
        assert _key(_llm(llm_env, **change)) != base, change
    # runtime parameters of config.pbtxt rebuild nothing
    for change in (
        {"kv_cache_free_gpu_mem_fraction": 0.5},
        {"batch_scheduler_policy": "max_utilization"},
        {"max_queue_size": 0},
    ):
        assert _key(_llm(llm_env, **change)) == base, change
    assert build_settings(*args_of_mf(llm_env, MODEL))["tensor_parallel_size"] == 4


def test_build_spec_maps_quantization_to_llm_api_names(llm_env):
    model, _ = args_of_mf(llm_env, MODEL)
    assert build_spec(model) == {
        "checkpoint": "/build/checkpoint",
        "engine_dir": "/build/engine",
        "tensor_parallel_size": 4,
        "dtype": "bfloat16",
        "quant_algo": "FP8",
        "kv_cache_quant_algo": "FP8",
        "max_batch_size": 64,
        "max_input_len": 8192,
        "max_seq_len": 12288,
        "paged_context_fmha": True,
        # What serving needs from the checkpoint, stored with the engine.
        "tokenizer_subdir": "tokenizer",
        "warmup_dir": "warmup",
        "warmup_prompt": WARMUP_PROMPT,
        "warmup_tokens": 32,
        "warmup_output_tokens": 8,
    }
    awq, _ = args_of_mf(_llm(llm_env, quantization="int4_awq", kv_cache_quantization="int8"), MODEL)
    assert (build_spec(awq)["quant_algo"], build_spec(awq)["kv_cache_quant_algo"]) == (
        "W4A16_AWQ",
        "INT8",
    )


def test_build_job_runs_on_the_serving_gpus_with_the_same_release(llm_env):
    rec = serve(llm_env)
    model, env = args_of_mf(llm_env, MODEL)
    key = engine_key(model, env)
    job = k8s_object(rec, JOB, f"{MODEL}-engine-{key[:10]}")
    spec = pod_spec(job)
    assert spec["nodeSelector"]["inferplane.dev/pool"] == "h100x4"
    assert set(spec["nodeSelector"]) == {"inferplane.dev/pool", "inferplane.dev/blueprint"}
    build = container(job, "trtllm-build", init=True)
    assert build["image"] == "nvcr.io/nvidia/tritonserver:26.02-trtllm-python-py3"
    assert build["resources"]["limits"]["nvidia.com/gpu"] == "4"
    # The checkpoint is the staged copy: the build holds no Hub token and downloads nothing.
    assert not [e for e in build["env"] if e["name"].startswith("HF_TOKEN")]
    assert not [v for v in spec["volumes"] if "secret" in v]
    assert "command" not in build  # the NGC image's entrypoint runs first
    assert build["args"][:2] == ["/bin/sh", "-c"]
    script = build["args"][2]
    assert "snapshot_download" not in script
    fetch = container(job, "fetch-checkpoint", init=True)
    staged = next(e["value"] for e in fetch["env"] if e["name"] == "SOURCE_URI")
    assert staged.endswith(
        "/.inferplane/hub/llm-serving/meta-llama/Llama-3.3-70B-Instruct/"
        "6f6073b423013f6a7d4d9f39144961bfbfbc386b/"
    )
    # ... and waits for the staging Job that wrote it.
    staging = k8s_object(rec, JOB, HubSource(*_LLAMA).job_name)
    assert staging.urn in job.depends_on
    assert script.startswith(
        "set -eu\nif [ -f /build/engine-exists ]; then exit 0; fi\n"
        "python3 /opt/inferplane/jobs/trtllm_engine.py '{"
    )
    assert "llm.save(" in job_program(rec, job, "trtllm-build", "trtllm_engine")
    uri = engine_uri(model, env)
    assert uri == f"gs://acme-llm-models-usc1/.inferplane/engines/llm-serving/{MODEL}/{key}/"
    upload = container(job, "upload-engine")
    assert {"name": "ENGINE_URI", "value": uri} in upload["env"]
    lines = upload["command"][2].splitlines()
    # into this attempt's folder, then the marker naming it: a half-uploaded engine never
    # counts as built, and a retry never overwrites (test_store_attempts)
    upload_at = lines.index('gcloud storage rsync --recursive "/build/engine" "$ATTEMPT_URI"')
    marker_at = lines.index(
        'if ! gcloud storage cp "/build/inferplane-complete-attempt" '
        '"${ENGINE_URI}inferplane-complete-attempt"; then'
    )
    assert upload_at < marker_at
    assert ATTEMPT_ENV in upload["env"]

    deployment = k8s_object(rec, DEPLOYMENT, MODEL)
    triton = container(deployment, "triton")
    assert triton["image"] == build["image"]
    assert {"name": "TRTLLM_ORCHESTRATOR", "value": "1"} in triton["env"]
    assert triton["resources"]["limits"]["nvidia.com/gpu"] == "4"
    # Ready once the text endpoint is: the ensemble, loaded with its composing models.
    assert triton["readinessProbe"]["httpGet"]["path"] == "/v2/models/ensemble/ready"
    assert triton["startupProbe"]["httpGet"]["path"] == "/v2/models/ensemble/ready"
    assert [a for a in triton["args"] if a.startswith("--load-model")] == ["--load-model=ensemble"]
    fetch = container(deployment, "fetch-engine", init=True)
    assert {"name": "ENGINE_URI", "value": uri} in fetch["env"]
    # the engine directory is the attempt folder the marker under $ENGINE_URI names
    fetch_script = fetch["command"][2].splitlines()
    at = fetch_script.index('ATTEMPT_URI="${ENGINE_URI}$attempt/"')
    assert fetch_script[at + 1] == (
        f'gcloud storage rsync --recursive "$ATTEMPT_URI" "/models/{MODEL}/1"'
    )
    config = k8s_object(rec, CONFIG_MAP, f"{MODEL}-triton-config")
    assert config.get("data", "config.pbtxt") == render_config_pbtxt(model, env)


def test_store_checkpoint_is_copied_not_downloaded_and_one_gpu_needs_no_orchestrator(llm_env):
    store = parse_source("checkpoints/llama-3.3-70b/", "gs://acme-llm-models-usc1/")
    env = with_model(llm_env, MODEL, source=store, gpus=1, secrets=())
    rec = serve(env)
    model, serving_env = args_of_mf(env, MODEL)
    job = k8s_object(rec, JOB, f"{MODEL}-engine-{engine_key(model, serving_env)[:10]}")
    fetch = container(job, "fetch-checkpoint", init=True)
    assert {"name": "SOURCE_URI", "value": store.uri} in fetch["env"]
    assert (
        'gcloud storage rsync --recursive "$SOURCE_URI" "/build/checkpoint"'
        in (fetch["command"][2])
    )
    assert "snapshot_download" not in container(job, "trtllm-build", init=True)["args"][2]
    triton = container(k8s_object(rec, DEPLOYMENT, MODEL), "triton")
    assert all(e["name"] != "TRTLLM_ORCHESTRATOR" for e in triton["env"])


def test_config_parses_as_model_config_with_the_mandatory_settings(
    llm_env,
    triton_python,  # noqa: F811 (the imported fixture)
    tmp_path,
):
    model, env = args_of_mf(llm_env, MODEL)
    fp16 = with_model(
        _llm(llm_env, enable_kv_cache_reuse=False, max_queue_size=0), MODEL, precision="fp16"
    )
    parsed = parse(
        triton_python,
        tmp_path,
        {
            "llm": render_config_pbtxt(model, env),
            "fp16": render_config_pbtxt(*args_of_mf(fp16, MODEL)),
        },
    )
    config = parsed["llm"]
    assert config["name"] == MODEL
    assert config["backend"] == "tensorrtllm"  # triton_backend
    assert config["max_batch_size"] == 64  # triton_max_batch_size
    assert config["model_transaction_policy"] == {}  # decoupled_mode false: proto3 default
    assert "decoupled: false" in render_config_pbtxt(model, env)
    assert config["dynamic_batching"] == {
        "preferred_batch_size": [64],
        "default_queue_policy": {"max_queue_size": 256},  # max_queue_size
    }  # max_queue_delay_microseconds 0: proto3 default
    assert config["instance_group"] == [{"count": 1, "kind": "KIND_CPU"}]
    params = {k: v["string_value"] for k, v in config["parameters"].items()}
    assert params == {
        "gpt_model_type": "inflight_fused_batching",  # batching_strategy
        "gpt_model_path": f"/models/{MODEL}/1",  # engine_dir
        "max_beam_width": "1",
        "batch_scheduler_policy": "guaranteed_no_evict",
        "kv_cache_free_gpu_mem_fraction": "0.9",
        "enable_kv_cache_reuse": "true",
        "enable_chunked_context": "true",
        "exclude_input_in_output": "true",
    }
    inputs = {i["name"]: i for i in config["input"]}
    assert inputs["encoder_input_features"]["data_type"] == "TYPE_BF16"
    assert inputs["input_ids"] == {
        "name": "input_ids",
        "data_type": "TYPE_INT32",
        "dims": ["-1"],
        "allow_ragged_batch": True,
        "optional": True,
    }
    assert "optional" not in inputs["input_lengths"]
    outputs = {o["name"]: o["data_type"] for o in config["output"]}
    assert outputs["context_logits"] == outputs["generation_logits"] == "TYPE_FP32"
    other = parsed["fp16"]
    assert {i["name"]: i for i in other["input"]}["encoder_input_features"]["data_type"] == (
        "TYPE_FP16"
    )
    assert other["dynamic_batching"] == {"preferred_batch_size": [64], "default_queue_policy": {}}


def test_served_model_refuses_inconsistent_settings(llm_env):
    model, _ = args_of_mf(llm_env, MODEL)
    assert model.tensorrt_llm is not None
    short = dataclasses.replace(model.tensorrt_llm, max_seq_len=100)
    with pytest.raises(ServingArgsError) as err:
        dataclasses.replace(model, tensorrt_llm=short)
    assert str(err.value) == (
        "model 'chat-70b': tensorrt_llm.max_seq_len: 100 is shorter than max_input_len 8192; "
        "give max_seq_len >= max_input_len"
    )
    with pytest.raises(ServingArgsError) as err:
        dataclasses.replace(model, tensorrt=TensorRt((), None, 3))
    assert str(err.value) == (
        "model 'chat-70b': tensorrt_llm: an LLM engine and an ONNX engine on one model; keep "
        "tensorrt_llm (LLMs) or tensorrt (ONNX models), not both"
    )
    with pytest.raises(ServingArgsError) as err:
        dataclasses.replace(model, source=model_source("gs://bucket/llama/model.onnx"))
    assert str(err.value) == (
        "model 'chat-70b': source: an ONNX file is not an LLM checkpoint; give a checkpoint"
    )
    with pytest.raises(ServingArgsError) as err:
        dataclasses.replace(model, vllm=VllmSettings(), server="vllm")
    assert str(err.value) == (
        "model 'chat-70b': tensorrt_llm: a Triton setting on a vLLM model; remove it, or serve "
        "with triton"
    )


def test_every_core_object_is_valid_kubernetes(llm_env):
    objects = core_objects(serve(llm_env))
    kinds = {o.type.rsplit(":", 1)[1] for o in objects}
    assert {"Deployment", "Job", "ConfigMap", "Secret", "Service"} <= kinds
    assert invalid(objects) == []


def test_streaming_makes_the_model_decoupled_and_exports_first_response_latency(
    llm_env,
    triton_python,  # noqa: F811 (the imported fixture)
    tmp_path,
):
    streaming = _llm(llm_env, streaming=True)
    model, env = args_of_mf(streaming, MODEL)
    parsed = parse(triton_python, tmp_path, {"streaming": render_config_pbtxt(model, env)})
    assert parsed["streaming"]["model_transaction_policy"] == {"decoupled": True}
    assert _key(streaming) == _key(llm_env)  # a runtime setting: the same engine
    histogram = "--metrics-config=histogram_latencies=true"
    assert histogram in triton_args(model, env.triton_release)
    assert histogram not in triton_args(args_of_mf(llm_env, MODEL)[0], env.triton_release)
