"""TensorRT engines of a pipeline's ``backend: tensorrt`` steps: one build per step, and
where the serving pod finds each.

A step's files are ``model.onnx`` and its external data in the step's directory
``<source>/<path>/``. Its engine is built like one model's (`engine_build`: the same pod,
on a node of the pool, with the TensorRT image of the model's Triton release; trtexec
with the step's ``shapes`` as ``--minShapes``/``--optShapes``/``--maxShapes`` and the
precision flags of the model's ``precision``), keyed by the same settings (`engine_keys`:
the ONNX source, profiles, precision, GPU, release), published by attempt under
``.../engines/<blueprint>/<model>/<key>/`` by the ``engine-builder`` identity. A batching
step's inputs whose only dynamic dimension is the batch get the profile 1 /
``max_batch_size`` / ``max_batch_size`` (the dynamic batcher fills batches up to it).

The serving pod's ``fetch-model`` container copies the published ``model.plan`` into the
step's ``1/`` instead of the ONNX (`triton_pipeline.fetch_container`, `fetch_lines`): the
TensorRT backend loads ``model.plan`` by default (tensorrt_backend r25.08
``src/model_state.cc``: "use the default name ("model.plan")"; server r25.08
``docs/user_guide/model_repository.md``, "TensorRT Models"). The serving pods start after
every build Job (`ModelServer`), as for one model's engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint.triton_model import PipelineStep, engine_steps
from inferplane.components.serving.spec import ServedModel, ServingEnvironment
from inferplane.components.serving.store.store_cli import resolve_attempt, store_copy
from inferplane.components.serving.tensorrt.engine_build import (
    SHAPES_PROGRAM,
    OnnxBuild,
    build_resources,
    job_manifest,
)
from inferplane.components.serving.tensorrt.engine_keys import (
    ENGINE_FILE,
    KEY_SCHEMA,
    content_key,
    engine_dir_uri,
)
from inferplane.components.serving.tensorrt.trtexec_flags import build_flags

STEP_ONNX_FILE: Final = "model.onnx"
"""The ONNX file in a ``tensorrt`` step's directory."""


def step_dir(model: ServedModel, step: PipelineStep) -> str:
    """The step's directory in the store, ending in ``/``."""
    return f"{model.source.uri.rstrip('/')}/{step.path}/"


def step_batch_profile(step: PipelineStep) -> tuple[int, int] | None:
    """(opt, max) batch of inputs whose only dynamic dimension is the batch: the step's
    ``max_batch_size`` twice; None for a step that does not batch."""
    if step.batching is None:
        return None
    return step.batching.max_batch_size, step.batching.max_batch_size


def step_settings(
    model: ServedModel, step: PipelineStep, env: ServingEnvironment
) -> dict[str, Any]:
    """Everything that determines the step's engine, in the terms of
    `engine_keys.build_settings`: a step and a model built alike share the key."""
    pool = model.pool
    return {
        "schema": KEY_SCHEMA,
        "source": step_dir(model, step) + STEP_ONNX_FILE,
        "inputs": [[s.name, list(s.min), list(s.opt), list(s.max)] for s in step.shapes],
        "derived_batch_profile": step_batch_profile(step),
        "precision": model.precision,
        "workspace_mib": step.workspace_mib,
        "builder_optimization_level": step.builder_optimization_level,
        "gpu": pool.gpu_type,
        "gpu_resource": pool.gpu_resource,
        "release": model.release(env),
    }


def step_build(model: ServedModel, step: PipelineStep, env: ServingEnvironment) -> OnnxBuild:
    """The build of `step`'s engine."""
    key = content_key(step_settings(model, step, env))
    return OnnxBuild(
        key=key,
        engine_uri=engine_dir_uri(model, env, key, "pipeline") + "/",
        source_dir=step_dir(model, step),
        onnx_file=STEP_ONNX_FILE,
        inputs=tuple((s.name, s.min, s.opt, s.max) for s in step.shapes),
        batch_profile=step_batch_profile(step),
        flags=tuple(
            build_flags(
                model.precision,
                model.release(env),
                step.workspace_mib,
                step.builder_optimization_level,
            )
        ),
        shapes_field=f"models.{model.name}.pipeline.steps.{step.name}.shapes",
    )


def step_builds(env: ServingEnvironment, model: ServedModel) -> list[OnnxBuild]:
    """One build per engine key, in step order (two steps reading one ONNX alike share it)."""
    found: dict[str, OnnxBuild] = {}
    for step in engine_steps(model.pipeline):
        build = step_build(model, step, env)
        found.setdefault(build.key, build)
    return list(found.values())


def engine_variable(index: int) -> str:
    """The fetch container's variable holding the `index`-th step's engine prefix."""
    return f"STEP_{index}_ENGINE_URI"


def fetch_lines(env: ServingEnvironment, index: int, target: str) -> list[str]:
    """Shell lines copying the published engine of the `index`-th step into ``<target>/1/``
    as ``model.plan`` (the prefix reaches the script only as `engine_variable`)."""
    return [
        *resolve_attempt(env, engine_variable(index), "TensorRT engine"),
        store_copy(env, f'"${{ATTEMPT_URI}}{ENGINE_FILE}"', f'"{target}/1/{ENGINE_FILE}"'),
    ]


@dataclass(frozen=True)
class PipelineEngineBuildArgs:
    """Inputs of `PipelineEngineBuild`."""

    model: ServedModel
    """The pipeline model; every ``tensorrt`` step gets its engine built."""
    env: ServingEnvironment
    """The environment: model store (where the engines go), Triton release, cloud."""
    namespace: str
    """Namespace of the Jobs; it must hold the ``engine-builder`` ServiceAccount."""
    provider: k8s.Provider
    """The cluster's provider; every resource passes it explicitly."""


class PipelineEngineBuild(pulumi.ComponentResource):
    """Builds (once per key) the TensorRT engine of each ``tensorrt`` step of a pipeline.

    Outputs:
        jobs: the build Jobs (``<model>-engine-<key[:10]>``), one per engine key; the
            serving pods start after them.
        engine_uris: step name -> the keyed store prefix of its engine.
        network_policy: NetworkPolicy ``<model>-engine-build``, shared by the build pods.
    """

    jobs: list[k8s.batch.v1.Job]
    engine_uris: dict[str, str]
    network_policy: k8s.networking.v1.NetworkPolicy | None

    def __init__(
        self, name: str, args: PipelineEngineBuildArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("inferplane:serving:PipelineEngineBuild", name, None, opts)
        env, model, ns = args.env, args.model, args.namespace
        self.engine_uris = {
            step.name: step_build(model, step, env).engine_uri
            for step in engine_steps(model.pipeline)
        }
        self.jobs = []
        self.network_policy = None
        for build in step_builds(env, model):
            metadata, spec = job_manifest(env, model, ns, build)
            self.network_policy, job = build_resources(
                name,
                env,
                model,
                ns,
                metadata,
                spec,
                self,
                args.provider,
                [SHAPES_PROGRAM],
                policy=self.network_policy,
            )
            self.jobs.append(job)
        self.register_outputs(
            {
                "jobs": self.jobs,
                "engine_uris": self.engine_uris,
                "network_policy": self.network_policy,
            }
        )
