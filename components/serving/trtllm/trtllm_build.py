"""TensorRT-LLM engine builds: a Kubernetes Job that turns an LLM checkpoint into an engine.

Like the ONNX builds of `engine_build` (whose keying, store layout, skip-when-present check
and Job handling this reuses), an engine runs only with the TensorRT-LLM that built it, on
the GPU model and the tensor-parallel size it was built for. So it is built in the cluster,
on a node of the serving pool, holding as many GPUs as a serving replica (one engine rank
per GPU), in ``nvcr.io/nvidia/tritonserver:<release>-trtllm-python-py3`` of the same NGC
release as the serving image, and stored under a content key:

    <model_store>/.inferplane/engines/<blueprint>/<model>/<key>/
        (rank<i>.engine, config.json, ..., tokenizer/, warmup/)

`build_settings` lists what the key hashes: the checkpoint (``hf://org/name@revision`` or
its store URI), the engine's limits (batch, input and sequence lengths), quantization of
weights and KV cache, the compute precision, paged context attention (needed by KV-cache
reuse and chunked context), the GPU model and resource, the tensor-parallel size and the
NGC release. Runtime settings (KV-cache memory fraction, scheduler policy, queue size) are
config.pbtxt parameters and rebuild nothing.

The build uses TensorRT-LLM's LLM API (``LLM(model=<checkpoint>, tensor_parallel_size=..,
quant_config=.., build_config=..)`` then ``llm.save(<dir>)``): it converts and quantizes any
supported Hugging Face architecture and builds every rank, with no per-family
``convert_checkpoint.py`` (those live in the TensorRT-LLM source tree, not in the image).
Triton 26.02's trtllm image ships TensorRT-LLM 1.1.0 (25.08's 0.21.0; Triton compatibility
matrix, server r26.02 ``docs/introduction/compatibility.md``), whose engine-building LLM is
``tensorrt_llm._tensorrt_engine.LLM`` (`jobs.trtllm_engine`).
Quantization names map to ``tensorrt_llm.quantization.QuantAlgo`` members as
``examples/quantization/quantize.py`` maps its ``--qformat`` values.

With the engine the build stores what serving needs from the checkpoint, so a serving pod
never reads the checkpoint or the Hub: the tokenizer (``AutoTokenizer.save_pretrained`` into
``tokenizer/``, read by the text pipeline, `trtllm_text`) and the warm-up request's inputs
(``warmup/``: the first `trtllm.WARMUP_TOKENS` ids of `trtllm.WARMUP_PROMPT` in that
tokenizer, as little-endian int32 files, see `trtllm`).

The pod: an init container (cloud CLI) skips everything when the engine's attempt marker
exists, else copies the checkpoint in: a store directory, or the staged copy of an
``hf://`` checkpoint (`weights.staged_uri`, the folder its marker names; the model's
``WeightsStaging`` Job, which alone holds the Hub token, runs first); an init container in
the TensorRT-LLM image builds (`jobs.trtllm_engine`); the main container uploads the engine
into a folder of its attempt and writes the marker naming it last
(`store_cli.publish_attempt`), so a half-uploaded engine never counts as built and a
retried build never overwrites.

The build pod keeps egress to TCP 443 beyond the store for weight quantization, which
calibrates on a public dataset TensorRT-LLM fetches from the hub (the LLM API's
``CalibConfig`` default, ``cnn_dailymail``; not checked against 1.1 here). Its work volume
holds the checkpoint and the engine: about three times the quantized weights for a bf16
checkpoint quantized to fp8 (size the pool's ``disk_gib`` for it).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint import defaults, naming
from inferplane.components.serving.containers import (
    HOME,
    WORK_DIR,
    Manifest,
    container_security_context,
    empty_dir,
    mount,
    serving_resources,
    shell,
    shm_size_mib,
)
from inferplane.components.serving.spec import ServedModel, ServingArgsError, ServingEnvironment
from inferplane.components.serving.store.store_cli import (
    ATTEMPT_ENV,
    publish_attempt,
    published,
    store_container,
    store_sync,
    sync_published,
)
from inferplane.components.serving.store.store_job import (
    job_pod_spec,
    program,
    scripts_mount,
    scripts_volume,
)
from inferplane.components.serving.store.weights import is_staged, source_uri
from inferplane.components.serving.tensorrt.engine_build import build_resources, keyed_job_manifest
from inferplane.components.serving.tensorrt.engine_keys import content_key, engine_dir_uri, job_name
from inferplane.components.serving.trtllm.trtllm import (
    WARMUP_DIR,
    WARMUP_OUTPUT_TOKENS,
    WARMUP_PROMPT,
    WARMUP_TOKENS,
)
from inferplane.components.serving.trtllm.trtllm_text import TOKENIZER_SUBDIR

KEY_SCHEMA: Final = "trtllm-2"
"""Part of every TensorRT-LLM engine key: raising it rebuilds them all (2: the engine
directory also holds the tokenizer and the warm-up inputs)."""
BUILD_TIMEOUT: Final = "180m"
"""A 70B checkpoint download, fp8 calibration and a four-rank build take well over an hour."""
CHECKPOINT_DIR: Final = f"{WORK_DIR}/checkpoint"
ENGINE_DIR: Final = f"{WORK_DIR}/engine"
EXISTS_FILE: Final = f"{WORK_DIR}/engine-exists"

QUANT_ALGO: Final[Mapping[str, str]] = {
    "fp8": "FP8",
    "int4_awq": "W4A16_AWQ",
    "int8_sq": "W8A8_SQ_PER_CHANNEL",
    "int8_wo": "W8A16",
    "int4_wo": "W4A16",
    "w4a8_awq": "W4A8_AWQ",
}
KV_CACHE_QUANT_ALGO: Final[Mapping[str, str]] = {"fp8": "FP8", "int8": "INT8"}
DTYPE: Final[Mapping[str, str]] = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32"}
BUILD_PROGRAM: Final = "trtllm_engine"
"""The job program that builds the engine (`jobs.trtllm_engine`)."""


def trtllm_image(release: str) -> str:
    """Triton with TensorRT-LLM of NGC `release`: it builds the engine, and serves it unless
    the model names an image of its own (built from that release: `ServedModel.release`)."""
    return defaults.TRITON_TRTLLM_IMAGE.format(release=release)


def _llm(model: ServedModel) -> Any:
    if model.tensorrt_llm is None:
        raise ServingArgsError(
            model.name,
            ("tensorrt_llm",),
            "a TensorRT-LLM build needs tensorrt_llm settings",
            "give tensorrt_llm",
        )
    return model.tensorrt_llm


def paged_context_fmha(model: ServedModel) -> bool:
    """KV-cache reuse and chunked context both need paged context attention in the engine."""
    llm = _llm(model)
    return bool(llm.enable_kv_cache_reuse or llm.enable_chunked_context)


def build_settings(model: ServedModel, env: ServingEnvironment) -> dict[str, Any]:
    """Everything that determines the engine; `engine_key` hashes exactly this."""
    llm = _llm(model)
    return {
        "schema": KEY_SCHEMA,
        "source": model.source.uri,
        "max_batch_size": llm.max_batch_size,
        "max_input_len": llm.max_input_len,
        "max_seq_len": llm.max_seq_len,
        "quantization": llm.quantization,
        "kv_cache_quantization": llm.kv_cache_quantization,
        "precision": model.precision,
        "paged_context_fmha": paged_context_fmha(model),
        "gpu": model.pool.gpu_type,
        "gpu_resource": model.pool.gpu_resource,
        "tensor_parallel_size": model.gpus,
        "release": model.release(env),
    }


def engine_key(model: ServedModel, env: ServingEnvironment) -> str:
    return content_key(build_settings(model, env))


def engine_uri(model: ServedModel, env: ServingEnvironment) -> str:
    """The engine directory of `model` in the store, ending in ``/``."""
    return engine_dir_uri(model, env, engine_key(model, env), "tensorrt_llm") + "/"


def build_spec(model: ServedModel) -> dict[str, Any]:
    """The JSON the build program (`BUILD_PROGRAM`) reads."""
    llm = _llm(model)
    return {
        "checkpoint": CHECKPOINT_DIR,
        "engine_dir": ENGINE_DIR,
        "tensor_parallel_size": model.gpus,
        "dtype": DTYPE.get(model.precision, "auto"),
        "quant_algo": QUANT_ALGO[llm.quantization] if llm.quantization else None,
        "kv_cache_quant_algo": KV_CACHE_QUANT_ALGO[llm.kv_cache_quantization]
        if llm.kv_cache_quantization
        else None,
        "max_batch_size": llm.max_batch_size,
        "max_input_len": llm.max_input_len,
        "max_seq_len": llm.max_seq_len,
        "paged_context_fmha": paged_context_fmha(model),
        "tokenizer_subdir": TOKENIZER_SUBDIR,
        "warmup_dir": WARMUP_DIR,
        "warmup_prompt": WARMUP_PROMPT,
        "warmup_tokens": WARMUP_TOKENS,
        "warmup_output_tokens": WARMUP_OUTPUT_TOKENS,
    }


def build_script(model: ServedModel) -> list[str]:
    """Shell lines of the build container: build from the checkpoint directory."""
    spec = json.dumps(build_spec(model), sort_keys=True)
    return [shlex.join(["python3", program(BUILD_PROGRAM), spec])]


def _fetch_container(env: ServingEnvironment, model: ServedModel) -> Manifest:
    lines = [
        f"if {published(env, 'ENGINE_URI')}; then",
        f'  touch {EXISTS_FILE}; echo "engine already built: $ENGINE_URI"; exit 0',
        "fi",
        f'mkdir -p "{CHECKPOINT_DIR}"',
        # An hf:// checkpoint's staged copy is published by attempt; a store URI is read as is.
        *sync_published(
            env, "SOURCE_URI", f'"{CHECKPOINT_DIR}"', "staged checkpoint", is_staged(model.source)
        ),
    ]
    extra = [
        {"name": "ENGINE_URI", "value": engine_uri(model, env)},
        {"name": "SOURCE_URI", "value": source_uri(env, model, model.source)},
    ]
    return store_container(
        env,
        naming.ENGINE_BUILDER_SA,
        "fetch-checkpoint",
        shell(*lines),
        extra,
        [mount("work", WORK_DIR)],
    )


def _build_container(env: ServingEnvironment, model: ServedModel) -> Manifest:
    environment = [
        {"name": "HOME", "value": HOME},
        # MPI and torch look the user up; uid 1000 may have no passwd entry.
        {"name": "USER", "value": "inferplane"},
        {"name": "HF_HOME", "value": f"{WORK_DIR}/.huggingface"},
        {"name": "HF_HUB_DISABLE_TELEMETRY", "value": "1"},
    ]
    return {
        "name": "trtllm-build",
        "image": trtllm_image(model.release(env)),
        # `args`, not `command`: the Triton image's entrypoint runs first (NGC_ENTRYPOINT).
        "args": shell(f"if [ -f {EXISTS_FILE} ]; then exit 0; fi", *build_script(model)),
        "env": environment,
        # One engine rank per GPU: the build holds a serving replica's GPUs and share.
        "resources": serving_resources(model),
        "securityContext": container_security_context(),
        "volumeMounts": [
            mount("home", HOME),
            mount("tmp", "/tmp"),
            mount("dshm", "/dev/shm"),
            mount("work", WORK_DIR),
            scripts_mount(),
        ],
    }


def _upload_container(env: ServingEnvironment, model: ServedModel) -> Manifest:
    return store_container(
        env,
        naming.ENGINE_BUILDER_SA,
        "upload-engine",
        shell(
            f"if [ -f {EXISTS_FILE} ] || {published(env, 'ENGINE_URI')}; then",
            '  echo "engine already built: $ENGINE_URI"; exit 0',
            "fi",
            *publish_attempt(
                env,
                "ENGINE_URI",
                store_sync(env, f'"{ENGINE_DIR}"', '"$ATTEMPT_URI"'),
                WORK_DIR,
                "engine",
            ),
        ),
        [{"name": "ENGINE_URI", "value": engine_uri(model, env)}, ATTEMPT_ENV],
        [mount("work", WORK_DIR)],
    )


def build_pod_spec(env: ServingEnvironment, model: ServedModel) -> Manifest:
    return job_pod_spec(
        env,
        naming.ENGINE_BUILDER_SA,
        model.pool,
        [_fetch_container(env, model), _build_container(env, model)],
        [_upload_container(env, model)],
        [
            empty_dir("work"),
            empty_dir("home"),
            empty_dir("tmp"),
            empty_dir("dshm", f"{shm_size_mib(model)}Mi", memory=True),
            scripts_volume(job_name(model, engine_key(model, env)), [BUILD_PROGRAM]),
        ],
    )


def job_manifest(
    env: ServingEnvironment, model: ServedModel, namespace: str
) -> tuple[Manifest, Manifest]:
    """(metadata, spec) of the build Job."""
    key = engine_key(model, env)
    return keyed_job_manifest(env, model, namespace, key, build_pod_spec(env, model))


@dataclass(frozen=True)
class TensorRtLlmEngineBuildArgs:
    """Inputs of `TensorRtLlmEngineBuild`."""

    model: ServedModel
    """The Triton model to build for; it must have `ServedModel.tensorrt_llm`."""
    env: ServingEnvironment
    """The environment: model store (where the engine goes), Triton release, cloud."""
    namespace: str
    """Namespace of the build Job; it must hold the ``engine-builder`` ServiceAccount."""
    provider: k8s.Provider
    """The cluster's provider; every resource passes it explicitly."""
    after: tuple[pulumi.Resource, ...] = ()
    """What the build Job waits for: the staging Job of an hf:// checkpoint."""


class TensorRtLlmEngineBuild(pulumi.ComponentResource):
    """Builds (once per key) the TensorRT-LLM engine of one model on its pool's GPU type.

    Outputs:
        key: the engine's content key (`engine_key`).
        engine_uri: ``<store>/.inferplane/engines/<blueprint>/<model>/<key>/``, whose
            marker ``inferplane-complete-attempt`` names the folder holding the engine.
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
        args: TensorRtLlmEngineBuildArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("inferplane:serving:TensorRtLlmEngineBuild", name, None, opts)
        env, model = args.env, args.model
        self.key = engine_key(model, env)
        self.engine_uri = engine_uri(model, env)
        self.job_name = job_name(model, self.key)
        metadata, spec = job_manifest(env, model, args.namespace)
        # The build (checkpoint download, store upload) gets an ONNX build's egress.
        self.network_policy, self.job = build_resources(
            name,
            env,
            model,
            args.namespace,
            metadata,
            spec,
            self,
            args.provider,
            [BUILD_PROGRAM],
            BUILD_TIMEOUT,
            args.after,
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
