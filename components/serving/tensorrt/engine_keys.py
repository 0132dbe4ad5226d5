"""What identifies a TensorRT engine and where it lives in the model store.

An engine only runs on the GPU model and TensorRT version it was built with, so it is
stored under a content key:

    <model_store>/.inferplane/engines/<blueprint>/<model>/<key>/
        inferplane-complete-attempt          names the attempt folder below
        attempt-<pod uid>/model.plan

`engine_key` hashes everything that changes the engine: the ONNX source URI, the build
settings (input shapes, precision, workspace, optimisation level), the GPU model and the
GPU resource it is built on (a MIG slice tunes for fewer SMs), and the NGC release. The
build Job is named ``<model>-engine-<key[:10]>`` (`job_name`): an unchanged key is the same
resource, so nothing is rebuilt; a changed key is a new Job, and the serving pods, whose
init container fetches the engine by its keyed path, roll to the new engine once it
exists. Old engines stay in the store, so rolling back needs no rebuild. The source URI
stands for its content: publish a changed ONNX file under a new path (the store never
tells us). Each build attempt writes a folder of its own and then the marker naming it
(`store_cli.publish_attempt`): a retried build never overwrites.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from inferplane.blueprint import defaults, naming
from inferplane.components.serving.spec import ServedModel, ServingArgsError, ServingEnvironment

ENGINE_FILE: Final = "model.plan"

KEY_SCHEMA: Final = "2"
"""Part of every engine key: raising it rebuilds every engine (a changed build procedure).
2: int8 engines keep fp16 for their non-quantized layers; every dynamic input gets shapes."""


def tensorrt_image(model: ServedModel, env: ServingEnvironment) -> str:
    """The TensorRT image of the same NGC release as the model's Triton image (a custom
    image's declared base release, `ServedModel.release`)."""
    return defaults.TENSORRT_IMAGE.format(release=model.release(env))


def derived_batch_profile(model: ServedModel) -> tuple[int, int] | None:
    """(opt, max) batch of the profile of the ONNX inputs the blueprint gives no shapes for
    and whose only dynamic dimension is the batch (see `engine_script.SHAPES_SCRIPT`), when
    the model batches. Opt is the largest preferred batch size (what the dynamic batcher
    aims for), else the max."""
    trt, batching = model.tensorrt, model.batching
    if trt is None or batching is None or batching.max_batch_size <= 0:
        return None
    top = batching.max_batch_size
    opt = max((b for b in batching.preferred_batch_sizes if b <= top), default=top)
    return opt, top


def build_settings(model: ServedModel, env: ServingEnvironment) -> dict[str, Any]:
    """Everything that determines the engine; `engine_key` hashes exactly this."""
    if model.tensorrt is None:
        raise ServingArgsError(
            model.name, ("tensorrt",), "an engine build needs TensorRt settings", "give tensorrt"
        )
    pool = model.pool
    trt = model.tensorrt
    return {
        "schema": KEY_SCHEMA,
        "source": model.source.uri,
        "inputs": [[i.name, list(i.min), list(i.opt), list(i.max)] for i in trt.inputs],
        "derived_batch_profile": derived_batch_profile(model),
        "precision": model.precision,
        "workspace_mib": trt.workspace_mib,
        "builder_optimization_level": trt.builder_optimization_level,
        "gpu": pool.gpu_type,
        "gpu_resource": pool.gpu_resource,
        "release": model.release(env),
    }


def content_key(settings: Mapping[str, Any]) -> str:
    """Short content key (12 hex digits) of everything that determines an engine: equal
    settings are the same engine, so an existing one is reused instead of rebuilt."""
    return naming.short_hash(json.dumps(settings, sort_keys=True))


def engine_key(model: ServedModel, env: ServingEnvironment) -> str:
    """Short content key of the engine (12 hex digits)."""
    return content_key(build_settings(model, env))


def engine_dir_uri(
    model: ServedModel, env: ServingEnvironment, key: str, section: str = "tensorrt"
) -> str:
    """The store directory of the engine of `model` with content `key`, without a trailing
    ``/``; `section` names the model's setting that asks for the engine (for the error)."""
    if not env.model_store_uri:
        raise ServingArgsError(
            model.name,
            (section,),
            f"a {'TensorRT-LLM' if section == 'tensorrt_llm' else 'TensorRT'} engine is "
            "written to the model store, and none is given",
            f"set ServingEnvironment.model_store_uri (s3:// or gs://), or drop {section}",
        )
    store = env.model_store_uri.rstrip("/")
    return f"{store}/{naming.store_area(naming.ENGINE_PREFIX, env.part_of)}/{model.name}/{key}"


def engine_uri(model: ServedModel, env: ServingEnvironment) -> str:
    """The keyed store prefix of the engine of `model`, ending in ``/``: its marker names
    the attempt folder that holds ``model.plan`` (`store_cli.publish_attempt`)."""
    return f"{engine_dir_uri(model, env, engine_key(model, env))}/"


def job_name(model: ServedModel, key: str) -> str:
    return f"{model.name}-engine-{key[:10]}"
