"""Triton serving a TensorRT-LLM engine: the ``tensorrtllm`` backend's ``config.pbtxt``, the
server container and the engine fetch.

The model is the ``tensorrt_llm`` model of the backend's in-flight batching repository
(``triton_backend/all_models/inflight_batcher_llm/tensorrt_llm/config.pbtxt`` in
NVIDIA/TensorRT-LLM, where the backend lives since 0.20; the tensorrtllm_backend v0.21.0
README points there), loaded under the blueprint model's name, so Triton's per-model series
and the backend's ``nv_trt_llm_*`` series carry ``model="<model>"``. The template's
mandatory settings (tensorrtllm_backend ``docs/model_config.md``) are filled like this:

- ``triton_backend`` -> ``backend: "tensorrtllm"`` (the C++ backend: in-flight batching and
  the ``nv_trt_llm_*`` metrics);
- ``triton_max_batch_size`` -> ``max_batch_size``: the engine's ``max_batch_size``;
- ``decoupled_mode`` -> ``model_transaction_policy { decoupled: <tensorrt_llm.streaming> }``:
  off by default, one response per request, so plain HTTP ``/v2/models/<m>/infer`` and
  ``/generate`` work; on, tokens stream over gRPC streaming or ``/generate_stream``, and
  Triton's first-response histogram (which exists only for decoupled models, see `promql`)
  is the time-to-first-token signal: the backend exports none of its own (its README's
  metric list);
- ``max_queue_delay_microseconds`` -> 0: in-flight batching joins requests at every step,
  a batching window would only add latency; ``max_queue_size`` -> ``tensorrt_llm.
  max_queue_size`` (0: unbounded);
- ``engine_dir`` -> ``gpt_model_path``: the version directory the engine is fetched into;
- ``batching_strategy`` -> ``gpt_model_type: inflight_fused_batching``;
- ``encoder_input_features_data_type`` -> the precision's type (decoder-only models never
  send it); ``logits_datatype`` -> ``TYPE_FP32``, as the backend's examples use.

Inputs and outputs are the template's decoder-only subset (token ids in, token ids out;
sampling controls optional), declared as the template declares them. Tokenization
(the template's ensemble with Python pre/post-processing models) and Triton's OpenAI
frontend are not part of the served repository: the frontend of Triton 25.08 is a beta that
installs its requirements with pip at start (server ``python/openai/README.md`` at v2.60.0
and through v2.63.0), which a read-only, offline pod cannot do.

Warm-up: no ``model_warmup``. Triton's warm-up samples hold zeros or random data, and the
backend's required ``input_lengths`` would be 0 or garbage. The engine carries its compiled
kernels (nothing is compiled on the first request, unlike a torch.compile'd server), and the
model reports ready only once the backend has loaded every rank and allocated its KV cache:
the startup probe (``startup_timeout_s``) waits for that, probes and drain are the other
Triton models' (`containers.probes`, ``--exit-timeout-secs``).

Tensor parallelism runs in the backend's orchestrator mode (``TRTLLM_ORCHESTRATOR=1``):
one ``tritonserver`` process spawns one worker per GPU rank (tensorrtllm_backend v0.21.0
README, "Orchestrator Mode"), so the pod keeps a single server process, its probes and its
drain like every other Triton model.
"""

from __future__ import annotations

from typing import Final

from inferplane.components.serving.containers import (
    CONFIG_DIR,
    MODELS_DIR,
    Manifest,
    mount,
    shell,
    store_container,
    store_sync,
)
from inferplane.components.serving.spec import ServedModel, ServingArgsError, ServingEnvironment
from inferplane.components.serving.triton_config import CONFIG_FILE, triton_container

BACKEND: Final = "tensorrtllm"
BATCHING_STRATEGY: Final = "inflight_fused_batching"
LOGITS_DATATYPE: Final = "TYPE_FP32"
FEATURES_DATATYPE: Final = {"fp16": "TYPE_FP16", "bf16": "TYPE_BF16", "fp32": "TYPE_FP32"}

