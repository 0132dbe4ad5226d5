"""The shell script of the engine build's ``trtexec`` container: find trtexec, give every
dynamic ONNX input its shapes (the job program ``jobs/onnx_shapes.py``), run it.

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

from inferplane.components.serving.store.store_job import program

TRTEXEC_DIRS: Final = ("/opt/tensorrt/bin", "/usr/src/tensorrt/bin")
"""Where trtexec lives when it is not on PATH: the NGC images' install directory and the
Debian-package location."""
SHAPE_FLAGS_FILE: Final = "shape-flags"


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
    onnx_path: str,
    work_dir: str,
    flags: list[str],
    trtexec_dirs: tuple[str, ...] = TRTEXEC_DIRS,
    shapes_program: str = program("onnx_shapes"),
) -> list[str]:
    """Shell lines of the build: find trtexec, derive and check the input shapes (with
    `shapes_program`, the mounted ``jobs/onnx_shapes.py``), run it.

    `onnx_path` is a shell word (e.g. ``"/build/onnx/$ONNX_FILE"``); `flags` are constant
    trtexec flags (no blueprint text), quoted here.
    """
    shape_flags = f"{work_dir}/{SHAPE_FLAGS_FILE}"
    return [
        *resolve_trtexec(trtexec_dirs),
        f"python3 {shapes_program} {onnx_path} {shape_flags}",
        f"set -- --onnx={onnx_path} {shlex.join(flags)}",
        # one flag per line: each becomes one argument, never split or globbed
        f'while IFS= read -r flag; do set -- "$@" "$flag"; done < {shape_flags}',
        'echo "trtexec $*"',
        '"$TRTEXEC" "$@"',
    ]
