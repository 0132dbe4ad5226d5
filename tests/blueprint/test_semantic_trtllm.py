"""`tensorrt_llm` models: schema and semantic diagnostics (exact text), resolve, fit hook."""

from __future__ import annotations

from inferplane.blueprint.checks.semantic import check
from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.loading.schema import validate_document
from inferplane.blueprint.resolution.resolve import resolve
from inferplane.blueprint.semantic_trtllm import TrtLlmFitNumbers, fit_numbers

BASE = """\
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
    gpus_per_node: 4
    nodes: {min: 1, max: 2}
  a100:
    gpu: nvidia-a100-80gb
    gpus_per_node: 4
    nodes: {min: 0, max: 1}
models:
  chat70b:
    server: triton
    source: hf://meta-llama/Llama-3.3-70B-Instruct@6f6073b423013f6a7d4d9f39144961bfbfbc386b
    pool: h100
    gpus: 4
    precision: bf16
    tensorrt_llm:
      max_batch_size: 64
      max_input_len: 8192
      max_seq_len: 16384
      quantization: fp8
      kv_cache_quantization: fp8
    secrets: {hf_token: {from_env: HF_TOKEN}}   # the checkpoint is gated
"""


def diagnostics(text: str) -> list[str]:
    doc = load_text(text, "bp.yaml")
    found = validate_document(doc)
    if not found:
        found = check(doc)
    return [d.format() for d in found]


def edit(old: str, new: str, text: str = BASE) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def test_base_is_valid() -> None:
    assert diagnostics(BASE) == []


def test_tensorrt_llm_only_on_triton() -> None:
    text = edit("    server: triton\n", "    server: vllm\n")
    assert diagnostics(text) == [
        "bp.yaml:28:5: error: models.chat70b.tensorrt_llm: `tensorrt_llm` applies only to "
        "`server: triton` models; remove it: vLLM builds nothing; or use `server: triton` for "
        "TensorRT-LLM"
    ]


def test_not_together_with_tensorrt() -> None:
    text = edit("    tensorrt_llm:\n", "    tensorrt: {}\n    tensorrt_llm:\n")
    assert diagnostics(text) == [
        "bp.yaml:28:15: error: models.chat70b.tensorrt: `tensorrt` and `tensorrt_llm` are both "
        "set; keep `tensorrt_llm` for an LLM checkpoint, or `tensorrt` for an ONNX model"
    ]


def test_max_seq_len_at_least_max_input_len() -> None:
    text = edit("max_seq_len: 16384", "max_seq_len: 4096")
    assert diagnostics(text) == [
        "bp.yaml:31:20: error: models.chat70b.tensorrt_llm.max_seq_len: max_seq_len (4096) is "
        "shorter than max_input_len (8192); make max_seq_len at least max_input_len: it counts "
        "the prompt and the output"
    ]


def test_source_must_be_a_checkpoint() -> None:
    text = edit(
        "source: hf://meta-llama/Llama-3.3-70B-Instruct@6f6073b423013f6a7d4d9f39144961bfbfbc386b",
        "source: llama70b/model.onnx",
    )
    assert diagnostics(text) == [
        "bp.yaml:24:13: error: models.chat70b.source: a TensorRT-LLM engine is built from an "
        "LLM checkpoint, not an ONNX file; give hf://org/name@revision, or the checkpoint's "
        "directory under model_store"
    ]


def test_a_store_checkpoint_directory_and_hf_are_both_sources() -> None:
    text = edit(
        "source: hf://meta-llama/Llama-3.3-70B-Instruct@6f6073b423013f6a7d4d9f39144961bfbfbc386b",
        "source: checkpoints/llama-3.3-70b/",
    )
    assert diagnostics(text) == []


def test_fp8_needs_fp8_tensor_cores() -> None:
    text = edit("    pool: h100\n", "    pool: a100\n")
    assert diagnostics(text) == [
        "bp.yaml:32:21: error: models.chat70b.tensorrt_llm.quantization: fp8 needs FP8 tensor "
        "cores (compute capability 8.9+); nvidia-a100-80gb is 8.0; use int4_awq or int8_sq on "
        "this GPU, or an L4/L40S/H100-class GPU",
        "bp.yaml:33:30: error: models.chat70b.tensorrt_llm.kv_cache_quantization: fp8 needs FP8 "
        "tensor cores (compute capability 8.9+); nvidia-a100-80gb is 8.0; use int8 on this GPU, "
        "or an L4/L40S/H100-class GPU",
    ]


def test_precision_is_the_compute_type() -> None:
    text = edit("precision: bf16", "precision: fp8")
    assert diagnostics(text) == [
        "bp.yaml:27:16: error: models.chat70b.precision: precision fp8 is not a TensorRT-LLM "
        "compute type; use fp16 or bf16, and quantize with tensorrt_llm.quantization (e.g. "
        "quantization: fp8)"
    ]


def test_batching_does_not_apply() -> None:
    text = edit("    tensorrt_llm:\n", "    batching: {max_batch_size: 8}\n    tensorrt_llm:\n")
    assert diagnostics(text) == [
        "bp.yaml:28:15: error: models.chat70b.batching: `batching` does not apply to a "
        "TensorRT-LLM model; remove it: TensorRT-LLM batches in flight "
        "(tensorrt_llm.max_batch_size) and is ready only once its engine is loaded"
    ]


