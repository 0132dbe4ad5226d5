"""TensorRT engine builds: a Kubernetes Job that turns a model's ONNX file into ``model.plan``.

The engine is built *in the cluster*, on a node of the serving pool, with the TensorRT
image of the same NGC release as the Triton image (``nvcr.io/nvidia/tensorrt:<release>-py3``),
and stored under its content key (`engine_keys`: the key, the store layout, the Job's name).

The pod: an init container (cloud CLI, ServiceAccount ``engine-builder``) checks whether
the engine already exists (its attempt marker) — then every later step is a no-op, so
re-running a Job is cheap — and otherwise fetches the ONNX model's directory (the model
and its external data files, `source_location`); an init container runs ``trtexec`` (the
only one holding the GPU) after giving every dynamic input its shapes (`engine_script`,
`jobs.onnx_shapes`); the main container uploads ``model.plan`` into a folder of its own
attempt and then the marker naming it (`store_cli.publish_attempt`).

Precision follows the release's TensorRT (`catalog.tensorrt_major`, `trtexec_flags`):
TensorRT 10 takes precision flags; TensorRT 11 builds strongly typed networks only, so the
build pod checks that the network computes in the blueprint's precision and stops, saying
how to convert it, when it does not.

The build pod gets NetworkPolicy ``<model>-engine-build``: no ingress, egress to DNS and the
model store only (`network_policies.isolated_store_client_spec`); the Job waits for it.

Pulumi waits for the Job up to `BUILD_TIMEOUT` (`store_job.build_job`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint import catalog, naming
from inferplane.components.serving.containers import (
    HOME,
    WORK_DIR,
    Manifest,
    container_security_context,
    empty_dir,
    model_object_labels,
    mount,
    serving_resources,
    shell,
    source_location,
)
from inferplane.components.serving.network_policies import isolated_store_client_spec
from inferplane.components.serving.spec import ServedModel, ServingEnvironment
from inferplane.components.serving.store.store_cli import (
    ATTEMPT_ENV,
    publish_attempt,
    published,
    store_container,
    store_copy,
    store_sync,
)
from inferplane.components.serving.store.store_job import (
    job_pod_spec,
    scripts_mount,
    scripts_volume,
    store_job,
)
from inferplane.components.serving.tensorrt.engine_keys import (
    ENGINE_FILE,
    derived_batch_profile,
    engine_key,
    engine_uri,
    job_name,
    tensorrt_image,
)
from inferplane.components.serving.tensorrt.engine_script import build_script
from inferplane.components.serving.tensorrt.trtexec_flags import build_flags, typed_precision

SHAPES_PROGRAM: Final = "onnx_shapes"
"""The job program that gives the ONNX inputs their shapes (`jobs.onnx_shapes`)."""
BUILD_TIMEOUT: Final = "90m"
"""How long `pulumi up` waits for one build: a GPU node scale-up, the TensorRT image pull,
the ONNX download and trtexec (minutes to tens of minutes at optimisation level 5)."""
ONNX_DIR: Final = f"{WORK_DIR}/onnx"
"""The ONNX model's directory in the build pod: the model file and its external data."""
EXISTS_MARKER: Final = f"{WORK_DIR}/engine-exists"
COMPONENT_LABEL: Final = "app.kubernetes.io/component"
ENGINE_KEY_LABEL: Final = "inferplane.dev/engine-key"


@dataclass(frozen=True)
class OnnxBuild:
    """One engine build: the ONNX it reads, the shapes and flags it builds with, the keyed
    prefix it publishes to. Of a model's `tensorrt` section (`model_build`) or a pipeline's
    ``tensorrt`` step (`pipeline_engines.step_build`); both run `build_pod_spec`."""

    key: str
    """The engine's content key (`engine_keys.content_key` of everything that makes it)."""
    engine_uri: str
    """The keyed store prefix of the engine, ending in ``/``."""
    source_dir: str
    """The ONNX model's directory, ending in ``/``: fetched whole, external data included."""
    onnx_file: str
    inputs: tuple[tuple[str, tuple[int, ...], tuple[int, ...], tuple[int, ...]], ...]
    """The blueprint's profiles, (name, min, opt, max), the batch dimension first."""
    batch_profile: tuple[int, int] | None
    """(opt, max) of inputs whose only dynamic dimension is the batch (`jobs.onnx_shapes`)."""
    flags: tuple[str, ...]
    """trtexec's flags besides ``--onnx`` and the shapes (`build_flags`)."""
    shapes_field: str
    """The blueprint path of `inputs`, named when the ONNX model and they disagree."""


