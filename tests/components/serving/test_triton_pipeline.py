"""Triton pipelines and the ONNX Runtime / TorchScript backends: the configs (exact text,
and parsed by Triton's own ModelConfig from the pinned tritonclient), the repository
layout of the fetch container, the server's flags, and the model's resources under mocks."""

from __future__ import annotations

import dataclasses
import struct
import subprocess
from pathlib import Path

import pytest
from promql_checks import parse as parse_promql
from promql_checks import unknown_metrics
from serving_fixtures import (
    CONFIG_MAP,
    DEPLOYMENT,
    args_of,
    args_of_mf,
    container,
    k8s_object,
    serve,
)
from test_triton_config import parse, triton_python  # noqa: F401  (fixture)

from inferplane.blueprint.loading.loader import load
from inferplane.blueprint.model import Environment, Warmup
from inferplane.blueprint.resolution.resolve import resolve
from inferplane.blueprint.triton_model import ShapeProfile, Tensor
from inferplane.components.serving.observability import dashboards, promql, promql_scope
from inferplane.components.serving.triton import triton_pipeline, triton_tensors
from inferplane.components.serving.triton.triton_config import (
    render_config_pbtxt,
    triton_args,
    triton_fetch_container,
)

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def search() -> Environment:
    return resolve(load(ROOT / "blueprints" / "bge-search.yaml"), "prod")


EMBED_ENSEMBLE = """\
name: "embed"
platform: "ensemble"
max_batch_size: 32
input [
  {
    name: "TEXT"
    data_type: TYPE_STRING
    dims: [ 1 ]
  }
]
output [
  {
    name: "EMBEDDING"
    data_type: TYPE_FP32
    dims: [ 1024 ]
  }
]
ensemble_scheduling {
  step [
    {
      model_name: "embed-tokenize"
      model_version: -1
      input_map { key: "TEXT" value: "TEXT" }
      output_map { key: "input_ids" value: "tokenize.input_ids" }
      output_map { key: "attention_mask" value: "tokenize.attention_mask" }
    },
    {
      model_name: "embed-encoder"
      model_version: -1
      input_map { key: "input_ids" value: "tokenize.input_ids" }
      input_map { key: "attention_mask" value: "tokenize.attention_mask" }
      output_map { key: "sentence_embedding" value: "EMBEDDING" }
    }
  ]
}
"""


def test_ensemble_config_text(search: Environment) -> None:
    model, env = args_of_mf(search, "embed")
    assert render_config_pbtxt(model, env) == EMBED_ENSEMBLE
    assert triton_pipeline.config_files(model)["config.pbtxt"] == EMBED_ENSEMBLE


