"""The memory arithmetic of `inferplane.blueprint.capacity.fit` and the model table it reads."""

from __future__ import annotations

import re

import pytest

from inferplane.blueprint import llm_catalog
from inferplane.blueprint.capacity import fit


def test_70b_bf16_on_one_l4() -> None:
    llama = llm_catalog.lookup("meta-llama/Llama-3.1-70B-Instruct")
    assert llama is not None
    est = fit.estimate(
        parameters=llama.parameters,
        bytes_per_weight=fit.weight_bytes("bf16", None),
        layers=llama.layers,
        kv_heads=llama.kv_heads,
        head_dim=llama.head_dim,
        kv_bytes=fit.kv_cache_bytes("bf16", None),
        max_model_len=8192,
        max_num_seqs=None,
        gpus=1,
        gpu_memory_gib=24,
        gpu_memory_utilization=0.9,
    )
    # 70.55e9 x 2 bytes; 80 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes = 320 KiB/token.
    assert round(est.weights_gib, 2) == 131.41
    assert est.kv_gib_per_token * 1024**3 == 80 * 8 * 128 * 2 * 2
    assert est.kv_one_gib == pytest.approx(2.5)
    assert est.budget_gib == pytest.approx(21.6)
    assert not est.fits


def test_the_same_model_fits_four_h100_in_fp8_with_room_for_sequences() -> None:
    llama = llm_catalog.lookup("meta-llama/Llama-3.3-70B-Instruct")
    assert llama is not None
    est = fit.estimate(
        parameters=llama.parameters,
        bytes_per_weight=fit.weight_bytes("fp8", None),
        layers=llama.layers,
        kv_heads=llama.kv_heads,
        head_dim=llama.head_dim,
        kv_bytes=fit.kv_cache_bytes("fp8", "fp8"),
        max_model_len=32768,
        max_num_seqs=64,
        gpus=4,
        gpu_memory_gib=80,
        gpu_memory_utilization=0.9,
    )
    assert est.fits
    assert est.overhead_gib == 4 * fit.OVERHEAD_GIB_PER_GPU
    # 288 - 65.7 - 6 = 216.3 GiB of KV cache, 5 GiB per 32k-token sequence in fp8.
    assert est.full_length_sequences == 43
    assert not est.fits_max_num_seqs


def test_kv_heads_are_replicated_when_tensor_parallel_exceeds_them() -> None:
    one = fit.estimate(
        parameters=1e9, bytes_per_weight=2, layers=26, kv_heads=1, head_dim=256, kv_bytes=2,
        max_model_len=1000, max_num_seqs=None, gpus=1, gpu_memory_gib=80,
        gpu_memory_utilization=0.9,
    )  # fmt: skip
    four = fit.estimate(
        parameters=1e9, bytes_per_weight=2, layers=26, kv_heads=1, head_dim=256, kv_bytes=2,
        max_model_len=1000, max_num_seqs=None, gpus=4, gpu_memory_gib=80,
        gpu_memory_utilization=0.9,
    )  # fmt: skip
    assert four.kv_gib_per_token == 4 * one.kv_gib_per_token


@pytest.mark.parametrize(
    ("precision", "quantization", "expected"),
    [("bf16", None, 2), ("fp32", None, 4), ("fp8", None, 1), ("int4", None, 0.5),
     ("fp16", "awq", 0.5), ("bf16", "fp8", 1), ("bf16", "compressed-tensors", 2)],
)  # fmt: skip
def test_bytes_per_weight(precision: str, quantization: str | None, expected: float) -> None:
    assert fit.weight_bytes(precision, quantization) == expected


def test_kv_cache_bytes() -> None:
    assert fit.kv_cache_bytes("bf16", None) == 2
    assert fit.kv_cache_bytes("bf16", "auto") == 2
    assert fit.kv_cache_bytes("fp32", None) == 4
    assert fit.kv_cache_bytes("int4", None) == 2  # quantized weights compute in 16 bits
    assert fit.kv_cache_bytes("bf16", "fp8_e5m2") == 1


@pytest.mark.parametrize(
    ("heads", "kv_heads", "gpus", "problem"),
    [
        (64, 8, 8, None),
        (64, 8, 16, None),  # KV heads replicated twice
        (64, 8, 3, "64 attention heads are not divisible by tensor parallel size 3"),
        (28, 4, 7, "tensor parallel size 7 is not a multiple of the 4 KV heads"),
        (40, 10, 4, "10 KV heads are not divisible by tensor parallel size 4"),
    ],
)
def test_tensor_parallel_problem(heads: int, kv_heads: int, gpus: int, problem: str | None) -> None:
    assert fit.tensor_parallel_problem(heads, kv_heads, gpus) == problem


def test_divisors() -> None:
    assert fit.divisors(40, 10, 16) == [1, 2, 5, 10]


# --- the model table --------------------------------------------------------------------------
REQUIRED = [
    "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-70B-Instruct",
    "meta-llama/Llama-3.1-405B-Instruct", "meta-llama/Llama-3.2-1B-Instruct",
    "meta-llama/Llama-3.2-3B-Instruct", "meta-llama/Llama-3.3-70B-Instruct",
    "Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-14B-Instruct", "Qwen/Qwen2.5-32B-Instruct",
    "Qwen/Qwen2.5-72B-Instruct", "Qwen/Qwen3-8B", "Qwen/Qwen3-14B", "Qwen/Qwen3-32B",
    "mistralai/Mistral-7B-Instruct-v0.3", "mistralai/Mixtral-8x7B-Instruct-v0.1",
    "mistralai/Mixtral-8x22B-Instruct-v0.1", "google/gemma-2-9b-it", "google/gemma-2-27b-it",
    "google/gemma-3-27b-it", "microsoft/Phi-3-mini-4k-instruct", "microsoft/phi-4",
]  # fmt: skip


@pytest.mark.parametrize("repo", REQUIRED)
def test_the_table_covers_the_common_open_models(repo: str) -> None:
    assert llm_catalog.lookup(repo) is not None
    assert llm_catalog.lookup(repo.upper()) == llm_catalog.lookup(repo)


@pytest.mark.parametrize("repo", sorted(llm_catalog.MODELS))
def test_every_row_is_consistent_and_cites_its_config(repo: str) -> None:
    facts = llm_catalog.MODELS[repo]
    assert facts.heads % facts.kv_heads == 0
    assert re.fullmatch(r"https://huggingface\.co/[^/]+/[^/]+/blob/main/config\.json", facts.source)
    assert 0.5 < facts.parameters_billions < 1000


def test_hf_repo_of() -> None:
    assert llm_catalog.hf_repo_of("hf://meta-llama/Llama-3.1-8B-Instruct@abc") == (
        "meta-llama/Llama-3.1-8B-Instruct"
    )
    assert llm_catalog.hf_repo_of("llama/") is None
    assert llm_catalog.hf_repo_of("s3://bucket/llama/") is None
