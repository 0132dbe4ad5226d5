"""TensorRT-LLM text in, text out: the ensemble and tokenizer models (parsed with Triton's
ModelConfig), the tokenizer and warm-up inputs the build Job stores with the engine, the
warm-up config, the serving pod's layout and its lack of Hub access, and the tokenizer
models' own code run against a stand-in Python backend."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from serving_fixtures import (
    CONFIG_MAP,
    DEPLOYMENT,
    JOB,
    args_of_mf,
    container,
    k8s_object,
    pod_spec,
    serve,
)
from test_triton_config import (
    parse,
    triton_python,  # noqa: F401 (a fixture)
)

from inferplane.blueprint.loading.loader import load
from inferplane.blueprint.model import Environment
from inferplane.blueprint.resolution.resolve import resolve
from inferplane.components.serving.store.jobs import trtllm_engine
from inferplane.components.serving.trtllm import trtllm_text
from inferplane.components.serving.trtllm.trtllm import (
    WARMUP_FILES,
    WARMUP_OUTPUT_TOKENS,
    WARMUP_PROMPT,
    WARMUP_TOKENS,
    render_config_pbtxt,
)
from inferplane.components.serving.trtllm.trtllm_build import build_spec, engine_key

ROOT = Path(__file__).resolve().parents[3]
MODEL = "chat-70b"


@pytest.fixture(scope="session")
def llm_env() -> Environment:
    return resolve(load(ROOT / "blueprints" / "llm-serving.yaml"), "prod")


def test_pipeline_configs_parse_and_chain_text_to_the_engine_model(
    llm_env,
    triton_python,  # noqa: F811 (the imported fixture)
    tmp_path,
):
    model, _ = args_of_mf(llm_env, MODEL)
    files = trtllm_text.pipeline_files(model)
    parsed = parse(
        triton_python,
        tmp_path,
        {name: files[f"{name}.pbtxt"] for name in ("ensemble", "preprocessing", "postprocessing")},
    )
    ensemble = parsed["ensemble"]
    assert ensemble["platform"] == "ensemble"
    assert ensemble["max_batch_size"] == 64
    inputs = {i["name"]: i for i in ensemble["input"]}
    assert inputs["text_input"] == {"name": "text_input", "data_type": "TYPE_STRING", "dims": ["1"]}
    assert "optional" not in inputs["max_tokens"]
    assert all(inputs[n]["optional"] for n in ("temperature", "top_p", "random_seed", "stream"))
    assert ensemble["output"] == [
        {"name": "text_output", "data_type": "TYPE_STRING", "dims": ["-1"]}
    ]
    steps = ensemble["ensemble_scheduling"]["step"]
    assert [s["model_name"] for s in steps] == ["preprocessing", MODEL, "postprocessing"]
    engine = steps[1]
    assert engine["input_map"]["input_ids"] == "_INPUT_ID"
    assert engine["input_map"]["input_lengths"] == "_REQUEST_INPUT_LEN"
    assert engine["input_map"]["end_id"] == "_END_ID"
    assert engine["input_map"]["streaming"] == "stream"
    assert engine["input_map"]["runtime_top_p"] == "top_p"
    assert engine["output_map"] == {
        "output_ids": "_TOKENS_BATCH",
        "sequence_length": "_SEQUENCE_LENGTH",
    }
    assert steps[2]["output_map"] == {"OUTPUT": "text_output"}
    # Every tensor the engine step reads exists on the engine model, with its type.
    engine_inputs = {
        i["name"]: i["data_type"]
        for i in parse(triton_python, tmp_path, {"engine": render_config_pbtxt(model, _)})[
            "engine"
        ]["input"]
    }
    for target, source in engine["input_map"].items():
        if not source.startswith("_"):
            assert engine_inputs[target] == inputs[source]["data_type"], target
    for name in ("preprocessing", "postprocessing"):
        config = parsed[name]
        assert config["backend"] == "python"
        assert config["max_batch_size"] == 64
        assert config["instance_group"] == [{"count": 4, "kind": "KIND_CPU"}]
        params = {k: v["string_value"] for k, v in config["parameters"].items()}
        assert params["tokenizer_dir"] == f"/models/{MODEL}/1/tokenizer"
    pre = {k: v["string_value"] for k, v in parsed["preprocessing"]["parameters"].items()}
    assert pre["max_input_len"] == "8192"
    assert pre["add_special_tokens"] == "true"


def test_engine_model_warms_up_on_real_token_ids_from_files(
    llm_env,
    triton_python,  # noqa: F811 (the imported fixture)
    tmp_path,
):
    model, env = args_of_mf(llm_env, MODEL)
    config = parse(triton_python, tmp_path, {"llm": render_config_pbtxt(model, env)})["llm"]
    [warmup] = config["model_warmup"]
    assert warmup["batch_size"] == 1 and warmup["count"] == 1
    assert warmup["inputs"] == {
        "input_ids": {
            "data_type": "TYPE_INT32",
            "dims": [str(WARMUP_TOKENS)],
            "input_data_file": "input_ids",
        },
        "input_lengths": {
            "data_type": "TYPE_INT32",
            "dims": ["1"],
            "input_data_file": "input_lengths",
        },
        "request_output_len": {
            "data_type": "TYPE_INT32",
            "dims": ["1"],
            "input_data_file": "request_output_len",
        },
    }
    assert WARMUP_OUTPUT_TOKENS > 1  # the generation phase runs, not only the context phase


class _Tokenizer:
    """A stand-in tokenizer: one id per word, BOS 1, EOS 2, no pad token."""

    eos_token_id = 2
    pad_token_id = None

    @classmethod
    def from_pretrained(cls, path: str, **kwargs: Any) -> _Tokenizer:
        assert kwargs.get("local_files_only", True) is True or path == "/build/checkpoint"
        cls.loaded = (path, kwargs)
        return cls()

    def save_pretrained(self, path: str) -> None:
        Path(path).mkdir(parents=True)
        (Path(path) / "tokenizer.json").write_text("{}")

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        ids = [10 + len(w) for w in text.split()]
        return [1, *ids] if add_special_tokens else ids

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        kept = [i for i in ids if not (skip_special_tokens and i in (1, 2))]
        return " ".join("w" * (i - 10) for i in kept)


class _LLM:
    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs

    def save(self, path: str) -> None:
        Path(path).mkdir(parents=True)
        (Path(path) / "rank0.engine").write_bytes(b"engine")


def _stub(monkeypatch: pytest.MonkeyPatch, name: str, **attrs: Any) -> None:
    module = types.ModuleType(name)
    for key, value in attrs.items():
        setattr(module, key, value)
    monkeypatch.setitem(sys.modules, name, module)


def test_build_stores_the_tokenizer_and_the_warmup_inputs_with_the_engine(
    llm_env, monkeypatch, tmp_path
):
    """Runs the build Job's script with stand-ins for TensorRT-LLM and transformers."""
    _stub(monkeypatch, "transformers", AutoTokenizer=_Tokenizer)
    _stub(monkeypatch, "tensorrt_llm", LLM=_LLM)
    llmapi = types.SimpleNamespace(
        BuildConfig=lambda **kw: types.SimpleNamespace(plugin_config=types.SimpleNamespace()),
        QuantAlgo=types.SimpleNamespace(FP8="FP8"),
        QuantConfig=lambda **kw: kw,
    )
    _stub(monkeypatch, "tensorrt_llm.llmapi", **vars(llmapi))
    model, _ = args_of_mf(llm_env, MODEL)
    spec = build_spec(model) | {"engine_dir": str(tmp_path / "engine")}
    assert trtllm_engine.main([json.dumps(spec)]) == 0
    engine = tmp_path / "engine"
    assert (engine / "tokenizer" / "tokenizer.json").exists()
    raw = {name: (engine / "warmup" / name).read_bytes() for name in WARMUP_FILES}
    ids = list(struct.unpack(f"<{WARMUP_TOKENS}i", raw["input_ids"]))
    assert ids == _Tokenizer().encode(WARMUP_PROMPT)[:WARMUP_TOKENS]
    assert struct.unpack("<i", raw["input_lengths"]) == (WARMUP_TOKENS,)
    assert struct.unpack("<i", raw["request_output_len"]) == (WARMUP_OUTPUT_TOKENS,)


