"""TensorRT engine builds: the content key, trtexec per TensorRT major, and the Job."""

from __future__ import annotations

import dataclasses

import pytest
from serving_fixtures import (
    JOB,
    args_of_mf,
    job_program,
    k8s_object,
    pod_spec,
    with_model,
    with_pool,
    with_versions,
)

from inferplane.blueprint import catalog
from inferplane.blueprint.model import Environment, TensorRtInput
from inferplane.components.serving.store.store_cli import ATTEMPT_ENV
from inferplane.components.serving.tensorrt.engine_build import trtexec_env, trtexec_flags
from inferplane.components.serving.tensorrt.engine_keys import (
    build_settings,
    engine_key,
    engine_uri,
)
from inferplane.components.serving.tensorrt.trtexec_flags import precision_flags, typed_precision


def _trt(env: Environment, model: str, **changes: object) -> Environment:
    trt = env.models[model].tensorrt
    assert trt is not None
    return with_model(env, model, tensorrt=dataclasses.replace(trt, **changes))


def pod_spec_of_build(env: Environment, model: str = "ranker") -> dict:
    from inferplane.components.serving.tensorrt.engine_build import build_pod_spec

    served_model, serving_env = args_of_mf(env, env.models[model])
    return build_pod_spec(serving_env, served_model)


def _key(env: Environment, model: str = "ranker") -> str:
    return engine_key(*args_of_mf(env, env.models[model]))


def _ranker_input(**changes: object) -> tuple[TensorRtInput, ...]:
    base = TensorRtInput("input_ids", (1, 128), (8, 128), (32, 512))
    return (dataclasses.replace(base, **changes),)


def test_key_is_stable(staging):
    assert _key(staging) == _key(staging)
    assert len(_key(staging)) == 12
    assert engine_uri(*args_of_mf(staging, staging.models["ranker"])) == (
        f"s3://acme-models-use1/.inferplane/engines/support-assistant/ranker/{_key(staging)}/"
    )


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda e: with_model(e, "ranker", source=dataclasses.replace(
            e.models["ranker"].source, uri="s3://acme-models-use1/reranker/v2/model.onnx")),
            id="source"),
        pytest.param(lambda e: _trt(e, "ranker", inputs=_ranker_input(min=(2, 128))), id="min"),
        pytest.param(lambda e: _trt(e, "ranker", inputs=_ranker_input(opt=(16, 128))), id="opt"),
        pytest.param(lambda e: _trt(e, "ranker", inputs=_ranker_input(max=(32, 256))), id="max"),
        pytest.param(lambda e: _trt(e, "ranker", inputs=_ranker_input(name="ids")), id="name"),
        pytest.param(lambda e: with_model(e, "ranker", precision="bf16"), id="precision"),
        pytest.param(lambda e: _trt(e, "ranker", workspace_mib=2048), id="workspace"),
        pytest.param(lambda e: _trt(e, "ranker", builder_optimization_level=5), id="level"),
        pytest.param(lambda e: with_pool(e, "l4", gpu=e.pools["h100"].gpu), id="gpu"),
        pytest.param(lambda e: with_pool(e, "l4", gpu=e.pools["h100"].gpu, sharing="mig",
                                         mig_profile="3g.40gb"), id="mig-slice"),
        pytest.param(lambda e: with_versions(e, triton="25.10"), id="release"),
    ],
)  # fmt: skip
def test_key_changes_with_every_build_input(staging, change):
    changed = change(staging)
    assert _key(changed) != _key(staging)
    assert engine_uri(*args_of_mf(changed, changed.models["ranker"])) != engine_uri(
        *args_of_mf(staging, "ranker")
    )


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda e: with_model(e, "ranker", replicas=dataclasses.replace(
            e.models["ranker"].replicas, max=9)), id="replicas"),
        pytest.param(lambda e: with_model(e, "ranker", warmup=None), id="warmup"),
        pytest.param(lambda e: with_model(e, "ranker", response_cache=None), id="cache"),
        pytest.param(lambda e: with_model(e, "ranker", startup_timeout_s=60), id="startup"),
        pytest.param(lambda e: with_pool(e, "l4", nodes=dataclasses.replace(
            e.pools["l4"].nodes, max=20)), id="pool-size"),
        pytest.param(lambda e: with_pool(e, "l4", instance_type="g6.4xlarge"), id="instance"),
        pytest.param(lambda e: with_versions(e, vllm="v0.11.0"), id="other-version"),
    ],
)  # fmt: skip
def test_key_ignores_what_does_not_change_the_engine(staging, change):
    assert _key(change(staging)) == _key(staging)


