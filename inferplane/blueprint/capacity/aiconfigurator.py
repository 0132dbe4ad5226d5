"""Measured per-operation performance from NVIDIA's aiconfigurator, when it is installed.

``aiconfigurator-core`` (PyPI 0.12.0, the ``capacity`` extra) ships performance tables
measured per GPU system and engine version (``systems/data/<system>/<op>/<backend>/<version>``;
at 0.12.0 vLLM data for a100_sxm 0.14.0, h100_sxm, h200_sxm, b200_sxm, l40s 0.24.0, none for
L4) and model configurations by Hugging Face id (``model_configs/<org>--<name>_config.json``).
Its ``sdk.engine.EngineHandle.compile(model, system, backend, backend_version=..., tp_size=...)``
builds a model's operations and predicts ``predict_prefill_latency(batch, input, prefix)``
and ``predict_decode_latency(batch, input, output)`` in milliseconds (the package's
``sdk/engine.py``). Where it has the GPU, the model and vLLM data, the planner's decode step
and prefill come from it instead of the roofline; the band narrows to `BAND`. Its data is
for its engine versions, not necessarily the model's pinned one: the estimate's source says
both and `check` advises on the difference.

Checked by hand at 0.12.0 on h100_sxm / vllm 0.24.0 for meta-llama/Meta-Llama-3.1-8B:
1,024 prompt tokens prefill in 22.1 ms, and 128 tokens decode in 785 ms at batch 1
(6.13 ms per token, against 6.48 ms measured with vLLM 0.21.0 and the roofline's 6.39 ms).
"""

from __future__ import annotations

import functools
import importlib.util
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

BAND: Final = 0.15
"""Assumption: per-operation measurements leave scheduling and queueing unmodelled."""

SYSTEMS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "nvidia-a100-80gb": "a100_sxm",
        "nvidia-h100-80gb": "h100_sxm",
        "nvidia-h200": "h200_sxm",
        "nvidia-b200": "b200_sxm",
        "nvidia-l40s": "l40s",
        "nvidia-l4": "l4",
    }
)
"""Catalog GPU -> aiconfigurator system (SXM parts, as the catalog's instance types are)."""


@dataclass(frozen=True)
class Source:
    """Where an aiconfigurator estimate comes from."""

    system: str
    backend: str
    version: str
    model: str
    pinned: str
    """The engine version the model runs (`versions.vllm`)."""

    @property
    def mismatch(self) -> bool:
        return self.version.lstrip("v") != self.pinned.lstrip("v")

    def describe(self) -> str:
        return (
            f"aiconfigurator-core 0.12.0 ({self.system}, {self.backend} {self.version} data for "
            f"{self.model})"
        )


def _root() -> Path | None:
    spec = importlib.util.find_spec("aiconfigurator_core")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent


def _version_key(text: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else 0 for p in text.lstrip("v").split("."))


def nearest_version(available: list[str], pinned: str) -> str | None:
    """The available data version closest to `pinned` (the newer on a tie); None if none."""
    if not available:
        return None
    want = _version_key(pinned)

    def distance(v: str) -> tuple[int, ...]:
        key = _version_key(v)
        return tuple(abs(a - b) for a, b in zip(key, want, strict=False))

    return min(sorted(available, key=_version_key, reverse=True), key=distance)


def model_id(root: Path, repo: str) -> str | None:
    """aiconfigurator's id for a Hub repository: the repository itself, its ``Meta-``
    spelling, or the base model of an ``-Instruct`` one (same architecture)."""
    org, _, name = repo.partition("/")
    names = [name, name.removesuffix("-Instruct")]
    if org == "meta-llama" and name.startswith("Llama-3.1"):
        names += [f"Meta-{n}" for n in names]
    offline = _offline_models()
    for n in names:
        if (root / "model_configs" / f"{org}--{n}_config.json").exists() and (
            f"{org}/{n}" in offline
        ):
            return f"{org}/{n}"
    return None


@functools.cache
def _offline_models() -> frozenset[str]:
    """The models aiconfigurator reads from its own copies: any other id, even one whose
    config file it ships (mistralai/Mixtral-8x7B-v0.1), it downloads from the Hub
    (``sdk/utils.py`` ``_load_model_config_from_model_path``: ``if model_path in
    DefaultHFModels: ... _load_pre_downloaded_hf_config`` else ``_download_hf_config``), which
    the planner never does."""
    try:
        from aiconfigurator_core.sdk.common import DefaultHFModels
    except ImportError:
        return frozenset()
    return frozenset(DefaultHFModels)


def source_for(gpu: str, repo: str | None, backend: str, pinned: str) -> Source | None:
    """The data aiconfigurator has for this GPU, model and engine; None when it is not
    installed or lacks any of them."""
    root = _root()
    system = SYSTEMS.get(gpu)
    if root is None or system is None or repo is None:
        return None
    data = root / "systems" / "data" / system / "gemm" / backend
    versions = sorted(p.name for p in data.iterdir() if p.is_dir()) if data.is_dir() else []
    version = nearest_version(versions, pinned)
    name = model_id(root, repo)
    if version is None or name is None:
        return None
    return Source(system, backend, version, name, pinned)


def checkpoint_quantization(source: Source) -> str | None:
    """The ``quant_method`` of the checkpoint's own config.json as aiconfigurator ships it
    (``fp8`` for Qwen/Qwen3-30B-A3B-FP8); None for a 16-bit checkpoint."""
    root = _root()
    if root is None:
        return None
    path = root / "model_configs" / f"{source.model.replace('/', '--', 1)}_config.json"
    try:
        quant = json.loads(path.read_text(encoding="utf-8")).get("quantization_config")
    except (OSError, ValueError):
        return None
    return str(quant.get("quant_method")) if isinstance(quant, dict) else None


@functools.cache
def _handle(source: Source, tp: int, moe: str) -> Any:
    """`moe`: ``""`` for a dense model; ``tp`` or ``ep`` for a mixture of experts whose
    experts are split as vLLM splits them (`fit.expert_split_problem`): aiconfigurator asks
    for the MoE layers' own widths (``moe_tp_size × moe_ep_size`` = ``tp_size``, the
    package's ``sdk/config.py``)."""
    from aiconfigurator_core.sdk.engine import EngineHandle

    widths: dict[str, int] = {}
    if moe:
        widths = {"moe_tp_size": tp, "moe_ep_size": 1}
        if moe == "ep":
            widths = {"moe_tp_size": 1, "moe_ep_size": tp}
    return EngineHandle.compile(
        source.model,
        source.system,
        source.backend,
        backend_version=source.version,
        tp_size=tp,
        **widths,
    )


def prefill_ms(source: Source, tp: int, input_tokens: int, cached: int, moe: str = "") -> float:
    return float(_handle(source, tp, moe).predict_prefill_latency(1, input_tokens, cached))


def step_ms(
    source: Source, tp: int, batch: int, input_tokens: int, output_tokens: int, moe: str = ""
) -> float:
    """One decode step of `batch` sequences: the decode of all output tokens over their
    count."""
    total = _handle(source, tp, moe).predict_decode_latency(batch, input_tokens, output_tokens)
    return float(total) / output_tokens
