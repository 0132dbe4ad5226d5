"""Validate warns at `accelerator: tensorrt`: ONNX Runtime's TensorRT provider builds its
engines in every new replica, which each scale-out waits for."""

from __future__ import annotations

from pathlib import Path

from inferplane.blueprint.checks.semantic import check
from inferplane.blueprint.checks.semantic_vllm import advisories
from inferplane.blueprint.loading.loader import load, load_text

ROOT = Path(__file__).resolve().parents[2]
BASE = """\
apiVersion: inferplane/v1
kind: Blueprint
name: demo
environments:
  prod:
    cloud: gcp
    project: demo-prod
    region: us-central1
    zones: [us-central1-a, us-central1-b]
    model_store: gs://models-usc1/
    cluster: {create: true}
gpu_pools:
  l4:
    gpu: nvidia-l4
    nodes: {min: 3, max: 6}
models:
  rank:
    server: triton
    source: rank/model.onnx
    pool: l4
    backend: onnxruntime
    accelerator: tensorrt
    batching: {max_batch_size: 32, max_queue_delay_us: 1000}
    replicas: {min: 2, max: 4}
"""
MESSAGE = (
    "runs on ONNX Runtime's TensorRT execution provider, which builds its TensorRT engines "
    "in every new replica as the model loads (its engine cache is the pod's own emptyDir, "
    "empty in a new pod): each scale-out waits about 300 s more (the scale-out budget's "
    "engine_build); build the engine once, in a Job on the pool's GPU type, with backend: "
    "tensorrt"
)


def warnings(text: str) -> list[str]:
    doc = load_text(text, "bp.yaml")
    assert [d.format() for d in check(doc)] == []
    return [d.format() for d in advisories(doc)]


def test_a_model_on_the_tensorrt_provider_is_warned_at_its_accelerator() -> None:
    assert warnings(BASE) == [
        f"bp.yaml:22:18: warning: models.rank.accelerator: model rank {MESSAGE} "
        "(tensorrt.inputs are its profiles), or use accelerator: cuda, which builds nothing"
    ]


def test_the_cuda_provider_and_a_build_job_are_silent() -> None:
    assert warnings(BASE.replace("accelerator: tensorrt", "accelerator: cuda")) == []
    assert warnings(BASE.replace("    accelerator: tensorrt\n", "")) == []
    job = BASE.replace("backend: onnxruntime\n    accelerator: tensorrt", "backend: tensorrt")
    assert warnings(job) == []


def test_a_pipeline_step_on_the_tensorrt_provider_is_warned_at_its_accelerator() -> None:
    path = ROOT / "blueprints" / "bge-search.yaml"
    doc = load(path)
    found = [d.format() for d in advisories(doc) if "engine_build" in d.message]
    # The encoder step's `accelerator: tensorrt`, wherever the bundled file has it.
    lines = path.read_text().splitlines()
    line = 1 + next(
        i for i, t in enumerate(lines) if t.startswith("          accelerator: tensorrt")
    )
    assert found == [
        f"{ROOT}/blueprints/bge-search.yaml:{line}:24: warning: "
        f"models.embed.pipeline.steps.encoder.accelerator: step encoder of model embed "
        f"{MESSAGE} (the step's shapes are its profiles), or use accelerator: cuda, which "
        "builds nothing"
    ]
