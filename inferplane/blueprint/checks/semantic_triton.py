"""Semantic checks of a Triton model's backend (``backend``, ``accelerator``, ``inputs``,
``outputs``): each stands for a model Triton would refuse to load.

- The file kind: the ONNX Runtime and TensorRT backends load ``model.onnx``, the PyTorch
  backend a TorchScript ``model.pt`` (its default file name: pytorch_backend r25.08
  ``README.md``, "TorchScript models").
- TorchScript carries no tensor metadata, so the PyTorch backend does not auto-complete a
  config ("skipping model configuration auto-complete ...: not supported for pytorch
  backend": pytorch_backend r25.08 ``src/libtorch.cc``, ``ModelState::AutoCompleteConfig``):
  its inputs and outputs must be declared.
- ``accelerator`` configures ONNX Runtime's execution providers
  (``optimization.execution_accelerators.gpu_execution_accelerator``: onnxruntime_backend
  r25.08 ``README.md``, "ONNX Runtime with TensorRT optimization"); no other backend reads it.
  Its TensorRT provider takes ``precision_mode`` ``FP16`` or ``INT8`` only (same README,
  "Parameter mapping"), so bf16, fp8 and int4 have no TensorRT-provider equivalent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from inferplane.blueprint.errors import YamlPath
from inferplane.blueprint.resolve_triton import backend_of

if TYPE_CHECKING:
    from inferplane.blueprint.checks.semantic_env import EnvView

PIPELINE_EXCLUSIVE = ("tensorrt", "tensorrt_llm", "backend", "accelerator", "inputs", "outputs")
"""Keys that describe one model's file: a pipeline's steps describe their own."""
TRT_EP_PRECISIONS = {"fp32": None, "fp16": "FP16", "int8": "INT8"}
"""``precision`` -> the TensorRT provider's ``precision_mode`` (None: fp32, the default)."""
FILE_SUFFIX = {"tensorrt": ".onnx", "onnxruntime": ".onnx", "pytorch": ".pt"}


def check_backends(env: EnvView) -> None:
    for name, model in (env.data.get("models") or {}).items():
        if model["server"] != "triton":
            continue
        if "pipeline" in model:
            _pipeline_alone(env, name, model)
            continue
        if "tensorrt_llm" in model:
            for key in ("backend", "accelerator", "inputs", "outputs"):
                if key in model:
                    env.error(
                        ("models", name, key),
                        f"`{key}` describes an ONNX or TorchScript model, and this model is a "
                        "TensorRT-LLM engine",
                        f"remove `{key}`",
                    )
            continue
        _one_model(env, name, model)


def _pipeline_alone(env: EnvView, name: str, model: Mapping[str, Any]) -> None:
    for key in PIPELINE_EXCLUSIVE:
        if key in model:
            env.error(
                ("models", name, key),
                f"`{key}` describes one model's file, and this model is a pipeline",
                "describe each step under pipeline.steps, or remove `pipeline`",
            )
    batching = model.get("batching") or {}
    for key in ("max_queue_delay_us", "preferred_batch_sizes"):
        if key in batching:
            env.error(
                ("models", name, "batching", key),
                "an ensemble schedules no batches of its own (ensemble_scheduling and "
                "dynamic_batching are one choice in model_config.proto); a pipeline's "
                "batching.max_batch_size is only the largest batch clients may send",
                f"remove {key}, and batch each step under pipeline.steps.<step>.batching",
            )
    if not str(model["source"]).endswith("/"):
        env.error(
            ("models", name, "source"),
            "a pipeline's source is the directory holding its steps' directories",
            "end it with / (e.g. embeddings/), each step's files under <source>/<step>/",
        )
    if "warmup" in model:
        env.error(
            ("models", name, "warmup"),
            "Triton refuses warm-up requests on an ensemble (core r25.08 "
            "src/model_config_utils.cc: model_warmup can not be specified for ensemble); "
            "each ONNX and TorchScript step is warmed up with its own declared inputs",
            "remove warmup",
        )


def _one_model(env: EnvView, name: str, model: Mapping[str, Any]) -> None:
    backend = backend_of(model)
    path = ("models", name)
    if backend != "tensorrt" and "tensorrt" in model:
        env.error(
            (*path, "tensorrt"),
            f"a `tensorrt` section builds a TensorRT engine, and backend {backend} runs the "
            "model without one",
            "remove the tensorrt section, or set backend: tensorrt",
        )
    source = str(model["source"])
    suffix = FILE_SUFFIX[str(backend)]
    # hf:// and a `tensorrt` section's ONNX file: refused by semantic_models already.
    refused = source.startswith("hf://") or "tensorrt" in model
    if not source.endswith(suffix) and not refused:
        kind = "a TorchScript file" if backend == "pytorch" else "an ONNX file"
        env.error(
            (*path, "source"),
            f"backend {backend} loads {kind} ({suffix}), and {source} is not one",
            f"point source at the model's {suffix} file",
        )
    if "accelerator" in model and backend != "onnxruntime":
        env.error(
            (*path, "accelerator"),
            f"accelerator chooses ONNX Runtime's execution provider, and backend {backend} "
            "is not ONNX Runtime",
            "remove accelerator"
            + (
                " (the PyTorch backend runs TorchScript on LibTorch)"
                if backend == "pytorch"
                else ""
            ),
        )
    for key in ("inputs", "outputs"):
        for tensor, spec in (model.get(key) or {}).items():
            check_data_type(env, (*path, key, tensor), str(backend), spec)
    if backend == "pytorch":
        for key in ("inputs", "outputs"):
            if key not in model:
                env.error(
                    (*path, "backend"),
                    f"Triton cannot read a TorchScript model's {key} (the PyTorch backend does "
                    "not auto-complete its config), and none are declared",
                    f"declare {key}: {{<name>: {{data_type, dims}}}}, with TorchScript's names "
                    "(the forward arguments, or <name>__<index>)",
                )
    if backend == "tensorrt":
        for key in ("inputs", "outputs"):
            if key in model:
                env.error(
                    (*path, key),
                    f"`{key}` declares tensors of an ONNX Runtime or TorchScript model; a "
                    "TensorRT engine declares its own",
                    "remove it (warm-up shapes of an engine are tensorrt.inputs)",
                )
    batch = (model.get("batching") or {}).get("max_batch_size", 0)
    check_shapes(env, path, model, model.get("inputs"), batch, "model")
    precision = str(model.get("precision") or "fp16")
    if model.get("accelerator") == "tensorrt" and precision not in TRT_EP_PRECISIONS:
        env.error(
            (*path, "precision"),
            f"ONNX Runtime's TensorRT provider runs fp32, fp16 or int8, not {precision}",
            "use precision fp16 (or int8 with a calibrated model), or accelerator: cuda",
        )


