"""The roofline estimate of one LLM replica: what it carries within its SLO.

A replica of `tp` GPUs serves `batch` sequences at once (continuous batching). Per request
it computes the prompt once (prefill) and then one token per step (decode):

- prefill is compute-bound: ``2 × parameters × prompt tokens`` FLOPs (one multiply-add per
  weight per token) at ``tp × peak dense FLOPS × MFU``; tokens of a shared prefix that the
  engine's prefix cache holds are not computed again;
- a decode step is memory-bound: it reads all weights once and the KV cache of every
  sequence in the batch, at ``tp × bandwidth × efficiency`` (or, at large batches, the
  ``2 × parameters × batch`` FLOPs, whichever is slower);
- prefills of new requests interleave with decode steps (chunked prefill), so the
  inter-token latency a user sees is the decode step plus the batch's share of prefill:
  ``ITL(B) = step(B) + B × prefill / output tokens``; the time to first token is the
  request's own prefill plus one such iteration: ``TTFT(B) = prefill + ITL(B)``; a request
  lasts ``TTFT(B) + (output tokens - 1) × ITL(B)``, and by Little's law the replica carries
  ``B / that`` requests per second.

All three latencies grow with the batch, throughput too: the batch that fits the SLO is the
largest whose TTFT, ITL and end-to-end latency meet ``slo.ttft_p95_ms``, ``slo.itl_p95_ms``
and ``slo.p95_ms``, and whose sequences (prompt + output) fit the KV cache that the fit
check (`inferplane.blueprint.capacity.fit`) leaves.

Constants and the band:

- `DECODE_BANDWIDTH_EFFICIENCY` 0.75: decode of Llama-3.1-8B at one sequence runs at 77%
  of the A100 40GB's bandwidth ceiling with vLLM 0.23.0 ("decode at one request per time
  runs at about 75 tokens/sec, roughly 77% of the GPU's memory-bandwidth ceiling",
  https://johnmusgrave.com/p/vllm-throughput-latency-sweep-on) and at 6.48 ms per token on
  an H100 80GB with vLLM 0.21.0 (https://yobitelcomm.github.io/bench/recipes/concurrency-sweep/,
  ``tpot_p50_ms`` 6.48 at concurrency 1: 16.06 GB / 6.48 ms = 74% of 3.35 TB/s).
- `PREFILL_MFU` 0.6: share of the dense tensor peak that prefill reaches. aiconfigurator
  0.12.0's measured H100 timings (vLLM 0.24.0 data) put a 1,024-token prefill of
  Llama-3.1-8B at 22.1 ms, 75% of the dense BF16 peak; shorter prompts, smaller GPUs and
  attention at long contexts reach less, so 0.6, with the band covering both sides.
- `TENSOR_PARALLEL_EFFICIENCY` 0.9 for ``tp > 1``: all-reduce between the GPUs of a replica
  takes part of each step. Assumption.
- `BAND` ±30%: the two decode points above sit within 5% of the model; the prefill MFU
  range, the p95-versus-median gap of real traffic and scheduler overheads are not
  measured here, so the band is wide. `validate` refuses only what the optimistic end
  (every rate 30% faster) cannot carry.

Bounded by real hardware (``scripts/calibration/h200``: each model's real shapes with random
weights, every layer in one CUDA graph, on an H200 — the floor under any engine):

- `LAYER_TIME_S`: every layer takes a fixed time on top of what its bytes and FLOPs take
  (kernel launches inside a graph, small matrices that fill no GPU). On every GPU a step and
  a prefill take at least ``layers × LAYER_TIME_S`` (the per-layer floor that dominates
  small models: llama-3.2-1b decodes one sequence in 1.21 ms, 16 layers × 76 us, where the
  bytes alone take 0.70 ms); on a GPU with a measured kernel floor (`gpus.KERNEL_FLOORS`)
  the time is added to the bytes at the bandwidth its kernels reached.
- A prefill reads every weight once, so it never takes less than that read, however short
  the prompt (llama-3.1-8b, 128 tokens: 3.5 ms of FLOPs, 6.65 ms measured).
- On a GPU with a kernel floor, neither a step nor a prefill is faster than the floor's
  model of it, and the band's optimistic end is the floor's `fast_band` (how much faster
  than the estimate its measured rows ran, at most). On a GPU without one, the band is the
  datasheet roofline's ±30% and the plan says that no calibration backs it.

`LAYER_TIME_S` 49 us: the smallest per-layer time with which no row of
``scripts/calibration/h200/results-sizes.json`` is faster than the estimate at the H200's
kernel bandwidth; the row that sets it is qwen2.5-1.5b's 1,024-token prefill (6.68 ms).

A mixture of experts (Qwen3-MoE, Mixtral, gpt-oss, DeepSeek-V3) holds all its experts in
memory (the fit check counts them all) but computes each token with its active parameters:
the shared weights (attention, embeddings, shared experts, routers) and the ``k`` of ``E``
routed experts the token chooses. So prefill computes ``2 × active parameters × prompt
tokens`` FLOPs, and a pass over ``n`` tokens (a decode step of ``n`` sequences, a prompt
of ``n`` tokens) reads the shared weights plus the experts those tokens touch, on average
``E × (1 − (1 − k/E)^n)`` per layer (routing taken as uniform): one sequence reads ``k``
experts, a batch of 32 on Qwen3-30B-A3B (``E`` 128, ``k`` 8) about 112 of 128. Tensor and
expert parallelism (vLLM ``--enable-expert-parallel``) hold and read the same bytes over
the replica's GPUs (`fit.expert_split_problem` cites how vLLM v0.33.0 splits them), so the
estimate does not tell them apart; the imbalance between experts is not modelled. Against
aiconfigurator-core 0.12.0's measured vLLM 0.24.0 operations for Qwen3-30B-A3B on one H100
(``tests/blueprint/test_capacity_moe.py``), decode steps of 8 to 128 sequences lie 4-11%
slower than its figures and a 1,024-token prefill 28% faster; one sequence alone takes
4.6 ms there against 2.7 ms here, a gap the band does not cover (the planned batch is
rarely one). Its FP8 checkpoint decodes no faster there than the 16-bit one, where the
roofline halves the bytes: for a quantized mixture of experts the estimate errs fast, and
the planner takes aiconfigurator's figures where it is installed.

Attention FLOPs, sampling and the CPU side are not counted: the estimate errs fast, which
the band's pessimistic end covers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Final

from inferplane.blueprint.capacity.gpus import KernelFloor
from inferplane.blueprint.llm_config import distinct_experts

DECODE_BANDWIDTH_EFFICIENCY: Final = 0.75
PREFILL_MFU: Final = 0.6
TENSOR_PARALLEL_EFFICIENCY: Final = 0.9
BAND: Final = 0.30
LAYER_TIME_S: Final = 49e-6
MAX_BATCH: Final = 1024
"""The largest batch searched (vLLM's default ``max_num_seqs`` is 256 on most GPUs)."""


@dataclass(frozen=True)
class LlmLoad:
    """What the estimate needs about one LLM replica and its traffic."""

    parameters: float
    weight_bytes: float
    """Bytes per weight as served (quantized weights count at their width)."""
    kv_bytes_per_token: float
    """KV cache of one token over the whole replica (all its GPUs)."""
    kv_room_bytes: float
    """KV cache the replica allocates (`fit.Fit.kv_room_gib`)."""
    gpus: int
    flops: float
    """Dense tensor FLOPS of one GPU in the format the model computes in."""
    bandwidth: float
    """Bytes per second of one GPU's memory."""
    input_tokens: int
    output_tokens: int
    cached_share: float = 0.0
    """Share of the prompt the prefix cache serves (0 without prefix caching)."""
    ttft_ms: float | None = None
    itl_ms: float | None = None
    e2e_ms: float | None = None
    batch_cap: int | None = None
    """The engine's own limit (vLLM ``max_num_seqs``, TensorRT-LLM ``max_batch_size``)."""
    speed: float = 1.0
    """Multiplies every rate: 1 + `band` is the optimistic end, 1 - `band` the pessimistic."""
    band: float = BAND
    timings: Callable[[int], tuple[float, float]] | None = None
    """Measured (prefill seconds, decode step seconds at a batch) replacing the roofline's,
    e.g. from aiconfigurator (`inferplane.blueprint.capacity.aiconfigurator`)."""
    engine_source: Any = None
    """What `timings` come from (an `aiconfigurator.Source`); None for the roofline."""
    layers: int = 0
    """Decoder layers (each takes `LAYER_TIME_S` at least)."""
    kernel: KernelFloor | None = None
    """The GPU's measured kernel floor (`gpus.KERNEL_FLOORS`); None: no calibration."""
    routed_parameters: float = 0.0
    """A mixture of experts: its routed experts' weights over all MoE layers (part of
    `parameters`); 0 for a dense model."""
    experts: int = 0
    experts_per_token: int = 0
    encoder_parameters: float = 0.0
    """An encoder-decoder model (Whisper): the encoder's weights, which each sequence's
    prefill computes over `encoder_tokens` frames; `parameters` are then the decoder's."""
    encoder_layers: int = 0
    encoder_tokens: int = 0
    """Encoder frames per sequence, computed once and cached for cross-attention."""
    sequences_per_request: int = 1
    """Engine sequences one request becomes (a speech model's audio clips): requests per
    second are the sequences' over this (`request_rps`)."""

    @property
    def fast_band(self) -> float:
        """The band's optimistic end: the kernel floor's where the GPU has one."""
        if self.kernel is not None and self.timings is None:
            return self.kernel.fast_band
        return self.band


@dataclass(frozen=True)
class LlmPoint:
    """The replica at one batch size."""

    batch: int
    prefill_ms: float
    step_ms: float
    ttft_ms: float
    itl_ms: float
    e2e_ms: float

    @property
    def rps(self) -> float:
        """Requests per second one replica completes at this batch (Little's law)."""
        return self.batch / (self.e2e_ms / 1000)


@dataclass(frozen=True)
class LlmEstimate:
    """The largest batch that fits the SLO, or why none does."""

    point: LlmPoint | None
    """None: not even one sequence at a time meets the SLO or fits the KV cache."""
    limited_by: str
    """What stops a larger batch: an SLO field, ``KV cache``, the engine's cap or the search
    limit; for `point` None, what one sequence already misses."""
    kv_batch: int
    """Sequences of ``input + output`` tokens the KV cache holds at once."""
    first: LlmPoint
    """The replica at batch 1 (what one request alone sees)."""


def active_parameters(load: LlmLoad) -> float:
    """Weights one token computes with: all but the routed experts it does not choose."""
    if not load.experts:
        return load.parameters
    return load.parameters - load.routed_parameters * (1 - load.experts_per_token / load.experts)


def weights_read(load: LlmLoad, tokens: float) -> float:
    """Bytes of weights one forward pass over `tokens` tokens reads: every shared weight,
    and of the routed experts those the tokens choose, on average ``E × (1 − (1 − k/E)^n)``
    distinct experts per layer (`llm_config.distinct_experts`)."""
    if not load.experts:
        return load.parameters * load.weight_bytes
    touched = distinct_experts(load.experts, load.experts_per_token, tokens) / load.experts
    shared = load.parameters - load.routed_parameters
    return (shared + load.routed_parameters * touched) * load.weight_bytes


def _scale(load: LlmLoad) -> tuple[float, float]:
    tp_eff = TENSOR_PARALLEL_EFFICIENCY if load.gpus > 1 else 1.0
    flops = load.gpus * load.flops * PREFILL_MFU * tp_eff * load.speed
    bandwidth = load.gpus * load.bandwidth * DECODE_BANDWIDTH_EFFICIENCY * tp_eff * load.speed
    return flops, bandwidth


def _floor(load: LlmLoad, batch: int) -> tuple[float, float]:
    """(prefill, step) seconds that real hardware does not beat: the per-layer time, one
    read of the weights per prefill and, on a GPU with a measured kernel floor, the bytes at
    the bandwidth its kernels reached plus the per-layer time."""
    flops, bandwidth = _scale(load)
    layer_s = load.layers * LAYER_TIME_S / load.speed
    prefill_layers_s = layer_s + load.encoder_layers * LAYER_TIME_S / load.speed
    computed = load.input_tokens * (1 - load.cached_share)
    weights = weights_read(load, max(1.0, computed)) + load.encoder_parameters * load.weight_bytes
    if load.kernel is None:
        return max(prefill_layers_s, weights / bandwidth), layer_s
    tp_eff = TENSOR_PARALLEL_EFFICIENCY if load.gpus > 1 else 1.0
    kernel_bw = load.gpus * load.kernel.bandwidth_gb_s * 1e9 * tp_eff * load.speed
    active = active_parameters(load)
    prefill = prefill_layers_s + max(_prefill_flops(load) / flops, weights / kernel_bw)
    read = weights_read(load, batch) + batch * _context(load) * load.kv_bytes_per_token
    step = layer_s + max(read / kernel_bw, 2 * active * batch / flops)
    return prefill, step


def _prefill_flops(load: LlmLoad) -> float:
    """FLOPs of one sequence's prefill: the prompt tokens the prefix cache does not hold
    through the active parameters, and an encoder's frames through the encoder."""
    computed = load.input_tokens * (1 - load.cached_share)
    return (
        2 * active_parameters(load) * computed + 2 * load.encoder_parameters * load.encoder_tokens
    )


def _context(load: LlmLoad) -> float:
    """Tokens a sequence holds in the KV cache on average while it decodes (an
    encoder-decoder's cross-attention holds its encoder frames as well)."""
    return load.input_tokens + load.output_tokens / 2 + load.encoder_tokens


def request_rps(load: LlmLoad, point: LlmPoint) -> float:
    """Requests per second one replica completes at `point`: its sequences' over the
    sequences a request becomes."""
    return point.rps / load.sequences_per_request


def at_batch(load: LlmLoad, batch: int) -> LlmPoint:
    """Latencies of one replica holding `batch` sequences."""
    if load.timings is not None:
        prefill_s, step_s = (t / load.speed for t in load.timings(batch))
    else:
        flops, bandwidth = _scale(load)
        active = active_parameters(load)
        prefill_s = _prefill_flops(load) / flops
        read = weights_read(load, batch) + batch * _context(load) * load.kv_bytes_per_token
        step_s = max(read / bandwidth, 2 * active * batch / flops)
    floor_prefill, floor_step = _floor(load, batch)
    prefill_s, step_s = max(prefill_s, floor_prefill), max(step_s, floor_step)
    itl_s = step_s + batch * prefill_s / load.output_tokens
    ttft_s = prefill_s + itl_s
    e2e_s = ttft_s + (load.output_tokens - 1) * itl_s
    return LlmPoint(batch, prefill_s * 1e3, step_s * 1e3, ttft_s * 1e3, itl_s * 1e3, e2e_s * 1e3)


def _missed(load: LlmLoad, p: LlmPoint) -> str | None:
    """The first SLO field `p` misses, or None."""
    for name, bound, value in (
        ("ttft_p95_ms", load.ttft_ms, p.ttft_ms),
        ("itl_p95_ms", load.itl_ms, p.itl_ms),
        ("p95_ms", load.e2e_ms, p.e2e_ms),
    ):
        if bound is not None and value > bound:
            return name
    return None


def estimate(load: LlmLoad) -> LlmEstimate:
    """The largest batch within the SLO, the KV cache and the engine's cap."""
    per_seq = (
        load.input_tokens + load.output_tokens + load.encoder_tokens
    ) * load.kv_bytes_per_token
    kv_batch = int(load.kv_room_bytes // per_seq) if per_seq > 0 else MAX_BATCH
    first = at_batch(load, 1)
    limits = [(kv_batch, "KV cache"), (MAX_BATCH, "search limit")]
    if load.batch_cap:
        limits.append((load.batch_cap, "engine batch limit"))
    cap, cap_reason = min(limits)
    if cap < 1:
        return LlmEstimate(None, "KV cache", kv_batch, first)
    missed = _missed(load, first)
    if missed:
        return LlmEstimate(None, missed, kv_batch, first)
    # Every latency grows with the batch: bisect for the last batch within the SLO.
    low, high = 1, cap
    while low < high:
        mid = (low + high + 1) // 2
        if _missed(load, at_batch(load, mid)) is None:
            low = mid
        else:
            high = mid - 1
    point = at_batch(load, low)
    reason = cap_reason if low == cap else (_missed(load, at_batch(load, low + 1)) or cap_reason)
    return LlmEstimate(point, reason, kv_batch, first)


def banded(load: LlmLoad) -> tuple[LlmEstimate, LlmEstimate, LlmEstimate]:
    """(pessimistic, central, optimistic) estimates: every rate at 1 - band, 1, 1 + band (the
    kernel floor's `fast_band` on a GPU that has one)."""
    return (
        estimate(replace(load, speed=1 - load.band)),
        estimate(replace(load, speed=1.0)),
        estimate(replace(load, speed=1 + load.fast_band)),
    )
