"""Semantic checks of a model's ``tensorrt_llm`` section, and the numbers a memory-fit check
needs for such a model.

`check_model` runs from `inferplane.blueprint.checks.semantic` on each environment's merged view
(it reports through the caller's ``error(path, message, hint)``, so locations follow
overrides like every other check). `fit_numbers` is the hook for the LLM memory-fit check:
it turns a model's raw blueprint mapping into plain numbers and knows nothing about the fit
arithmetic itself.

Quantization formats are TensorRT-LLM's ``quantize.py --qformat`` names (NVIDIA/TensorRT-LLM
``examples/quantization/README.md``: ``fp8``, ``int4_awq``, ``int8_sq``, ``w4a8_awq``,
``int4_wo``/``int8_wo`` weight-only); the KV cache takes ``--kv_cache_dtype fp8|int8`` there.
FP8 arithmetic (fp8 weights, fp8 activations of w4a8_awq, an fp8 KV cache) needs FP8 tensor
cores: compute capability 8.9 (Ada) or newer (`catalog.GpuType.supports_fp8`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from inferplane.blueprint import catalog, defaults, llm_catalog
from inferplane.blueprint.errors import YamlPath

Report = Callable[[YamlPath, str, str], None]
"""``error(path, message, hint)`` of the caller's environment view."""

WEIGHT_BYTES: Final[Mapping[str, float]] = {
    "fp8": 1,
    "int8_sq": 1,
    "int8_wo": 1,
    "int4_awq": 0.5,
    "int4_wo": 0.5,
    "w4a8_awq": 0.5,
}
"""Bytes per parameter of the quantized weights (scales and unquantized layers aside)."""
PRECISION_BYTES: Final[Mapping[str, float]] = {"fp32": 4, "fp16": 2, "bf16": 2}
"""Bytes per value of an unquantized checkpoint, and of an unquantized KV cache."""
KV_CACHE_BYTES: Final[Mapping[str, float]] = {"fp8": 1, "int8": 1}
FP8_FORMATS: Final = frozenset({"fp8", "w4a8_awq"})
PIPELINE_NAMES: Final = ("ensemble", "preprocessing", "postprocessing")
"""The text pipeline's models in a TensorRT-LLM model's Triton repository (the release's
names; `inferplane.components.serving.trtllm.trtllm_text`)."""


@dataclass(frozen=True)
class TrtLlmFitNumbers:
    """What a memory-fit check needs to know about one ``tensorrt_llm`` model."""

    hf_repo: str | None
    """Hugging Face repository of the checkpoint (the key of a model-facts table); None for a
    checkpoint directory in the model store (only a ``model_info`` block can describe it)."""
    weight_bytes_per_param: float
    """From ``quantization``, else from ``precision``."""
    kv_cache_bytes_per_value: float
    """From ``kv_cache_quantization``, else from ``precision``."""
    max_seq_len: int
    """Tokens of one full-length sequence (prompt plus output)."""
    max_batch_size: int
    """Sequences in flight at once, at most."""
    tensor_parallel_size: int
    """The model's ``gpus``: the engine is split over that many GPUs of one node."""
    gpu_memory_gib: int
    """Memory of one GPU of the model's pool."""
    kv_cache_free_gpu_mem_fraction: float
    """Share of the memory left after the weights that the KV cache may take (the backend's
    meaning: not a share of the whole GPU, unlike vLLM's ``gpu_memory_utilization``)."""


def fit_numbers(model: Mapping[str, Any], pool: Mapping[str, Any]) -> TrtLlmFitNumbers | None:
    """The fit-check inputs of a schema-valid model mapping on its pool; None when the model
    has no ``tensorrt_llm`` section."""
    llm = model.get("tensorrt_llm")
    if llm is None:
        return None
    precision = model.get("precision", defaults.MODEL_PRECISION)
    plain = PRECISION_BYTES.get(precision, 2)
    source: str = model["source"]
    repo = source[len("hf://") :].partition("@")[0] if source.startswith("hf://") else None
    return TrtLlmFitNumbers(
        hf_repo=repo,
        weight_bytes_per_param=WEIGHT_BYTES.get(llm.get("quantization") or "", plain),
        kv_cache_bytes_per_value=KV_CACHE_BYTES.get(llm.get("kv_cache_quantization") or "", plain),
        max_seq_len=llm["max_seq_len"],
        max_batch_size=llm["max_batch_size"],
        tensor_parallel_size=model.get("gpus", defaults.MODEL_GPUS),
        gpu_memory_gib=catalog.gpu(pool["gpu"]).memory_gib,
        kv_cache_free_gpu_mem_fraction=llm.get(
            "kv_cache_free_gpu_mem_fraction", defaults.TRTLLM_KV_CACHE_FREE_GPU_MEM_FRACTION
        ),
    )