def test_every_config_parses_as_a_model_config(
    search: Environment,
    triton_python: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    configs = {}
    for name in ("embed", "rerank"):
        model, _ = args_of_mf(search, name)
        for key, text in triton_pipeline.config_files(model).items():
            configs[f"{name}-{key.removesuffix('.pbtxt')}"] = text
    parsed = parse(triton_python, tmp_path, configs)
    assert sorted(parsed) == [
        "embed-config",
        "embed-step-encoder",
        "embed-step-tokenize",
        "rerank-config",
        "rerank-step-cross-encoder",
        "rerank-step-tokenize",
    ]
    ensemble = parsed["rerank-config"]
    assert ensemble["platform"] == "ensemble" and ensemble["max_batch_size"] == 64
    assert [s["model_name"] for s in ensemble["ensemble_scheduling"]["step"]] == [
        "rerank-tokenize",
        "rerank-cross-encoder",
    ]
    assert ensemble["ensemble_scheduling"]["step"][1]["output_map"] == {"logits": "SCORE"}
    assert "instance_group" not in ensemble and "model_warmup" not in ensemble
    tokenize = parsed["embed-step-tokenize"]
    assert tokenize["backend"] == "python"
    assert tokenize["instance_group"] == [{"count": 4, "kind": "KIND_CPU"}]
    assert "optimization" not in tokenize
    # The tokenizer warms on the blueprint's sample, read from its file in warmup/.
    assert tokenize["model_warmup"] == [
        {
            "name": "warmup_sample",
            "batch_size": 1,
            "inputs": {
                "TEXT": {"data_type": "TYPE_STRING", "dims": ["1"], "input_data_file": "sample_0"}
            },
        }
    ]
    encoder = parsed["embed-step-encoder"]
    assert encoder["platform"] == "onnxruntime_onnx"
    assert encoder["dynamic_batching"] == {"max_queue_delay_microseconds": "1000"}
    accelerator = encoder["optimization"]["execution_accelerators"]["gpu_execution_accelerator"]
    assert accelerator == [
        {
            "name": "tensorrt",
            "parameters": {
                "precision_mode": "FP16",
                "trt_engine_cache_enable": "1",
                "trt_engine_cache_path": "/home/inferplane/ort-trt-cache",
                "trt_profile_min_shapes": "input_ids:1x1,attention_mask:1x1",
                "trt_profile_opt_shapes": "input_ids:8x128,attention_mask:8x128",
                "trt_profile_max_shapes": "input_ids:32x512,attention_mask:32x512",
            },
        }
    ]
    assert [w["batch_size"] for w in encoder["model_warmup"]] == [1, 32]
    # the profile's opt shape after its batch dimension: the engine's own shape
    assert encoder["model_warmup"][1]["inputs"]["input_ids"] == {
        "data_type": "TYPE_INT64",
        "dims": ["128"],
        "zero_data": True,
    }
    # A TensorRT step: the engine's platform, no ONNX Runtime provider, warmed at the
    # profiles' opt shapes (test_pipeline_engines has its text).
    cross = parsed["rerank-step-cross-encoder"]
    assert cross["platform"] == "tensorrt_plan" and "optimization" not in cross
    assert cross["instance_group"] == [{"count": 1, "kind": "KIND_GPU"}]
    assert [w["batch_size"] for w in cross["model_warmup"]] == [1, 64]
    assert cross["model_warmup"][1]["inputs"]["attention_mask"]["dims"] == ["256"]


def test_pytorch_and_onnxruntime_models_parse(
    search: Environment,
    triton_python: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    """One TorchScript model with declared tensors and warm-up; one ONNX Runtime model."""
    base = search.models["rerank"]
    inputs = (Tensor("INPUT__0", "int64", (128,)),)
    torch = dataclasses.replace(
        base,
        pipeline=None,
        backend="pytorch",
        inputs=inputs,
        outputs=(Tensor("OUTPUT__0", "fp32", (1,)),),
        warmup=Warmup((1, 8)),
    )
    ort = dataclasses.replace(torch, backend="onnxruntime", outputs=(), accelerator="cuda")
    profile = ShapeProfile("INPUT__0", (1, 16), (4, 64), (8, 128))
    trt = dataclasses.replace(ort, accelerator="tensorrt", shapes=(profile,))
    configs = {
        "torch": render_config_pbtxt(*args_of_mf(search, torch)),
        "ort": render_config_pbtxt(*args_of_mf(search, ort)),
        "trt": render_config_pbtxt(*args_of_mf(search, trt)),
    }
    parsed = parse(triton_python, tmp_path, configs)
    t = parsed["torch"]
    assert t["platform"] == "pytorch_libtorch"
    assert t["input"] == [{"data_type": "TYPE_INT64", "dims": ["128"], "name": "INPUT__0"}]
    assert t["output"] == [{"data_type": "TYPE_FP32", "dims": ["1"], "name": "OUTPUT__0"}]
    assert "optimization" not in t
    assert [w["batch_size"] for w in t["model_warmup"]] == [1, 8]
    assert t["model_warmup"][1]["inputs"]["INPUT__0"]["dims"] == ["128"]
    ep = parsed["trt"]["optimization"]["execution_accelerators"]["gpu_execution_accelerator"]
    assert ep[0]["parameters"]["trt_profile_opt_shapes"] == "INPUT__0:4x64"
    assert [w["inputs"]["INPUT__0"]["dims"] for w in parsed["trt"]["model_warmup"]] == [
        ["64"],
        ["64"],
    ]
    o = parsed["ort"]
    assert o["platform"] == "onnxruntime_onnx" and "output" not in o
    assert o["optimization"]["execution_accelerators"]["gpu_execution_accelerator"] == [
        {"name": "cuda"}
    ]


def test_unbatched_warmup_fills_the_first_dimension() -> None:
    lines = triton_tensors.warmup_lines((Tensor("x", "fp32", (-1, 80)),), (4,), batching=False)
    assert "        dims: [ 4, 80 ]" in lines and "    batch_size: 1" in lines


def test_fetch_lays_out_every_step(search: Environment) -> None:
    model, env = args_of_mf(search, "rerank")
    fetch = triton_fetch_container(env, model, model.source.uri)
    script = fetch["command"][2]
    assert script.startswith(
        "set -eu\n"
        'mkdir -p "/models/rerank/1"\n'
        'cp "/config/config.pbtxt" "/models/rerank/config.pbtxt"\n'
        'mkdir -p "/models/rerank-tokenize/1"\n'
        'cp "/config/step-tokenize.pbtxt" "/models/rerank-tokenize/config.pbtxt"\n'
        'aws s3 sync --only-show-errors "${PIPELINE_DIR}${STEP_0_PATH}/" '
        '"/models/rerank-tokenize/1"\n'
        'mkdir -p "/models/rerank-tokenize/warmup"\n'
        "{ printf '\\031\\000\\000\\000'; printf '%s' \"$STEP_0_SAMPLE_0\"; } "
        '> "/models/rerank-tokenize/warmup/sample_0"\n'
        "{ printf '\\111\\000\\000\\000'; printf '%s' \"$STEP_0_SAMPLE_1\"; } "
        '> "/models/rerank-tokenize/warmup/sample_1"\n'
        'mkdir -p "/models/rerank-cross-encoder/1"\n'
        'cp "/config/step-cross-encoder.pbtxt" "/models/rerank-cross-encoder/config.pbtxt"\n'
        # a TensorRT step: its built engine, not its ONNX (test_pipeline_engines)
        'if ! attempt="$(aws s3 cp --only-show-errors '
        '"${STEP_1_ENGINE_URI}inferplane-complete-attempt" -)"; then\n'
    )
    assert (
        'aws s3 cp --only-show-errors "${ATTEMPT_URI}model.plan" '
        '"/models/rerank-cross-encoder/1/model.plan"\n'
    ) in script
    assert "STEP_1_PATH" not in script
    # then the tokenizer step's staged wheels (test_requirements_job)
    assert script.endswith(
        'aws s3 sync --only-show-errors "$ATTEMPT_URI" "/home/inferplane/wheels/tokenize"'
    )
    variables = {e["name"]: e["value"] for e in fetch["env"] if "value" in e}
    assert variables["PIPELINE_DIR"] == "s3://example-models-euw1/bge-search/rerank/"
    assert variables["STEP_0_PATH"] == "tokenize"
    assert variables["STEP_1_ENGINE_URI"].startswith(
        "s3://example-models-euw1/bge-search/.inferplane/engines/bge-search/rerank/"
    )
    assert variables["STEP_0_SAMPLE_0"] == "how do replicas stay warm"


def test_the_sample_files_are_in_tritons_string_layout(search: Environment, tmp_path: Path) -> None:
    """The shell the fetch container runs writes each sample as Triton reads a string
    element: a 4-byte little-endian length, then the UTF-8 bytes."""
    model, _ = args_of_mf(search, "rerank")
    assert model.pipeline is not None
    step = dataclasses.replace(
        model.pipeline.steps[0],
        warmup_sample=(("QUERY", 'héllo "$HOME" `id`'), ("DOCUMENT", "x" * 300)),
    )
    script = "\n".join(["set -eu", *triton_pipeline.sample_lines(str(tmp_path), 0, step)])
    env = {"PATH": "/usr/bin:/bin", "STEP_0_SAMPLE_0": step.warmup_sample[0][1]}
    env["STEP_0_SAMPLE_1"] = step.warmup_sample[1][1]
    subprocess.run(["sh", "-c", script], env=env, check=True, timeout=60)
    for index, (_, text) in enumerate(step.warmup_sample):
        data = (tmp_path / "warmup" / f"sample_{index}").read_bytes()
        assert data == struct.pack("<I", len(text.encode())) + text.encode()


def test_triton_loads_the_steps_and_the_ensemble(search: Environment) -> None:
    model, _env = args_of_mf(search, "embed")
    loads = [a for a in triton_args(model, "25.08") if a.startswith("--load-model")]
    assert loads == [
        "--load-model=embed-tokenize",
        "--load-model=embed-encoder",
        "--load-model=embed",
    ]


def test_the_model_server_ships_every_config(search: Environment) -> None:
    rec = serve(search, ["embed"])
    config = k8s_object(rec, CONFIG_MAP, "embed-triton-config")
    assert sorted(config.get("data")) == [
        "config.pbtxt",
        "step-encoder.pbtxt",
        "step-tokenize.pbtxt",
    ]
    deployment = k8s_object(rec, DEPLOYMENT, "embed")
    assert container(deployment, "fetch-model", init=True)["command"][2].count("s3 sync") == 3
    # No engine build (ONNX Runtime runs the encoder): the one Job stages the tokenizer's wheels.
    jobs = rec.of_type("kubernetes:batch/v1:Job")
    assert [j.get("metadata", "labels", "app.kubernetes.io/component") for j in jobs] == [
        "requirements-staging"
    ]


def test_the_dashboard_shows_each_step(search: Environment) -> None:
    board = dashboards.dashboard(*args_of(search, "embed"), "bge-search")
    by_title = {p["title"]: p for p in board["panels"] if p.get("type") == "timeseries"}
    rows = [p["title"] for p in board["panels"] if p.get("type") == "row"]
    assert rows[-1] == "Pipeline steps"
    sel = '{namespace="bge-search", model=~"embed-tokenize|embed-encoder"}'
    (queue,) = by_title["Queue time per step"]["targets"]
    assert queue["expr"] == (
        f"sum by (model) (rate(nv_inference_queue_duration_us{sel}[2m])) / "
        f"sum by (model) (rate(nv_inference_request_success{sel}[2m])) / 1000"
    )
    assert queue["legendFormat"] == "{{model}}"
    for title in ("Compute time per step", "Requests per step", "Batch size per step"):
        for target in by_title[title]["targets"]:
            parse_promql(target["expr"])
            assert not unknown_metrics(target["expr"]), target["expr"]
    one = dashboards.dashboard(*args_of(search, dataclasses.replace(
        search.models["embed"], pipeline=None, backend="onnxruntime")), "bge-search")  # fmt: skip
    assert "Pipeline steps" not in [p["title"] for p in one["panels"] if p.get("type") == "row"]


def test_a_pipeline_queues_in_its_steps(search: Environment) -> None:
    """The ensemble hands a request to its first step at once: the steps' pending counts are
    the pipeline's queue (what the queue_depth signal and its recorded rule read)."""
    env, model = args_of(search, "embed")
    scope = promql_scope.Scope.of(env, model, "bge-search")
    assert promql.queue_depth(scope) == (
        'sum(nv_inference_pending_request_count{namespace="bge-search", '
        'model=~"embed-tokenize|embed-encoder"})'
    )
    # Everything else is the ensemble's own: one request, counted once.
    assert scope.server_selector() == '{namespace="bge-search", model="embed"}'


def test_a_pipeline_counts_its_clients_failures_once(search: Environment) -> None:
    env, model = args_of(search, "embed")
    scope = promql_scope.Scope.of(env, model, "bge-search")
    ensemble = 'sum(rate(nv_inference_request_failure{namespace="bge-search", model="embed"}[2m]))'
    steps = (
        "sum(rate(nv_inference_request_failure"
        '{namespace="bge-search", model=~"embed-tokenize|embed-encoder"}[2m]))'
    )
    assert promql.failure_rate(scope) == f"({ensemble} - ({steps} or {ensemble} * 0))"
    parse_promql(promql.error_ratio(scope, ("namespace",)))
    one = promql_scope.Scope.of(env, dataclasses.replace(model, pipeline=None), "bge-search")
    assert promql.failure_rate(one) == ensemble


def test_a_sample_reaches_the_shell_as_written(search: Environment) -> None:
    """The kubelet would expand ``$(PIPELINE_DIR)`` in a variable's value, and the file
    would then disagree with the length written before it: every ``$`` is doubled."""
    model, _ = args_of_mf(search, "rerank")
    assert model.pipeline is not None
    step = dataclasses.replace(
        model.pipeline.steps[0], warmup_sample=(("QUERY", "$(PIPELINE_DIR) $5"),)
    )
    pipeline = dataclasses.replace(model.pipeline, steps=(step, *model.pipeline.steps[1:]))
    variables = triton_pipeline.sample_env(dataclasses.replace(model, pipeline=pipeline))
    assert variables == [{"name": "STEP_0_SAMPLE_0", "value": "$$(PIPELINE_DIR) $$5"}]
