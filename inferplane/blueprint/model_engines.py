"""How a model's server runs it: where its weights are (`ModelSource`), the TensorRT and
TensorRT-LLM engine builds, Triton's batching, response cache and warm-up, and vLLM's
settings (speculative decoding, LoRA adapters).

Part of the resolved blueprint; import these from `inferplane.blueprint.model`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from inferplane.blueprint import defaults


@dataclass(frozen=True)
class ModelSource:
    """Where the weights are. `uri` is absolute: s3://, gs:// or hf://."""

    uri: str
    scheme: Literal["s3", "gs", "hf"]
    bucket: str | None
    """s3/gs bucket; None for hf."""
    key: str | None
    """Object key or prefix inside the bucket; None for hf."""
    hf_repo: str | None = None
    hf_revision: str | None = None


@dataclass(frozen=True)
class TensorRtInput:
    """Optimisation-profile shapes of one engine input (batch dimension included)."""

    name: str
    min: tuple[int, ...]
    opt: tuple[int, ...]
    max: tuple[int, ...]
    data_type: str | None = None
    """Declared data type (``int64``, ``fp16``, ...); None: guessed from the name."""


@dataclass(frozen=True)
class TensorRt:
    """Build a TensorRT engine from the ONNX source, on the pool's GPU type."""

    inputs: tuple[TensorRtInput, ...]
    workspace_mib: int | None
    builder_optimization_level: int


TrtLlmQuantization = Literal["fp8", "int4_awq", "int8_sq", "int8_wo", "int4_wo", "w4a8_awq"]
TrtLlmKvCacheQuantization = Literal["fp8", "int8"]
BatchSchedulerPolicy = Literal["guaranteed_no_evict", "max_utilization"]


@dataclass(frozen=True)
class TensorRtLlm:
    """Build a TensorRT-LLM engine from an LLM checkpoint and serve it with Triton's
    ``tensorrtllm`` backend (in-flight batching, paged KV cache)."""

    max_batch_size: int
    max_input_len: int
    max_seq_len: int
    """Prompt plus output, in tokens."""
    quantization: TrtLlmQuantization | None = None
    kv_cache_quantization: TrtLlmKvCacheQuantization | None = None
    kv_cache_free_gpu_mem_fraction: float = defaults.TRTLLM_KV_CACHE_FREE_GPU_MEM_FRACTION
    enable_kv_cache_reuse: bool = defaults.TRTLLM_ENABLE_KV_CACHE_REUSE
    batch_scheduler_policy: BatchSchedulerPolicy = defaults.TRTLLM_BATCH_SCHEDULER_POLICY
    enable_chunked_context: bool = defaults.TRTLLM_ENABLE_CHUNKED_CONTEXT
    max_queue_size: int = defaults.TRTLLM_MAX_QUEUE_SIZE
    """Requests queued before Triton rejects new ones; 0 is unbounded."""
    streaming: bool = defaults.TRTLLM_STREAMING
    """A decoupled model that streams tokens; Triton then exports time to first token."""


@dataclass(frozen=True)
class Batching:
    """Triton dynamic batching; the queue delay is the batching window."""

    max_batch_size: int
    max_queue_delay_us: int
    preferred_batch_sizes: tuple[int, ...]


@dataclass(frozen=True)
class ResponseCache:
    enabled: bool
    size_mb: int
    backend: str = "local"
    """``local`` (Triton's in-process cache) or ``redis`` (a zone-local Valkey per zone)."""

    @property
    def redis(self) -> bool:
        return self.enabled and self.backend == "redis"


@dataclass(frozen=True)
class Warmup:
    batch_sizes: tuple[int, ...]


@dataclass(frozen=True)
class Speculative:
    """Speculative decoding (``--speculative-config``)."""

    method: Literal["ngram", "eagle", "eagle3"]
    num_speculative_tokens: int
    draft_repo: str | None = None
    """``org/name`` of the eagle/eagle3 draft model; None for ngram."""
    draft_revision: str | None = None
    prompt_lookup_max: int | None = None
    prompt_lookup_min: int | None = None


@dataclass(frozen=True)
class LoraAdapter:
    """One LoRA adapter: the name clients send as `model`, and where its files are."""

    name: str
    source: ModelSource


@dataclass(frozen=True)
class Lora:
    adapters: tuple[LoraAdapter, ...]
    max_loras: int
    max_lora_rank: int | None
    """None keeps vLLM's default."""


@dataclass(frozen=True)
class VllmSettings:
    """vLLM engine settings; None means vLLM's own default."""

    max_model_len: int | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    gpu_memory_utilization: float | None = None
    enable_prefix_caching: bool | None = None
    enable_chunked_prefill: bool | None = None
    kv_cache_dtype: str | None = None
    quantization: str | None = None
    enforce_eager: bool | None = None
    speculative: Speculative | None = None
    lora: Lora | None = None
    chat_template: str | None = None
    tool_call_parser: str | None = None
    served_model_aliases: tuple[str, ...] = ()
    extra_args: tuple[str, ...] = ()
    """Passed verbatim after every flag inferplane sets (validation refused owned flags)."""
    env: tuple[tuple[str, str], ...] = ()
    """(name, value) pairs added to the container's environment, verbatim."""
