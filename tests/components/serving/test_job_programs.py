"""The programs the Jobs run in their containers (``components/serving/store/jobs``), tested as
plain modules: what each imports, its pure parts, and the ConfigMap that ships them."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from serving_fixtures import JOB, pod_spec, serve

from inferplane.blueprint import catalog
from inferplane.components.serving.store import store_job
from inferplane.components.serving.store.jobs import (
    compile_cache,
    onnx_shapes,
    pip_stage,
    trtllm_engine,
)

JOBS = Path(store_job.__file__).with_name("jobs")
IMAGE_LIBRARIES = {
    # The libraries of the image each program runs in, imported inside main's call tree.
    "onnx_shapes": {"tensorrt"},
    "hub_download": {"huggingface_hub"},
    "trtllm_engine": {"tensorrt_llm", "transformers"},
    "compile_cache": set(),
    "pip_stage": set(),  # pip runs as `python3 -m pip`, a process of its own
}


def _imports(tree: ast.AST) -> set[str]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module.split(".")[0])
    return out


def test_every_program_is_known_here() -> None:
    programs = {p.stem for p in JOBS.glob("*.py") if p.stem != "__init__"}
    assert programs == set(IMAGE_LIBRARIES)


@pytest.mark.parametrize("module", sorted(IMAGE_LIBRARIES))
def test_a_program_imports_the_standard_library_and_its_image_only(module: str) -> None:
    """No image has inferplane: a program imports nothing of it. Image libraries are
    imported inside functions, so the module imports (and its tests run) without them."""
    tree = ast.parse((JOBS / f"{module}.py").read_text())
    top_level = _imports(ast.Module(body=tree.body, type_ignores=[]))
    top_level -= {name for node in tree.body if isinstance(node, ast.FunctionDef | ast.ClassDef)
                  for name in _imports(node)}  # fmt: skip
    assert top_level <= set(sys.stdlib_module_names), top_level
    assert _imports(tree) - set(sys.stdlib_module_names) == IMAGE_LIBRARIES[module]
    assert "inferplane" not in _imports(tree)


@pytest.mark.parametrize("module", sorted(IMAGE_LIBRARIES))
def test_a_program_run_without_arguments_prints_its_usage(module: str, tmp_path: Path) -> None:
    # The ConfigMap's copy, alone in a folder, as the container runs it.
    (tmp_path / f"{module}.py").write_text(store_job.job_source(module))
    done = subprocess.run(
        [sys.executable, "-E", str(tmp_path / f"{module}.py")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
    )
    # argparse exits 2 on a missing option; the others exit 1 with their usage line.
    assert done.returncode == (2 if module == "compile_cache" else 1), done.stderr
    assert "usage: " in done.stderr and "Traceback" not in done.stderr


def test_the_scripts_config_map_is_named_after_its_sources(monkeypatch) -> None:
    name = store_job.scripts_name("chat-compile-0123456789", ["compile_cache"])
    assert name.startswith("chat-compile-0123456789-scripts-") and len(name) == 40
    assert store_job.scripts_data(["compile_cache"]) == {
        "compile_cache.py": (JOBS / "compile_cache.py").read_text()
    }
    real = store_job.job_source
    monkeypatch.setattr(store_job, "job_source", lambda m: real(m) + "# changed\n")
    assert store_job.scripts_name("chat-compile-0123456789", ["compile_cache"]) != name


# --- onnx_shapes ---------------------------------------------------------------------------
def test_shape_flags_give_declared_inputs_their_shapes_and_batch_only_inputs_the_profile():
    flags = onnx_shapes.shape_flags(
        "ranker",
        {"input_ids": [-1, -1], "mask:0": [-1, 128], "static": [1, 3]},
        onnx_shapes.declared_shapes('[["input_ids", [1, 8], [4, 128], [8, 512]]]'),
        onnx_shapes.batch_profile("4,8"),
    )
    assert flags == [
        "--minShapes=input_ids:1x8,'mask:0':1x128",
        "--optShapes=input_ids:4x128,'mask:0':4x128",
        "--maxShapes=input_ids:8x512,'mask:0':8x128",
    ]


def test_shape_flags_refuse_unknown_names_and_dynamic_inputs_without_shapes():
    with pytest.raises(onnx_shapes.ShapeError) as unknown:
        onnx_shapes.shape_flags("ranker", {"x": [1, 3]}, {"y": [[1], [1], [1]]}, [])
    assert str(unknown.value) == (
        "models.ranker.tensorrt.inputs names y, which the ONNX model has no input of; "
        "its inputs are x"
    )
    with pytest.raises(onnx_shapes.ShapeError) as missing:
        onnx_shapes.shape_flags("ranker", {"x": [-1, -1], "y": [2, -1]}, {}, [4, 8])
    assert str(missing.value) == (
        "the ONNX model of ranker has dynamic inputs without min/opt/max shapes: "
        "x (?x?), y (2x?); give each under models.ranker.tensorrt.inputs in the blueprint"
    )
    assert onnx_shapes.shape_flags("ranker", {"x": [1, 3]}, {}, []) == []


def test_a_strongly_typed_build_refuses_a_network_not_in_the_blueprints_precision():
    """TensorRT 11 takes precision from the network's own types (its 11.0.0 release notes:
    "Weak typing is no longer supported"), so an fp32 ONNX model called fp16 would build an
    fp32 engine: the build stops and says how to convert it."""
    with pytest.raises(onnx_shapes.PrecisionError) as fp32:
        onnx_shapes.check_precision(
            "ranker", "fp16", {"FLOAT", "INT64"}, conversion=catalog.onnx_conversion("fp16")
        )
    assert str(fp32.value) == (
        "models.ranker.precision is fp16, but the ONNX model of ranker has no fp16 layer (its "
        "layers produce FLOAT, INT64): this TensorRT builds strongly typed networks only, so "
        "the engine would run in the ONNX model's own types. Convert the model (python -m "
        "modelopt.onnx.autocast --onnx_path model.onnx --low_precision_type fp16), or set "
        "models.ranker.precision to the precision it has"
    )
    with pytest.raises(onnx_shapes.PrecisionError, match=r"no int8 layer.*Q/DQ nodes"):
        onnx_shapes.check_precision(
            "ranker", "int8", {"FLOAT", "HALF"}, conversion=catalog.onnx_conversion("int8")
        )
    # A pipeline's steps share the model's precision: the file names the step.
    with pytest.raises(onnx_shapes.PrecisionError) as step:
        onnx_shapes.check_precision(
            "rerank", "fp16", {"FLOAT"}, "", "s3://models/rerank/cross-encoder/model.onnx"
        )
    assert "the ONNX model s3://models/rerank/cross-encoder/model.onnx of rerank has no fp16" in (
        str(step.value)
    )
    # Mixed precision (AutoCast keeps LayerNorm and the I/O in fp32) and Q/DQ models pass.
    onnx_shapes.check_precision("ranker", "fp16", {"FLOAT", "HALF"})
    onnx_shapes.check_precision("ranker", "int8", {"FLOAT", "HALF", "INT8"})
    onnx_shapes.check_precision("ranker", "bf16", {"BF16"})
    # fp32, and TensorRT 10 (whose flags decide: no precision to check), take any network.
    onnx_shapes.check_precision("ranker", "fp32", {"FLOAT"})
    onnx_shapes.check_precision("ranker", "", {"FLOAT"})


def test_the_conversion_advice_is_of_the_precision() -> None:
    """AutoCast converts to fp16 or bf16 (ModelOpt ``--low_precision_type``); the quantized
    precisions take Q/DQ nodes. Validation and the build pod (``PRECISION_CONVERSION``) give
    this one text."""
    assert "--low_precision_type bf16" in catalog.onnx_conversion("bf16")
    assert catalog.onnx_conversion("fp8").startswith("quantize it with Q/DQ nodes")
    with pytest.raises(onnx_shapes.PrecisionError) as bare:
        onnx_shapes.check_precision("ranker", "fp16", {"FLOAT"})
    assert str(bare.value).endswith(
        "Convert the model, or set models.ranker.precision to the precision it has"
    )


TENSORRT_DATA_TYPES = {"FLOAT", "HALF", "BF16", "INT8", "INT32", "INT64", "BOOL", "UINT8"}
TENSORRT_DATA_TYPES |= {"FP8", "INT4", "FP4", "E8M0"}
"""The members of ``tensorrt.DataType`` (NVIDIA/TensorRT 11.1
``python/src/infer/pyFoundationalTypes.cpp``, ``py::enum_<DataType>``); ``ITensor.dtype`` is
one (``python/src/infer/pyGraph.cpp``), and a pybind11 enum value has its member's ``name``."""


