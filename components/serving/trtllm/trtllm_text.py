"""Text in, text out for a TensorRT-LLM model: the ``ensemble`` that chains tokenization, the
``tensorrtllm`` model and detokenization, as the release's in-flight batching repository does
(``triton_backend/all_models/inflight_batcher_llm/{preprocessing,ensemble,postprocessing}``
in NVIDIA/TensorRT-LLM, where the backend lives since 0.20; Triton 26.02's trtllm image ships
TensorRT-LLM 1.1.0, 25.08's 0.21.0: Triton compatibility matrix, server r26.02
``docs/introduction/compatibility.md``).

Users send ``{"text_input": "...", "max_tokens": N}`` to ``/v2/models/ensemble/generate``
(``/generate_stream`` when ``tensorrt_llm.streaming``), the request the backend's README
documents ("Using the generate endpoint"), and get ``text_output`` back. The sampling inputs
keep the release ensemble's names (``temperature``, ``top_k``, ``top_p``, ``random_seed``,
``repetition_penalty``, ``presence_penalty``, ``frequency_penalty``, ``stream``). The
``tensorrtllm`` model keeps the blueprint model's name, so its metrics (Triton's per-model
series and ``nv_trt_llm_*``) and token-id clients are unchanged.

The Python models (``trtllm_python/preprocessing.py`` and ``postprocessing.py``) are
inferplane's, not the release's: the release's ``model.py`` files are not in the NGC image
(its ``/app`` directory is missing from the ``-trtllm-python-py3`` images: tensorrtllm_backend
issues #721 and #739, PR #759), and a serving pod must not fetch code. They keep the release
models' tensor names for the inputs they cover; no multimodal inputs, no stop/bad word lists,
no BLS model (the release's ``tensorrt_llm_bls`` only adds draft-model speculation and
token accumulation to what the ensemble does). They read the tokenizer the build Job stored
with the engine (`tokenizer_dir`).

Triton loads an ensemble's composing models with it; ``ensemble`` may not carry
``model_warmup`` (core ``src/model_config_utils.cc``, ``ValidateEnsembleConfig``: "model_warmup
can not be specified for ensemble"), so warm-up runs on the ``tensorrtllm`` model (`trtllm`).
"""

from __future__ import annotations

from importlib import resources
from typing import Final

from inferplane.blueprint.upstream.trtllm_backend_facts import input_name
from inferplane.components.serving.containers import MODELS_DIR
from inferplane.components.serving.spec import ServedModel

ENSEMBLE: Final = "ensemble"
PREPROCESSING: Final = "preprocessing"
POSTPROCESSING: Final = "postprocessing"
PIPELINE_MODELS: Final = (ENSEMBLE, PREPROCESSING, POSTPROCESSING)
"""Model names of the text pipeline in the pod's repository (the release's names)."""

TOKENIZER_SUBDIR: Final = "tokenizer"
"""Where the build Job stores the checkpoint's tokenizer inside the engine directory."""
TOKENIZER_INSTANCES: Final = 4
"""Python processes per tokenizer model: enough that tokenization (well under a millisecond
a prompt) never queues behind one long prompt, few enough to leave the CPUs to the backend."""

# ConfigMap keys (a key cannot hold a "/"); the fetch container lays them out.
CONFIG_KEYS: Final = {name: f"{name}.pbtxt" for name in PIPELINE_MODELS}
SOURCE_KEYS: Final = {name: f"{name}.py" for name in (PREPROCESSING, POSTPROCESSING)}

# (ensemble input, data type, dims, optional, tensorrtllm input it feeds)
_SAMPLING: Final = (
    ("temperature", "TYPE_FP32", "temperature"),
    ("top_k", "TYPE_INT32", "runtime_top_k"),
    ("top_p", "TYPE_FP32", "runtime_top_p"),
    ("repetition_penalty", "TYPE_FP32", "repetition_penalty"),
    ("presence_penalty", "TYPE_FP32", "presence_penalty"),
    ("frequency_penalty", "TYPE_FP32", "frequency_penalty"),
    ("random_seed", "TYPE_UINT64", "seed"),
    ("stream", "TYPE_BOOL", "streaming"),
)


