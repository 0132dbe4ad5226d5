"""Pipeline steps with ``backend: tensorrt``: schema and semantic diagnostics (exact text),
and what resolve makes of them."""

from __future__ import annotations

import pytest
from test_semantic_pipeline import PIPELINE, diagnostics, edit

from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.resolution.resolve import resolve
from inferplane.blueprint.triton_model import ShapeProfile, engine_steps

SHAPES = "          shapes:\n            input_ids: {min: [1, 1], opt: [8, 128], max: [32, 512]}\n"
ENGINE = edit(
    PIPELINE,
    "          backend: onnxruntime\n          accelerator: tensorrt\n"
    "          batching: {max_batch_size: 32}\n",
    "          backend: tensorrt\n          batching: {max_batch_size: 32}\n" + SHAPES,
)


def test_an_engine_step_is_valid_and_resolves() -> None:
    assert diagnostics(ENGINE) == []
    pipeline = resolve(load_text(ENGINE, "bp.yaml"), "prod").models["embed"].pipeline
    assert pipeline is not None
    (encoder,) = engine_steps(pipeline)
    assert (encoder.name, encoder.backend, encoder.device, encoder.warmup) == (
        "encoder",
        "tensorrt",
        "gpu",
        True,
    )
    assert encoder.shapes == (ShapeProfile("input_ids", (1, 1), (8, 128), (32, 512)),)


CASES = [
    pytest.param(
        SHAPES,
        "",
        "bp.yaml:38:49: error: models.embed.pipeline.steps.encoder.inputs.input_ids.dims: input "
        "'input_ids' has dims [-1], and the TensorRT engine of this step is built for a range "
        "of shapes: each -1 dimension needs its min, opt and max; give the step "
        "shapes.input_ids: {min, opt, max}, each a shape of 2 dimensions (the batch first)",
        id="dynamic-input-without-shapes",
    ),
    pytest.param(
        "          backend: tensorrt\n",
        "          backend: tensorrt\n          accelerator: tensorrt\n",
        "bp.yaml:36:24: error: models.embed.pipeline.steps.encoder.accelerator: accelerator "
        "chooses ONNX Runtime's execution provider, and this step's backend is tensorrt: "
        "TensorRT runs the engine a Job builds from its model.onnx; remove accelerator (or set "
        "backend: onnxruntime with accelerator: tensorrt to build the engine in the replica as "
        "it loads)",
        id="accelerator-on-tensorrt",
    ),
    pytest.param(
        "          backend: tensorrt\n",
        "          backend: tensorrt\n          device: cpu\n",
        "bp.yaml:36:19: error: models.embed.pipeline.steps.encoder.device: a TensorRT engine "
        "runs on the GPU only (Triton's TensorRT backend has no KIND_CPU instances); remove "
        "device, or set backend: onnxruntime to run the ONNX model on the CPU",
        id="tensorrt-on-cpu",
    ),
    pytest.param(
        "sentence_embedding: {data_type: fp32, dims: [1024]}",
        "sentence_embedding: {data_type: fp64, dims: [1024]}",
        "bp.yaml:42:45: error: models.embed.pipeline.steps.encoder.outputs.sentence_embedding."
        "data_type: the tensorrt backend has no fp64 tensors; declare the type the model's file "
        "uses (bf16, bool, fp16, fp32, int32, int64, int8, uint8)",
        id="type-tensorrt-lacks",
    ),
    pytest.param(
        "max: [32, 512]",
        "max: [16, 512]",
        "bp.yaml:38:58: error: models.embed.pipeline.steps.encoder.shapes.input_ids.max: the "
        "profile's largest batch (16) is below max_batch_size (32); set its first dimension "
        "to 32",
        id="profile-below-the-batch",
    ),
]


@pytest.mark.parametrize(("old", "new", "expected"), CASES)
def test_engine_step_diagnostics(old: str, new: str, expected: str) -> None:
    assert expected in diagnostics(edit(ENGINE, old, new))


def test_fixed_dims_after_the_batch_need_no_shapes() -> None:
    """Only the batch is dynamic: the build profiles it 1 / max / max itself."""
    fixed = edit(ENGINE, SHAPES, "")
    for old in ("dims: [-1], from", "input_ids: {data_type: int64, dims: [-1]}"):
        fixed = edit(fixed, old, old.replace("[-1]", "[128]"))
    assert diagnostics(fixed) == []


def test_an_unbatched_step_profiles_every_dimension() -> None:
    text = edit(ENGINE, "batching: {max_batch_size: 32}\n    pipeline:", "pipeline:")
    text = edit(text, "          backend: tensorrt\n          batching: {max_batch_size: 32}\n",
                "          backend: tensorrt\n")  # fmt: skip
    assert diagnostics(edit(text, SHAPES, "")) == [
        "bp.yaml:36:49: error: models.embed.pipeline.steps.encoder.inputs.input_ids.dims: "
        "input 'input_ids' has dims [-1], and the TensorRT engine of this step is built for a "
        "range of shapes: each -1 dimension needs its min, opt and max; give the step "
        "shapes.input_ids: {min, opt, max}, each a shape of 1 dimensions"
    ]


def test_a_custom_image_must_name_its_release() -> None:
    text = edit(ENGINE, "    source: embed/\n", "    source: embed/\n    image: r.example/t:1\n")
    assert diagnostics(text) == [
        "bp.yaml:19:12: error: models.embed.image: r.example/t:1 is not an NGC Triton image, "
        "so the TensorRT it runs (which must build the model's engine) is unknown; add "
        'base_release: "YY.MM", the NGC release of the nvcr.io/nvidia/tritonserver image it is '
        "built from (the engine is then built with nvcr.io/nvidia/tensorrt:<base_release>-py3)"
    ]


def test_a_kubernetes_store_needs_the_engine_builders_secret() -> None:
    text = edit(
        ENGINE,
        "  prod:\n    cloud: aws\n    region: eu-west-1\n    zones: [eu-west-1a]\n"
        "    model_store: s3://models-euw1/\n    cluster: {create: true}\n",
        "  local:\n    cloud: kubernetes\n    region: local\n    zones: [zone-a]\n"
        "    model_store: s3://models/\n    model_store_endpoint: http://store.store.svc:9000\n"
        "    model_store_secrets: {reader: store-reader}\n"
        "    cluster: {context: local}\n",
    )
    assert (
        "bp.yaml:11:26: error: environments.local.model_store_secrets: model 'embed' builds a "
        "TensorRT engine, and no Secret is named for `engine_builder`; add `engine_builder: "
        "<Secret name>`: an existing Secret in the blueprint's namespace with "
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
    ) in diagnostics(text)
    given = edit(text, "{reader: store-reader}", "{reader: store-reader, engine_builder: b}")
    assert not [d for d in diagnostics(given) if "model_store_secrets" in d]
