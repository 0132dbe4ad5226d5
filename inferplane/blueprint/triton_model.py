"""How Triton runs a model that is not an LLM: its backend, its declared tensors, and (a
pipeline) the steps of an ensemble.

- `backend`: ``tensorrt`` (an engine built from the ONNX by a Job: `Model.tensorrt` for
  one model, the step's `PipelineStep.shapes` for a pipeline step), ``onnxruntime`` (the
  ONNX as it is, on ONNX Runtime with the CUDA or TensorRT execution provider),
  ``pytorch`` (a TorchScript ``model.pt`` on LibTorch) or, in a pipeline only, ``python``
  (a ``model.py`` on the Python backend).
- `Tensor`: one input or output as Triton's ``model_config.proto`` declares it: a name, a
  data type and the dimensions *without* the batch dimension when the model batches
  (``-1``: any size).
- `Pipeline`: the ensemble's own inputs and outputs and its steps, each a model of its own
  in Triton's repository (``<model>-<step>``), wired by naming, for every step input, the
  ensemble input or earlier step output (``<step>.<output>``) that feeds it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

TritonBackend = Literal["tensorrt", "onnxruntime", "pytorch", "python"]
Accelerator = Literal["cuda", "tensorrt"]
Device = Literal["gpu", "cpu"]

STRING_TYPE = "string"
"""The blueprint's name of Triton's ``TYPE_STRING`` (bytes: text, audio files)."""


@dataclass(frozen=True)
class Tensor:
    """One declared input or output."""

    name: str
    data_type: str
    """``fp32``, ``int64``, ``string``, ... (Triton's ``TYPE_<upper>``)."""
    dims: tuple[int, ...]
    """Without the batch dimension when the model batches; ``-1`` is any size."""


@dataclass(frozen=True)
class ShapeProfile:
    """The optimisation profile of one input, batch dimension first when the model
    batches: ONNX Runtime's TensorRT provider's, or a ``tensorrt`` step's engine build;
    warm-up sends `opt`."""

    name: str
    min: tuple[int, ...]
    opt: tuple[int, ...]
    max: tuple[int, ...]


@dataclass(frozen=True)
class StepInput:
    """A step's input and the ensemble tensor that feeds it."""

    tensor: Tensor
    source: str
    """An ensemble input's name, or ``<step>.<output>`` of an earlier step."""


@dataclass(frozen=True)
class StepBatching:
    max_batch_size: int
    max_queue_delay_us: int


@dataclass(frozen=True)
class PipelineStep:
    """One model of the ensemble: ``<model>-<step>`` in Triton's repository, its files the
    directory `path` under the pipeline model's source."""

    name: str
    backend: TritonBackend
    path: str
    """Directory of the step's files, relative to the model's source directory."""
    inputs: tuple[StepInput, ...]
    outputs: tuple[Tensor, ...]
    accelerator: Accelerator = "cuda"
    """``onnxruntime`` steps: the GPU execution provider."""
    batching: StepBatching | None = None
    instances: int = 1
    device: Device = "gpu"
    warmup: bool = True
    """Warm-up requests at load: generated for ONNX and TorchScript steps; a ``python`` step
    warms only with its `warmup_sample`."""
    warmup_sample: tuple[tuple[str, str], ...] = ()
    """``python`` steps: (input, text) of the sample request that warms the step."""
    shapes: tuple[ShapeProfile, ...] = ()
    """``backend: tensorrt``: the engine's profiles; ``accelerator: tensorrt``: the
    provider's (and, either way, the warm-up shapes)."""
    requirements: tuple[str, ...] = ()
    """``python`` steps: ``name==version --hash=sha256:<hex>`` lines, staged into the model
    store and installed from there (`components.serving.store.pip_requirements`)."""
    workspace_mib: int | None = None
    """``backend: tensorrt``: the builder's workspace limit (None: TensorRT's default)."""
    builder_optimization_level: int = 3
    """``backend: tensorrt``: trtexec ``--builderOptimizationLevel`` (the model-level
    default, `defaults.TENSORRT_BUILDER_OPTIMIZATION_LEVEL`)."""


@dataclass(frozen=True)
class Pipeline:
    inputs: tuple[Tensor, ...]
    outputs: tuple[StepInput, ...]
    """The ensemble's outputs, each with the step output that produces it."""
    steps: tuple[PipelineStep, ...]
    """In the order they are declared; every input comes from before."""


def engine_steps(pipeline: Pipeline | None) -> tuple[PipelineStep, ...]:
    """The steps whose ``model.onnx`` a Job builds into a TensorRT engine, in order."""
    return tuple(s for s in pipeline.steps if s.backend == "tensorrt") if pipeline else ()


def step_model_name(model: str, step: str) -> str:
    """The step's model name in Triton's repository (and its ``model`` metric label)."""
    return f"{model}-{step}"