def test_quantization_values_are_tensorrt_llms() -> None:
    text = edit("quantization: fp8\n      kv", "quantization: awq\n      kv")
    [message] = diagnostics(text)
    assert message.startswith("bp.yaml:32:21: error: models.chat70b.tensorrt_llm.quantization:")
    assert "int4_awq" in message


def test_resolves_with_the_backend_defaults() -> None:
    env = resolve(load_text(BASE, "bp.yaml"), "prod")
    llm = env.models["chat70b"].tensorrt_llm
    assert llm is not None
    assert (llm.max_batch_size, llm.max_input_len, llm.max_seq_len) == (64, 8192, 16384)
    assert (llm.quantization, llm.kv_cache_quantization) == ("fp8", "fp8")
    assert llm.kv_cache_free_gpu_mem_fraction == 0.9
    assert llm.batch_scheduler_policy == "guaranteed_no_evict"
    assert (llm.enable_kv_cache_reuse, llm.enable_chunked_context, llm.max_queue_size) == (
        False,
        False,
        0,
    )


def test_fit_numbers_hook() -> None:
    data = load_text(BASE, "bp.yaml").data
    numbers = fit_numbers(data["models"]["chat70b"], data["gpu_pools"]["h100"])
    assert numbers == TrtLlmFitNumbers(
        hf_repo="meta-llama/Llama-3.3-70B-Instruct",
        weight_bytes_per_param=1,
        kv_cache_bytes_per_value=1,
        max_seq_len=16384,
        max_batch_size=64,
        tensor_parallel_size=4,
        gpu_memory_gib=80,
        kv_cache_free_gpu_mem_fraction=0.9,
    )
    plain = dict(data["models"]["chat70b"])
    plain["tensorrt_llm"] = {"max_batch_size": 1, "max_input_len": 8, "max_seq_len": 8}
    unquantized = fit_numbers(plain, data["gpu_pools"]["h100"])
    assert unquantized is not None
    assert (unquantized.weight_bytes_per_param, unquantized.kv_cache_bytes_per_value) == (2, 2)
    assert fit_numbers({"source": "x/", "server": "triton"}, data["gpu_pools"]["h100"]) is None


def test_time_to_first_token_needs_a_streaming_model() -> None:
    ttft = "    tensorrt_llm:\n      streaming: true\n"
    text = edit("    tensorrt_llm:\n", "    slo: {ttft_p95_ms: 500}\n" + ttft)
    text = edit(
        "    precision: bf16\n",
        "    precision: bf16\n    autoscaling: {metric: ttft_p95_ms, target: 400}\n",
        text,
    )
    assert diagnostics(text) == []
    refused = edit("      streaming: true\n", "      streaming: false\n", text)
    assert diagnostics(refused) == [
        "bp.yaml:28:27: error: models.chat70b.autoscaling.metric: time to first token is "
        "exported only for a streaming TensorRT-LLM model; set tensorrt_llm.streaming: true "
        "(clients then stream), or scale on queue_depth or p95_latency_ms",
        "bp.yaml:29:24: error: models.chat70b.slo.ttft_p95_ms: time to first token is exported "
        "only for a streaming TensorRT-LLM model; set tensorrt_llm.streaming: true (clients "
        "then stream), or use slo.p95_ms",
    ]


def test_the_text_pipeline_names_are_reserved() -> None:
    text = edit("  chat70b:\n", "  ensemble:\n")
    assert diagnostics(text) == [
        "bp.yaml:23:5: error: models.ensemble: a TensorRT-LLM model cannot be named "
        "'ensemble': its Triton repository serves the text pipeline under the names ensemble, "
        "preprocessing, postprocessing; rename the model"
    ]


def test_a_speech_model_is_not_a_tensorrt_llm_text_model() -> None:
    text = edit(
        "hf://meta-llama/Llama-3.3-70B-Instruct@6f6073b423013f6a7d4d9f39144961bfbfbc386b",
        "hf://openai/whisper-large-v3@06f233fe06e710322aca913c1bc4249a0d71fce1",
    )
    assert diagnostics(text) == [
        "bp.yaml:24:13: error: models.chat70b.source: openai/whisper-large-v3 is a speech "
        "model (Whisper); tensorrt_llm builds and serves decoder-only LLMs (one engine, the "
        "text pipeline preprocessing → tensorrt_llm → postprocessing); TensorRT-LLM serves it "
        "through a Triton pipeline of its own (tensorrtllm_backend docs/whisper.md), which "
        "inferplane does not build: remove tensorrt_llm and serve the model exported to ONNX "
        "with tensorrt: on server: triton"
    ]


def test_an_encoder_decoder_checkpoint_in_the_store_is_named_by_model_info() -> None:
    text = edit(
        "source: hf://meta-llama/Llama-3.3-70B-Instruct@6f6073b423013f6a7d4d9f39144961bfbfbc386b",
        "source: checkpoints/flan-t5/\n    model_info: {hf_repo: google/flan-t5-xl}",
    )
    found = [d for d in diagnostics(text) if "encoder-decoder" in d]
    assert found == [
        "bp.yaml:24:13: error: models.chat70b.source: google/flan-t5-xl is an encoder-decoder "
        "model; tensorrt_llm builds and serves decoder-only LLMs (one engine, the text "
        "pipeline preprocessing → tensorrt_llm → postprocessing); TensorRT-LLM serves it "
        "through a Triton pipeline of its own (tensorrtllm_backend docs/encoder_decoder.md), "
        "which inferplane does not build: remove tensorrt_llm and serve the model exported to "
        "ONNX with tensorrt: on server: triton"
    ]