# (name, data type, dims, reshape to a scalar, optional, allow ragged batch), from the
# template's input list: the decoder-only generation inputs.
_SCALAR = "scalar"
INPUTS: Final[tuple[tuple[str, str, str, bool, bool, bool], ...]] = (
    ("input_ids", "TYPE_INT32", "[ -1 ]", False, True, True),
    ("encoder_input_features", "${features}", "[ -1, -1 ]", False, True, True),
    ("input_lengths", "TYPE_INT32", "[ 1 ]", True, False, False),
    ("request_output_len", "TYPE_INT32", "[ 1 ]", True, False, False),
    ("end_id", "TYPE_INT32", "[ 1 ]", True, True, False),
    ("pad_id", "TYPE_INT32", "[ 1 ]", True, True, False),
    ("stop_words_list", "TYPE_INT32", "[ 2, -1 ]", False, True, True),
    ("bad_words_list", "TYPE_INT32", "[ 2, -1 ]", False, True, True),
    ("beam_width", "TYPE_INT32", "[ 1 ]", True, True, False),
    ("temperature", "TYPE_FP32", "[ 1 ]", True, True, False),
    ("runtime_top_k", "TYPE_INT32", "[ 1 ]", True, True, False),
    ("runtime_top_p", "TYPE_FP32", "[ 1 ]", True, True, False),
    ("repetition_penalty", "TYPE_FP32", "[ 1 ]", True, True, False),
    ("presence_penalty", "TYPE_FP32", "[ 1 ]", True, True, False),
    ("frequency_penalty", "TYPE_FP32", "[ 1 ]", True, True, False),
    ("min_tokens", "TYPE_INT32", "[ 1 ]", True, True, False),
    ("seed", "TYPE_UINT64", "[ 1 ]", True, True, False),
    ("return_log_probs", "TYPE_BOOL", "[ 1 ]", True, True, False),
    ("return_context_logits", "TYPE_BOOL", "[ 1 ]", True, True, False),
    ("return_generation_logits", "TYPE_BOOL", "[ 1 ]", True, True, False),
    ("exclude_input_in_output", "TYPE_BOOL", "[ 1 ]", True, True, False),
    ("stop", "TYPE_BOOL", "[ 1 ]", True, True, False),
    ("streaming", "TYPE_BOOL", "[ 1 ]", True, True, False),
)
OUTPUTS: Final[tuple[tuple[str, str, str], ...]] = (
    ("output_ids", "TYPE_INT32", "[ -1, -1 ]"),
    ("sequence_length", "TYPE_INT32", "[ -1 ]"),
    ("cum_log_probs", "TYPE_FP32", "[ -1 ]"),
    ("output_log_probs", "TYPE_FP32", "[ -1, -1 ]"),
    ("context_logits", LOGITS_DATATYPE, "[ -1, -1 ]"),
    ("generation_logits", LOGITS_DATATYPE, "[ -1, -1, -1 ]"),
    ("batch_index", "TYPE_INT32", "[ 1 ]"),
    ("sequence_index", "TYPE_INT32", "[ 1 ]"),
)


def engine_dir(model: ServedModel) -> str:
    """Where the serving pod holds the engine: the model's version directory."""
    return f"{MODELS_DIR}/{model.name}/1"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _bool(value: bool) -> str:
    return "true" if value else "false"


def parameters(model: ServedModel) -> dict[str, str]:
    """The backend's string parameters: engine, batching and KV-cache settings."""
    llm = model.tensorrt_llm
    assert llm is not None
    return {
        "gpt_model_type": BATCHING_STRATEGY,
        "gpt_model_path": engine_dir(model),
        "max_beam_width": "1",
        "batch_scheduler_policy": llm.batch_scheduler_policy,
        "kv_cache_free_gpu_mem_fraction": str(llm.kv_cache_free_gpu_mem_fraction),
        "enable_kv_cache_reuse": _bool(llm.enable_kv_cache_reuse),
        "enable_chunked_context": _bool(llm.enable_chunked_context),
        "exclude_input_in_output": "true",
    }