def check_model(
    error: Report, path: YamlPath, model: Mapping[str, Any], pool: Mapping[str, Any] | None
) -> None:
    """Every problem of `model`'s ``tensorrt_llm`` section (`pool`: its pool, None when the
    pool does not exist, which another check reports)."""
    llm = model.get("tensorrt_llm")
    if llm is None:
        return
    section: YamlPath = (*path, "tensorrt_llm")
    if path[-1] in PIPELINE_NAMES:
        error(
            path,
            f"a TensorRT-LLM model cannot be named {path[-1]!r}: its Triton repository "
            "serves the text pipeline under the names " + ", ".join(PIPELINE_NAMES),
            "rename the model",
        )
    if "tensorrt" in model:
        error(
            (*path, "tensorrt"),
            "`tensorrt` and `tensorrt_llm` are both set",
            "keep `tensorrt_llm` for an LLM checkpoint, or `tensorrt` for an ONNX model",
        )
    for key in ("batching", "warmup"):
        if key in model:
            error(
                (*path, key),
                f"`{key}` does not apply to a TensorRT-LLM model",
                "remove it: TensorRT-LLM batches in flight (tensorrt_llm.max_batch_size) "
                "and is ready only once its engine is loaded",
            )
    source: str = model["source"]
    _check_decoder_only(error, path, model)
    if source.lower().endswith(".onnx"):
        error(
            (*path, "source"),
            "a TensorRT-LLM engine is built from an LLM checkpoint, not an ONNX file",
            "give hf://org/name@revision, or the checkpoint's directory under model_store",
        )
    if llm["max_seq_len"] < llm["max_input_len"]:
        error(
            (*section, "max_seq_len"),
            f"max_seq_len ({llm['max_seq_len']}) is shorter than max_input_len "
            f"({llm['max_input_len']})",
            "make max_seq_len at least max_input_len: it counts the prompt and the output",
        )
    precision = model.get("precision", defaults.MODEL_PRECISION)
    if precision not in PRECISION_BYTES:
        error(
            (*path, "precision"),
            f"precision {precision} is not a TensorRT-LLM compute type",
            "use fp16 or bf16, and quantize with tensorrt_llm.quantization "
            "(e.g. quantization: fp8)",
        )
    if pool is not None:
        _check_gpu(error, section, llm, catalog.gpu(pool["gpu"]))
    if not llm.get("streaming", defaults.TRTLLM_STREAMING):
        _check_ttft(error, path, model)


def _check_decoder_only(error: Report, path: YamlPath, model: Mapping[str, Any]) -> None:
    """The build (TensorRT-LLM's LLM API, `components.serving.trtllm.trtllm_build`) and the text
    pipeline serve decoder-only LLMs. Whisper and encoder-decoder models run in Triton
    pipelines of their own (tensorrtllm_backend ``docs/whisper.md``, ``all_models/whisper``;
    ``docs/encoder_decoder.md``), which inferplane does not build."""
    info = model.get("model_info") or {}
    repo = info.get("hf_repo") or llm_catalog.hf_repo_of(model["source"])
    kind = llm_catalog.not_decoder_only(repo) if repo else None
    if kind is None:
        return
    what = "a speech model (Whisper)" if kind == "speech" else "an encoder-decoder model"
    error(
        (*path, "source"),
        f"{repo} is {what}; tensorrt_llm builds and serves decoder-only LLMs (one engine, "
        "the text pipeline preprocessing → tensorrt_llm → postprocessing)",
        "TensorRT-LLM serves it through a Triton pipeline of its own ("
        + (
            "tensorrtllm_backend docs/whisper.md"
            if kind == "speech"
            else "tensorrtllm_backend docs/encoder_decoder.md"
        )
        + "), which inferplane does not build: remove tensorrt_llm and serve the model "
        "exported to ONNX with tensorrt: on server: triton",
    )


def _check_ttft(error: Report, path: YamlPath, model: Mapping[str, Any]) -> None:
    """Triton exports time to first token only for decoupled (streaming) models."""
    fix = "set tensorrt_llm.streaming: true (clients then stream), or "
    auto = model.get("autoscaling") or {}
    # One signal (a mapping) or several (a list of them).
    signals = (
        [(("autoscaling",), auto)]
        if isinstance(auto, Mapping)
        else [(("autoscaling", i), s) for i, s in enumerate(auto)]
    )
    for where, signal in signals:
        if signal.get("metric") == "ttft_p95_ms":
            error(
                (*path, *where, "metric"),
                "time to first token is exported only for a streaming TensorRT-LLM model",
                fix + "scale on queue_depth or p95_latency_ms",
            )
    if "ttft_p95_ms" in (model.get("slo") or {}):
        error(
            (*path, "slo", "ttft_p95_ms"),
            "time to first token is exported only for a streaming TensorRT-LLM model",
            fix + "use slo.p95_ms",
        )


def _check_gpu(
    error: Report, section: YamlPath, llm: Mapping[str, Any], gpu: catalog.GpuType
) -> None:
    if gpu.supports_fp8:
        return
    for key in ("quantization", "kv_cache_quantization"):
        value = llm.get(key)
        if value in FP8_FORMATS:
            error(
                (*section, key),
                f"{value} needs FP8 tensor cores (compute capability 8.9+); {gpu.id} is "
                f"{gpu.compute_capability}",
                "use int4_awq or int8_sq on this GPU, or an L4/L40S/H100-class GPU"
                if key == "quantization"
                else "use int8 on this GPU, or an L4/L40S/H100-class GPU",
            )


__all__ = ["TrtLlmFitNumbers", "check_model", "fit_numbers"]
