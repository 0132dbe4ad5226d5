"""Validate refuses what the model table, the GPU catalog and the engines already know:
a gated repository without a token, a context longer than the model's, fp8 on a GPU the
engine cannot run it on, an engine profile smaller than the batches Triton forms, and an
hf:// source without an organisation."""

from __future__ import annotations

from inferplane.blueprint import llm_catalog
from inferplane.blueprint.checks.semantic import check
from inferplane.blueprint.checks.semantic_vllm import advisories
from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.loading.schema import validate_document

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
  chat:
    server: vllm
    source: hf://Qwen/Qwen2.5-7B-Instruct@a09a35458c702b33eeacc393d103063234e8bc28
    pool: l4
    precision: bf16
    vllm:
      max_model_len: 8192
    replicas: {min: 2, max: 4}
  rank:
    server: triton
    source: rank/model.onnx
    pool: l4
    tensorrt:
      inputs:
        input_ids: {min: [1, 128], opt: [8, 128], max: [32, 512]}
    batching: {max_batch_size: 32, max_queue_delay_us: 1000}
    replicas: {min: 2, max: 4}
"""
LLAMA = "hf://meta-llama/Llama-3.1-8B-Instruct@0e9e39f249a16976918f6564b8830bc894c89659"


def diagnostics(text: str) -> list[str]:
    return [d.format() for d in check(load_text(text, "bp.yaml"))]


def edit(*pairs: str, text: str = BASE) -> str:
    for old, new in zip(pairs[::2], pairs[1::2], strict=True):
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


def test_base_is_valid() -> None:
    assert diagnostics(BASE) == []


# --- gated repositories ----------------------------------------------------------------------
def test_gated_repository_without_a_token() -> None:
    text = edit("hf://Qwen/Qwen2.5-7B-Instruct@a09a35458c702b33eeacc393d103063234e8bc28", LLAMA)
    assert diagnostics(text) == [
        "bp.yaml:19:13: error: models.chat.source: hf://meta-llama/Llama-3.1-8B-Instruct is a "
        "gated repository: the Hub serves its files only to an account that accepted its "
        "licence (https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct), and the model has "
        "no Hugging Face token, so staging it is refused; accept the licence on the model card, "
        "then give that account's token: secrets: {hf_token: {from_env: HF_TOKEN}} (or "
        "from_pulumi_config, from_secret_manager)"
    ]


def test_gated_repository_with_a_token() -> None:
    text = edit(
        "hf://Qwen/Qwen2.5-7B-Instruct@a09a35458c702b33eeacc393d103063234e8bc28",
        LLAMA,
        "    replicas: {min: 2, max: 4}\n  rank:",
        "    replicas: {min: 2, max: 4}\n    secrets: {hf_token: {from_env: HF_TOKEN}}\n  rank:",
    )
    assert diagnostics(text) == []


def test_every_row_says_whether_it_is_gated_and_where_its_card_is() -> None:
    for repo, facts in llm_catalog.MODELS.items():
        assert facts.card.lower() == f"https://huggingface.co/{repo}"
        assert facts.gated == repo.startswith(("meta-llama/", "mistralai/", "google/"))
        # A speech decoder's context is Whisper's max_target_positions (448).
        assert facts.context is not None and facts.context >= (
            448 if facts.encoder_decoder else 4096
        )


# --- context -----------------------------------------------------------------------------------
def test_max_model_len_beyond_the_models_context() -> None:
    text = edit("max_model_len: 8192", "max_model_len: 65536")
    assert diagnostics(text) == [
        "bp.yaml:23:22: error: models.chat.vllm.max_model_len: max_model_len 65536 is longer "
        "than Qwen/Qwen2.5-7B-Instruct's context of 32768 tokens (max_position_embeddings in "
        "its config.json); vLLM refuses to start; use max_model_len <= 32768"
    ]


def test_max_model_len_beyond_the_context_set_by_an_override() -> None:
    text = edit(
        "    cluster: {create: true}\n",
        "    cluster: {create: true}\n"
        "    overrides: {models: {chat: {vllm: {max_model_len: 40000}}}}\n",
    )
    [message] = diagnostics(text)
    assert message.startswith(
        "bp.yaml:12:55: error: environments.prod.overrides.models.chat.vllm.max_model_len: "
        "max_model_len 40000 is longer than Qwen/Qwen2.5-7B-Instruct's context of 32768"
    )


def test_base_models_keep_their_own_context() -> None:
    assert llm_catalog.lookup("Qwen/Qwen2.5-7B").context == 131072  # type: ignore[union-attr]
    assert llm_catalog.lookup("Qwen/Qwen2.5-7B-Instruct").context == 32768  # type: ignore[union-attr]


# --- fp8 on vLLM -------------------------------------------------------------------------------
def test_vllm_fp8_before_ampere() -> None:
    text = edit("gpu: nvidia-l4", "gpu: nvidia-t4", "precision: bf16", "precision: fp8")
    assert diagnostics(text) == [
        "bp.yaml:21:16: error: models.chat.precision: vLLM runs fp8 from compute capability "
        "8.0 (Ampere, weight-only; 8.9+ with FP8 tensor cores); nvidia-t4 of pool 'l4' is 7.5; "
        "use fp16 on this GPU (or a checkpoint quantized to int8/int4 with its method in "
        "vllm.quantization), or an A10G/A100/L4-class GPU"
    ]


def test_vllm_fp8_quantization_before_ampere_points_at_the_quantization() -> None:
    text = edit(
        "gpu: nvidia-l4",
        "gpu: nvidia-t4",
        "precision: bf16",
        "precision: fp16",
        "max_model_len: 8192",
        "max_model_len: 8192\n      quantization: fp8",
    )
    [message] = diagnostics(text)
    assert message.startswith("bp.yaml:24:21: error: models.chat.vllm.quantization: vLLM runs fp8")


def test_vllm_fp8_on_ampere_runs_weight_only() -> None:
    text = edit(
        "gpu: nvidia-l4",
        "gpu: nvidia-a100-40gb",
        "precision: bf16",
        "precision: fp8",
        "  rank:\n    server: triton",
        "  rank:\n    precision: fp16\n    server: triton",
    )
    assert diagnostics(text) == []


# --- TensorRT profiles --------------------------------------------------------------------------
def test_tensorrt_profile_below_the_max_batch_size() -> None:
    text = edit("max: [32, 512]", "max: [16, 512]")
    assert diagnostics(text) == [
        "bp.yaml:31:56: error: models.rank.tensorrt.inputs.input_ids.max: the engine's max "
        "batch (16) is below batching.max_batch_size (32): Triton refuses to load the model, "
        "as its batches could not run on the engine; make the first dimension of max 32, or "
        "lower batching.max_batch_size to 16"
    ]


# --- hf:// names -------------------------------------------------------------------------------
def test_hf_source_without_an_organisation() -> None:
    text = edit("hf://Qwen/Qwen2.5-7B-Instruct@", "hf://Qwen2.5-7B-Instruct@")
    doc = load_text(text, "bp.yaml")
    assert [d.format() for d in validate_document(doc)] == [
        'bp.yaml:19:13: error: models.chat.source: "hf://Qwen2.5-7B-Instruct@a09a35458c702b33e'
        'eacc393d103063234e8bc28" names no organisation: Hugging Face repositories are named '
        "org/name; write hf://<org>/<name>@<revision>, e.g. "
        "hf://Qwen/Qwen2.5-7B-Instruct@<commit SHA>, as the repository's page on "
        "huggingface.co names it"
    ]


# --- batch models users wait on -----------------------------------------------------------------
def warnings(text: str) -> list[str]:
    return [d.format() for d in advisories(load_text(text, "bp.yaml"))]


BATCH = "    latency_class: batch\n    slo: {p95_ms: 2000}\n    replicas: {min: 0, max: 4}\n  rank:"


def test_a_batch_model_with_a_realtime_slo_and_http_traffic_is_an_advisory() -> None:
    text = edit("    replicas: {min: 2, max: 4}\n  rank:", BATCH)
    assert diagnostics(text) == []
    assert warnings(text) == [
        "bp.yaml:24:20: warning: models.chat.latency_class: model chat is marked batch but "
        "has a realtime SLO (p95_ms 2000) and takes HTTP traffic: batch lets it scale to zero "
        "without a warm replica per zone, and a request that finds it cold waits minutes for a "
        "GPU replica to start; if users wait on it, make it realtime (the default: warm "
        "replicas in every zone); keep batch for work nobody waits on, and drop its realtime "
        "SLO"
    ]


def test_a_batch_model_with_an_hour_long_slo_is_silent() -> None:
    text = edit("    replicas: {min: 2, max: 4}\n  rank:", BATCH.replace("2000", "3600000"))
    assert warnings(text) == []


def test_a_batch_model_on_grpc_only_is_silent() -> None:
    text = edit(
        "    replicas: {min: 2, max: 4}\n  rank:",
        BATCH.replace("  rank:", "    expose: {protocol: grpc}\n  rank:"),
        "    server: vllm\n",
        "    server: triton\n    tensorrt_llm: {max_batch_size: 8, max_input_len: 1024, "
        "max_seq_len: 2048}\n",
        "    vllm:\n      max_model_len: 8192\n",
        "",
    )
    assert [w for w in warnings(text) if "marked batch" in w] == []


# --- warm-up data types ---------------------------------------------------------------------------
WARMUP = "    warmup: {batch_sizes: [1, 8]}\n    replicas: {min: 2, max: 4}\n"


def test_a_warmup_type_guessed_from_the_name_is_an_advisory() -> None:
    text = BASE[: BASE.rindex("    replicas:")] + WARMUP
    assert diagnostics(text) == []
    assert warnings(text) == [
        "bp.yaml:31:20: warning: models.rank.tensorrt.inputs.input_ids: warm-up sends int64 "
        "data for input 'input_ids', a type guessed from its name; Triton does not load the "
        "model if the ONNX input has another type; declare it: input_ids: {..., data_type: "
        "int64} (or the type the ONNX model's input has)"
    ]


def test_a_declared_warmup_type_is_silent() -> None:
    text = BASE[: BASE.rindex("    replicas:")] + WARMUP
    text = edit("max: [32, 512]}", "max: [32, 512], data_type: int32}", text=text)
    assert diagnostics(text) == []
    assert warnings(text) == []


def test_counts_agree_with_their_nouns() -> None:
    from inferplane.blueprint.errors import counted

    assert counted(1, "environment") == "1 environment"
    assert counted(2, "GPU") == "2 GPUs"
    assert counted(1.0, "GPU") == "1 GPU"
