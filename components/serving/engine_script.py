"""The shell script of the engine build's ``trtexec`` container, and the Python it runs to
give every dynamic ONNX input its shapes.

Every blueprint-derived string (the ONNX file name, input names and shapes, the model's
name, the build image) reaches the script as an environment variable and is only ever
expanded inside double quotes, so nothing a blueprint says is parsed by the shell.

``trtexec`` is looked up on ``PATH`` first: NGC ``nvcr.io/nvidia/tensorrt:<release>-py3``
images install it in ``/opt/tensorrt/bin``, which is on their ``PATH``; the Debian
packages (and JetPack) put it in ``/usr/src/tensorrt/bin``, which is not (public examples
run bare ``trtexec`` in those images; NVIDIA forum: "/usr/src/tensorrt is a symbolic link
to /opt/tensorrt"; https://forums.developer.nvidia.com/t/69042). Both are tried after
``PATH``; without any, the build stops naming the image.
"""

from __future__ import annotations

import shlex
from typing import Final

TRTEXEC_DIRS: Final = ("/opt/tensorrt/bin", "/usr/src/tensorrt/bin")
"""Where trtexec lives when it is not on PATH: the NGC images' install directory and the
Debian-package location."""
SHAPE_FLAGS_FILE: Final = "shape-flags"

# Run in the TensorRT image before trtexec. It reads the network's inputs with TensorRT's
# own ONNX parser (external data files resolve relative to the model's directory), and
# writes one trtexec shape flag per line: the blueprint's shapes for the inputs it names,
# the batch profile (1 / opt / max) for inputs whose only dynamic dimension is the batch
# when the model batches, and nothing for static inputs. Any other dynamic input stops the
# build, naming every such input: trtexec would otherwise build it at dimension 1
# ("Dynamic dimensions required for input ... Automatically overriding shape to 1x...")
# and Triton would refuse larger requests at run time.
SHAPES_SCRIPT: Final = """\
import json
import os
import sys

import tensorrt as trt

path, out = sys.argv[1], sys.argv[2]
model = os.environ["MODEL_NAME"]
declared = {d[0]: d[1:] for d in json.loads(os.environ.get("TRT_INPUTS") or "[]")}
batch = [int(b) for b in (os.environ.get("BATCH_PROFILE") or "").split(",") if b]
logger = trt.Logger(trt.Logger.ERROR)
network = trt.Builder(logger).create_network(0)
parser = trt.OnnxParser(network, logger)
if not parser.parse_from_file(path):
    sys.exit("cannot parse " + path + ": " + str(parser.get_error(0)))
inputs = {}
for i in range(network.num_inputs):
    tensor = network.get_input(i)
    inputs[tensor.name] = list(tensor.shape)
unknown = sorted(set(declared) - set(inputs))
if unknown:
    sys.exit("models." + model + ".tensorrt.inputs names " + ", ".join(unknown)
             + ", which the ONNX model has no input of; its inputs are " + ", ".join(inputs))
flags = {"min": [], "opt": [], "max": []}
missing = []
for name, dims in inputs.items():
    if name in declared:
        shapes = declared[name]
    elif all(d >= 0 for d in dims):
        continue  # static: TensorRT takes the model's own shape
    elif batch and dims[0] < 0 and all(d >= 0 for d in dims[1:]):
        shapes = [[b, *dims[1:]] for b in (1, *batch)]
    else:
        missing.append(name + " (" + "x".join("?" if d < 0 else str(d) for d in dims) + ")")
        continue
    quoted = "'" + name + "'" if ("," in name or ":" in name) else name
    for key, shape in zip(("min", "opt", "max"), shapes):
        flags[key].append(quoted + ":" + "x".join(str(d) for d in shape))
if missing:
    sys.exit("the ONNX model of " + model + " has dynamic inputs without min/opt/max shapes: "
             + ", ".join(missing) + "; give each under models." + model
             + ".tensorrt.inputs in the blueprint")
with open(out, "w") as f:
    for key, specs in flags.items():
        if specs:
            f.write("--" + key + "Shapes=" + ",".join(specs) + "\\n")
"""


def resolve_trtexec(dirs: tuple[str, ...] = TRTEXEC_DIRS) -> list[str]:
    """Shell lines that set ``$TRTEXEC`` (PATH, then `dirs`) or stop the build with an
    error naming ``$BUILD_IMAGE``."""
    candidates = " ".join(f"{d}/trtexec" for d in dirs)
    return [
        'TRTEXEC="$(command -v trtexec || true)"',
        'if [ -z "$TRTEXEC" ]; then',
        f"  for candidate in {candidates}; do",
        '    if [ -x "$candidate" ]; then TRTEXEC="$candidate"; break; fi',
        "  done",
        "fi",
        'if [ -z "$TRTEXEC" ]; then',
        '  echo "error: trtexec is neither on PATH ($PATH) nor in '
        + " or ".join(dirs)
        + " of image $BUILD_IMAGE; build with an NGC TensorRT image "
        '(nvcr.io/nvidia/tensorrt:<release>-py3)" >&2',
        "  exit 127",
        "fi",
        'echo "trtexec: $TRTEXEC"',
    ]


def build_script(
    onnx_path: str, work_dir: str, flags: list[str], trtexec_dirs: tuple[str, ...] = TRTEXEC_DIRS
) -> list[str]:
    """Shell lines of the build: find trtexec, derive and check the input shapes, run it.

    `onnx_path` is a shell word (e.g. ``"/build/onnx/$ONNX_FILE"``); `flags` are constant
    trtexec flags (no blueprint text), quoted here.
    """
    shape_flags = f"{work_dir}/{SHAPE_FLAGS_FILE}"
    return [
        *resolve_trtexec(trtexec_dirs),
        f"python3 -c {shlex.quote(SHAPES_SCRIPT)} {onnx_path} {shape_flags}",
        f"set -- --onnx={onnx_path} {shlex.join(flags)}",
        # one flag per line: each becomes one argument, never split or globbed
        f'while IFS= read -r flag; do set -- "$@" "$flag"; done < {shape_flags}',
        'echo "trtexec $*"',
        '"$TRTEXEC" "$@"',
    ]
