"""Gives every dynamic input of an ONNX model its trtexec shapes; run in the TensorRT image.

    python3 onnx_shapes.py <model.onnx> <out>

Reads the network's inputs with TensorRT's own ONNX parser (external data files resolve
relative to the model's directory) and writes one trtexec shape flag per line to <out>: the
blueprint's shapes for the inputs it names, the batch profile (1 / opt / max) for inputs
whose only dynamic dimension is the batch when the model batches, and nothing for static
inputs. Any other dynamic input stops the build, naming every such input: trtexec would
otherwise build it at dimension 1 ("Dynamic dimensions required for input ...
Automatically overriding shape to 1x...") and Triton would refuse larger requests at run
time.

Under a strongly typed TensorRT (11 on) it also checks the network computes in the
blueprint's precision: TensorRT 11 "removes all weak typing APIs" and every precision flag;
"the optimizer infers intermediate tensor types from the network input types and operator
specifications and adheres to them strictly" (TensorRT 11.0.0 release notes and
"Migrating from TensorRT 10.x to 11.x", docs.nvidia.com/deeplearning/tensorrt/11.0.0). An
fp32 ONNX would then build, without a word, an fp32 engine for a model the blueprint calls
fp16: the build stops instead, and says how to convert the model.

Environment: ``MODEL_NAME``; ``TRT_INPUTS``, JSON ``[[name, min, opt, max], ...]`` (the
blueprint's ``tensorrt.inputs``, or a pipeline step's ``shapes``); ``BATCH_PROFILE``,
``"<opt>,<max>"`` or empty; ``SHAPES_FIELD``, the blueprint path of those shapes, named in
errors (default ``models.<MODEL_NAME>.tensorrt.inputs``); ``TYPED_PRECISION``, the
precision the network itself must carry (empty: none checked, as with TensorRT 10, whose
precision flags decide), ``PRECISION_FIELD``, its blueprint path, ``ONNX_SOURCE``, the
model file's store URI (which step of a pipeline it is), and ``PRECISION_CONVERSION``, how
to convert the model into that precision.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence

Shape = list[int]


class ShapeError(Exception):
    """The model's inputs and the blueprint's shapes do not fit; the message says how."""


class PrecisionError(ShapeError):
    """The network does not compute in the blueprint's precision; the message says how."""


TENSORRT_TYPES: dict[str, str] = {
    "fp16": "HALF",
    "bf16": "BF16",
    "fp8": "FP8",
    "int8": "INT8",
    "int4": "INT4",
}
"""A blueprint precision -> the ``tensorrt.DataType`` some layer of a network in that
precision produces (fp8/int8/int4: the quantize layers of its Q/DQ nodes)."""


def declared_shapes(text: str) -> dict[str, list[Shape]]:
    """``TRT_INPUTS`` as name -> [min, opt, max]."""
    return {entry[0]: [list(s) for s in entry[1:]] for entry in json.loads(text or "[]")}


def batch_profile(text: str) -> list[int]:
    """``BATCH_PROFILE`` (``"<opt>,<max>"`` or empty) as [opt, max] or []."""
    return [int(b) for b in text.split(",") if b]


def _dims(dims: Sequence[int]) -> str:
    return "x".join("?" if d < 0 else str(d) for d in dims)