def test_same_engine_in_both_environments_differs_only_by_store(staging, prod):
    # Same source path, settings, GPU and release: only the GPU pool is the same L4.
    s = build_settings(*args_of_mf(staging, staging.models["ranker"]))
    p = build_settings(*args_of_mf(prod, prod.models["ranker"]))
    assert {k: v for k, v in s.items() if k != "source"} == {
        k: v for k, v in p.items() if k != "source"
    }


def test_trtexec_tensorrt_10(staging):
    assert trtexec_flags(*args_of_mf(staging, staging.models["ranker"])) == [
        "--saveEngine=/build/model.plan",
        "--skipInference",
        "--builderOptimizationLevel=3",
        "--fp16",
    ]
    # int8 from a Q/DQ ONNX model: --int8 and --fp16, each "in addition to fp32"
    # (trtexec --help, NVIDIA/TensorRT samples/common/sampleOptions.cpp; NVIDIA/TensorRT#3762),
    # so the layers left unquantized run in fp16, not fp32
    assert trtexec_flags(*args_of_mf(staging, staging.models["toxicity"])) == [
        "--saveEngine=/build/model.plan",
        "--skipInference",
        "--builderOptimizationLevel=3",
        "--int8",
        "--fp16",
    ]


def test_blueprint_shapes_reach_the_build_as_environment(staging):
    inputs = (
        TensorRtInput("input:0", (1, 3), (2, 3), (4, 3)),
        TensorRtInput("mask", (1, 3), (2, 3), (4, 3)),
    )
    env = _trt(staging, "ranker", inputs=inputs, workspace_mib=4096)
    model, serving_env = args_of_mf(env, env.models["ranker"])
    assert "--memPoolSize=workspace:4096M" in trtexec_flags(model, serving_env)
    values = {e["name"]: e["value"] for e in trtexec_env(model, serving_env)}
    assert values["TRT_INPUTS"] == '[["input:0",[1,3],[2,3],[4,3]],["mask",[1,3],[2,3],[4,3]]]'
    assert values["ONNX_FILE"] == "model.onnx"
    assert values["BUILD_IMAGE"] == "nvcr.io/nvidia/tensorrt:26.02-py3"
    assert values["TYPED_PRECISION"] == ""  # TensorRT 10: the precision flags decide


@pytest.mark.parametrize(
    ("precision", "flags"),
    [
        ("fp32", []),
        ("fp16", ["--fp16"]),
        ("bf16", ["--bf16"]),
        ("fp8", ["--fp8"]),
        ("int8", ["--int8", "--fp16"]),
        ("int4", ["--int4"]),
    ],
)
def test_precision_flags_by_tensorrt_major(precision, flags, tensorrt_11_release):
    assert precision_flags(precision, "25.08") == flags  # TensorRT 10.13
    assert precision_flags(precision, tensorrt_11_release) == []  # strongly typed only
    assert typed_precision(precision, "25.08") == ""  # the flags decide
    assert typed_precision(precision, tensorrt_11_release) == (
        "" if precision == "fp32" else precision
    )


def test_trtexec_tensorrt_11_has_no_precision_flags(staging, tensorrt_11_release):
    env = with_versions(staging, triton=tensorrt_11_release)
    model = env.models["toxicity"]  # int8
    args = trtexec_flags(*args_of_mf(env, model))
    assert not [a for a in args if a in ("--fp16", "--bf16", "--int8", "--fp8", "--int4")]
    assert args[-1] == "--builderOptimizationLevel=3"
    # The network must then carry the precision itself: the build pod checks it.
    values = {e["name"]: e["value"] for e in trtexec_env(*args_of_mf(env, model))}
    assert values["TYPED_PRECISION"] == "int8"
    assert values["PRECISION_FIELD"] == "models.toxicity.precision"
    assert values["ONNX_SOURCE"].endswith(".onnx")
    assert values["PRECISION_CONVERSION"] == catalog.onnx_conversion("int8")


