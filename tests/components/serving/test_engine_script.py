"""The engine build's shell script, run for real under ``sh`` with a stand-in ``trtexec``
and a stand-in ``tensorrt`` Python module (the ONNX inputs the parser would report).

trtexec's location: NGC TensorRT images have it on PATH (/opt/tensorrt/bin); Debian
packages put it in /usr/src/tensorrt/bin, off PATH (l-sf/Track-trt#4,
https://forums.developer.nvidia.com/t/69042). Dynamic inputs without shapes: trtexec builds
them at dimension 1 ("Automatically overriding shape to 1x..."), so the build must stop.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from inferplane.components.serving.store.store_job import job_source
from inferplane.components.serving.tensorrt.engine_script import build_script

SH = shutil.which("sh")
# Under CI the shell is required: the tests run and fail rather than skip without it.
pytestmark = pytest.mark.skipif(
    SH is None and os.environ.get("CI") != "true", reason="needs a POSIX shell"
)

FAKE_TENSORRT = """
import json, os

class Logger:
    ERROR = 1
    def __init__(self, level):
        pass

class _Tensor:
    def __init__(self, name, shape, dtype="FLOAT"):
        self.name, self.shape = name, shape
        self.dtype = type("DataType", (), {"name": dtype})()

class _Layer:
    def __init__(self, dtype):
        self.num_outputs = 1
        self._out = _Tensor("out", [], dtype)
    def get_output(self, i):
        return self._out

class _Network:
    def __init__(self):
        specs = json.loads(os.environ["FAKE_ONNX_INPUTS"])
        self._inputs = [_Tensor(n, s) for n, s in specs]
        self.num_inputs = len(self._inputs)
        self._layers = [_Layer(t) for t in json.loads(os.environ["FAKE_LAYER_TYPES"])]
        self.num_layers = len(self._layers)
    def get_input(self, i):
        return self._inputs[i]
    def get_layer(self, i):
        return self._layers[i]

class Builder:
    def __init__(self, logger):
        pass
    def create_network(self, flags):
        return _Network()

class OnnxParser:
    def __init__(self, network, logger):
        pass
    def parse_from_file(self, path):
        return os.path.exists(path)
    def get_error(self, i):
        return "no such file"