def trtexec_flags(model: ServedModel, env: ServingEnvironment) -> list[str]:
    """`build_flags` of the model's `TensorRt` settings."""
    assert model.tensorrt is not None
    trt = model.tensorrt
    return build_flags(
        model.precision, model.release(env), trt.workspace_mib, trt.builder_optimization_level
    )


def model_build(model: ServedModel, env: ServingEnvironment) -> OnnxBuild:
    """The build of one model's engine, from its `tensorrt` section."""
    assert model.tensorrt is not None
    directory, file = source_location(model)
    return OnnxBuild(
        key=engine_key(model, env),
        engine_uri=engine_uri(model, env),
        source_dir=directory,
        onnx_file=file,
        inputs=tuple((i.name, i.min, i.opt, i.max) for i in model.tensorrt.inputs),
        batch_profile=derived_batch_profile(model),
        flags=tuple(trtexec_flags(model, env)),
        shapes_field=f"models.{model.name}.tensorrt.inputs",
    )


def trtexec_env(
    model: ServedModel, env: ServingEnvironment, build: OnnxBuild | None = None
) -> list[Manifest]:
    """The build script's inputs, as environment variables (never spliced into the script)."""
    build = build or model_build(model, env)
    inputs = [[name, list(low), list(opt), list(high)] for name, low, opt, high in build.inputs]
    profile = build.batch_profile
    return [
        {"name": "HOME", "value": HOME},
        {"name": "MODEL_NAME", "value": model.name},
        {"name": "ONNX_FILE", "value": build.onnx_file},
        {"name": "TRT_INPUTS", "value": json.dumps(inputs, separators=(",", ":"))},
        {"name": "BATCH_PROFILE", "value": ",".join(map(str, profile)) if profile else ""},
        {"name": "SHAPES_FIELD", "value": build.shapes_field},
        {"name": "TYPED_PRECISION", "value": typed_precision(model.precision, model.release(env))},
        {"name": "PRECISION_FIELD", "value": f"models.{model.name}.precision"},
        {"name": "ONNX_SOURCE", "value": build.source_dir + build.onnx_file},
        {"name": "PRECISION_CONVERSION", "value": catalog.onnx_conversion(model.precision)},
        {"name": "BUILD_IMAGE", "value": tensorrt_image(model, env)},
    ]


def trtexec_script(build: OnnxBuild) -> list[str]:
    """Shell lines that build the engine (see `engine_script.build_script`)."""
    return build_script(f'"{ONNX_DIR}/$ONNX_FILE"', WORK_DIR, list(build.flags))


def build_pod_labels(env: ServingEnvironment, model: ServedModel, key: str) -> dict[str, str]:
    """Labels of the build pod. Deliberately *not* the model's selector labels: the model's
    Services, PDB, NetworkPolicy and zone spread must never count a build pod."""
    return {
        "app.kubernetes.io/name": f"{model.name}-engine-build",
        "app.kubernetes.io/part-of": f"{env.part_of}-engines",
        "app.kubernetes.io/managed-by": "inferplane",
        COMPONENT_LABEL: "engine-build",
        naming.ENVIRONMENT_LABEL: env.environment,
        naming.POOL_LABEL: model.pool.name,
        ENGINE_KEY_LABEL: key,
    }


def build_pod_selector(env: ServingEnvironment, model: ServedModel) -> dict[str, str]:
    """Labels every build pod of `model` carries, whatever its engine key."""
    labels = build_pod_labels(env, model, "")
    del labels[ENGINE_KEY_LABEL]
    return labels


def network_policy_name(model: ServedModel) -> str:
    return f"{model.name}-engine-build"


