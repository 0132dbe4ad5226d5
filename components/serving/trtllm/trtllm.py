"""Triton serving a TensorRT-LLM engine: the ``tensorrtllm`` backend's ``config.pbtxt``, the
server container and the engine fetch.

The model is the ``tensorrt_llm`` model of the backend's in-flight batching repository
(``triton_backend/all_models/inflight_batcher_llm/tensorrt_llm/config.pbtxt`` in
NVIDIA/TensorRT-LLM, where the backend lives since 0.20; the README of tensorrtllm_backend
r25.08 and r26.02 points there), loaded under the blueprint model's name, so Triton's
per-model series and the backend's ``nv_trt_llm_*`` series carry ``model="<model>"``. The template's
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
sampling controls optional), declared as the template declares them. Users send text: the
repository also holds the release's text pipeline (`trtllm_text`: ``ensemble``,
``preprocessing``, ``postprocessing``), so ``/v2/models/ensemble/generate`` takes
``text_input``, and the readiness probe asks for ``ensemble`` (ready once all its models are).

No OpenAI-compatible endpoint: Triton's OpenAI frontend of this release is a beta
(server ``python/openai/README.md`` at v2.60.0, the 25.08 release) that runs as its own
Python process (``openai_frontend/main.py``, embedding Triton through the ``tritonserver``
wheel) instead of ``tritonserver``, and its TensorRT-LLM instructions install the Triton
wheels and the frontend's requirements with pip inside the ``-trtllm-python-py3`` container
(same README, "TensorRT-LLM", step 2). The generic image build preinstalls them (server
``build.py`` at v2.60.0: ``pip3 install -r python/openai/requirements.txt``), but the trtllm
image is built otherwise (it lacks what that build lays out, e.g. ``/app``: tensorrtllm_backend
issues #721, #739), so nothing says the frontend runs in a read-only, offline pod without a
pip install at start. ``trtllm-serve`` in the same image is an OpenAI server of its own,
without Triton (its metrics, batching and probes). The text endpoint is the one documented.

Warm-up: ``model_warmup`` on the ``tensorrtllm`` model (an ensemble may not have one, see
`trtllm_text`) with a real prompt: ``WARMUP_TOKENS`` token ids of `WARMUP_PROMPT`, tokenized
by the build Job with the model's own tokenizer and stored with the engine, given as
``input_data_file`` (Triton ``model_config.proto``, ``ModelWarmup.Input.input_data_file``:
raw data read from the model directory's ``warmup`` folder; core ``src/
backend_model_instance.cc`` reads it as is), asking for ``WARMUP_OUTPUT_TOKENS`` tokens so
both the context (prefill) and generation phases run. What it buys: with CUDA's lazy module
loading (the default since CUDA 12.2; CUDA C++ Programming Guide, "Lazy Loading",
https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#lazy-loading) each kernel is
loaded on its first launch, so the first request would load every attention and GEMM kernel
of both phases; and the runtime's stream-ordered memory pool grows on first use (TensorRT-LLM
``docs/source/reference/memory.md``, "Memory pool"). Triton runs warm-up before the model is
ready, so the startup probe still passes only after it (`containers.probes`). Zero or random
warm-up data would not do: ``input_lengths`` must match real ids.

Tensor parallelism runs in the backend's orchestrator mode (``TRTLLM_ORCHESTRATOR=1``):
one ``tritonserver`` process spawns one worker per GPU rank (tensorrtllm_backend
README, "Orchestrator Mode", the same at r25.08 and r26.02), so the pod keeps a single
server process, its probes and its drain like every other Triton model.
"""

from __future__ import annotations

from typing import Final

from inferplane.blueprint import naming
from inferplane.blueprint.upstream import trtllm_backend_facts
from inferplane.components.serving.containers import (
    CONFIG_DIR,
    MODELS_DIR,
    Manifest,
    mount,
    probes,
    shell,
)
from inferplane.components.serving.spec import ServedModel, ServingArgsError, ServingEnvironment
from inferplane.components.serving.store.store_cli import (
    store_container,
    sync_published,
)
from inferplane.components.serving.triton.triton_config import (
    CONFIG_FILE,
    LIVE_PATH,
    triton_container,
)
from inferplane.components.serving.trtllm.trtllm_text import ENSEMBLE, layout_commands

BACKEND: Final = "tensorrtllm"
BATCHING_STRATEGY: Final = "inflight_fused_batching"
LOGITS_DATATYPE: Final = "TYPE_FP32"
FEATURES_DATATYPE: Final = {"fp16": "TYPE_FP16", "bf16": "TYPE_BF16", "fp32": "TYPE_FP32"}

WARMUP_DIR: Final = "warmup"
"""Triton reads ``input_data_file`` from this folder of the model directory."""
WARMUP_TOKENS: Final = 32
"""Prompt tokens of the warm-up request: the first of `WARMUP_PROMPT`'s ids."""
WARMUP_OUTPUT_TOKENS: Final = 8
"""Tokens the warm-up generates: several generation steps after the context phase."""
WARMUP_PROMPT: Final = (
    "You are a helpful assistant. Summarise in two sentences why the sky looks blue during "
    "the day and red at sunset, for a reader who has never studied physics, and then suggest "
    "one simple experiment with a glass of water and a torch that shows the same effect."
)
"""Plain English, long enough for `WARMUP_TOKENS` ids with any common tokenizer."""
WARMUP_FILES: Final = ("input_ids", "input_lengths", "request_output_len")
"""The warm-up inputs, one file each (little-endian int32), written by the build Job."""

