"""The vLLM container of a model: `vllm serve` with the model's settings.

One model per server (vLLM's design); the OpenAI-compatible API and ``/metrics`` share port
``http``. Weights from s3/gs are copied into the ``models`` volume by an init container and
served with the Hugging Face hub offline; ``hf://org/name@revision`` is downloaded by vLLM
itself at start, pinned to the revision, with the token from the model's Secret (a file
named by ``HF_TOKEN_PATH``, `secrets`).

The image runs as root by default; here it runs as uid 10001 with ``HOME`` (and so every
cache: torch.compile, Triton kernels, FlashInfer JIT, HF) on a writable emptyDir, so the root
filesystem stays read-only. Usage statistics and hub telemetry are turned off.
"""

from __future__ import annotations

from typing import Final

from inferplane.components.serving.containers import (
    HOME,
    MODELS_DIR,
    PORTS,
    Manifest,
    container_security_context,
    mount,
    probes,
    serving_resources,
    shell,
    store_container,
    store_sync,
)
from inferplane.components.serving.spec import ServedModel, ServingEnvironment

VLLM_DTYPE: Final = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32"}


def vllm_weights(model: ServedModel) -> str:
    """What `vllm serve` loads: the local copy of s3/gs weights, or the hf repository."""
    if model.source.scheme == "hf":
        assert model.source.hf_repo is not None
        return model.source.hf_repo
    return f"{MODELS_DIR}/{model.name}"


def vllm_args(model: ServedModel) -> list[str]:
    """Arguments of ``vllm serve``: one model, its precision, and every `VllmSettings` value set.

    Precision: fp16/bf16/fp32 set ``--dtype``; fp8 quantizes on load (``--quantization
    fp8``); int8/int4 checkpoints carry their quantization config, which vLLM detects.
    ``vllm.quantization`` overrides all of that.
    """
    s = model.vllm
    args = [vllm_weights(model), "--port", str(PORTS["http"]), "--served-model-name", model.name]
    if model.source.scheme == "hf" and model.source.hf_revision:
        args += ["--revision", model.source.hf_revision]
    args += ["--tensor-parallel-size", str(model.gpus)]
    if model.precision in VLLM_DTYPE:
        args += ["--dtype", VLLM_DTYPE[model.precision]]
    quantization = s.quantization if s and s.quantization else None
    if quantization is None and model.precision == "fp8":
        quantization = "fp8"
    if quantization:
        args += ["--quantization", quantization]
    if s is None:
        return args
    for flag, value in (
        ("--max-model-len", s.max_model_len),
        ("--max-num-seqs", s.max_num_seqs),
        ("--max-num-batched-tokens", s.max_num_batched_tokens),
        ("--gpu-memory-utilization", s.gpu_memory_utilization),
        ("--kv-cache-dtype", s.kv_cache_dtype),
    ):
        if value is not None:
            args += [flag, str(value)]
    for name, value in (
        ("enable-prefix-caching", s.enable_prefix_caching),
        ("enable-chunked-prefill", s.enable_chunked_prefill),
        ("enforce-eager", s.enforce_eager),
    ):
        if value is not None:
            args.append(f"--{name}" if value else f"--no-{name}")
    return args


def vllm_env(model: ServedModel) -> list[Manifest]:
    out = [
        {"name": "HOME", "value": HOME},
        # torch.compile and Triton kernels look the user up; uid 10001 has no passwd entry.
        {"name": "USER", "value": "inferplane"},
        {"name": "XDG_CACHE_HOME", "value": f"{HOME}/.cache"},
        {"name": "HF_HOME", "value": f"{MODELS_DIR}/.huggingface"},
        {"name": "VLLM_NO_USAGE_STATS", "value": "1"},
        {"name": "DO_NOT_TRACK", "value": "1"},
        {"name": "HF_HUB_DISABLE_TELEMETRY", "value": "1"},
    ]
    if model.source.scheme != "hf":
        out += [
            {"name": "HF_HUB_OFFLINE", "value": "1"},
            {"name": "TRANSFORMERS_OFFLINE", "value": "1"},
        ]
    return out


def vllm_container(env: ServingEnvironment, model: ServedModel, image: str) -> Manifest:
    return {
        "name": "vllm",
        "image": image,
        "command": ["vllm", "serve"],
        "args": vllm_args(model),
        "env": vllm_env(model),
        "ports": [{"name": "http", "containerPort": PORTS["http"], "protocol": "TCP"}],
        "resources": serving_resources(model),
        "securityContext": container_security_context(),
        "volumeMounts": [
            mount("home", HOME),
            mount("tmp", "/tmp"),
            mount("dshm", "/dev/shm"),
            # hf:// weights download into HF_HOME on this volume at start.
            mount("models", MODELS_DIR, read_only=model.source.scheme != "hf"),
        ],
        **probes(model, ready_path="/health", live_path="/health"),
    }


def vllm_fetch_container(env: ServingEnvironment, model: ServedModel) -> Manifest | None:
    """Copies s3/gs weights into the models volume; None for hf:// (vLLM downloads it)."""
    if model.source.scheme == "hf":
        return None
    return store_container(
        env,
        "fetch-weights",
        shell(
            f'mkdir -p "{MODELS_DIR}/{model.name}"',
            store_sync(env, '"$MODEL_URI"', f'"{MODELS_DIR}/{model.name}"'),
        ),
        [{"name": "MODEL_URI", "value": model.source.uri}],
        [mount("models", MODELS_DIR)],
    )