def shape_flags(
    model: str,
    inputs: Mapping[str, Sequence[int]],
    declared: Mapping[str, Sequence[Shape]],
    batch: Sequence[int],
    field: str = "",
) -> list[str]:
    """trtexec's ``--minShapes``/``--optShapes``/``--maxShapes`` flags for `inputs` (name ->
    dims, -1 dynamic, in the network's order). Raises ShapeError for a declared input the
    model lacks and for dynamic inputs without shapes, naming `field` (the blueprint path of
    `declared`; default the model's ``tensorrt.inputs``)."""
    field = field or f"models.{model}.tensorrt.inputs"
    unknown = sorted(set(declared) - set(inputs))
    if unknown:
        raise ShapeError(
            f"{field} names {', '.join(unknown)}, which the ONNX model "
            f"has no input of; its inputs are {', '.join(inputs)}"
        )
    flags: dict[str, list[str]] = {"min": [], "opt": [], "max": []}
    missing = []
    for name, dims in inputs.items():
        if name in declared:
            shapes = [list(s) for s in declared[name]]
        elif all(d >= 0 for d in dims):
            continue  # static: TensorRT takes the model's own shape
        elif batch and dims[0] < 0 and all(d >= 0 for d in dims[1:]):
            shapes = [[b, *dims[1:]] for b in (1, *batch)]
        else:
            missing.append(f"{name} ({_dims(dims)})")
            continue
        # trtexec splits the shape list at "," and a name from its shape at the last ":".
        quoted = f"'{name}'" if ("," in name or ":" in name) else name
        for key, shape in zip(("min", "opt", "max"), shapes, strict=True):
            flags[key].append(f"{quoted}:{'x'.join(str(d) for d in shape)}")
    if missing:
        raise ShapeError(
            f"the ONNX model of {model} has dynamic inputs without min/opt/max shapes: "
            f"{', '.join(missing)}; give each under {field} in the blueprint"
        )
    return [f"--{key}Shapes={','.join(specs)}" for key, specs in flags.items() if specs]


def check_precision(
    model: str,
    precision: str,
    types: set[str],
    field: str = "",
    source: str = "",
    conversion: str = "",
) -> None:
    """Raises PrecisionError unless `types` (the ``tensorrt.DataType`` names the network's
    layers produce) include `precision`'s type. fp32 (or no precision) checks nothing.
    `source`, the ONNX file's store URI, tells a pipeline's steps apart in the message;
    `conversion` says how to convert the model (`catalog.onnx_conversion`)."""
    wanted = TENSORRT_TYPES.get(precision)
    if wanted is None or wanted in types:
        return
    field = field or f"models.{model}.precision"
    computes = ", ".join(sorted(types)) or "no typed layer"
    raise PrecisionError(
        f"{field} is {precision}, but the ONNX model {source + ' ' if source else ''}of "
        f"{model} has no {precision} layer "
        f"(its layers produce {computes}): this TensorRT builds strongly typed networks "
        f"only, so the engine would run in the ONNX model's own types. Convert the model"
        f"{f' ({conversion})' if conversion else ''}, or set {field} to the precision it has"
    )


def read_network(path: str) -> tuple[dict[str, list[int]], set[str]]:
    """The network inputs (name -> dims) of the ONNX model at `path`, as TensorRT's parser
    reads them, and the data types its layers produce."""
    import tensorrt as trt

    logger = trt.Logger(trt.Logger.ERROR)
    network = trt.Builder(logger).create_network(0)
    parser = trt.OnnxParser(network, logger)
    if not parser.parse_from_file(path):
        raise ShapeError(f"cannot parse {path}: {parser.get_error(0)}")
    inputs = {}
    for i in range(network.num_inputs):
        tensor = network.get_input(i)
        inputs[tensor.name] = list(tensor.shape)
    types = set()
    for i in range(network.num_layers):
        layer = network.get_layer(i)
        for j in range(layer.num_outputs):
            types.add(layer.get_output(j).dtype.name)
    return inputs, types


def main(argv: Sequence[str]) -> int:
    if len(argv) != 2:
        sys.exit("usage: onnx_shapes.py <model.onnx> <out>")
    path, out = argv
    model = os.environ["MODEL_NAME"]
    try:
        inputs, types = read_network(path)
        check_precision(
            model,
            os.environ.get("TYPED_PRECISION", ""),
            types,
            os.environ.get("PRECISION_FIELD", ""),
            os.environ.get("ONNX_SOURCE", ""),
            os.environ.get("PRECISION_CONVERSION", ""),
        )
        flags = shape_flags(
            model,
            inputs,
            declared_shapes(os.environ.get("TRT_INPUTS", "")),
            batch_profile(os.environ.get("BATCH_PROFILE", "")),
            os.environ.get("SHAPES_FIELD", ""),
        )
    except ShapeError as error:
        sys.exit(str(error))
    with open(out, "w", encoding="utf-8") as f:
        f.writelines(flag + "\n" for flag in flags)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