UNSUPPORTED_TYPES = {
    "pytorch": frozenset({"uint16", "uint32", "uint64", "fp16", "bf16", "string"}),
    "onnxruntime": frozenset({"bf16"}),
    "tensorrt": frozenset({"uint16", "uint32", "uint64", "int16", "fp64", "string"}),
}
"""Data types a backend has no tensor type for: the blank cells of the data type table
(server r25.08 ``docs/user_guide/model_configuration.md``, "Datatypes")."""


def check_data_type(env: EnvView, path: YamlPath, backend: str, tensor: Mapping[str, Any]) -> None:
    dtype = tensor.get("data_type")
    if dtype in UNSUPPORTED_TYPES.get(backend, ()):
        env.error(
            (*path, "data_type"),
            f"the {backend} backend has no {dtype} tensors",
            "declare the type the model's file uses ("
            + ", ".join(sorted(set(SUPPORTED) - UNSUPPORTED_TYPES[backend]))
            + ")",
        )


SUPPORTED: tuple[str, ...] = ("bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16")
SUPPORTED += ("int32", "int64", "fp16", "bf16", "fp32", "fp64", "string")


def check_shapes(
    env: EnvView,
    path: YamlPath,
    spec: Mapping[str, Any],
    inputs: Mapping[str, Any] | None,
    batch: int,
    what: str,
) -> None:
    """A model's or step's (`what`) ``shapes``: ONNX Runtime's TensorRT-provider profiles,
    or a ``tensorrt`` step's engine profiles.
    An engine refuses a request outside its profile ("A runtime error will be raised if the
    input tensor dimensions fall outside the valid range for this profile": TensorRT's
    ``IOptimizationProfile``, https://docs.nvidia.com/deeplearning/tensorrt/latest/_static/
    python-api/infer/Core/OptimizationProfile.html), so each profile must cover the input's
    declared dims and the model's batches."""
    shapes = spec.get("shapes") or {}
    engine = what == "step" and spec.get("backend") == "tensorrt"
    if shapes and spec.get("accelerator") != "tensorrt" and not engine:
        env.error(
            (*path, "shapes"),
            f"shapes are profiles of ONNX Runtime's TensorRT provider, which this {what} "
            "does not use",
            "remove shapes, or set accelerator: tensorrt",
        )
        return
    for name, prof in shapes.items():
        where = (*path, "shapes", name)
        low, opt, high = prof["min"], prof["opt"], prof["max"]
        if inputs is not None and name not in inputs:
            env.error(where, f"no input is named {name!r}", "use one of: " + ", ".join(inputs))
            continue
        if not len(low) == len(opt) == len(high) or not all(
            a <= b <= c for a, b, c in zip(low, opt, high, strict=True)
        ):
            env.error(
                where,
                f"min {low}, opt {opt} and max {high} are not shapes of one rank with "
                "min <= opt <= max",
                "give three shapes of the same length, each dimension min <= opt <= max",
            )
            continue
        dims = list((inputs or {}).get(name, {}).get("dims") or [])
        full = ([-1] if batch > 0 else []) + dims
        fixed = zip(full, low, high, strict=False)
        if dims and (
            len(full) != len(low) or any(d != -1 and not a == d == c for d, a, c in fixed)
        ):
            env.error(
                where,
                f"the profile {low}..{high} does not fit the input's dims {dims}"
                + (", after the batch dimension" if batch > 0 else ""),
                "give every fixed dimension its size in min, opt and max, and the batch "
                "dimension first when the model batches",
            )
        elif batch > 0 and high[0] < batch:
            env.error(
                (*where, "max"),
                f"the profile's largest batch ({high[0]}) is below max_batch_size ({batch})",
                f"set its first dimension to {batch}",
            )
        elif batch > 0 and low[0] > 1:
            # Triton's dynamic batcher runs a request that arrives alone at batch 1.
            env.error(
                (*where, "min"),
                f"the profile's smallest batch ({low[0]}) is above 1: a request that arrives "
                "alone runs at batch 1, outside it",
                "set its first dimension to 1",
            )