@pytest.mark.parametrize("env_name", ["staging", "prod"])
def test_build_job(served, env_name, request):
    env: Environment = request.getfixturevalue(env_name)
    rec = served(env_name)
    key = _key(env)
    job = k8s_object(rec, JOB, f"ranker-engine-{key[:10]}")
    assert job.name == f"support-assistant-{env_name}-ranker-engine-{key[:10]}"
    spec = job.get("spec")
    # Pulumi waits for completion and must find the Job afterwards
    for unset in ("backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished"):
        assert unset not in spec
    assert job.get("metadata", "annotations") == {"pulumi.com/replaceUnready": "true"}
    pod = pod_spec(job)
    assert pod["serviceAccountName"] == "engine-builder"
    assert pod["restartPolicy"] == "Never"
    assert pod["nodeSelector"] == {
        "inferplane.dev/pool": "l4",
        "inferplane.dev/blueprint": "support-assistant",
    }
    assert pod["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}
    ]
    zones = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert zones["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == list(
        env.pools["l4"].zones
    )
    fetch, build = pod["initContainers"]
    [upload] = pod["containers"]
    assert [fetch["name"], build["name"], upload["name"]] == [
        "fetch-onnx",
        "trtexec",
        "upload-engine",
    ]
    assert build["image"] == "nvcr.io/nvidia/tensorrt:26.02-py3"  # Triton's NGC release
    assert build["resources"]["requests"]["nvidia.com/gpu"] == "1"
    assert build["resources"]["limits"]["nvidia.com/gpu"] == "1"
    for other in (fetch, upload):  # only trtexec holds the GPU
        assert "nvidia.com/gpu" not in str(other["resources"])
    cli = "aws" if env.cloud == "aws" else "gcloud"
    assert fetch["image"].split("/")[-1].startswith("aws-cli" if cli == "aws" else "google")
    assert "command" not in build  # the TensorRT image's entrypoint runs first
    fetch_script, upload_script = (c["command"][2] for c in (fetch, upload))
    build_script = build["args"][2]
    # idempotent: an existing engine turns every step into a no-op
    assert "touch /build/engine-exists" in fetch_script
    assert build_script.startswith("set -eu\nif [ -f /build/engine-exists ]; then exit 0; fi\n")
    assert "--fp16" in build_script and "input_ids" not in build_script  # shapes: env only
    assert "TRT_INPUTS" in {e["name"] for e in build["env"]}
    # the shapes program is the shipped module, from the Job's own scripts ConfigMap
    assert "\npython3 /opt/inferplane/jobs/onnx_shapes.py " in build_script
    assert "def shape_flags(" in job_program(rec, job, "trtexec", "onnx_shapes")
    assert upload_script.index("engine-exists") < upload_script.index(" cp ")
    # the engine goes into this attempt's folder, then the marker naming it (test_store_attempts)
    flags = "--only-show-errors " if cli == "aws" else ""
    engine_copy = f"{cli} {'s3 ' if cli == 'aws' else 'storage '}cp {flags}/build/model.plan "
    engine_copy += '"${ATTEMPT_URI}model.plan"'
    assert engine_copy in upload_script.splitlines()
    assert upload_script.index(engine_copy) < upload_script.index(
        '"${ENGINE_URI}inferplane-complete-attempt"; then'
    )
    assert ATTEMPT_ENV in upload["env"]
    env_vars = {e["name"]: e.get("value") for e in upload["env"]}
    assert env_vars["ENGINE_URI"] == engine_uri(*args_of_mf(env, env.models["ranker"]))


def test_build_pods_are_not_serving_pods(served):
    job = next(iter(served("staging").of_type(JOB)))
    labels = job.get("spec", "template", "metadata", "labels")
    # the model's selector (part-of + model) must not match, or Services would route to it
    assert labels["app.kubernetes.io/part-of"] != "support-assistant"
    assert "inferplane.dev/model" not in labels
    assert job.get("metadata", "labels", "inferplane.dev/model") is not None


def test_gcs_existence_check_and_copy(served):
    job = next(j for j in served("prod").of_type(JOB) if "-engine-" in j.name)
    fetch = pod_spec(job)["initContainers"][0]["command"][2]
    assert 'gcloud storage objects describe "${ENGINE_URI}inferplane-complete-attempt"' in fetch
    # the model's directory: external data files live beside the model
    assert 'gcloud storage rsync --recursive "$SOURCE_DIR" /build/onnx' in fetch


def test_s3_existence_check(served):
    job = next(j for j in served("staging").of_type(JOB) if "-engine-" in j.name)
    fetch = pod_spec(job)["initContainers"][0]["command"][2]
    assert 'aws s3api head-object --bucket "${u%%/*}" --key "${u#*/}"' in fetch
    assert 'aws s3 sync --only-show-errors "$SOURCE_DIR" /build/onnx' in fetch


