"""trtexec's flags for an engine build, by the TensorRT of the build's NGC release.

TensorRT 10 takes ``--fp16``/``--bf16``/``--int8``/``--fp8``/``--int4`` (each "in addition to
fp32"; an int8 model is an ONNX with Q/DQ nodes and gets ``--int8 --fp16``, so the layers left
unquantized run in fp16, not fp32); TensorRT 11 builds strongly typed networks only and has no
precision flags ("Weak typing is no longer supported", TensorRT 11.0.0 release notes): the
ONNX model's types decide, and the build pod checks them (`typed_precision`,
``jobs/onnx_shapes.py``).
"""

from __future__ import annotations

from typing import Final

from inferplane.blueprint import catalog
from inferplane.blueprint.model import Precision
from inferplane.components.serving.containers import WORK_DIR
from inferplane.components.serving.tensorrt.engine_keys import ENGINE_FILE

TRT10_PRECISION_FLAGS: Final[dict[str, list[str]]] = {
    "fp32": [],
    "fp16": ["--fp16"],
    "bf16": ["--bf16"],
    "fp8": ["--fp8"],
    # "--int8: Enable int8 precision, in addition to fp32" (trtexec --help, NVIDIA/TensorRT
    # samples/common/sampleOptions.cpp; NVIDIA/TensorRT#3762): without --fp16 every layer
    # the Q/DQ nodes leave unquantized runs in fp32.
    "int8": ["--int8", "--fp16"],
    "int4": ["--int4"],
}


def precision_flags(precision: Precision, release: str) -> list[str]:
    """trtexec precision flags for `precision` with the TensorRT of NGC `release`."""
    if catalog.tensorrt_major(release) >= 11:
        return []
    return list(TRT10_PRECISION_FLAGS[precision])


def typed_precision(precision: Precision, release: str) -> str:
    """The precision the ONNX network itself must carry (``jobs.onnx_shapes`` checks it):
    the model's under a strongly typed TensorRT (11 on), where no flag can ask for it;
    empty under TensorRT 10, whose precision flags decide, and for fp32."""
    if catalog.tensorrt_major(release) < 11 or precision == "fp32":
        return ""
    return precision


def build_flags(
    precision: Precision, release: str, workspace_mib: int | None, optimization_level: int
) -> list[str]:
    """trtexec's flags besides ``--onnx`` and the input shapes (which the build pod derives
    from the ONNX model and the blueprint's profiles); no blueprint text."""
    args = [f"--saveEngine={WORK_DIR}/{ENGINE_FILE}", "--skipInference"]
    if workspace_mib is not None:
        args.append(f"--memPoolSize=workspace:{workspace_mib}M")
    args.append(f"--builderOptimizationLevel={optimization_level}")
    return args + precision_flags(precision, release)