def tokenizer_dir(model: ServedModel) -> str:
    return f"{MODELS_DIR}/{model.name}/1/{TOKENIZER_SUBDIR}"


def _tensor(name: str, dtype: str, dims: str, *, optional: bool = False) -> list[str]:
    lines = ["  {", f'    name: "{name}"', f"    data_type: {dtype}", f"    dims: {dims}"]
    if optional:
        lines.append("    optional: true")
    return [*lines, "  }"]


def _block(key: str, tensors: list[list[str]]) -> list[str]:
    lines = [f"{key} ["]
    for i, tensor in enumerate(tensors):
        lines += [*tensor[:-1], "  }," if i < len(tensors) - 1 else "  }"]
    return [*lines, "]"]


def _parameters(values: dict[str, str]) -> list[str]:
    lines = []
    for key, value in values.items():
        lines += ["parameters {", f'  key: "{key}"', f'  value {{ string_value: "{value}" }}', "}"]
    return lines


def _python_model(name: str, batch: int, inputs: list[list[str]], outputs: list[list[str]],
                  params: dict[str, str]) -> str:  # fmt: skip
    lines = [
        f'name: "{name}"',
        'backend: "python"',
        f"max_batch_size: {batch}",
        *_block("input", inputs),
        *_block("output", outputs),
        "instance_group [",
        "  {",
        f"    count: {TOKENIZER_INSTANCES}",
        "    kind: KIND_CPU",
        "  }",
        "]",
        *_parameters(params),
    ]
    return "\n".join(lines) + "\n"


def preprocessing_config(model: ServedModel) -> str:
    llm = model.tensorrt_llm
    assert llm is not None
    return _python_model(
        PREPROCESSING,
        llm.max_batch_size,
        [
            _tensor("QUERY", "TYPE_STRING", "[ 1 ]"),
            _tensor("REQUEST_OUTPUT_LEN", "TYPE_INT32", "[ 1 ]"),
        ],
        [
            _tensor("INPUT_ID", "TYPE_INT32", "[ -1 ]"),
            _tensor("REQUEST_INPUT_LEN", "TYPE_INT32", "[ 1 ]"),
            _tensor("REQUEST_OUTPUT_LEN", "TYPE_INT32", "[ 1 ]"),
            _tensor("OUT_END_ID", "TYPE_INT32", "[ 1 ]"),
            _tensor("OUT_PAD_ID", "TYPE_INT32", "[ 1 ]"),
        ],
        {
            "tokenizer_dir": tokenizer_dir(model),
            "add_special_tokens": "true",
            "max_input_len": str(llm.max_input_len),
        },
    )


def postprocessing_config(model: ServedModel) -> str:
    llm = model.tensorrt_llm
    assert llm is not None
    return _python_model(
        POSTPROCESSING,
        llm.max_batch_size,
        [
            _tensor("TOKENS_BATCH", "TYPE_INT32", "[ -1, -1 ]"),
            _tensor("SEQUENCE_LENGTH", "TYPE_INT32", "[ -1 ]"),
        ],
        [_tensor("OUTPUT", "TYPE_STRING", "[ -1 ]")],
        {"tokenizer_dir": tokenizer_dir(model)},
    )


def _step(model_name: str, inputs: dict[str, str], outputs: dict[str, str]) -> list[str]:
    lines = ["    {", f'      model_name: "{model_name}"', "      model_version: -1"]
    for key, value in inputs.items():
        lines.append(f'      input_map {{ key: "{key}" value: "{value}" }}')
    for key, value in outputs.items():
        lines.append(f'      output_map {{ key: "{key}" value: "{value}" }}')
    return [*lines, "    }"]