def test_each_precision_is_checked_against_a_real_tensorrt_data_type() -> None:
    """A Q/DQ model shows its quantized type in the parsed network: a QuantizeLinear becomes an
    IQuantizeLayer whose output type is its zero point's (kINT8, kFP8 or kINT4), and a
    DequantizeLinear of a quantized initializer reads a constant layer of that type
    (onnx/onnx-tensorrt ``onnxOpImporters.cpp``, ``QuantDequantLinearHelper``)."""
    assert set(onnx_shapes.TENSORRT_TYPES.values()) <= TENSORRT_DATA_TYPES
    assert onnx_shapes.TENSORRT_TYPES == {
        "fp16": "HALF",
        "bf16": "BF16",
        "fp8": "FP8",
        "int8": "INT8",
        "int4": "INT4",
    }


# --- trtllm_engine -------------------------------------------------------------------------
def test_warmup_records_are_little_endian_int32_of_the_first_tokens():
    spec = {"warmup_tokens": 3, "warmup_output_tokens": 8}
    assert trtllm_engine.warmup_records([5, 6, 7, 8], spec) == {
        "input_ids": bytes([5, 0, 0, 0, 6, 0, 0, 0, 7, 0, 0, 0]),
        "input_lengths": bytes([3, 0, 0, 0]),
        "request_output_len": bytes([8, 0, 0, 0]),
    }
    with pytest.raises(trtllm_engine.WarmupError) as short:
        trtllm_engine.warmup_records([5, 6], spec)
    assert str(short.value) == "the warm-up prompt is only 2 tokens, 3 needed"


