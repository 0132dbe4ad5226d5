"""config.pbtxt: exact text for the reference models, and validity against Triton's own
ModelConfig protobuf (tritonclient, in the separate environment that
scripts/dev/setup-triton-venv.sh creates: it needs protobuf 6, the main one has 5)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path

import pytest
from serving_fixtures import args_of_mf, with_model

from inferplane.blueprint.errors import BlueprintError
from inferplane.blueprint.model import Batching, ResponseCache, TensorRtInput, Warmup
from inferplane.blueprint.upstream.triton_facts import config_problems
from inferplane.components.serving.triton.triton_config import input_data_type, render_config_pbtxt
from inferplane.components.stack_serving import blueprint_errors

ROOT = Path(__file__).resolve().parents[3]
CHECKER = ROOT / "scripts" / "dev" / "triton-config-check"

RANKER = """\
name: "ranker"
platform: "tensorrt_plan"
max_batch_size: 32
dynamic_batching {
  preferred_batch_size: [ 8, 16 ]
  max_queue_delay_microseconds: 2000
}
instance_group [
  {
    count: 1
    kind: KIND_GPU
  }
]
model_warmup [
  {
    name: "warmup_batch_1"
    batch_size: 1
    inputs {
      key: "input_ids"
      value {
        data_type: TYPE_INT64
        dims: [ 128 ]
        zero_data: true
      }
    }
  },
  {
    name: "warmup_batch_8"
    batch_size: 8
    inputs {
      key: "input_ids"
      value {
        data_type: TYPE_INT64
        dims: [ 128 ]
        zero_data: true
      }
    }
  }
]
response_cache {
  enable: true
}
"""


@pytest.fixture(scope="session")
def triton_python() -> Path:
    """The Python of the Triton checker environment; missing -> skip, or fail under CI."""
    venv = Path(os.environ.get("TRITON_VENV", ROOT / ".venv-triton"))
    python = venv / "bin" / "python"
    ok = (
        python.exists()
        and subprocess.run(
            [str(python), "-c", "import tritonclient.grpc.model_config_pb2"],
            capture_output=True,
            check=False,
            timeout=300,
        ).returncode
        == 0
    )
    if not ok:
        message = (
            f"Triton config checker environment missing at {venv}: "
            "run scripts/dev/setup-triton-venv.sh"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return python


def parse(triton_python: Path, tmp_path: Path, configs: dict[str, str]) -> dict[str, dict]:
    """Parse each config with Triton's ModelConfig; returns the parsed messages by name.
    Each must also pass the facts of the pinned release (`triton_facts.config_problems`):
    tritonclient's schema is of its own, newer release."""
    files = []
    for name, text in configs.items():
        assert config_problems(text) == [], name
        path = tmp_path / f"{name}.pbtxt"
        path.write_text(text)
        files.append(str(path))
    done = subprocess.run(
        [str(triton_python), str(CHECKER), *files],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    parsed = [json.loads(line) for line in done.stdout.splitlines()]
    return {Path(p["file"]).stem: p["config"] for p in parsed}


def test_ranker_config_text(staging):
    assert render_config_pbtxt(*args_of_mf(staging, staging.models["ranker"])) == RANKER


@pytest.mark.needs_tools
def test_reference_configs_parse_as_triton_model_configs(staging, prod, triton_python, tmp_path):
    configs = {
        f"{env.name}-{m.name}": render_config_pbtxt(*args_of_mf(env, m))
        for env in (staging, prod)
        for m in env.models.values()
        if m.server == "triton"
    }
    assert len(configs) == 6
    parsed = parse(triton_python, tmp_path, configs)
    ranker = parsed["prod-ranker"]
    assert ranker["name"] == "ranker"
    assert ranker["platform"] == "tensorrt_plan"
    assert ranker["max_batch_size"] == 32
    assert ranker["dynamic_batching"] == {
        "preferred_batch_size": [8, 16],
        "max_queue_delay_microseconds": "2000",  # uint64 renders as a JSON string
    }
    assert ranker["instance_group"] == [{"count": 1, "kind": "KIND_GPU"}]
    assert ranker["response_cache"] == {"enable": True}
    assert [w["batch_size"] for w in ranker["model_warmup"]] == [1, 8]
    assert ranker["model_warmup"][1]["inputs"]["input_ids"] == {
        "data_type": "TYPE_INT64",
        "dims": ["128"],
        "zero_data": True,
    }
    toxicity = parsed["staging-toxicity"]
    assert toxicity["max_batch_size"] == 16
    assert toxicity["dynamic_batching"] == {"max_queue_delay_microseconds": "1000"}
    assert "model_warmup" not in toxicity and "response_cache" not in toxicity
    assert parsed["prod-nightly-embed"]["max_batch_size"] == 256


@pytest.mark.needs_tools
def test_variants_parse(staging, triton_python, tmp_path):
    """ONNX without TensorRT, no batching, float inputs, several inputs."""
    inputs = (
        TensorRtInput("input_ids", (1, 64), (4, 64), (8, 64)),
        TensorRtInput("attention_mask", (1, 64), (4, 64), (8, 64)),
        TensorRtInput("pixel_values", (1, 3, 224, 224), (4, 3, 224, 224), (8, 3, 224, 224)),
    )
    base = staging.models["ranker"]
    assert base.tensorrt is not None
    trt = base.tensorrt.__class__(inputs, 1024, 5)
    unbatched = with_model(staging, "ranker", batching=None, tensorrt=trt,
                           warmup=Warmup((1, 2)), response_cache=None)  # fmt: skip
    onnx = with_model(staging, "ranker", tensorrt=None, warmup=None,
                      batching=Batching(8, 500, ()),
                      response_cache=ResponseCache(enabled=False, size_mb=256))  # fmt: skip
    configs = {
        "unbatched": render_config_pbtxt(*args_of_mf(unbatched, unbatched.models["ranker"])),
        "onnx": render_config_pbtxt(*args_of_mf(onnx, onnx.models["ranker"])),
    }
    parsed = parse(triton_python, tmp_path, configs)
    u = parsed["unbatched"]
    assert "max_batch_size" not in u  # 0, proto3's default, so not in the JSON
    assert "max_batch_size: 0\n" in configs["unbatched"]
    assert "dynamic_batching" not in u
    # without batching the batch dimension is part of the shape: the warm-up size fills it
    second = u["model_warmup"][1]
    assert second["batch_size"] == 1
    assert second["inputs"]["pixel_values"] == {
        "data_type": "TYPE_FP32",
        "dims": ["2", "3", "224", "224"],
        "random_data": True,
    }
    assert second["inputs"]["attention_mask"]["data_type"] == "TYPE_INT64"
    assert parsed["onnx"]["platform"] == "onnxruntime_onnx"
    assert "response_cache" not in parsed["onnx"]


@pytest.mark.needs_tools
def test_checker_rejects_an_invalid_config(triton_python, tmp_path):
    bad = tmp_path / "bad.pbtxt"
    bad.write_text('name: "x"\ninstance_group [ { kind: KIND_GPUS } ]\n')
    done = subprocess.run(
        [str(triton_python), str(CHECKER), str(bad)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 1
    assert "KIND_GPUS" in done.stderr


def test_warmup_needs_input_shapes(prod):
    env = with_model(prod, "toxicity", warmup=Warmup((1,)))
    model, serving_env = args_of_mf(env, "toxicity")
    # Without a blueprint: a plain ValueError that names the field.
    with pytest.raises(ValueError) as plain:
        render_config_pbtxt(model, serving_env)
    assert str(plain.value) == (
        "model 'toxicity': warmup: warm-up requests need the model's input names and shapes; "
        "declare them under tensorrt.inputs (name: {min, opt, max}), or remove warmup"
    )
    # The stack reports it at the blueprint value.
    with pytest.raises(BlueprintError) as err, blueprint_errors(env, env.models["toxicity"]):
        render_config_pbtxt(model, serving_env)
    [diag] = err.value.diagnostics
    assert diag.path == ("models", "toxicity")  # no warmup written: its nearest ancestor
    assert diag.message == "warm-up requests need the model's input names and shapes"
    assert diag.hint.startswith("declare them under tensorrt.inputs")


@pytest.mark.parametrize(
    ("name", "dtype"),
    [
        ("input_ids", "TYPE_INT64"),
        ("token_type_ids", "TYPE_INT64"),
        ("attention_mask", "TYPE_INT64"),
        ("ids", "TYPE_INT64"),
        ("pixel_values", "TYPE_FP32"),
        ("features", "TYPE_FP32"),
    ],
)
def test_warmup_data_types(name, dtype):
    assert input_data_type(name) == dtype


def test_only_triton_models(staging):
    with pytest.raises(ValueError, match="served by vllm"):
        render_config_pbtxt(*args_of_mf(staging, staging.models["chat"]))


def test_warmup_sends_the_declared_data_types(prod):
    tensorrt = prod.models["ranker"].tensorrt
    assert tensorrt is not None
    declared = (
        TensorRtInput("input_ids", (1, 128), (8, 128), (32, 512), "int32"),
        TensorRtInput("scores", (1, 4), (8, 4), (32, 4), "fp16"),
    )
    env = with_model(prod, "ranker", tensorrt=dataclasses.replace(tensorrt, inputs=declared))
    text = render_config_pbtxt(*args_of_mf(env, "ranker"))
    first = text[text.index('name: "warmup_batch_1"') : text.index('name: "warmup_batch_8"')]
    assert (
        '      key: "input_ids"\n      value {\n        data_type: TYPE_INT32\n'
        "        dims: [ 128 ]\n        zero_data: true\n"
    ) in first
    assert (
        '      key: "scores"\n      value {\n        data_type: TYPE_FP16\n'
        "        dims: [ 4 ]\n        random_data: true\n"
    ) in first


def test_a_declared_type_wins_over_the_name():
    assert input_data_type("input_ids", "int32") == "TYPE_INT32"
    assert input_data_type("pixel_values", "bf16") == "TYPE_BF16"