def network_policy_spec(env: ServingEnvironment, model: ServedModel) -> Manifest:
    """The build pods of `model`: no ingress; egress to DNS and the model store."""
    return isolated_store_client_spec(build_pod_selector(env, model), env)


def build_pod_spec(
    env: ServingEnvironment, model: ServedModel, build: OnnxBuild | None = None
) -> Manifest:
    """The pod of `build` (default: the model's own engine, `model_build`)."""
    build = build or model_build(model, env)
    uri, pool = build.engine_uri, model.pool
    uri_env = [{"name": "ENGINE_URI", "value": uri}]
    work = [mount("work", WORK_DIR)]
    engine_exists = published(env, "ENGINE_URI")
    fetch = store_container(
        env,
        naming.ENGINE_BUILDER_SA,
        "fetch-onnx",
        shell(
            f"if {engine_exists}; then",
            f'  touch {EXISTS_MARKER}; echo "engine already built: $ENGINE_URI"; exit 0',
            "fi",
            store_sync(env, '"$SOURCE_DIR"', ONNX_DIR),
        ),
        [*uri_env, {"name": "SOURCE_DIR", "value": build.source_dir}],
        work,
    )
    # trtexec uses one GPU whatever the replica's count; the build gets one replica-unit's
    # share of the node.
    build_resources = serving_resources(dataclasses.replace(model, gpus=1))
    trtexec = {
        "name": "trtexec",
        "image": tensorrt_image(model, env),
        # `args`, not `command`: the TensorRT image's entrypoint runs first (NGC_ENTRYPOINT).
        "args": shell(
            f"if [ -f {EXISTS_MARKER} ]; then exit 0; fi",
            *trtexec_script(build),
        ),
        "env": trtexec_env(model, env, build),
        "resources": build_resources,
        "securityContext": container_security_context(),
        "volumeMounts": [mount("home", HOME), mount("tmp", "/tmp"), *work, scripts_mount()],
    }
    upload = store_container(
        env,
        naming.ENGINE_BUILDER_SA,
        "upload-engine",
        shell(
            f"if [ -f {EXISTS_MARKER} ] || {engine_exists}; then",
            '  echo "engine already built: $ENGINE_URI"; exit 0',
            "fi",
            *publish_attempt(
                env,
                "ENGINE_URI",
                store_copy(env, f"{WORK_DIR}/{ENGINE_FILE}", f'"${{ATTEMPT_URI}}{ENGINE_FILE}"'),
                WORK_DIR,
                "engine",
            ),
        ),
        [*uri_env, ATTEMPT_ENV],
        work,
    )
    return job_pod_spec(
        env,
        naming.ENGINE_BUILDER_SA,
        pool,
        [fetch, trtexec],
        [upload],
        [
            empty_dir("work"),
            empty_dir("home"),
            empty_dir("tmp"),
            scripts_volume(job_name(model, build.key), [SHAPES_PROGRAM]),
        ],
    )


def job_manifest(
    env: ServingEnvironment, model: ServedModel, namespace: str, build: OnnxBuild | None = None
) -> tuple[Manifest, Manifest]:
    """(metadata, spec) of the Job of `build` (default: the model's own engine)."""
    build = build or model_build(model, env)
    return keyed_job_manifest(env, model, namespace, build.key, build_pod_spec(env, model, build))


def keyed_job_manifest(
    env: ServingEnvironment, model: ServedModel, namespace: str, key: str, pod_spec: Manifest
) -> tuple[Manifest, Manifest]:
    """(metadata, spec) of the build Job of engine `key`, running `pod_spec`."""
    metadata = {
        "name": job_name(model, key),
        "namespace": namespace,
        "labels": {
            **model_object_labels(env, model),
            COMPONENT_LABEL: "engine-build",
            ENGINE_KEY_LABEL: key,
        },
        "annotations": {"pulumi.com/replaceUnready": "true"},
    }
    spec = {
        "template": {
            "metadata": {"labels": build_pod_labels(env, model, key)},
            "spec": pod_spec,
        }
    }
    return metadata, spec