def test_a_warmup_prompt_too_short_for_the_tokenizer_fails_the_build(
    llm_env, monkeypatch, tmp_path
):
    _stub(monkeypatch, "transformers", AutoTokenizer=_Tokenizer)
    _stub(monkeypatch, "tensorrt_llm", LLM=_LLM)
    llmapi = types.SimpleNamespace(
        BuildConfig=lambda **kw: types.SimpleNamespace(plugin_config=types.SimpleNamespace()),
        QuantAlgo=types.SimpleNamespace(FP8="FP8"),
        QuantConfig=lambda **kw: kw,
    )
    _stub(monkeypatch, "tensorrt_llm.llmapi", **vars(llmapi))
    model, _ = args_of_mf(llm_env, MODEL)
    spec = build_spec(model) | {"engine_dir": str(tmp_path / "e"), "warmup_prompt": "Hi there"}
    with pytest.raises(SystemExit) as stop:
        trtllm_engine.main([json.dumps(spec)])
    assert stop.value.code == "the warm-up prompt is only 3 tokens, 32 needed"


def test_serving_pod_lays_out_the_pipeline_and_has_no_hub_access(llm_env):
    rec = serve(llm_env)
    deployment = k8s_object(rec, DEPLOYMENT, MODEL)
    triton = container(deployment, "triton")
    env = {e["name"]: e.get("value") for e in triton["env"]}
    assert env["HF_HUB_OFFLINE"] == "1" and env["TRANSFORMERS_OFFLINE"] == "1"
    # The Hub token is the weights-staging Job's only: not in the serving pod in any form.
    assert not {"HF_TOKEN", "HF_TOKEN_PATH", "HUGGING_FACE_HUB_TOKEN"} & set(env)
    volumes = pod_spec(deployment)["volumes"]
    assert not [v for v in volumes if "secret" in v]
    model, env_args = args_of_mf(llm_env, MODEL)
    job = k8s_object(rec, JOB, f"{MODEL}-engine-{engine_key(model, env_args)[:10]}")
    build = container(job, "trtllm-build", init=True)
    # Nor in the engine build: it reads the staged checkpoint from the model store.
    assert not {"HF_TOKEN", "HF_TOKEN_PATH", "HUGGING_FACE_HUB_TOKEN"} & {
        e["name"] for e in build["env"]
    }
    script = container(deployment, "fetch-engine", init=True)["command"][2]
    assert f'mv "/models/{MODEL}/1/warmup" "/models/{MODEL}/warmup"' in script
    for name in ("ensemble", "preprocessing", "postprocessing"):
        assert f'cp "/config/{name}.pbtxt" "/models/{name}/config.pbtxt"' in script
    for name in ("preprocessing", "postprocessing"):
        assert f'cp "/config/{name}.py" "/models/{name}/1/model.py"' in script
    data = k8s_object(rec, CONFIG_MAP, f"{MODEL}-triton-config").get("data")
    assert set(data) == {
        "config.pbtxt",
        "ensemble.pbtxt",
        "preprocessing.pbtxt",
        "postprocessing.pbtxt",
        "preprocessing.py",
        "postprocessing.py",
    }
    assert data["preprocessing.py"] == trtllm_text.python_source("preprocessing")


