"""Will a TensorRT-LLM model fit its GPUs? The memory-fit and tensor-parallel checks of a
``tensorrt_llm`` model, on the numbers `semantic_trtllm.fit_numbers` extracts.

The arithmetic is `inferplane.blueprint.capacity.fit`'s, with TensorRT-LLM's meaning of the KV-cache
share (see that module): the budget is all the memory of the model's GPUs, and one sequence
of ``max_seq_len`` tokens must fit in ``kv_cache_free_gpu_mem_fraction`` of what weights and
overhead leave. An engine whose KV cache cannot hold one full-length sequence cannot serve
the lengths it was built for: the ``guaranteed_no_evict`` scheduler guarantees "that a
started request is never paused" (tensorrtllm_backend ``docs/model_config.md``,
``batch_scheduler_policy``), so it starts a request only when the KV cache can hold it to
its maximum length, and a full-length request would never start.
Holding fewer full-length sequences than ``max_batch_size`` only queues: an advisory.

`semantic_vllm.findings` calls `findings` and turns its tuples into diagnostics, so both LLM
servers share one report format, one model-facts lookup and one place that blames overrides.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from inferplane.blueprint.capacity import fit
from inferplane.blueprint.errors import YamlPath, counted
from inferplane.blueprint.llm_catalog import LlmFacts
from inferplane.blueprint.semantic_trtllm import TrtLlmFitNumbers

Blame = Callable[[tuple[YamlPath, ...], YamlPath], YamlPath]
"""``blame(inputs, default)``: the model-relative path to report at."""
Raw = tuple[str, YamlPath, str, str]
"""(severity, path, message, hint)."""

TP_SIZES = 16
"""Largest tensor-parallel size a fix suggests."""

# What the fit depends on, in the order an error blames them when an override set them.
FIT_INPUTS: tuple[YamlPath, ...] = (
    ("precision",),
    ("gpus",),
    ("pool",),
    ("tensorrt_llm", "max_seq_len"),
    ("tensorrt_llm", "quantization"),
    ("tensorrt_llm", "kv_cache_quantization"),
    ("tensorrt_llm", "kv_cache_free_gpu_mem_fraction"),
    ("source",),
    ("model_info",),
)


def estimate(facts: LlmFacts, n: TrtLlmFitNumbers) -> fit.Fit:
    """The fit of `facts` built as `n` says."""
    return fit.estimate(
        parameters=facts.parameters,
        bytes_per_weight=n.weight_bytes_per_param,
        layers=facts.layers,
        kv_heads=facts.kv_heads,
        head_dim=facts.head_dim,
        kv_bytes=n.kv_cache_bytes_per_value,
        max_model_len=n.max_seq_len,
        max_num_seqs=n.max_batch_size,
        gpus=n.tensor_parallel_size,
        gpu_memory_gib=n.gpu_memory_gib,
        gpu_memory_utilization=1.0,
        kv_fraction=n.kv_cache_free_gpu_mem_fraction,
        kv_per_head=facts.kv_per_head,
    )


def findings(
    facts: LlmFacts, n: TrtLlmFitNumbers, what: str, gpu: str, blame: Blame
) -> Iterator[Raw]:
    """The fit problems of one model: `what` names its weights (``70.55B parameters, fp8``),
    `gpu` its pool's GPU type."""
    tp = n.tensor_parallel_size
    problem = fit.tensor_parallel_problem(facts.heads, facts.kv_heads, tp)
    if problem:
        sizes = ", ".join(map(str, fit.divisors(facts.heads, facts.kv_heads, TP_SIZES)))
        yield (
            "error",
            blame((("gpus",), ("source",), ("model_info",)), ("gpus",)),
            f"gpus: {tp} cannot split the TensorRT-LLM engine across GPUs: {problem}",
            f"use gpus: one of {sizes}",
        )
        return
    est = estimate(facts, n)
    frac = n.kv_cache_free_gpu_mem_fraction
    if not est.fits:
        yield (
            "error",
            blame(FIT_INPUTS, ("source",)),
            f"the model ({what}) does not fit in GPU memory: needs {est.need_gib:.1f} GiB "
            f"(weights {est.weights_gib:.1f} + overhead {est.overhead_gib:.1f} + KV cache "
            f"{est.kv_one_gib:.1f} for 1 × {n.max_seq_len} tokens / "
            f"kv_cache_free_gpu_mem_fraction {frac:.2f}) but {tp} × {gpu} gives "
            f"{est.budget_gib:.1f} GiB",
            "use more GPUs (tensor parallel), a quantization (fp8, int4_awq), "
            "kv_cache_quantization, or a shorter tensorrt_llm.max_seq_len",
        )
        return
    if not est.fits_max_num_seqs:
        yield (
            "warning",
            blame((("tensorrt_llm", "max_batch_size"),), ("tensorrt_llm", "max_batch_size")),
            f"the KV cache holds {counted(est.full_length_sequences, 'sequence')} of "
            f"{n.max_seq_len} tokens at once ({est.kv_room_gib:.1f} GiB at "
            f"kv_cache_free_gpu_mem_fraction {frac:.2f}, {est.kv_one_gib:.2f} GiB each), "
            f"fewer than max_batch_size {n.max_batch_size}; the scheduler queues the rest "
            "when requests are that long",
            "if long requests are common, lower max_batch_size or max_seq_len, "
            # A quantized KV cache (one byte a value) leaves only the sizes and GPUs.
            + ("" if n.kv_cache_bytes_per_value <= 1 else "set kv_cache_quantization: fp8, ")
            + "or use more GPUs",
        )