def build_network_policy(
    name: str,
    env: ServingEnvironment,
    model: ServedModel,
    namespace: str,
    job_metadata: Manifest,
    parent: pulumi.Resource,
    provider: k8s.Provider,
) -> k8s.networking.v1.NetworkPolicy:
    """The NetworkPolicy of `model`'s build pods (`network_policy_spec`); the namespace
    denies by default, so a build Job must wait for it."""
    return k8s.networking.v1.NetworkPolicy(
        f"{name}-network-policy",
        metadata={
            "name": network_policy_name(model),
            "namespace": namespace,
            # Not the engine key: one policy serves every build of the model.
            "labels": {k: v for k, v in job_metadata["labels"].items() if k != ENGINE_KEY_LABEL},
        },
        spec=network_policy_spec(env, model),
        opts=pulumi.ResourceOptions(parent=parent, provider=provider),
    )


def build_resources(
    name: str,
    env: ServingEnvironment,
    model: ServedModel,
    namespace: str,
    job_metadata: Manifest,
    job_spec: Manifest,
    parent: pulumi.Resource,
    provider: k8s.Provider,
    modules: Sequence[str],
    timeout: str = BUILD_TIMEOUT,
    after: Sequence[pulumi.Resource] = (),
    policy: k8s.networking.v1.NetworkPolicy | None = None,
) -> tuple[k8s.networking.v1.NetworkPolicy, k8s.batch.v1.Job]:
    """A build's NetworkPolicy (or the model's `policy` another build made), the ConfigMap
    of its programs `modules` (`store_job`), and its Job ``<name>-<key[:10]>``, started once
    the policy allows its egress (the namespace denies by default), its programs exist, and
    `after` exist (the staging Job of an hf:// checkpoint)."""
    if policy is None:
        policy = build_network_policy(name, env, model, namespace, job_metadata, parent, provider)
    key = job_metadata["labels"][ENGINE_KEY_LABEL]
    job = store_job(
        f"{name}-{key[:10]}",
        job_metadata,
        job_spec,
        modules,
        namespace,
        parent,
        provider,
        timeout,
        policy,
        after,
    )
    return policy, job


@dataclass(frozen=True)
class TensorRtEngineBuildArgs:
    """Inputs of `TensorRtEngineBuild`."""

    model: ServedModel
    """The Triton model to build for; it must have `ServedModel.tensorrt`."""
    env: ServingEnvironment
    """The environment: model store (where the engine goes), Triton release, cloud."""
    namespace: str
    """Namespace of the build Job; it must hold the ``engine-builder`` ServiceAccount."""
    provider: k8s.Provider
    """The cluster's provider; every resource passes it explicitly."""


class TensorRtEngineBuild(pulumi.ComponentResource):
    """Builds (once per key) the TensorRT engine of one model on its pool's GPU type.

    Outputs:
        key: the engine's content key (`engine_key`).
        engine_uri: ``<store>/.inferplane/engines/<blueprint>/<model>/<key>/``, whose
            marker ``inferplane-complete-attempt`` names the folder holding ``model.plan``.
        job_name: name of the Kubernetes Job (``<model>-engine-<key[:10]>``).
        job: the Job resource; depend on it to start only once the engine exists.
        network_policy: NetworkPolicy ``<model>-engine-build`` of the build pods.
    """

    key: str
    engine_uri: str
    job_name: str
    job: k8s.batch.v1.Job
    network_policy: k8s.networking.v1.NetworkPolicy

    def __init__(
        self,
        name: str,
        args: TensorRtEngineBuildArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("inferplane:serving:TensorRtEngineBuild", name, None, opts)
        env, model = args.env, args.model
        self.key = engine_key(model, env)
        self.engine_uri = engine_uri(model, env)
        self.job_name = job_name(model, self.key)
        metadata, spec = job_manifest(env, model, args.namespace)
        self.network_policy, self.job = build_resources(
            name, env, model, args.namespace, metadata, spec, self, args.provider, [SHAPES_PROGRAM]
        )
        self.register_outputs(
            {
                "key": self.key,
                "engine_uri": self.engine_uri,
                "job_name": self.job_name,
                "job": self.job,
                "network_policy": self.network_policy,
            }
        )