# --- compile_cache -------------------------------------------------------------------------
def test_compile_cache_passes_everything_after_the_separator_to_vllm():
    options = compile_cache.parse(
        ["--health-url=http://h/health", "--cache-dir=/c", "--", "/models/chat", "--port", "1"]
    )
    assert options == compile_cache.Options(
        "http://h/health", "/c", 5.0, None, ["/models/chat", "--port", "1"]
    )


def test_wait_healthy_polls_until_healthy_or_the_server_exits():
    answers, slept = iter([False, False, True]), []
    assert compile_cache.wait_healthy(lambda: next(answers), lambda: None, slept.append, 5) is None
    assert slept == [5, 5]
    assert compile_cache.wait_healthy(lambda: False, lambda: 3, slept.append, 5) == 3


FAKE_VLLM = textwrap.dedent(
    """\
    #!{python}
    # vllm serve <model> --port <p>: writes a cache file, then answers /health.
    import http.server, os, pathlib, sys
    args = sys.argv[2:]
    if os.environ.get("FAKE_VLLM") == "crash":
        sys.exit(7)
    if os.environ.get("FAKE_VLLM") != "no-cache":
        pathlib.Path(os.environ["CACHE_DIR"], "graph").mkdir(parents=True)
    pathlib.Path(os.environ["ARGS_FILE"]).write_text("\\n".join(args))
    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200); self.end_headers()
    http.server.HTTPServer(("127.0.0.1", int(args[-1])), Health).serve_forever()
    """
)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("mode", "status", "message"),
    [
        ("ok", 0, ""),
        ("crash", 7, "vllm serve stopped before /health answered"),
        ("no-cache", 1, "vllm wrote no torch.compile cache under"),
    ],
)
def test_compile_cache_serves_until_healthy_and_checks_the_cache(
    tmp_path: Path, mode: str, status: int, message: str
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    vllm = bin_dir / "vllm"
    vllm.write_text(FAKE_VLLM.format(python=sys.executable))
    vllm.chmod(0o755)
    program = tmp_path / "compile_cache.py"
    program.write_text(store_job.job_source("compile_cache"))
    port = _free_port()
    cache = tmp_path / "cache"
    done = subprocess.run(
        [sys.executable, "-E", str(program), f"--health-url=http://127.0.0.1:{port}/health",
         f"--cache-dir={cache}", "--poll-s=0.1", "--", "/models/chat", "--port", str(port)],
        env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_VLLM": mode,
             "CACHE_DIR": str(cache), "ARGS_FILE": str(tmp_path / "args")},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == status, done.stderr
    assert message in done.stderr
    if mode != "crash":
        assert (tmp_path / "args").read_text().splitlines() == ["/models/chat", "--port", str(port)]


def test_compile_cache_does_nothing_once_the_cache_is_staged(tmp_path: Path) -> None:
    skip = tmp_path / "already-staged"
    skip.touch()
    argv = ["--health-url=http://127.0.0.1:1/health", f"--cache-dir={tmp_path}"]
    # No vllm on PATH: it is never started.
    assert compile_cache.main([*argv, f"--skip-if={skip}", "--", "m"]) == 0


def test_trtllm_engine_reads_its_spec_from_one_argument():
    with pytest.raises(SystemExit) as stop:
        trtllm_engine.main([])
    assert stop.value.code == "usage: trtllm_engine.py '<build spec JSON>'"
    with pytest.raises(SystemExit):
        trtllm_engine.main([json.dumps({}), "extra"])


def test_a_changed_program_changes_the_jobs_pod_spec(staging, monkeypatch) -> None:
    """The Job's pod spec names the ConfigMap by the hash of its programs: a changed program
    is a changed Job spec, which Pulumi replaces (a Job's template is immutable)."""

    def compile_job(rec):
        (job,) = [j for j in rec.of_type(JOB) if "-compile-" in j.get("metadata", "name")]
        return job

    before = compile_job(serve(staging, ["chat"]))
    real = store_job.job_source
    monkeypatch.setattr(store_job, "job_source", lambda m: real(m) + "# changed\n")
    after = compile_job(serve(staging, ["chat"]))
    assert before.get("metadata", "name") == after.get("metadata", "name")  # same key

    def scripts(job) -> str:
        (volume,) = [v for v in pod_spec(job)["volumes"] if v["name"] == store_job.SCRIPTS_VOLUME]
        name: str = volume["configMap"]["name"]
        return name

    assert scripts(before) != scripts(after)
    assert scripts(before).startswith(before.get("metadata", "name") + "-scripts-")


# --- pip_stage -----------------------------------------------------------------------------
HASHED = (
    "tokenizers==0.21.1 --hash=sha256:"
    + "2dd9a0061e403546f7377df940e866c3e678d7d4e9643d0461ea442b4f89e61a"
)


def test_requirements_must_be_pinned_with_their_hashes():
    assert pip_stage.requirement_lines(f"\n{HASHED}\n  \n") == [HASHED]
    with pytest.raises(pip_stage.RequirementsError) as unpinned:
        pip_stage.requirement_lines(f"{HASHED}\ntokenizers>=0.21\nnumpy==2.0.0")
    assert str(unpinned.value) == (
        "not pinned as name==version --hash=sha256:<hex>: tokenizers>=0.21; numpy==2.0.0"
    )
    with pytest.raises(pip_stage.RequirementsError, match="REQUIREMENTS is empty"):
        pip_stage.requirement_lines(" \n")


def test_download_and_install_take_only_hashed_wheels_and_no_index_at_install():
    download = pip_stage.download_command("/build/wheels")
    assert download[1:] == [
        "-m", "pip", "download", "--disable-pip-version-check", "--no-cache-dir",
        "--require-hashes", "--no-deps", "--only-binary=:all:", "--dest", "/build/wheels",
        "-r", "/build/wheels/requirements.txt",
    ]  # fmt: skip
    install = pip_stage.install_command("/w", "/t", "/w/own/requirements.txt")
    assert install[1:] == [
        "-m", "pip", "install", "--disable-pip-version-check", "--no-cache-dir", "--no-index",
        "--find-links", "/w", "--require-hashes", "--no-deps", "--only-binary=:all:",
        "--target", "/t", "-r", "/w/own/requirements.txt",
    ]  # fmt: skip


def test_install_takes_its_lines_from_the_pod_never_the_copied_folder(tmp_path, monkeypatch):
    """A ``requirements.txt`` someone put in the store copy is never read: pip gets the
    lines of ``REQUIREMENTS`` (the blueprint's, set by the program) in a file of its own."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "requirements.txt").write_text("evil==1.0 --hash=sha256:" + "0" * 64 + "\n")
    monkeypatch.setenv("REQUIREMENTS", HASHED)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    ran = []

    class Done:
        returncode = 0

    def run(cmd, **kwargs):
        ran.append((cmd, Path(cmd[-1]).read_text()))
        return Done()

    monkeypatch.setattr(pip_stage.subprocess, "run", run)
    monkeypatch.setattr(pip_stage.tempfile, "tempdir", None)
    assert pip_stage.main(["install", str(wheels), str(tmp_path / "t")]) == 0
    [(cmd, text)] = ran
    assert text == HASHED + "\n"
    assert cmd[-4:-2] == ["--target", str(tmp_path / "t")]
    assert cmd[-1].startswith(str(tmp_path / "pip-stage-"))
    assert not Path(cmd[-1]).exists()  # removed once pip is done
    assert cmd[cmd.index("--find-links") + 1] == str(wheels)


def test_install_refuses_unpinned_or_missing_lines_before_pip_runs(monkeypatch, capsys):
    ran = []
    monkeypatch.setattr(pip_stage.subprocess, "run", lambda *a, **k: ran.append(a))
    monkeypatch.delenv("REQUIREMENTS", raising=False)
    assert pip_stage.main(["install", "/w", "/t"]) == 1
    monkeypatch.setenv("REQUIREMENTS", "numpy")
    assert pip_stage.main(["install", "/w", "/t"]) == 1
    assert pip_stage.main(["install", "/w"]) == 1
    assert ran == []
    assert capsys.readouterr().err == (
        "error: REQUIREMENTS is empty\n"
        "error: not pinned as name==version --hash=sha256:<hex>: numpy\n"
        f"{pip_stage.USAGE}\n"
    )


def test_download_refuses_unpinned_requirements_before_pip_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("REQUIREMENTS", "tokenizers")
    ran = []
    monkeypatch.setattr(pip_stage.subprocess, "run", lambda *a, **k: ran.append(a))
    assert pip_stage.main(["download", str(tmp_path / "w")]) == 1
    assert ran == []
    assert capsys.readouterr().err == (
        "error: not pinned as name==version --hash=sha256:<hex>: tokenizers\n"
    )


def test_download_writes_the_requirements_it_downloads(tmp_path, monkeypatch):
    monkeypatch.setenv("REQUIREMENTS", HASHED)
    ran = []

    class Done:
        returncode = 0

    monkeypatch.setattr(pip_stage.subprocess, "run", lambda cmd, **k: ran.append(cmd) or Done())
    assert pip_stage.main(["download", str(tmp_path / "w")]) == 0
    assert (tmp_path / "w" / "requirements.txt").read_text() == HASHED + "\n"
    assert ran == [pip_stage.download_command(str(tmp_path / "w"))]