# --- the tokenizer models, on a stand-in Python backend ----------------------------------------
DRIVER = Path(__file__).with_name("trtllm_python_driver.py")


def run_model(python: Path, model: str, params: dict[str, str], requests: list[dict]) -> dict:
    """One tokenizer model on the driver's stand-ins (it needs numpy: the checker venv)."""
    done = subprocess.run(
        [str(python), str(DRIVER)],
        input=json.dumps({"model": model, "params": params, "requests": requests}),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result: dict = json.loads(done.stdout)
    return result


def test_preprocessing_tokenizes_offline_pads_and_refuses_long_prompts(
    triton_python,  # noqa: F811 (the imported fixture)
):
    params = {
        "tokenizer_dir": "/models/m/1/tokenizer",
        "add_special_tokens": "true",
        "max_input_len": "4",
    }
    ok = {"QUERY": [["ab cde"], ["x"]], "REQUEST_OUTPUT_LEN": [[16], [8]]}
    result = run_model(
        triton_python,
        "preprocessing",
        params,
        [ok, {**ok, "QUERY": [["a b c d e"]]}, {**ok, "QUERY": [[""]]}],
    )
    # Offline: only local files, no remote code.
    assert result["loaded"] == [
        "/models/m/1/tokenizer",
        {"local_files_only": True, "trust_remote_code": False},
    ]
    first, long, blank = result["responses"]
    assert first["error"] is None
    out = first["outputs"]
    # BOS, then one id per word; the shorter prompt padded with EOS (the tokenizer has no pad)
    assert out["INPUT_ID"] == {"dtype": "int32", "values": [[1, 12, 13], [1, 11, 2]]}
    assert out["REQUEST_INPUT_LEN"] == {"dtype": "int32", "values": [[3], [2]]}
    assert out["REQUEST_OUTPUT_LEN"] == {"dtype": "int32", "values": [[16], [8]]}
    assert out["OUT_END_ID"] == out["OUT_PAD_ID"] == {"dtype": "int32", "values": [[2], [2]]}
    assert long == {
        "error": "the prompt is 6 tokens, more than the model's max_input_len 4",
        "outputs": {},
    }
    assert blank == {"error": "text_input is empty", "outputs": {}}


def test_postprocessing_decodes_each_beam_to_its_length(
    triton_python,  # noqa: F811 (the imported fixture)
):
    result = run_model(
        triton_python,
        "postprocessing",
        {"tokenizer_dir": "/models/m/1/tokenizer"},
        [{"TOKENS_BATCH": [[[12, 13, 2, 2]], [[11, 2, 2, 2]]], "SEQUENCE_LENGTH": [[3], [1]]}],
    )
    assert result["loaded"][1] == {"local_files_only": True, "trust_remote_code": False}
    assert result["responses"] == [{"error": None, "outputs": {"OUTPUT": [["ww www"], ["w"]]}}]