def ensemble_config(model: ServedModel, release: str | None = None) -> str:
    """The ensemble: preprocessing -> the ``tensorrtllm`` model -> postprocessing, feeding
    the ``tensorrtllm`` inputs by the names of Triton `release` (default: the pin)."""
    llm = model.tensorrt_llm
    assert llm is not None
    inputs = [
        _tensor("text_input", "TYPE_STRING", "[ 1 ]"),
        _tensor("max_tokens", "TYPE_INT32", "[ 1 ]"),
        *(_tensor(name, dtype, "[ 1 ]", optional=True) for name, dtype, _ in _SAMPLING),
    ]
    steps = [
        _step(
            PREPROCESSING,
            {"QUERY": "text_input", "REQUEST_OUTPUT_LEN": "max_tokens"},
            {
                "INPUT_ID": "_INPUT_ID",
                "REQUEST_INPUT_LEN": "_REQUEST_INPUT_LEN",
                "REQUEST_OUTPUT_LEN": "_REQUEST_OUTPUT_LEN",
                "OUT_END_ID": "_END_ID",
                "OUT_PAD_ID": "_PAD_ID",
            },
        ),
        _step(
            model.name,
            {
                "input_ids": "_INPUT_ID",
                "input_lengths": "_REQUEST_INPUT_LEN",
                "request_output_len": "_REQUEST_OUTPUT_LEN",
                "end_id": "_END_ID",
                "pad_id": "_PAD_ID",
                **{input_name(target, release): name for name, _, target in _SAMPLING},
            },
            {"output_ids": "_TOKENS_BATCH", "sequence_length": "_SEQUENCE_LENGTH"},
        ),
        _step(
            POSTPROCESSING,
            {"TOKENS_BATCH": "_TOKENS_BATCH", "SEQUENCE_LENGTH": "_SEQUENCE_LENGTH"},
            {"OUTPUT": "text_output"},
        ),
    ]
    lines = [
        f'name: "{ENSEMBLE}"',
        'platform: "ensemble"',
        f"max_batch_size: {llm.max_batch_size}",
        *_block("input", inputs),
        *_block("output", [_tensor("text_output", "TYPE_STRING", "[ -1 ]")]),
        "ensemble_scheduling {",
        "  step [",
    ]
    for i, step in enumerate(steps):
        lines += [*step[:-1], "    }," if i < len(steps) - 1 else "    }"]
    lines += ["  ]", "}"]
    return "\n".join(lines) + "\n"


def python_source(name: str) -> str:
    """The ``model.py`` of a tokenizer model, from this package's ``trtllm_python``."""
    return (
        resources.files("inferplane.components.serving.trtllm")
        .joinpath("trtllm_python", f"{name}.py")
        .read_text(encoding="utf-8")
    )


def pipeline_files(model: ServedModel, release: str | None = None) -> dict[str, str]:
    """ConfigMap entries of the text pipeline of a model on Triton `release` (default: the
    pin): three configs and two ``model.py``."""
    return {
        CONFIG_KEYS[ENSEMBLE]: ensemble_config(model, release),
        CONFIG_KEYS[PREPROCESSING]: preprocessing_config(model),
        CONFIG_KEYS[POSTPROCESSING]: postprocessing_config(model),
        **{key: python_source(name) for name, key in SOURCE_KEYS.items()},
    }


def layout_commands(config_dir: str) -> list[str]:
    """Shell lines that lay the pipeline out in the pod's model repository."""
    lines = []
    for name in PIPELINE_MODELS:
        lines += [
            f'mkdir -p "{MODELS_DIR}/{name}/1"',
            f'cp "{config_dir}/{CONFIG_KEYS[name]}" "{MODELS_DIR}/{name}/config.pbtxt"',
        ]
        if name in SOURCE_KEYS:
            lines.append(f'cp "{config_dir}/{SOURCE_KEYS[name]}" "{MODELS_DIR}/{name}/1/model.py"')
    return lines
