"""TensorRT-LLM models: the GPU memory fit and tensor-parallel checks (exact text).

The arithmetic (`inferplane.blueprint.capacity.fit`, `semantic_trtllm_fit`): weights +
overhead + one ``max_seq_len`` sequence's KV cache / ``kv_cache_free_gpu_mem_fraction`` <=
gpus × GPU memory, because the backend gives the KV cache that fraction of the memory left
free after the weights (TensorRT-LLM ``docs/source/reference/memory.md``).
"""

from __future__ import annotations

import pytest
from test_semantic_trtllm import BASE, edit

from inferplane.blueprint import llm_catalog
from inferplane.blueprint.capacity import fit
from inferplane.blueprint.checks import semantic_trtllm_fit
from inferplane.blueprint.checks.semantic import check
from inferplane.blueprint.checks.semantic_vllm import advisories
from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.semantic_trtllm import fit_numbers

L4_POOL = "  l4:\n    gpu: nvidia-l4\n    gpus_per_node: 8\n    nodes: {min: 0, max: 1}\n"


def errors(text: str) -> list[str]:
    return [d.format() for d in check(load_text(text, "bp.yaml"))]


def warnings(text: str) -> list[str]:
    return [d.format() for d in advisories(load_text(text, "bp.yaml"))]


def with_l4(text: str = BASE) -> str:
    return edit("models:\n", L4_POOL + "models:\n", text)


def test_70b_fp8_tp4_on_h100_fits_silently() -> None:
    assert errors(BASE) == []
    assert warnings(BASE) == []


def test_70b_in_bf16_on_one_l4_is_refused_with_the_numbers() -> None:
    text = with_l4()
    text = edit("    pool: h100\n    gpus: 4\n", "    pool: l4\n    gpus: 1\n", text)
    text = edit("      quantization: fp8\n      kv_cache_quantization: fp8\n", "", text)
    assert errors(text) == [
        "bp.yaml:28:13: error: models.chat70b.source: the model (70.55B parameters, bf16) does "
        "not fit in GPU memory: needs 138.5 GiB (weights 131.4 + overhead 1.5 + KV cache 5.0 "
        "for 1 × 16384 tokens / kv_cache_free_gpu_mem_fraction 0.90) but 1 × nvidia-l4 gives "
        "24.0 GiB; use more GPUs (tensor parallel), a quantization (fp8, int4_awq), "
        "kv_cache_quantization, or a shorter tensorrt_llm.max_seq_len"
    ]


def test_a_long_context_that_does_not_fit_the_kv_share_is_refused() -> None:
    # 8B int4_awq on one L4: the weights fit, and one 128k-token bf16 sequence (16 GiB) would
    # fit in what they leave, but not in half of it.
    text = with_l4()
    text = edit(
        "meta-llama/Llama-3.3-70B-Instruct@6f6073b423013f6a7d4d9f39144961bfbfbc386b",
        "meta-llama/Llama-3.1-8B-Instruct@0e9e39f249a16976918f6564b8830bc894c89659",
        text,
    )
    text = edit("    pool: h100\n    gpus: 4\n", "    pool: l4\n    gpus: 1\n", text)
    text = edit("max_seq_len: 16384", "max_seq_len: 131072", text)
    text = edit(
        "quantization: fp8\n      kv_cache_quantization: fp8\n",
        "quantization: int4_awq\n      kv_cache_free_gpu_mem_fraction: 0.5\n",
        text,
    )
    assert errors(text) == [
        "bp.yaml:28:13: error: models.chat70b.source: the model (8.03B parameters, int4_awq) "
        "does not fit in GPU memory: needs 37.2 GiB (weights 3.7 + overhead 1.5 + KV cache 16.0 "
        "for 1 × 131072 tokens / kv_cache_free_gpu_mem_fraction 0.50) but 1 × nvidia-l4 gives "
        "24.0 GiB; use more GPUs (tensor parallel), a quantization (fp8, int4_awq), "
        "kv_cache_quantization, or a shorter tensorrt_llm.max_seq_len"
    ]
    # The same sequence in the default 0.9 share fits.
    assert errors(edit("fraction: 0.5", "fraction: 0.9", text)) == []


