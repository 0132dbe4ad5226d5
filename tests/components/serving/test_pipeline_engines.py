"""TensorRT pipeline steps: the step's config (exact text, and parsed by Triton's own
ModelConfig), its build Job (trtexec's command line and inputs), the key, where the serving
pod fetches the engine, and the order of the resources under mocks. The bundled
bge-search reranker's cross-encoder is such a step."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from serving_fixtures import (
    DEPLOYMENT,
    JOB,
    NETWORK_POLICY,
    args_of_mf,
    k8s_object,
    serve,
    with_versions,
)
from test_triton_config import parse, triton_python  # noqa: F401  (fixture)

from inferplane.blueprint import naming
from inferplane.blueprint.loading.loader import load
from inferplane.blueprint.model import Environment
from inferplane.blueprint.triton_model import PipelineStep, ShapeProfile
from inferplane.components.serving.spec import ServedModel, ServingEnvironment
from inferplane.components.serving.store.jobs import onnx_shapes
from inferplane.components.serving.tensorrt import pipeline_engines
from inferplane.components.serving.tensorrt.engine_build import build_pod_spec, trtexec_env
from inferplane.components.serving.tensorrt.engine_keys import job_name
from inferplane.components.serving.triton import triton_pipeline
from inferplane.components.stack_args import store_writers

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def search() -> Environment:
    from inferplane.blueprint.resolution.resolve import resolve

    return resolve(load(ROOT / "blueprints" / "bge-search.yaml"), "prod")


def _rerank(env: Environment) -> tuple[ServedModel, ServingEnvironment, PipelineStep]:
    model, serving_env = args_of_mf(env, "rerank")
    assert model.pipeline is not None
    return model, serving_env, model.pipeline.steps[1]


CROSS_ENCODER = """\
name: "rerank-cross-encoder"
platform: "tensorrt_plan"
max_batch_size: 64
dynamic_batching {
  max_queue_delay_microseconds: 1000
}
input [
  {
    name: "input_ids"
    data_type: TYPE_INT64
    dims: [ -1 ]
  },
  {
    name: "attention_mask"
    data_type: TYPE_INT64
    dims: [ -1 ]
  }
]
output [
  {
    name: "logits"
    data_type: TYPE_FP32
    dims: [ 1 ]
  }
]
instance_group [
  {
    count: 1
    kind: KIND_GPU
  }
]
model_warmup [
"""


def test_the_step_config_names_the_engine_platform(search: Environment) -> None:
    model, _, step = _rerank(search)
    text = triton_pipeline.step_config(model, step)
    assert text.startswith(CROSS_ENCODER)
    assert "optimization" not in text  # ONNX Runtime's providers are not TensorRT's


def test_the_step_config_parses_and_warms_at_the_profiles_opt(
    search: Environment,
    triton_python: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    model, _, step = _rerank(search)
    parsed = parse(triton_python, tmp_path, {"cross": triton_pipeline.step_config(model, step)})
    cross = parsed["cross"]
    assert cross["platform"] == "tensorrt_plan" and cross["max_batch_size"] == 64
    assert cross["model_warmup"] == [
        {
            "name": f"warmup_batch_{size}",
            "batch_size": size,
            "inputs": {
                name: {"data_type": "TYPE_INT64", "dims": ["256"], "zero_data": True}
                for name in ("input_ids", "attention_mask")
            },
        }
        for size in (1, 64)
    ]


def test_the_build_runs_trtexec_on_the_steps_onnx(search: Environment) -> None:
    model, env, step = _rerank(search)
    build = pipeline_engines.step_build(model, step, env)
    assert build.source_dir == "s3://example-models-euw1/bge-search/rerank/cross-encoder/"
    assert build.engine_uri == (
        f"s3://example-models-euw1/bge-search/.inferplane/engines/bge-search/rerank/{build.key}/"
    )
    assert build.flags == (
        "--saveEngine=/build/model.plan",
        "--skipInference",
        "--builderOptimizationLevel=3",
        "--fp16",
    )
    pod = build_pod_spec(env, model, build)
    fetch, trtexec = pod["initContainers"]
    assert {"name": "SOURCE_DIR", "value": build.source_dir} in fetch["env"]
    assert {"name": "ENGINE_URI", "value": build.engine_uri} in fetch["env"]
    assert trtexec["image"] == "nvcr.io/nvidia/tensorrt:26.02-py3"
    assert "command" not in trtexec  # the NGC image's entrypoint runs first
    script = trtexec["args"][2].splitlines()
    assert script[:2] == ["set -eu", "if [ -f /build/engine-exists ]; then exit 0; fi"]
    assert script[-5:] == [
        'python3 /opt/inferplane/jobs/onnx_shapes.py "/build/onnx/$ONNX_FILE" /build/shape-flags',
        'set -- --onnx="/build/onnx/$ONNX_FILE" --saveEngine=/build/model.plan '
        "--skipInference --builderOptimizationLevel=3 --fp16",
        'while IFS= read -r flag; do set -- "$@" "$flag"; done < /build/shape-flags',
        'echo "trtexec $*"',
        '"$TRTEXEC" "$@"',
    ]
    values = {e["name"]: e["value"] for e in trtexec_env(model, env, build)}
    assert values["ONNX_FILE"] == "model.onnx"
    # the step's shapes become --minShapes/--optShapes/--maxShapes (jobs.onnx_shapes)
    assert values["TRT_INPUTS"] == (
        '[["input_ids",[1,1],[16,256],[64,512]],["attention_mask",[1,1],[16,256],[64,512]]]'
    )
    assert values["BATCH_PROFILE"] == "64,64"
    assert values["SHAPES_FIELD"] == "models.rerank.pipeline.steps.cross-encoder.shapes"
    assert pod["volumes"][-1]["configMap"]["name"].startswith(
        f"{job_name(model, build.key)}-scripts-"
    )


def test_the_steps_shapes_become_trtexecs_profile_flags(search: Environment) -> None:
    """What the build pod's onnx_shapes writes for trtexec, from the Job's variables and the
    ONNX model's inputs (TensorRT's parser reads both as [-1, -1]). trtexec's shape spec:
    "input0:1x3x256x256,input1:1x3x128x128", "the dimensions (including the batch
    dimension)" (NVIDIA/TensorRT samples/common/sampleOptions.cpp, BuildOptions::help)."""
    model, env, step = _rerank(search)
    values = {
        e["name"]: e["value"]
        for e in trtexec_env(model, env, pipeline_engines.step_build(model, step, env))
    }
    onnx = {"input_ids": [-1, -1], "attention_mask": [-1, -1]}
    declared = onnx_shapes.declared_shapes(values["TRT_INPUTS"])
    batch = onnx_shapes.batch_profile(values["BATCH_PROFILE"])
    assert onnx_shapes.shape_flags("rerank", onnx, declared, batch, values["SHAPES_FIELD"]) == [
        "--minShapes=input_ids:1x1,attention_mask:1x1",
        "--optShapes=input_ids:16x256,attention_mask:16x256",
        "--maxShapes=input_ids:64x512,attention_mask:64x512",
    ]
    with pytest.raises(onnx_shapes.ShapeError) as missing:
        onnx_shapes.shape_flags(
            "rerank", {**onnx, "token_type_ids": [-1, -1]}, declared, batch, values["SHAPES_FIELD"]
        )
    assert str(missing.value) == (
        "the ONNX model of rerank has dynamic inputs without min/opt/max shapes: "
        "token_type_ids (?x?); give each under models.rerank.pipeline.steps.cross-encoder."
        "shapes in the blueprint"
    )