def test_external_data_is_fetched_with_the_model(staging):
    # "location ... relative to the directory the ONNX model is stored in"
    # (https://onnx.ai/onnx/repo-docs/ExternalData.html): fetch the model's directory
    from inferplane.components.serving.containers import source_location

    model, _ = args_of_mf(staging, staging.models["ranker"])
    assert source_location(model) == ("s3://acme-models-use1/reranker/", "model.onnx")
    job = pod_spec_of_build(staging)
    fetch_env = {e["name"]: e["value"] for e in job["initContainers"][0]["env"]}
    assert fetch_env["SOURCE_DIR"] == "s3://acme-models-use1/reranker/"


def test_a_model_at_the_store_root_is_refused(staging):
    from inferplane.components.serving.containers import source_location
    from inferplane.components.serving.spec import ServingArgsError

    root = with_model(staging, "ranker", source=dataclasses.replace(
        staging.models["ranker"].source, uri="s3://acme-models-use1/model.onnx"))  # fmt: skip
    model, _ = args_of_mf(root, root.models["ranker"])
    with pytest.raises(ServingArgsError, match="keep each ONNX model in its own directory"):
        source_location(model)


def test_mig_build_uses_the_slice(served, staging):
    rec = served("staging")
    key = _key(staging, "nightly-embed")
    job = k8s_object(rec, JOB, f"nightly-embed-engine-{key[:10]}")
    build = pod_spec(job)["initContainers"][1]
    assert build["resources"]["limits"]["nvidia.com/mig-3g.40gb"] == "1"
    assert pod_spec(job)["nodeSelector"] == {
        "inferplane.dev/pool": "h100",
        "inferplane.dev/blueprint": "support-assistant",
    }


def test_key_change_means_new_job(staging):
    from serving_fixtures import serve

    before = serve(staging, ["ranker"])
    after = serve(with_model(staging, "ranker", precision="bf16"), ["ranker"])
    [old] = before.of_type(JOB)
    [new] = after.of_type(JOB)
    assert old.name != new.name and old.get("metadata", "name") != new.get("metadata", "name")
    assert "--bf16" in pod_spec(new)["initContainers"][1]["args"][2]


def test_batching_derives_the_batch_profile(staging):
    from inferplane.components.serving.tensorrt.engine_build import derived_batch_profile

    toxicity = staging.models["toxicity"]  # batching max 16, tensorrt: {} (no inputs)
    assert derived_batch_profile(toxicity) == (16, 16)
    values = {e["name"]: e["value"] for e in trtexec_env(*args_of_mf(staging, toxicity))}
    assert values["BATCH_PROFILE"] == "16,16"
    assert values["TRT_INPUTS"] == "[]"


def test_the_derived_profile_is_part_of_the_engine_key(staging):
    import dataclasses

    toxicity = staging.models["toxicity"]
    assert toxicity.batching is not None
    bigger = dataclasses.replace(
        toxicity, batching=dataclasses.replace(toxicity.batching, max_batch_size=32)
    )
    assert build_settings(*args_of_mf(staging, bigger))["derived_batch_profile"] == (32, 32)
    assert build_settings(*args_of_mf(staging, bigger)) != build_settings(
        *args_of_mf(staging, toxicity)
    )


# An engine loads only in the TensorRT that built it (TensorRT support matrix, "Engine
# Portability"): the build follows the model's own Triton release, not versions.triton.
@pytest.mark.parametrize(
    ("image", "base_release"),
    [
        ("nvcr.io/nvidia/tritonserver:25.06-py3", None),  # the NGC tag names the release
        ("registry.example.com/ml/triton-custom:1.4", "25.06"),  # declared base release
    ],
)
def test_the_build_uses_the_tensorrt_of_the_models_triton(staging, image, base_release):
    from inferplane.blueprint import naming
    from inferplane.components.serving.serving_pod import deployment_spec

    env = with_model(staging, "ranker", image=image, base_release=base_release)
    model, serving_env = args_of_mf(env, env.models["ranker"])
    assert serving_env.triton_release == "26.02" and model.release(serving_env) == "25.06"
    pod = pod_spec_of_build(env)
    assert pod["initContainers"][1]["image"] == "nvcr.io/nvidia/tensorrt:25.06-py3"
    assert build_settings(model, serving_env)["release"] == "25.06"
    assert _key(env) != _key(staging)
    template = deployment_spec(serving_env, model, "s3://x/y", False, "config")["template"]
    assert template["metadata"]["annotations"][naming.NGC_RELEASE_ANNOTATION] == "25.06"
    assert template["spec"]["containers"][0]["image"] == image