"""

FAKE_TRTEXEC = '#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done > "$ARGS_OUT"\n'


def run(
    tmp_path: Path,
    inputs: list,
    *,
    declared: list | None = None,
    batch: str = "",
    onnx_file: str = "model.onnx",
    trtexec_in: str | None = "path",
    layer_types: tuple[str, ...] = ("FLOAT", "HALF"),
    typed_precision: str = "",
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """Run the build script; `trtexec_in`: "path", "dir" (a fallback directory) or None."""
    fake_py = tmp_path / "py"
    fake_py.mkdir()
    (fake_py / "tensorrt.py").write_text(FAKE_TENSORRT)
    bin_dir, fallback = tmp_path / "bin", tmp_path / "opt-tensorrt-bin"
    bin_dir.mkdir()
    fallback.mkdir()
    python3 = shutil.which("python3")
    assert python3 is not None
    (bin_dir / "python3").symlink_to(python3)
    if trtexec_in is not None:
        target = (bin_dir if trtexec_in == "path" else fallback) / "trtexec"
        target.write_text(FAKE_TRTEXEC)
        target.chmod(0o755)
    onnx_dir = tmp_path / "onnx"
    onnx_dir.mkdir()
    (onnx_dir / onnx_file).write_bytes(b"onnx")
    # The ConfigMap's copy of the shapes program, as the build container mounts it.
    jobs_dir = tmp_path / "jobs"
    jobs_dir.mkdir()
    (jobs_dir / "onnx_shapes.py").write_text(job_source("onnx_shapes"))
    script = build_script(
        f'"{onnx_dir}/$ONNX_FILE"',
        str(tmp_path),
        ["--skipInference", "--fp16"],
        (str(fallback),),
        str(jobs_dir / "onnx_shapes.py"),
    )
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "PYTHONPATH": str(fake_py),
        "MODEL_NAME": "ranker",
        "ONNX_FILE": onnx_file,
        "TRT_INPUTS": json.dumps(declared or []),
        "BATCH_PROFILE": batch,
        "BUILD_IMAGE": "nvcr.io/nvidia/tensorrt:25.08-py3",
        "FAKE_ONNX_INPUTS": json.dumps(inputs),
        "FAKE_LAYER_TYPES": json.dumps(list(layer_types)),
        "TYPED_PRECISION": typed_precision,
        "PRECISION_FIELD": "models.ranker.precision",
        "ARGS_OUT": str(tmp_path / "args"),
    }
    assert SH is not None
    done = subprocess.run(
        [SH, "-c", "set -eu\n" + "\n".join(script)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    args_file = tmp_path / "args"
    args = args_file.read_text().splitlines() if args_file.exists() else []
    return done, args


def test_trtexec_from_path_with_declared_and_derived_shapes(tmp_path):
    done, args = run(
        tmp_path,
        [["input_ids", [-1, -1]], ["token_type_ids", [-1, 128]], ["scale", [1]]],
        declared=[["input_ids", [1, 16], [8, 128], [32, 512]]],
        batch="8,32",
    )
    assert done.returncode == 0, done.stderr
    assert args == [
        f"--onnx={tmp_path}/onnx/model.onnx",
        "--skipInference",
        "--fp16",
        "--minShapes=input_ids:1x16,token_type_ids:1x128",
        "--optShapes=input_ids:8x128,token_type_ids:8x128",
        "--maxShapes=input_ids:32x512,token_type_ids:32x128",
    ]
    assert "trtexec: " + str(tmp_path / "bin" / "trtexec") in done.stdout


def test_trtexec_from_a_known_install_dir_when_not_on_path(tmp_path):
    done, args = run(tmp_path, [["x", [1, 3]]], trtexec_in="dir")
    assert done.returncode == 0, done.stderr
    assert "trtexec: " + str(tmp_path / "opt-tensorrt-bin" / "trtexec") in done.stdout
    assert args == [f"--onnx={tmp_path}/onnx/model.onnx", "--skipInference", "--fp16"]


def test_no_trtexec_names_the_image(tmp_path):
    done, args = run(tmp_path, [["x", [1, 3]]], trtexec_in=None)
    assert done.returncode == 127
    assert "trtexec is neither on PATH" in done.stderr
    assert "of image nvcr.io/nvidia/tensorrt:25.08-py3" in done.stderr
    assert args == []


def test_every_dynamic_input_without_shapes_is_named(tmp_path):
    done, args = run(
        tmp_path,
        [["input_ids", [-1, -1]], ["mask", [-1, -1]], ["pixels", [-1, 3, 224, 224]]],
        batch="",  # no batching: even a batch-only dynamic input needs shapes
    )
    assert done.returncode != 0
    assert done.stderr.strip().endswith(
        "the ONNX model of ranker has dynamic inputs without min/opt/max shapes: "
        "input_ids (?x?), mask (?x?), pixels (?x3x224x224); give each under "
        "models.ranker.tensorrt.inputs in the blueprint"
    )
    assert args == []  # trtexec never ran


def test_declared_names_the_model_lacks_are_refused(tmp_path):
    done, _ = run(tmp_path, [["input_ids", [-1, 128]]], declared=[["ids", [1, 1], [1, 1], [1, 1]]])
    assert done.returncode != 0
    assert done.stderr.strip().endswith(
        "models.ranker.tensorrt.inputs names ids, which the ONNX model has no input of; "
        "its inputs are input_ids"
    )


def test_blueprint_text_is_never_parsed_by_the_shell(tmp_path):
    hostile = "m $(touch pwned);`touch pwned2`.onnx"
    done, args = run(tmp_path, [["x", [1]]], onnx_file=hostile)
    assert done.returncode == 0, done.stderr
    assert args[0] == f"--onnx={tmp_path}/onnx/{hostile}"
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "pwned2").exists()
    assert not os.path.exists("pwned")


def test_a_strongly_typed_build_of_an_fp32_network_called_fp16_stops_before_trtexec(tmp_path):
    done, args = run(
        tmp_path, [["x", [1, 3]]], layer_types=("FLOAT", "INT64"), typed_precision="fp16"
    )
    assert done.returncode != 0
    assert args == []  # trtexec never ran
    assert "models.ranker.precision is fp16, but the ONNX model of ranker has no fp16 layer" in (
        done.stderr
    )
    (tmp_path / "typed").mkdir()
    done, args = run(tmp_path / "typed", [["x", [1, 3]]], typed_precision="fp16")
    assert done.returncode == 0, done.stderr