def test_the_key_follows_what_makes_the_engine(search: Environment) -> None:
    model, env, step = _rerank(search)
    key = pipeline_engines.step_build(model, step, env).key
    wider = dataclasses.replace(
        step, shapes=(ShapeProfile("input_ids", (1, 1), (8, 128), (64, 512)),)
    )
    moved = dataclasses.replace(step, path="cross-encoder-v2")
    for other in (wider, moved):
        assert pipeline_engines.step_build(model, other, env).key != key
    fp32 = dataclasses.replace(model, precision="fp32")
    assert pipeline_engines.step_build(fp32, step, env).key != key
    newer, newer_env = args_of_mf(with_versions(search, triton="25.10"), "rerank")
    assert pipeline_engines.step_build(newer, step, newer_env).key != key
    # The instance count and the queue delay do not change the engine.
    same = dataclasses.replace(step, instances=4)
    assert pipeline_engines.step_build(model, same, env).key == key


def test_the_serving_pod_fetches_the_engine_as_model_plan(search: Environment) -> None:
    model, env, step = _rerank(search)
    assert pipeline_engines.fetch_lines(env, 1, "/models/rerank-cross-encoder") == [
        'if ! attempt="$(aws s3 cp --only-show-errors '
        '"${STEP_1_ENGINE_URI}inferplane-complete-attempt" -)"; then',
        '  echo "error: no complete TensorRT engine under $STEP_1_ENGINE_URI (no '
        'inferplane-complete-attempt)" >&2',
        "  exit 1",
        "fi",
        'case "$attempt" in',
        '  attempt-*[!0-9a-f-]* | attempt-) echo "error: the marker inferplane-complete-attempt '
        'under $STEP_1_ENGINE_URI names no attempt" >&2; exit 1 ;;',
        "  attempt-*) ;;",
        '  *) echo "error: the marker inferplane-complete-attempt under $STEP_1_ENGINE_URI '
        'names no attempt" >&2; exit 1 ;;',
        "esac",
        'ATTEMPT_URI="${STEP_1_ENGINE_URI}$attempt/"',
        'aws s3 cp --only-show-errors "${ATTEMPT_URI}model.plan" '
        '"/models/rerank-cross-encoder/1/model.plan"',
    ]
    fetch = triton_pipeline.fetch_container(env, model)
    variables = {e["name"]: e.get("value") for e in fetch["env"]}
    assert (
        variables["STEP_1_ENGINE_URI"] == pipeline_engines.step_build(model, step, env).engine_uri
    )


