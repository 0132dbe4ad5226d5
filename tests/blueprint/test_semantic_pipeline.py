"""Triton backends and pipelines: schema and semantic diagnostics (exact text), resolve."""

from __future__ import annotations

from pathlib import Path

import pytest

from inferplane.blueprint.checks.semantic import check
from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.loading.schema import validate_document
from inferplane.blueprint.resolution.resolve import resolve
from inferplane.blueprint.triton_model import ShapeProfile, StepBatching, StepInput, Tensor

ROOT = Path(__file__).resolve().parents[2]

HEAD = """\
apiVersion: inferplane/v1
kind: Blueprint
name: search
environments:
  prod:
    cloud: aws
    region: eu-west-1
    zones: [eu-west-1a]
    model_store: s3://models-euw1/
    cluster: {create: true}
gpu_pools:
  l4:
    gpu: nvidia-l4
    nodes: {min: 1, max: 3}
models:
"""
PIPELINE = (
    HEAD
    + """\
  embed:
    server: triton
    source: embed/
    pool: l4
    batching: {max_batch_size: 32}
    pipeline:
      inputs:
        TEXT: {data_type: string, dims: [1]}
      outputs:
        EMBEDDING: {data_type: fp32, dims: [1024], from: encoder.sentence_embedding}
      steps:
        tokenize:
          backend: python
          batching: {max_batch_size: 32}
          inputs:
            TEXT: {data_type: string, dims: [1], from: TEXT}
          outputs:
            input_ids: {data_type: int64, dims: [-1]}
        encoder:
          backend: onnxruntime
          accelerator: tensorrt
          batching: {max_batch_size: 32}
          inputs:
            input_ids: {data_type: int64, dims: [-1], from: tokenize.input_ids}
          outputs:
            sentence_embedding: {data_type: fp32, dims: [1024]}
"""
)
ONE = (
    HEAD
    + """\
  ranker:
    server: triton
    source: ranker/model.pt
    pool: l4
    backend: pytorch
    batching: {max_batch_size: 8}
    inputs:
      input_ids: {data_type: int64, dims: [128]}
    outputs:
      OUTPUT__0: {data_type: fp32, dims: [1]}
    warmup: {batch_sizes: [1, 8]}
"""
)


def diagnostics(text: str) -> list[str]:
    doc = load_text(text, "bp.yaml")
    found = validate_document(doc)
    if not found:
        found = check(doc)
    return [d.format() for d in found]


