"""``config.pbtxt`` pieces for declared tensors and ONNX Runtime, shared by one-model
configs (`triton_config`) and pipeline steps (`triton_pipeline`).

- ``input``/``output``: the declared tensors (``model_config.proto`` ``ModelInput`` /
  ``ModelOutput``: name, data_type, dims without the batch dimension of a batching model).
- ``model_warmup`` from declared inputs: one sample per batch size; a ``-1`` dimension is
  sent as 1 (the shortest request: it loads the kernels and the allocator, which is what a
  warm-up is for), unless the input has a TensorRT-provider profile: then its ``opt`` shape,
  the one the engine is built for. Integers get zeros (ids and masks: in range), floating
  point random data, strings and booleans zeros.
- ONNX Runtime's GPU execution provider (onnxruntime_backend r25.08 ``README.md``, "ONNX
  Runtime with TensorRT optimization" and "... CUDA Execution Provider optimization";
  ``src/onnxruntime.cc``: ``cuda`` is also the provider used without any). With
  ``tensorrt`` the provider builds its engines in the replica as the model loads, for the
  warm-up's shapes first; ``trt_engine_cache_enable`` with ``trt_engine_cache_path`` in the
  pod's own home keeps them across a restart of the container (a new replica starts
  without them and builds: `inferplane.blueprint.derived.scale_out`, ``engine_build``); declared
  profiles become ``trt_profile_{min,opt,max}_shapes`` (``src/onnxruntime.cc`` reads all
  three), so one engine covers every request shape. ``precision_mode`` ``FP16`` or ``INT8``
  follows the model's precision (the backend refuses any other value than those and
  ``FP32``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from inferplane.blueprint.model import Precision
from inferplane.blueprint.triton_model import Accelerator, ShapeProfile, Tensor
from inferplane.components.serving.containers import HOME

TRT_CACHE_DIR: Final = f"{HOME}/ort-trt-cache"
"""Where ONNX Runtime's TensorRT provider keeps the engines it builds (the pod's home)."""
PRECISION_MODE: Final[dict[str, str]] = {"fp16": "FP16", "int8": "INT8"}
_FLOAT: Final = frozenset({"fp16", "bf16", "fp32", "fp64"})


def quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def ints(values: Sequence[int]) -> str:
    return "[ " + ", ".join(str(v) for v in values) + " ]"


def type_name(data_type: str) -> str:
    """``fp32`` -> ``TYPE_FP32`` (``model_config.proto`` DataType)."""
    return "TYPE_" + data_type.upper()


def io_lines(kind: str, tensors: Sequence[Tensor]) -> list[str]:
    """``input [...]`` or ``output [...]`` (`kind`) of `tensors`; nothing when empty."""
    if not tensors:
        return []
    lines = [f"{kind} ["]
    for i, tensor in enumerate(tensors):
        lines += [
            "  {",
            f"    name: {quote(tensor.name)}",
            f"    data_type: {type_name(tensor.data_type)}",
            f"    dims: {ints(tensor.dims)}",
            "  }" + ("," if i < len(tensors) - 1 else ""),
        ]
    return [*lines, "]"]


def warmup_lines(
    tensors: Sequence[Tensor],
    sizes: Sequence[int],
    batching: bool,
    shapes: Sequence[ShapeProfile] = (),
) -> list[str]:
    """``model_warmup [...]``: one sample per size in `sizes`, every input of `tensors`; an
    input with a TensorRT-provider profile in `shapes` sends its `opt` shape."""
    opt = {s.name: s.opt[1:] if batching else s.opt for s in shapes}
    lines = ["model_warmup ["]
    for i, size in enumerate(sizes):
        lines += [
            "  {",
            f"    name: {quote(f'warmup_batch_{size}')}",
            f"    batch_size: {size if batching else 1}",
        ]
        for tensor in tensors:
            dims = [1 if d == -1 else d for d in opt.get(tensor.name, tensor.dims)]
            if not batching and tensor.name not in opt:
                dims[0] = size if tensor.dims[0] == -1 else dims[0]
            data = "random_data: true" if tensor.data_type in _FLOAT else "zero_data: true"
            lines += [
                "    inputs {",
                f"      key: {quote(tensor.name)}",
                "      value {",
                f"        data_type: {type_name(tensor.data_type)}",
                f"        dims: {ints(dims)}",
                f"        {data}",
                "      }",
                "    }",
            ]
        lines.append("  }" + ("," if i < len(sizes) - 1 else ""))
    return [*lines, "]"]


def _profile(shapes: Sequence[ShapeProfile], which: str) -> str:
    """``input1:d1xd2,input2:d1xd2`` (onnxruntime_backend r25.08 ``README.md``, the
    ``trt_profile_*_shapes`` rows)."""
    return ",".join(f"{s.name}:{'x'.join(map(str, getattr(s, which)))}" for s in shapes)


def accelerator_lines(
    accelerator: Accelerator, precision: Precision, shapes: Sequence[ShapeProfile] = ()
) -> list[str]:
    """``optimization { execution_accelerators { gpu_execution_accelerator ... } }``."""
    if accelerator == "cuda":
        entry = ['      name: "cuda"']
    else:
        params = {"trt_engine_cache_enable": "1", "trt_engine_cache_path": TRT_CACHE_DIR}
        if precision in PRECISION_MODE:
            params = {"precision_mode": PRECISION_MODE[precision], **params}
        if shapes:
            params |= {
                f"trt_profile_{w}_shapes": _profile(shapes, w) for w in ("min", "opt", "max")
            }
        entry = ['      name: "tensorrt"'] + [
            f"      parameters {{ key: {quote(k)} value: {quote(v)} }}" for k, v in params.items()
        ]
    return [
        "optimization {",
        "  execution_accelerators {",
        "    gpu_execution_accelerator [",
        "      {",
        *["  " + line for line in entry],
        "      }",
        "    ]",
        "  }",
        "}",
    ]


def instance_lines(count: int, kind: str) -> list[str]:
    return ["instance_group [", "  {", f"    count: {count}", f"    kind: {kind}", "  }", "]"]