def test_the_replicas_start_after_the_build(search: Environment) -> None:
    rec = serve(search, ["rerank"])
    model, env, step = _rerank(search)
    build = pipeline_engines.step_build(model, step, env)
    jobs = rec.of_type(JOB)
    assert sorted(j.get("metadata", "labels", "app.kubernetes.io/component") for j in jobs) == [
        "engine-build",
        "requirements-staging",
    ]
    job = k8s_object(rec, JOB, f"rerank-engine-{build.key[:10]}")
    assert job.get("metadata", "labels", "inferplane.dev/engine-key") == build.key
    pod = job.get("spec", "template", "spec")
    assert pod["serviceAccountName"] == "engine-builder"
    assert [c["name"] for c in pod["initContainers"]] == ["fetch-onnx", "trtexec"]
    # The build waits for its NetworkPolicy; the Deployment waits for the build.
    policy = k8s_object(rec, NETWORK_POLICY, "rerank-engine-build")
    assert policy.urn in job.depends_on
    deployment = k8s_object(rec, DEPLOYMENT, "rerank")
    assert job.urn in deployment.depends_on
    assert [r.type for r in rec.resources if r.urn == job.parent] == [
        "inferplane:serving:PipelineEngineBuild"
    ]


def test_one_policy_serves_every_step_build(search: Environment) -> None:
    """Two engine steps: two Jobs, one NetworkPolicy for the model's build pods."""
    model = search.models["rerank"]
    assert model.pipeline is not None
    tokenize, cross = model.pipeline.steps
    second = dataclasses.replace(cross, name="second", path="second")
    pipeline = dataclasses.replace(model.pipeline, steps=(tokenize, cross, second))
    models = {**search.models, "rerank": dataclasses.replace(model, pipeline=pipeline)}
    rec = serve(dataclasses.replace(search, models=models), ["rerank"])
    builds = [j for j in rec.of_type(JOB) if j.get("metadata", "name").startswith("rerank-engine")]
    assert len(builds) == 2
    assert [p.get("metadata", "name") for p in rec.of_type(NETWORK_POLICY)].count(
        "rerank-engine-build"
    ) == 1
    deployment = k8s_object(rec, DEPLOYMENT, "rerank")
    assert all(b.urn in deployment.depends_on for b in builds)


def test_engine_steps_need_the_engine_builder(search: Environment) -> None:
    """The builds write under the engines prefix: the stack grants the engine builder."""
    assert naming.ENGINE_BUILDER_SA in store_writers(search)
    model = search.models["rerank"]
    assert model.pipeline is not None
    onnx = tuple(
        dataclasses.replace(s, backend="onnxruntime", shapes=()) if s.backend == "tensorrt" else s
        for s in model.pipeline.steps
    )
    plain = dataclasses.replace(model, pipeline=dataclasses.replace(model.pipeline, steps=onnx))
    models = {**search.models, "rerank": plain}
    assert naming.ENGINE_BUILDER_SA not in store_writers(dataclasses.replace(search, models=models))


def test_a_steps_build_settings_reach_trtexec_and_its_key(search: Environment) -> None:
    model, env, step = _rerank(search)
    tuned = dataclasses.replace(step, workspace_mib=2048, builder_optimization_level=5)
    build = pipeline_engines.step_build(model, tuned, env)
    assert build.flags == (
        "--saveEngine=/build/model.plan",
        "--skipInference",
        "--memPoolSize=workspace:2048M",
        "--builderOptimizationLevel=5",
        "--fp16",
    )
    # Another build is another engine: it gets a key, and a store prefix, of its own.
    assert build.key != pipeline_engines.step_build(model, step, env).key