def _inputs(features: str) -> list[str]:
    lines = ["input ["]
    for i, (name, dtype, dims, scalar, optional, ragged) in enumerate(INPUTS):
        lines += [
            "  {",
            f"    name: {_quote(name)}",
            f"    data_type: {features if dtype == '${features}' else dtype}",
            f"    dims: {dims}",
        ]
        if scalar:
            lines.append("    reshape: { shape: [ ] }")
        if optional:
            lines.append("    optional: true")
        if ragged:
            lines.append("    allow_ragged_batch: true")
        lines.append("  }," if i < len(INPUTS) - 1 else "  }")
    return [*lines, "]"]


def _outputs() -> list[str]:
    lines = ["output ["]
    for i, (name, dtype, dims) in enumerate(OUTPUTS):
        end = "  }," if i < len(OUTPUTS) - 1 else "  }"
        lines += [
            "  {",
            f"    name: {_quote(name)}",
            f"    data_type: {dtype}",
            f"    dims: {dims}",
        ]
        lines.append(end)
    return [*lines, "]"]


def render_config_pbtxt(model: ServedModel, env: ServingEnvironment) -> str:
    """The ``config.pbtxt`` of a TensorRT-LLM model (see the module docstring)."""
    llm = model.tensorrt_llm
    if model.server != "triton" or llm is None:
        raise ServingArgsError(
            model.name,
            ("tensorrt_llm",),
            "only a Triton model with tensorrt_llm has a TensorRT-LLM config",
            "give server triton and tensorrt_llm",
        )
    features = FEATURES_DATATYPE.get(model.precision, "TYPE_FP16")
    lines = [
        f"name: {_quote(model.name)}",
        f"backend: {_quote(BACKEND)}",
        f"max_batch_size: {llm.max_batch_size}",
        "model_transaction_policy {",
        f"  decoupled: {_bool(llm.streaming)}",
        "}",
        "dynamic_batching {",
        f"  preferred_batch_size: [ {llm.max_batch_size} ]",
        "  max_queue_delay_microseconds: 0",
        f"  default_queue_policy {{ max_queue_size: {llm.max_queue_size} }}",
        "}",
        *_inputs(features),
        *_outputs(),
        # The backend places the engine's ranks on the GPUs itself; Triton's instance is
        # the CPU-side scheduler (the template's KIND_CPU).
        "instance_group [",
        "  {",
        "    count: 1",
        "    kind: KIND_CPU",
        "  }",
        "]",
    ]
    for key, value in parameters(model).items():
        lines += [
            "parameters {",
            f"  key: {_quote(key)}",
            f"  value {{ string_value: {_quote(value)} }}",
            "}",
        ]
    return "\n".join(lines) + "\n"


def trtllm_container(env: ServingEnvironment, model: ServedModel, image: str) -> Manifest:
    """The ``tritonserver`` container, in orchestrator mode when the engine has several
    ranks (see the module docstring)."""
    container = triton_container(env, model, image)
    extra = [
        # MPI and the backend's workers look the user up; uid 1000 may have no passwd entry.
        {"name": "USER", "value": "inferplane"},
    ]
    if model.gpus > 1:
        extra.append({"name": "TRTLLM_ORCHESTRATOR", "value": "1"})
    container["env"] = [*container["env"], *extra]
    return container


def trtllm_fetch_container(
    env: ServingEnvironment, model: ServedModel, engine_uri: str
) -> Manifest:
    """Lays out the one-model repository: ``/models/<m>/config.pbtxt`` from the ConfigMap
    and the engine directory (every rank) into ``/models/<m>/1/``."""
    version_dir = engine_dir(model)
    return store_container(
        env,
        "fetch-engine",
        shell(
            f'mkdir -p "{version_dir}"',
            f'cp "{CONFIG_DIR}/{CONFIG_FILE}" "{MODELS_DIR}/{model.name}/{CONFIG_FILE}"',
            store_sync(env, '"$ENGINE_URI"', f'"{version_dir}"'),
        ),
        [{"name": "ENGINE_URI", "value": engine_uri}],
        [mount("models", MODELS_DIR), mount("triton-config", CONFIG_DIR, read_only=True)],
    )
