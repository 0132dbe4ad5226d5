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

Environment: ``MODEL_NAME``; ``TRT_INPUTS``, JSON ``[[name, min, opt, max], ...]`` (the
blueprint's ``tensorrt.inputs``, or a pipeline step's ``shapes``); ``BATCH_PROFILE``,
``"<opt>,<max>"`` or empty; ``SHAPES_FIELD``, the blueprint path of those shapes, named in
errors (default ``models.<MODEL_NAME>.tensorrt.inputs``).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence

Shape = list[int]


class ShapeError(Exception):
    """The model's inputs and the blueprint's shapes do not fit; the message says how."""


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


def onnx_inputs(path: str) -> dict[str, list[int]]:
    """The network inputs of the ONNX model at `path`, as TensorRT's parser reads them."""
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
    return inputs


def main(argv: Sequence[str]) -> int:
    if len(argv) != 2:
        sys.exit("usage: onnx_shapes.py <model.onnx> <out>")
    path, out = argv
    try:
        flags = shape_flags(
            os.environ["MODEL_NAME"],
            onnx_inputs(path),
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
