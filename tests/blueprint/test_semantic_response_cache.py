"""`response_cache` beyond the schema: which Triton models may have one (exact text)."""

from __future__ import annotations

from inferplane.blueprint.checks.semantic import check
from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.loading.schema import validate_document

LLM = """\
apiVersion: inferplane/v1
kind: Blueprint
name: llm
environments:
  prod:
    cloud: gcp
    project: llm-prod
    region: us-central1
    zones: [us-central1-a]
    model_store: gs://llm-models/
    cluster: {create: true}
gpu_pools:
  h100:
    gpu: nvidia-h100-80gb
    gpus_per_node: 1
    nodes: {min: 1, max: 2}
models:
  chat8b:
    server: triton
    source: hf://meta-llama/Llama-3.1-8B-Instruct@0e9e39f249a16976918f6564b8830bc894c89659
    pool: h100
    gpus: 1
    precision: bf16
    tensorrt_llm: {max_batch_size: 8, max_input_len: 2048, max_seq_len: 4096}
    response_cache: {backend: redis}
    secrets: {hf_token: {from_env: HF_TOKEN}}   # the checkpoint is gated
"""


def diagnostics(text: str) -> list[str]:
    doc = load_text(text, "bp.yaml")
    return [d.format() for d in validate_document(doc) or check(doc)]


def test_no_response_cache_on_a_tensorrt_llm_model() -> None:
    assert diagnostics(LLM) == [
        "bp.yaml:25:21: error: models.chat8b.response_cache: Triton's response cache does not "
        "apply to a TensorRT-LLM model; remove it: generations are sampled, and a streaming "
        "(decoupled) model cannot be cached; tensorrt_llm.enable_kv_cache_reuse reuses shared "
        "prompt prefixes instead"
    ]


def test_the_same_model_without_it_is_valid() -> None:
    assert diagnostics(LLM.replace("    response_cache: {backend: redis}\n", "")) == []