# (name, data type, dims, reshape to a scalar, optional, allow ragged batch), from the
# template's input list: the decoder-only generation inputs, by their names since
# TensorRT-LLM 0.20; a model on an older Triton gets the old names of a renamed input
# (`trtllm_backend_facts.input_name`: ``random_seed`` for ``seed`` on Triton 25.03). Every
# name and key written is checked against the backend facts of the model's release
# (`_check_names`; tests/components/serving/test_trtllm_facts.py checks types and dims
# against the release whose template the facts hold).
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


def _inputs(features: str, release: str) -> list[str]:
    lines = ["input ["]
    for i, (name, dtype, dims, scalar, optional, ragged) in enumerate(INPUTS):
        lines += [
            "  {",
            f"    name: {_quote(trtllm_backend_facts.input_name(name, release))}",
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


def _warmup() -> list[str]:
    """One warm-up request of real token ids (see the module docstring)."""
    dims = {"input_ids": WARMUP_TOKENS, "input_lengths": 1, "request_output_len": 1}
    lines = ["model_warmup [", "  {", '    name: "prompt"', "    batch_size: 1", "    count: 1"]
    for name in WARMUP_FILES:
        lines += [
            "    inputs {",
            f'      key: "{name}"',
            "      value {",
            "        data_type: TYPE_INT32",
            f"        dims: [ {dims[name]} ]",
            f'        input_data_file: "{name}"',
            "      }",
            "    }",
        ]
    return [*lines, "  }", "]"]


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
    release = model.release(env)
    _check_names(model, release)
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
        *_inputs(features, release),
        *_outputs(),
        # The backend places the engine's ranks on the GPUs itself; Triton's instance is
        # the CPU-side scheduler (the template's KIND_CPU).
        "instance_group [",
        "  {",
        "    count: 1",
        "    kind: KIND_CPU",
        "  }",
        "]",
        *_warmup(),
    ]
    for key, value in parameters(model).items():
        lines += [
            "parameters {",
            f"  key: {_quote(key)}",
            f"  value {{ string_value: {_quote(value)} }}",
            "}",
        ]
    return "\n".join(lines) + "\n"


def _check_names(model: ServedModel, release: str) -> None:
    """Every parameter key and tensor name written is one the backend of `release` knows
    (`trtllm_backend_facts`): a name it does not know would be ignored without a word."""
    found = trtllm_backend_facts.check_names(
        parameters(model),
        [("input", trtllm_backend_facts.input_name(name, release)) for name, *_ in INPUTS]
        + [("output", name) for name, *_ in OUTPUTS],
        release,
    )
    if found.problems:
        raise ServingArgsError(
            model.name,
            ("tensorrt_llm",),
            "; ".join(found.problems),
            "run scripts/facts/trtllm_backend_facts.py and follow the backend's names",
        )


def trtllm_container(env: ServingEnvironment, model: ServedModel, image: str) -> Manifest:
    """The ``tritonserver`` container, in orchestrator mode when the engine has several
    ranks (see the module docstring)."""
    container = triton_container(env, model, image)
    # Load the ensemble only: Triton loads an ensemble's composing models with it (core
    # src/model_repository_manager/model_repository_manager.cc, ``PollModels``: "A polling
    # chain is needed if the polled model is ensemble, so that all (up-to-date) composing
    # models are exposed"), so the pod still loads one model, its text pipeline.
    own = f"--load-model={model.name}"
    container["args"] = [
        *(arg for arg in container["args"] if arg != own),
        f"--load-model={ENSEMBLE}",
    ]
    # Ready when the text endpoint is: the ensemble is ready once all its models are.
    container.update(probes(model, ready_path=_ready(ENSEMBLE), live_path=LIVE_PATH))
    extra = [
        # MPI and the backend's workers look the user up; uid 1000 may have no passwd entry.
        {"name": "USER", "value": "inferplane"},
        # The tokenizer models read the tokenizer stored with the engine; nothing may
        # reach the Hugging Face Hub from a serving pod.
        {"name": "HF_HUB_OFFLINE", "value": "1"},
        {"name": "TRANSFORMERS_OFFLINE", "value": "1"},
        {"name": "HF_HUB_DISABLE_TELEMETRY", "value": "1"},
    ]
    if model.gpus > 1:
        extra.append({"name": "TRTLLM_ORCHESTRATOR", "value": "1"})
    container["env"] = [*container["env"], *extra]
    return container


def _ready(name: str) -> str:
    return f"/v2/models/{name}/ready"


def trtllm_fetch_container(
    env: ServingEnvironment, model: ServedModel, engine_uri: str
) -> Manifest:
    """Lays out the repository: ``/models/<m>/config.pbtxt`` from the ConfigMap, the engine
    directory (every rank, the tokenizer) into ``/models/<m>/1/``, its warm-up inputs into
    ``/models/<m>/warmup/``, and the text pipeline (`trtllm_text`). The engine directory is
    the attempt folder the marker under `engine_uri` names (`store_cli.resolve_attempt`)."""
    version_dir = engine_dir(model)
    return store_container(
        env,
        naming.MODEL_READER_SA,
        "fetch-engine",
        shell(
            f'mkdir -p "{version_dir}"',
            f'cp "{CONFIG_DIR}/{CONFIG_FILE}" "{MODELS_DIR}/{model.name}/{CONFIG_FILE}"',
            *sync_published(env, "ENGINE_URI", f'"{version_dir}"', "TensorRT-LLM engine", True),
            f'mv "{version_dir}/{WARMUP_DIR}" "{MODELS_DIR}/{model.name}/{WARMUP_DIR}"',
            *layout_commands(CONFIG_DIR),
        ),
        [{"name": "ENGINE_URI", "value": engine_uri}],
        [mount("models", MODELS_DIR), mount("triton-config", CONFIG_DIR, read_only=True)],
    )