def edit(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def test_the_bases_are_valid() -> None:
    assert diagnostics(PIPELINE) == []
    assert diagnostics(ONE) == []


def test_resolve_reads_the_pipeline() -> None:
    model = resolve(load_text(PIPELINE, "bp.yaml"), "prod").models["embed"]
    assert model.backend is None and model.tensorrt is None
    assert model.pipeline is not None
    tokenize, encoder = model.pipeline.steps
    assert (tokenize.name, tokenize.backend, tokenize.path, tokenize.device) == (
        "tokenize",
        "python",
        "tokenize",
        "cpu",
    )
    assert not tokenize.warmup and encoder.warmup
    assert encoder.device == "gpu" and encoder.accelerator == "tensorrt"
    assert encoder.batching == StepBatching(32, 1000)
    assert encoder.inputs == (StepInput(Tensor("input_ids", "int64", (-1,)), "tokenize.input_ids"),)
    assert model.pipeline.outputs == (
        StepInput(Tensor("EMBEDDING", "fp32", (1024,)), "encoder.sentence_embedding"),
    )


def test_resolve_reads_the_backend() -> None:
    model = resolve(load_text(ONE, "bp.yaml"), "prod").models["ranker"]
    assert model.backend == "pytorch" and model.tensorrt is None
    assert model.inputs == (Tensor("input_ids", "int64", (128,)),)
    plain = edit(ONE, "    backend: pytorch\n", "    backend: tensorrt\n")
    plain = edit(plain, "source: ranker/model.pt", "source: ranker/model.onnx")
    for key in ("inputs:\n      input_ids: {data_type: int64, dims: [128]}\n",):
        plain = plain.replace("    " + key, "")
    plain = plain.replace("    outputs:\n      OUTPUT__0: {data_type: fp32, dims: [1]}\n", "")
    plain = plain.replace("    warmup: {batch_sizes: [1, 8]}\n", "")
    trt = resolve(load_text(plain, "bp.yaml"), "prod").models["ranker"]
    assert trt.backend == "tensorrt" and trt.tensorrt is not None and trt.tensorrt.inputs == ()


CASES = [
    pytest.param(
        PIPELINE,
        "from: tokenize.input_ids}",
        "from: tokenize.token_ids}",
        "bp.yaml:39:61: error: models.embed.pipeline.steps.encoder.inputs.input_ids.from: step "
        "tokenize has no output 'token_ids'; name one of its outputs",
        id="unknown-output",
    ),
    pytest.param(
        PIPELINE,
        "from: TEXT}",
        "from: encoder.sentence_embedding}",
        "bp.yaml:31:56: error: models.embed.pipeline.steps.tokenize.inputs.TEXT.from: "
        "'encoder.sentence_embedding' is an output of step encoder, which runs after this one; "
        "declare the steps in the order they run, each after the steps that feed it",
        id="later-step",
    ),
    pytest.param(
        PIPELINE,
        "from: tokenize.input_ids}",
        "from: encoder.sentence_embedding}",
        "bp.yaml:39:61: error: models.embed.pipeline.steps.encoder.inputs.input_ids.from: "
        "'encoder.sentence_embedding' is an output of step encoder, which runs as this step "
        "(a cycle); declare the steps in the order they run, each after the steps that feed it",
        id="cycle",
    ),
    pytest.param(
        PIPELINE,
        "input_ids: {data_type: int64, dims: [-1], from",
        "input_ids: {data_type: int32, dims: [-1], from",
        "bp.yaml:39:36: error: models.embed.pipeline.steps.encoder.inputs.input_ids.data_type: "
        "'tokenize.input_ids' is int64, not int32: Triton refuses an ensemble whose tensors "
        "disagree on their type; declare data_type: int64, or convert it in the step that "
        "produces 'tokenize.input_ids'",
        id="dtype-mismatch",
    ),
    pytest.param(
        PIPELINE,
        "EMBEDDING: {data_type: fp32, dims: [1024]",
        "EMBEDDING: {data_type: fp32, dims: [768]",
        "bp.yaml:25:44: error: models.embed.pipeline.outputs.EMBEDDING.dims: "
        "'encoder.sentence_embedding' has dims [1024], which do not fit [768]; give both the "
        "same shape (-1 for a dimension of any size), the batch dimension left out where the "
        "model batches",
        id="dims-mismatch",
    ),
    pytest.param(
        PIPELINE,
        "from: encoder.sentence_embedding}",
        "from: TEXT}",
        "bp.yaml:25:58: error: models.embed.pipeline.outputs.EMBEDDING.from: 'TEXT' is no step "
        "output (a pipeline input is not an output); name a step's output as <step>.<output>: "
        "tokenize.input_ids, encoder.sentence_embedding",
        id="output-from-input",
    ),
    pytest.param(
        PIPELINE,
        "            sentence_embedding: {data_type: fp32, dims: [1024]}\n",
        "            sentence_embedding: {data_type: fp32, dims: [1024]}\n"
        "            pooled: {data_type: fp32, dims: [1024]}\n",
        "bp.yaml:42:21: error: models.embed.pipeline.steps.encoder.outputs.pooled: output "
        "'pooled' of step encoder feeds no step and no pipeline output: Triton refuses an "
        "ensemble with an unused tensor; use it (a step input's or an output's `from`), or "
        "remove it",
        id="unused-output",
    ),
    pytest.param(
        PIPELINE,
        "          batching: {max_batch_size: 32}\n          inputs:\n            input_ids",
        "          batching: {max_batch_size: 16}\n          inputs:\n            input_ids",
        "bp.yaml:37:38: error: models.embed.pipeline.steps.encoder.batching.max_batch_size: the "
        "pipeline takes batches of up to 32 (batching.max_batch_size), and step encoder up to "
        "16: Triton refuses to load such an ensemble; raise it to at least 32, or lower the "
        "model's batching.max_batch_size",
        id="step-batches-less",
    ),
    pytest.param(
        PIPELINE,
        "          backend: python\n",
        "          backend: python\n          accelerator: cuda\n",
        "bp.yaml:29:24: error: models.embed.pipeline.steps.tokenize.accelerator: accelerator "
        "chooses ONNX Runtime's execution provider, and this step's backend is python; remove "
        "accelerator",
        id="accelerator-on-python",
    ),
    pytest.param(
        PIPELINE,
        "    source: embed/\n",
        "    source: embed/model.onnx\n",
        "bp.yaml:18:13: error: models.embed.source: a pipeline's source is the directory "
        "holding its steps' directories; end it with / (e.g. embeddings/), each step's files "
        "under <source>/<step>/",
        id="source-is-a-file",
    ),
    pytest.param(
        PIPELINE,
        "    batching: {max_batch_size: 32}\n    pipeline:",
        "    batching: {max_batch_size: 32}\n    warmup: {}\n    pipeline:",
        "bp.yaml:21:13: error: models.embed.warmup: Triton refuses warm-up requests on an "
        "ensemble (core r25.08 src/model_config_utils.cc: model_warmup can not be specified "
        "for ensemble); each ONNX and TorchScript step is warmed up with its own declared "
        "inputs; remove warmup",
        id="warmup-on-ensemble",
    ),
    pytest.param(
        PIPELINE,
        "    batching: {max_batch_size: 32}\n    pipeline:",
        "    batching: {max_batch_size: 32}\n    backend: onnxruntime\n    pipeline:",
        "bp.yaml:21:14: error: models.embed.backend: `backend` describes one model's file, "
        "and this model is a pipeline; describe each step under pipeline.steps, or remove "
        "`pipeline`",
        id="backend-on-pipeline",
    ),
    pytest.param(
        ONE,
        "OUTPUT__0: {data_type: fp32",
        "OUTPUT__0: {data_type: fp16",
        "bp.yaml:25:30: error: models.ranker.outputs.OUTPUT__0.data_type: the pytorch backend "
        "has no fp16 tensors; declare the type the model's file uses (bool, fp32, fp64, int16, "
        "int32, int64, int8, uint8)",
        id="pytorch-type",
    ),
    pytest.param(
        ONE,
        "source: ranker/model.pt",
        "source: ranker/model.onnx",
        "bp.yaml:18:13: error: models.ranker.source: backend pytorch loads a TorchScript file "
        "(.pt), and ranker/model.onnx is not one; point source at the model's .pt file",
        id="wrong-file-kind",
    ),
    pytest.param(
        ONE,
        "    backend: pytorch\n",
        "    backend: pytorch\n    accelerator: tensorrt\n",
        "bp.yaml:21:18: error: models.ranker.accelerator: accelerator chooses ONNX Runtime's "
        "execution provider, and backend pytorch is not ONNX Runtime; remove accelerator (the "
        "PyTorch backend runs TorchScript on LibTorch)",
        id="tensorrt-ep-on-pytorch",
    ),
    pytest.param(
        ONE,
        "    outputs:\n      OUTPUT__0: {data_type: fp32, dims: [1]}\n",
        "",
        "bp.yaml:20:14: error: models.ranker.backend: Triton cannot read a TorchScript model's "
        "outputs (the PyTorch backend does not auto-complete its config), and none are "
        "declared; declare outputs: {<name>: {data_type, dims}}, with TorchScript's names (the "
        "forward arguments, or <name>__<index>)",
        id="pytorch-needs-outputs",
    ),
    pytest.param(
        ONE,
        "    inputs:\n      input_ids: {data_type: int64, dims: [128]}\n",
        "",
        "bp.yaml:20:14: error: models.ranker.backend: Triton cannot read a TorchScript model's "
        "inputs (the PyTorch backend does not auto-complete its config), and none are "
        "declared; declare inputs: {<name>: {data_type, dims}}, with TorchScript's names (the "
        "forward arguments, or <name>__<index>)",
        id="pytorch-needs-inputs",
    ),
    pytest.param(
        ONE,
        "    backend: pytorch\n",
        "    backend: pytorch\n    tensorrt: {}\n",
        "bp.yaml:21:15: error: models.ranker.tensorrt: a `tensorrt` section builds a TensorRT "
        "engine, and backend pytorch runs the model without one; remove the tensorrt section, "
        "or set backend: tensorrt",
        id="tensorrt-section-on-pytorch",
    ),
]


@pytest.mark.parametrize(("base", "old", "new", "expected"), CASES)
def test_diagnostics(base: str, old: str, new: str, expected: str) -> None:
    assert expected in diagnostics(edit(base, old, new))


def test_onnxruntime_warmup_needs_declared_inputs() -> None:
    text = edit(ONE, "    backend: pytorch\n", "    backend: onnxruntime\n")
    text = edit(text, "source: ranker/model.pt", "source: ranker/model.onnx")
    text = edit(text, "    inputs:\n      input_ids: {data_type: int64, dims: [128]}\n", "")
    assert diagnostics(text) == [
        "bp.yaml:24:13: error: models.ranker.warmup: warm-up requests need the model's input "
        "names, types and shapes; declare them under inputs (name: {data_type, dims}), or "
        "remove warmup"
    ]


def test_tensorrt_provider_precision() -> None:
    text = edit(ONE, "    backend: pytorch\n", "    backend: onnxruntime\n    precision: bf16\n")
    text = edit(text, "source: ranker/model.pt", "source: ranker/model.onnx")
    text = edit(text, "    pool: l4\n", "    pool: l4\n    accelerator: tensorrt\n")
    assert (
        "bp.yaml:22:16: error: models.ranker.precision: ONNX Runtime's TensorRT provider runs "
        "fp32, fp16 or int8, not bf16; use precision fp16 (or int8 with a calibrated model), "
        "or accelerator: cuda"
    ) in diagnostics(text)


HASH = "--hash=sha256:" + "ab" * 32


def with_requirements(step_line: str, lines: list[str], text: str = PIPELINE) -> str:
    block = "".join(f'            - "{line}"\n' for line in lines)
    return edit(text, step_line, step_line + "          requirements:\n" + block)


def test_requirements_must_be_pinned_with_hashes() -> None:
    text = with_requirements("          backend: python\n", ["tokenizers>=0.21"])
    assert diagnostics(text) == [
        "bp.yaml:30:15: error: models.embed.pipeline.steps.tokenize.requirements[0]: "
        '"tokenizers>=0.21" is not pinned to a version with the sha256 of its wheel; write '
        "name==version --hash=sha256:<hash> (pip-compile --generate-hashes writes these "
        "lines): an unpinned or unhashed package would install whatever the index serves "
        "that day"
    ]
    assert diagnostics(with_requirements("          backend: python\n", [f"x==1 {HASH}"])) == []


def test_a_requirement_hash_cut_short_is_counted() -> None:
    text = with_requirements("          backend: python\n", ["x==1 --hash=sha256:ab12cd34"])
    assert diagnostics(text) == [
        "bp.yaml:30:15: error: models.embed.pipeline.steps.tokenize.requirements[0]: a sha256 "
        "digest is 64 hex characters; this one has 8; copy the whole hash: `pip hash <file>` "
        "prints it"
    ]


def test_requirements_are_a_python_steps_and_one_version_per_model() -> None:
    onnx = with_requirements("          backend: onnxruntime\n", [f"numpy==1.26.4 {HASH}"])
    assert diagnostics(onnx) == [
        "bp.yaml:37:13: error: models.embed.pipeline.steps.encoder.requirements: requirements "
        "are installed for Python steps, and this step's backend is onnxruntime; remove them "
        "(its runtime is the image's backend library)"
    ]
    second = edit(
        PIPELINE,
        "          backend: onnxruntime\n          accelerator: tensorrt\n",
        "          backend: python\n",
    )
    both = with_requirements("          backend: python\n", [f"tokenizers==0.21.1 {HASH}"], second)
    both = both.replace(
        "        encoder:\n          backend: python\n",
        "        encoder:\n          backend: python\n          requirements:\n"
        f'            - "Tokenizers==0.20.0 {HASH}"\n',
    )
    assert diagnostics(both) == [
        "bp.yaml:39:15: error: models.embed.pipeline.steps.encoder.requirements[0]: Tokenizers "
        "0.20.0 here, and 0.21.1 in step tokenize: every step of a model imports from one "
        "shared PYTHONPATH; pin one version of Tokenizers in both steps"
    ]


def test_the_default_backend_loads_an_onnx_file() -> None:
    text = edit(ONE, "    backend: pytorch\n", "")
    assert (
        "bp.yaml:18:13: error: models.ranker.source: backend onnxruntime loads an ONNX file "
        "(.onnx), and ranker/model.pt is not one; point source at the model's .onnx file"
    ) in diagnostics(text)


SHAPED = edit(
    PIPELINE,
    "          accelerator: tensorrt\n          batching: {max_batch_size: 32}\n",
    "          accelerator: tensorrt\n          batching: {max_batch_size: 32}\n"
    "          shapes:\n            input_ids: {min: [1, 1], opt: [8, 128], max: [32, 512]}\n",
)


def test_shapes_are_tensorrt_provider_profiles_that_cover_the_input() -> None:
    assert diagnostics(SHAPED) == []
    step = resolve(load_text(SHAPED, "bp.yaml"), "prod").models["embed"].pipeline
    assert step is not None
    assert step.steps[1].shapes == (ShapeProfile("input_ids", (1, 1), (8, 128), (32, 512)),)
    cuda = edit(SHAPED, "accelerator: tensorrt", "accelerator: cuda")
    assert diagnostics(cuda) == [
        "bp.yaml:39:13: error: models.embed.pipeline.steps.encoder.shapes: shapes are profiles "
        "of ONNX Runtime's TensorRT provider, which this step does not use; remove shapes, or "
        "set accelerator: tensorrt"
    ]
    small = edit(SHAPED, "max: [32, 512]", "max: [16, 512]")
    assert diagnostics(small) == [
        "bp.yaml:39:58: error: models.embed.pipeline.steps.encoder.shapes.input_ids.max: the "
        "profile's largest batch (16) is below max_batch_size (32); set its first dimension "
        "to 32"
    ]
    batched = edit(SHAPED, "min: [1, 1]", "min: [4, 1]")
    assert diagnostics(batched) == [
        "bp.yaml:39:30: error: models.embed.pipeline.steps.encoder.shapes.input_ids.min: the "
        "profile's smallest batch (4) is above 1: a request that arrives alone runs at batch "
        "1, outside it; set its first dimension to 1"
    ]
    rank = edit(SHAPED, "opt: [8, 128]", "opt: [8, 128, 1]")
    assert diagnostics(rank) == [
        "bp.yaml:39:24: error: models.embed.pipeline.steps.encoder.shapes.input_ids: min "
        "[1, 1], opt [8, 128, 1] and max [32, 512] are not shapes of one rank with min <= opt "
        "<= max; give three shapes of the same length, each dimension min <= opt <= max"
    ]
    fixed = edit(
        SHAPED,
        "input_ids: {data_type: int64, dims: [-1], from",
        "input_ids: {data_type: int64, dims: [64], from",
    )
    fixed = edit(
        fixed,
        "input_ids: {data_type: int64, dims: [-1]}",
        "input_ids: {data_type: int64, dims: [64]}",
    )
    assert diagnostics(fixed) == [
        "bp.yaml:39:24: error: models.embed.pipeline.steps.encoder.shapes.input_ids: the "
        "profile [1, 1]..[32, 512] does not fit the input's dims [64], after the batch "
        "dimension; give every fixed dimension its size in min, opt and max, and the batch "
        "dimension first when the model batches"
    ]
    unknown = edit(SHAPED, "            input_ids: {min:", "            ids: {min:")
    assert diagnostics(unknown) == [
        "bp.yaml:39:18: error: models.embed.pipeline.steps.encoder.shapes.ids: no input is "
        "named 'ids'; use one of: input_ids"
    ]


def test_extras_and_spelling_do_not_make_a_second_package() -> None:
    second = edit(
        PIPELINE,
        "          backend: onnxruntime\n          accelerator: tensorrt\n",
        "          backend: python\n",
    )
    both = with_requirements("          backend: python\n", [f"tokenizers==0.21.1 {HASH}"], second)
    both = both.replace(
        "        encoder:\n          backend: python\n",
        "        encoder:\n          backend: python\n          requirements:\n"
        f'            - "Tokenizers[x]==0.22.0 {HASH}"\n',
    )
    assert [d.split(": error: ")[1].split(":")[0] for d in diagnostics(both)] == [
        "models.embed.pipeline.steps.encoder.requirements[0]"
    ]


def test_requirements_are_refused_on_a_model_with_its_own_image() -> None:
    text = with_requirements("          backend: python\n", [f"tokenizers==0.21.1 {HASH}"])
    text = text.replace("    source: embed/\n", "    source: embed/\n    image: r.example/t:1\n")
    found = [d for d in diagnostics(text) if "requirements" in d]
    assert found == [
        "bp.yaml:31:13: error: models.embed.pipeline.steps.tokenize.requirements: requirements "
        "are downloaded in the pinned Triton image, for its Python, and this model runs its "
        "own image; remove the model's image, or build the packages into that image"
    ]


SAMPLED = edit(
    PIPELINE,
    "          backend: python\n",
    "          backend: python\n          warmup_sample: {TEXT: 'what is a warm replica?'}\n",
)


def test_a_python_step_warms_with_its_sample() -> None:
    assert diagnostics(SAMPLED) == []
    model = resolve(load_text(SAMPLED, "bp.yaml"), "prod").models["embed"]
    assert model.pipeline is not None
    tokenize = model.pipeline.steps[0]
    assert tokenize.warmup and tokenize.warmup_sample == (("TEXT", "what is a warm replica?"),)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(
            "{TEXT: 'what is a warm replica?'}",
            "{TEXT: hello, TOKENS: hi}",
            "bp.yaml:29:48: error: models.embed.pipeline.steps.tokenize.warmup_sample.TOKENS: "
            "the step has no input 'TOKENS'; name one of its inputs: TEXT",
            id="unknown-input",
        ),
        pytest.param(
            "TEXT: {data_type: string, dims: [1], from: TEXT}",
            "TEXT: {data_type: string, dims: [2], from: TEXT}",
            "bp.yaml:29:33: error: models.embed.pipeline.steps.tokenize.warmup_sample.TEXT: a "
            "sample is one text, and input 'TEXT' has dims [2]; give samples for inputs of one "
            "element (dims [1] or [-1])",
            id="more-than-one-element",
        ),
        pytest.param(
            "TEXT: {data_type: string, dims: [1], from: TEXT}",
            "TEXT: {data_type: string, dims: [1], from: TEXT}\n"
            "            IDS: {data_type: int64, dims: [1], from: TEXT}",
            "bp.yaml:29:26: error: models.embed.pipeline.steps.tokenize.warmup_sample: a warm-up "
            "request carries every input of the step, and IDS has no sample; give each input a "
            "sample, or remove warmup_sample",
            id="an-input-without-sample",
        ),
    ],
)
def test_warmup_sample_diagnostics(old: str, new: str, expected: str) -> None:
    assert expected in diagnostics(edit(SAMPLED, old, new))


