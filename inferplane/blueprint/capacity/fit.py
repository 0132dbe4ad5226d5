"""Will an LLM fit its GPUs? Weights + KV cache + overhead against the memory budget.

Plain numbers in, plain numbers out, so every server that serves LLMs (vLLM, TensorRT-LLM)
uses the same arithmetic; `inferplane.blueprint.checks.semantic_vllm` turns the result into errors
and advisories.

The budget is ``gpu_memory_utilization × gpus × GPU memory``: vLLM reserves that fraction of
each GPU and must place the weights, the peak activations of a profiling forward pass, the
memory outside PyTorch (CUDA context, NCCL buffers) and then the KV cache inside it (vLLM
v0.10.2 ``vllm/v1/worker/gpu_worker.py``, ``Worker.determine_available_memory``:
``available_kv_cache_memory = requested_memory - non_kv_cache_memory``). It refuses to start
when the KV cache left cannot hold one sequence of ``max_model_len`` tokens
(``vllm/v1/core/kv_cache_utils.py``, ``check_enough_kv_cache_memory``) — so that case is an
error here. Fewer than ``max_num_seqs`` full-length sequences is not fatal: vLLM starts, logs
"Maximum concurrency for N tokens per request", and queues or preempts the rest — so that
case is an advisory.

Every estimate errs low, so a refusal means the model certainly does not fit:

- weights = parameters × bytes per weight (BF16/FP16 2, FP8/INT8 1, INT4 0.5: NVIDIA NIM,
  https://docs.nvidia.com/nim/large-language-models/latest/troubleshooting/memory.html);
  quantization scales and unquantized embeddings are not counted;
- KV cache per token = layers × KV heads × head size × 2 (K and V) × KV-cache bytes; with
  tensor parallelism each GPU holds ``max(1, kv_heads // tp)`` heads, i.e. KV heads are
  replicated when tp exceeds them (v0.10.2 ``vllm/config/__init__.py``
  ``ModelConfig.get_num_kv_heads``); sliding-window layers are counted as full ones;
- overhead = `OVERHEAD_GIB_PER_GPU` per GPU, for activations and non-torch memory. vLLM
  measures these at start; 1.5 GiB is a floor for a profiling pass of an LLM on one GPU (CUDA
  context alone takes about 0.5 GiB), not a measurement of any one model. CUDA graphs are
  captured after the KV cache is allocated, in the ``1 - gpu_memory_utilization`` left over,
  so they are not counted.

TensorRT-LLM sizes its KV cache differently: ``kv_cache_free_gpu_mem_fraction`` (the
executor's ``freeGpuMemoryFraction``) is a share of the memory still FREE once the engine's
weights and activation buffers are allocated, not of the whole GPU (NVIDIA/TensorRT-LLM
``docs/source/reference/memory.md``, "C++ runtime": "KV cache will by default allocate 85%
of the remaining free GPU memory ... When either maxTokens or freeGpuMemoryFraction is
specified, the specified value will be used to compute the KV cache memory size"). So its
budget is the whole memory of its GPUs and the KV cache of one full-length sequence must fit
in ``fraction × (memory - weights - overhead)``: `estimate` takes that as ``kv_fraction``
(``gpu_memory_utilization`` 1). The paged KV cache is shared by the sequences in flight and
the in-flight batching scheduler admits a request only when blocks are free (same document:
"the scheduler can automatically schedule requests as long as enough KV cache space is
available"), so nothing is reserved per ``max_batch_size`` slot: fewer full-length
sequences than ``max_batch_size`` is an advisory, as it is for vLLM's ``max_num_seqs``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

GIB: Final = 1024**3

OVERHEAD_GIB_PER_GPU: Final = 1.5
"""Activations and non-torch memory per GPU inside the budget (see the module docstring)."""

BYTES_PER_WEIGHT: Final[dict[str, float]] = {
    "fp32": 4,
    "fp16": 2,
    "bf16": 2,
    "fp8": 1,
    "int8": 1,
    "int4": 0.5,
}
"""Bytes per parameter of each blueprint `precision`."""

QUANTIZATION_BYTES: Final[dict[str, float]] = {
    "awq": 0.5,
    "awq_marlin": 0.5,
    "gptq": 0.5,
    "gptq_marlin": 0.5,
    "moe_wna16": 0.5,
    "modelopt_fp4": 0.5,
    "mxfp4": 0.5,
    "fp8": 1,
    "fbgemm_fp8": 1,
    "modelopt": 1,
    "experts_int8": 1,
}
"""Bytes per parameter of a vLLM `quantization` method, where the method fixes it (AWQ and GPTQ
checkpoints are assumed 4-bit, their common form, the low estimate). Methods whose width
depends on the checkpoint (compressed-tensors, quark, torchao) fall back to `precision`."""


def kv_cache_bytes(precision: str, kv_cache_dtype: str | None) -> float:
    """Bytes per KV-cache element: fp8 KV cache 1; otherwise (``auto``) the model's activation
    type, 4 for fp32 and 2 for everything else (quantized weights compute in 16 bits)."""
    if kv_cache_dtype and kv_cache_dtype.startswith("fp8"):
        return 1
    return 4 if precision == "fp32" else 2


def weight_bytes(precision: str, quantization: str | None) -> float:
    if quantization and quantization in QUANTIZATION_BYTES:
        return QUANTIZATION_BYTES[quantization]
    return BYTES_PER_WEIGHT[precision]


@dataclass(frozen=True)
class Fit:
    """The memory arithmetic of one model on its GPUs; sizes in GiB."""

    weights_gib: float
    kv_gib_per_token: float
    max_model_len: int | None
    max_num_seqs: int | None
    overhead_gib: float
    budget_gib: float
    kv_fraction: float = 1.0
    """Share of the memory left after weights and overhead that the KV cache may take: 1
    for vLLM (its budget already is a share), ``kv_cache_free_gpu_mem_fraction`` for
    TensorRT-LLM."""

    @property
    def kv_one_gib(self) -> float:
        """KV cache of one full-length sequence (0 when max_model_len is unknown)."""
        return self.kv_gib_per_token * (self.max_model_len or 0)

    @property
    def need_gib(self) -> float:
        """What must fit for the server to hold one full-length sequence: weights, overhead,
        and the memory whose `kv_fraction` is that sequence's KV cache."""
        return self.weights_gib + self.kv_one_gib / self.kv_fraction + self.overhead_gib

    @property
    def fits(self) -> bool:
        return self.need_gib <= self.budget_gib

    @property
    def kv_room_gib(self) -> float:
        """KV cache the server allocates: its share of what weights and overhead leave."""
        return (self.budget_gib - self.weights_gib - self.overhead_gib) * self.kv_fraction

    @property
    def full_length_sequences(self) -> int:
        """How many sequences of max_model_len tokens the KV cache holds at once."""
        if not self.max_model_len or self.kv_one_gib <= 0:
            return 0
        return max(0, int(self.kv_room_gib // self.kv_one_gib))

    @property
    def fits_max_num_seqs(self) -> bool:
        if not self.max_num_seqs or not self.max_model_len:
            return True
        return self.full_length_sequences >= self.max_num_seqs


def estimate(
    *,
    parameters: float,
    bytes_per_weight: float,
    layers: int,
    kv_heads: int,
    head_dim: int,
    kv_bytes: float,
    max_model_len: int | None,
    max_num_seqs: int | None,
    gpus: int,
    gpu_memory_gib: float,
    gpu_memory_utilization: float,
    overhead_gib_per_gpu: float = OVERHEAD_GIB_PER_GPU,
    kv_fraction: float = 1.0,
    kv_per_head: int = 2,
) -> Fit:
    """The fit of a model of `parameters` weights on `gpus` GPUs of `gpu_memory_gib` each
    (all experts of a mixture of experts: every one is loaded, whichever a token chooses);
    `kv_per_head` vectors per KV head and token (2: K and V; 1: one MLA latent)."""
    kv_heads_total = max(1, kv_heads // gpus) * gpus
    kv_bytes_per_token = layers * kv_heads_total * head_dim * kv_per_head * kv_bytes
    return Fit(
        weights_gib=parameters * bytes_per_weight / GIB,
        kv_gib_per_token=kv_bytes_per_token / GIB,
        max_model_len=max_model_len,
        max_num_seqs=max_num_seqs,
        overhead_gib=overhead_gib_per_gpu * gpus,
        budget_gib=gpu_memory_utilization * gpus * gpu_memory_gib,
        kv_fraction=kv_fraction,
    )


def tensor_parallel_problem(heads: int, kv_heads: int, gpus: int) -> str | None:
    """Why `gpus`-way tensor parallelism cannot split this attention, or None.

    vLLM v0.10.2 refuses attention heads not divisible by the TP size
    (``vllm/config/__init__.py``, ``ModelConfig.verify_with_parallel_config``: "Total number
    of attention heads (...) must be divisible by tensor parallel size (...)"), and
    ``QKVParallelLinear`` (``vllm/model_executor/layers/linear.py``) divides the KV heads by
    the TP size, or, when the TP size is larger, the TP size by the KV heads (replication).
    TensorRT-LLM has the same constraints: its runtime divides the heads by the TP size and
    gives each rank ``(kv_heads + tp - 1) // tp`` KV heads (``tensorrt_llm/runtime/
    model_runner.py``, ``_engine_config_to_model_config``), and its checkpoint conversion
    splits K and V into ``tp`` equal parts, or duplicates each KV head ``tp // kv_heads``
    times when the TP size is larger (``tensorrt_llm/models/llama/convert.py``, ``dups``).
    """
    if heads % gpus:
        return f"{heads} attention heads are not divisible by tensor parallel size {gpus}"
    if gpus <= kv_heads and kv_heads % gpus:
        return f"{kv_heads} KV heads are not divisible by tensor parallel size {gpus}"
    if gpus > kv_heads and gpus % kv_heads:
        return f"tensor parallel size {gpus} is not a multiple of the {kv_heads} KV heads"
    return None


def expert_split_problem(
    moe_intermediate_size: int, experts: int, gpus: int, expert_parallel: bool
) -> str | None:
    """Why vLLM v0.33.0 cannot split a mixture of experts over `gpus` GPUs, or None.

    Without ``--enable-expert-parallel`` every GPU of the tensor-parallel group holds
    ``1/tp`` of every expert: ``vllm/model_executor/layers/fused_moe/config.py``
    ``FusedMoEConfig.__post_init__`` asserts ``self.intermediate_size % tp_size == 0`` and
    sets ``intermediate_size_per_partition = self.intermediate_size // tp_size``. With it,
    the MoE layers run with ``tp_size=1`` and ``ep_size`` the tensor-parallel size ("In EP,
    each device owns a set of experts fully", ``FusedMoEParallelConfig.make``), and
    ``expert_map_manager.py`` ``determine_expert_map`` gives each GPU ``experts // ep_size``
    experts, the remainder one more each: no divisibility is needed."""
    if gpus <= 1 or expert_parallel or not experts or not moe_intermediate_size:
        return None
    if moe_intermediate_size % gpus:
        return (
            f"each expert's intermediate size ({moe_intermediate_size}) is not divisible by "
            f"tensor parallel size {gpus}"
        )
    return None


def divisors(heads: int, kv_heads: int, limit: int) -> list[int]:
    """TP sizes up to `limit` that split this attention."""
    return [n for n in range(1, limit + 1) if tensor_parallel_problem(heads, kv_heads, n) is None]