def test_a_tensor_parallel_size_that_does_not_split_the_heads_is_refused() -> None:
    text = edit("    gpus: 4\n", "    gpus: 3\n")
    assert errors(text) == [
        "bp.yaml:26:11: error: models.chat70b.gpus: gpus: 3 cannot split the TensorRT-LLM "
        "engine across GPUs: 64 attention heads are not divisible by tensor parallel size 3; "
        "use gpus: one of 1, 2, 4, 8, 16"
    ]


def test_fewer_full_length_sequences_than_max_batch_size_is_an_advisory() -> None:
    text = edit("max_batch_size: 64", "max_batch_size: 512")
    assert errors(text) == []
    assert warnings(text) == [
        "bp.yaml:29:23: warning: models.chat70b.tensorrt_llm.max_batch_size: the KV cache holds "
        "89 sequences of 16384 tokens at once (223.5 GiB at kv_cache_free_gpu_mem_fraction 0.90, "
        "2.50 GiB each), fewer than max_batch_size 512; the scheduler queues the rest when "
        "requests are that long; if long requests are common, lower max_batch_size or "
        "max_seq_len, or use more GPUs"  # the KV cache is fp8 already: not suggested again
    ]


def test_an_unquantized_kv_cache_is_suggested_fp8() -> None:
    text = edit("max_batch_size: 64", "max_batch_size: 512")
    text = edit("      kv_cache_quantization: fp8\n", "", text)
    [warning] = warnings(text)
    assert warning.endswith(
        "lower max_batch_size or max_seq_len, set kv_cache_quantization: fp8, or use more GPUs"
    )


def test_an_unknown_checkpoint_is_an_advisory() -> None:
    text = edit(
        "source: hf://meta-llama/Llama-3.3-70B-Instruct@6f6073b423013f6a7d4d9f39144961bfbfbc386b",
        "source: checkpoints/llama-3.3-70b/",
    )
    text = edit("    secrets: {hf_token: {from_env: HF_TOKEN}}", "", text)  # nothing to stage
    assert errors(text) == []
    assert warnings(text) == [
        "bp.yaml:24:13: warning: models.chat70b.source: GPU memory fit not checked: a "
        "model-store source does not say which model it is; add model_info: hf_repo (org/name, "
        "when it is a common open model inferplane knows) or its numbers (parameters_billions, "
        "layers, heads, kv_heads, head_dim)"
    ]


def test_model_info_describes_a_store_checkpoint() -> None:
    text = edit(
        "source: hf://meta-llama/Llama-3.3-70B-Instruct@6f6073b423013f6a7d4d9f39144961bfbfbc386b",
        "source: checkpoints/llama-3.3-70b/\n"
        "    model_info: {hf_repo: meta-llama/Llama-3.3-70B-Instruct}",
    )
    text = edit("    gpus: 4\n", "    gpus: 3\n", text)
    assert errors(text) == [
        "bp.yaml:27:11: error: models.chat70b.gpus: gpus: 3 cannot split the TensorRT-LLM "
        "engine across GPUs: 64 attention heads are not divisible by tensor parallel size 3; "
        "use gpus: one of 1, 2, 4, 8, 16"
    ]


def test_the_kv_share_is_of_the_memory_left_after_the_weights() -> None:
    """kv_cache_free_gpu_mem_fraction scales what weights and overhead leave, not the GPU."""
    data = load_text(BASE, "bp.yaml").data
    numbers = fit_numbers(data["models"]["chat70b"], data["gpu_pools"]["h100"])
    assert numbers is not None
    facts = llm_catalog.lookup("meta-llama/Llama-3.3-70B-Instruct")
    assert facts is not None
    est = semantic_trtllm_fit.estimate(facts, numbers)
    weights = 70.55e9 * 1 / fit.GIB  # fp8: one byte per weight
    assert est.weights_gib == pytest.approx(weights)
    assert est.budget_gib == 4 * 80
    # 80 layers × 8 KV heads × 128 × K and V × 1 byte (fp8) per token
    assert est.kv_one_gib == pytest.approx(80 * 8 * 128 * 2 * 16384 / fit.GIB)
    assert est.kv_room_gib == pytest.approx((320 - weights - 4 * 1.5) * 0.9)
    assert est.need_gib == pytest.approx(weights + 6 + est.kv_one_gib / 0.9)