def test_a_sample_is_for_python_steps_and_string_inputs() -> None:
    onnx = edit(
        PIPELINE,
        "          accelerator: tensorrt\n",
        "          accelerator: tensorrt\n          warmup_sample: {input_ids: '1'}\n",
    )
    assert (
        "bp.yaml:37:26: error: models.embed.pipeline.steps.encoder.warmup_sample: "
        "warmup_sample warms a Python step, and this step's backend is onnxruntime, which is "
        "warmed with generated samples; remove warmup_sample"
    ) in diagnostics(onnx)
    ids = edit(
        SAMPLED,
        "TEXT: {data_type: string, dims: [1], from: TEXT}",
        "TEXT: {data_type: int64, dims: [1], from: TEXT}",
    )
    assert any(
        "warmup_sample.TEXT: a sample is text, and input 'TEXT' is int64" in d
        for d in diagnostics(ids)
    )


def test_only_a_tensorrt_step_takes_engine_build_settings() -> None:
    """The builder's workspace and optimization level set a step's engine build, as a
    model's `tensorrt` section does; a step of another backend has no build to set."""
    bge = (ROOT / "blueprints" / "bge-search.yaml").read_text()
    tuned = edit(
        bge,
        "          backend: tensorrt       # model.onnx",
        "          workspace_mib: 2048\n          builder_optimization_level: 5\n"
        "          backend: tensorrt       # model.onnx",
    )
    assert not [d for d in diagnostics(tuned) if ": error: " in d]
    step = resolve(load_text(tuned, "bp.yaml"), "prod").models["rerank"].pipeline.steps[1]
    assert (step.name, step.workspace_mib, step.builder_optimization_level) == (
        "cross-encoder",
        2048,
        5,
    )
    python = edit(
        bge,
        "          backend: python\n          instances: 4\n",
        "          backend: python\n          instances: 4\n"
        "          builder_optimization_level: 5\n",
    )
    # The line added under the rerank model's tokenize step, wherever the bundled file has it.
    line = 1 + python.splitlines().index("          builder_optimization_level: 5")
    assert [d for d in diagnostics(python) if ": error: " in d] == [
        f"bp.yaml:{line}:39: error: "
        "models.rerank.pipeline.steps.tokenize.builder_optimization_level: "
        "builder_optimization_level sets the engine build of a backend: tensorrt step, and this "
        "step's backend is python: nothing builds an engine for it; remove "
        "builder_optimization_level"
    ]
