"""The Triton backend, declared tensors and pipeline of a validated model spec
(`triton_model`); called by `resolve_model` for every ``server: triton`` model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inferplane.blueprint import defaults
from inferplane.blueprint.triton_model import (
    Pipeline,
    PipelineStep,
    ShapeProfile,
    StepBatching,
    StepInput,
    Tensor,
    TritonBackend,
)


def backend_of(spec: Mapping[str, Any]) -> TritonBackend | None:
    """The model's backend: as written, else ``tensorrt`` with a ``tensorrt`` section and
    ``onnxruntime`` without; None for vLLM, TensorRT-LLM and pipelines."""
    if spec.get("server") != "triton" or "tensorrt_llm" in spec or "pipeline" in spec:
        return None
    backend: TritonBackend = spec.get("backend") or (
        "tensorrt" if "tensorrt" in spec else "onnxruntime"
    )
    return backend


def has_engine_steps(spec: Mapping[str, Any]) -> bool:
    """A pipeline step with ``backend: tensorrt``: a Job builds its engine."""
    steps = (spec.get("pipeline") or {}).get("steps") or {}
    return any(isinstance(s, Mapping) and s.get("backend") == "tensorrt" for s in steps.values())


def builds_onnx_engine(spec: Mapping[str, Any]) -> bool:
    """A Job builds a TensorRT engine from the model's ONNX: its backend is ``tensorrt``
    (written, or implied by a ``tensorrt`` section: `backend_of`), or a pipeline step's is.
    ``backend: tensorrt`` alone builds one with default settings (`resolve_model`)."""
    return backend_of(spec) == "tensorrt" or has_engine_steps(spec)


def tensors(spec: Mapping[str, Any] | None) -> tuple[Tensor, ...]:
    return tuple(Tensor(name, t["data_type"], tuple(t["dims"])) for name, t in (spec or {}).items())


def shapes(spec: Mapping[str, Any] | None) -> tuple[ShapeProfile, ...]:
    return tuple(
        ShapeProfile(name, tuple(s["min"]), tuple(s["opt"]), tuple(s["max"]))
        for name, s in (spec or {}).items()
    )


def wired(spec: Mapping[str, Any] | None) -> tuple[StepInput, ...]:
    return tuple(
        StepInput(Tensor(name, t["data_type"], tuple(t["dims"])), t["from"])
        for name, t in (spec or {}).items()
    )


def step_device(spec: Mapping[str, Any]) -> str:
    """``gpu``, except a Python step's default: ``cpu`` (tokenizers, audio decoding)."""
    return str(spec.get("device") or ("cpu" if spec["backend"] == "python" else "gpu"))


def pipeline(spec: Mapping[str, Any] | None) -> Pipeline | None:
    if spec is None:
        return None
    steps = []
    for name, step in spec["steps"].items():
        batching = step.get("batching")
        steps.append(
            PipelineStep(
                name=name,
                backend=step["backend"],
                path=str(step.get("path") or name).strip("/"),
                inputs=wired(step["inputs"]),
                outputs=tensors(step["outputs"]),
                accelerator=step.get("accelerator", "cuda"),
                batching=StepBatching(
                    batching["max_batch_size"],
                    batching.get("max_queue_delay_us", defaults.BATCHING_MAX_QUEUE_DELAY_US),
                )
                if batching
                else None,
                instances=step.get("instances", 1),
                device="cpu" if step_device(step) == "cpu" else "gpu",
                warmup=step["backend"] != "python" or bool(step.get("warmup_sample")),
                warmup_sample=tuple((step.get("warmup_sample") or {}).items()),
                shapes=shapes(step.get("shapes")),
                requirements=tuple(step.get("requirements") or ()),
                workspace_mib=step.get("workspace_mib"),
                builder_optimization_level=step.get(
                    "builder_optimization_level", defaults.TENSORRT_BUILDER_OPTIMIZATION_LEVEL
                ),
            )
        )
    return Pipeline(tensors(spec["inputs"]), wired(spec["outputs"]), tuple(steps))
