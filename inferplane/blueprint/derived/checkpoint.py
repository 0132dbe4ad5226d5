"""What a new replica copies from the model store: the checkpoint's bytes.

The scale-out budget (`inferplane.blueprint.derived.scale_out`) counts the copy and the load of a
replica's weights. Both move the checkpoint as it is stored, not the GPU memory it takes
once loaded:

- vLLM quantizes a 16-bit checkpoint to fp8 on load (``--quantization fp8``, which
  ``precision: fp8`` also sets): "Dynamic quantization of an original precision BF16/FP16
  model to FP8 can be achieved with vLLM without any calibration data required"
  (https://docs.vllm.ai/en/stable/features/quantization/fp8/, "Quick Start with Online
  Dynamic Quantization"). Such a replica copies 2 bytes per weight, unless the source's
  name says it is an FP8 checkpoint already (``...-FP8``, as the checkpoints that page
  links to are named). ``experts_int8`` and ``bitsandbytes`` quantize on load as well.
- Every other vLLM method reads a checkpoint quantized ahead of time (AWQ, GPTQ, ...), whose
  bytes `fit.QUANTIZATION_BYTES` gives, or the ``precision`` of the blueprint.
- A TensorRT-LLM replica copies the engine the build Job wrote, whose weights are
  quantized already (`TRTLLM_QUANTIZATION_BYTES`).

The parameter count comes from ``model_info`` or the built-in table (`llm_catalog`), else
from the source's name: a row of the table whose repository name is the last segment of the
path (``.../llama-3.1-8b-instruct/`` is ``meta-llama/Llama-3.1-8B-Instruct``), else one size
token in the path (``Qwen2.5-1.5B-Instruct`` -> 1.5B). Nothing else is guessed: a model whose
size none of these gives has an unknown size, reported as such.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from inferplane.blueprint import llm_catalog
from inferplane.blueprint.capacity import fit
from inferplane.blueprint.model import Model
from inferplane.blueprint.semantic_trtllm import WEIGHT_BYTES

TRTLLM_QUANTIZATION_BYTES: Final = WEIGHT_BYTES
"""Bytes per weight of a TensorRT-LLM engine by `tensorrt_llm.quantization` (8-bit modes 1,
4-bit weight modes 0.5); without quantization the engine holds `precision` weights."""

VLLM_ON_LOAD: Final = ("fp8", "experts_int8", "bitsandbytes")
"""vLLM ``--quantization`` methods that quantize 16-bit weights while loading them."""

CHECKPOINT_16_BIT: Final = 2.0

_SIZE = re.compile(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)[bB](?![A-Za-z0-9])")
"""A parameter count in a name: ``1.5B``, ``8b``; not ``A3B`` (active experts) nor ``8x7B``."""
_FP8 = re.compile(r"(?<![A-Za-z0-9])fp8(?![A-Za-z0-9])", re.I)


@dataclass(frozen=True)
class Checkpoint:
    """The size of what a replica copies: `gb` None when unknown, and where it comes from."""

    gb: float | None
    basis: str
    bytes_per_weight: float


def _path_of(model: Model) -> str:
    source = model.source
    if source.hf_repo is not None:
        return source.hf_repo
    return (source.key or "").strip("/")


def parameters_from_name(path: str) -> tuple[float, str] | None:
    """(billions of parameters, where from) read from a source path; None when the name
    says nothing, or two different sizes."""
    segments = [s for s in path.split("/") if s]
    if segments:
        for repo, facts in llm_catalog.MODELS.items():
            if repo.rsplit("/", 1)[-1] == segments[-1].lower():
                return facts.parameters_billions, f"the name {segments[-1]!r}: {facts.source}"
    sizes = {float(m) for m in _SIZE.findall(path)}
    if len(sizes) == 1:
        (size,) = sizes
        return size, f"read from the name {path!r}"
    return None


def bytes_per_weight(model: Model) -> tuple[float, str]:
    """Bytes per weight of what a replica copies, and why, when it is not `precision`'s."""
    if model.tensorrt_llm is not None:
        engine = model.tensorrt_llm.quantization
        if engine:
            return TRTLLM_QUANTIZATION_BYTES[engine], f"a {engine} engine"
        return fit.BYTES_PER_WEIGHT[model.precision], f"a {model.precision} engine"
    if model.server != "vllm":
        return fit.BYTES_PER_WEIGHT[model.precision], model.precision
    method = (model.vllm.quantization if model.vllm else None) or (
        "fp8" if model.precision == "fp8" else None
    )
    if method in VLLM_ON_LOAD:
        if method == "fp8" and _FP8.search(_path_of(model)):
            return 1.0, "an FP8 checkpoint"
        return CHECKPOINT_16_BIT, f"a 16-bit checkpoint that vLLM quantizes to {method} on load"
    return fit.weight_bytes(model.precision, method), method or model.precision


def checkpoint_of(model: Model, runtime: str) -> Checkpoint:
    """The checkpoint (or engine) one replica of `model` copies."""
    per_weight, what = bytes_per_weight(model)
    if model.llm is not None:
        billions: float | None = model.llm.parameters_billions
        origin = model.llm.source
    else:
        named = parameters_from_name(_path_of(model)) if runtime != "triton" else None
        billions, origin = named if named else (None, "")
    if billions is None:
        if runtime == "triton":
            why = "an ONNX/TensorRT model: the blueprint does not say its size"
        else:
            why = "neither model_info, the built-in table nor the source's name gives it"
        return Checkpoint(None, f"size unknown ({why})", per_weight)
    gb = round(billions * 1e9 * per_weight / 1e9, 2)
    return Checkpoint(
        gb, f"{billions:g}B parameters x {per_weight:g} B, {what} ({origin})", per_weight
    )
