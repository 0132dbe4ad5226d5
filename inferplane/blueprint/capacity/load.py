"""What the estimators need about one model, taken from the resolved blueprint.

The LLM numbers come from the same places as the GPU memory fit check
(`inferplane.blueprint.capacity.fit`): parameters and attention shape from the model's facts, bytes
per weight and per KV value from its precision and quantization, the KV cache the engine
allocates from the memory budget. A model on a shared GPU (MIG, time slicing) gets no
estimate: a slice's share of the GPU's FLOPs and bandwidth is not modelled.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from inferplane.blueprint import defaults, llm_config
from inferplane.blueprint.capacity import aiconfigurator, fit, gpus, roofline
from inferplane.blueprint.model import GpuPool, Model
from inferplane.blueprint.semantic_trtllm import KV_CACHE_BYTES, PRECISION_BYTES, WEIGHT_BYTES
from inferplane.blueprint.upstream import vllm_owned

_FP8_QUANTIZATION = frozenset({"fp8", "fbgemm_fp8", "modelopt"})
"""vLLM methods that run FP8 matrix multiplies on GPUs with FP8 tensor cores."""


def prefix_cached(model: Model) -> bool:
    """Whether the engine reuses the KV cache of a shared prefix. vLLM's V1 engine turns
    prefix caching on unless told otherwise ("V1 always uses chunked prefills and prefix
    caching for non-pooling tasks", vllm ``vllm/engine/arg_utils.py``,
    ``EngineArgs._set_default_args_v1``: ``if self.enable_prefix_caching is None:
    self.enable_prefix_caching = True``); TensorRT-LLM only with ``enable_kv_cache_reuse``."""
    if model.vllm is not None:
        return model.vllm.enable_prefix_caching is not False
    if model.tensorrt_llm is not None:
        return model.tensorrt_llm.enable_kv_cache_reuse
    return False


def llm_load(
    model: Model, pool: GpuPool, pinned_vllm: str | None = None
) -> tuple[roofline.LlmLoad | None, str]:
    """The estimate's inputs of an LLM with traffic, or None and why there are none. A vLLM
    model whose GPU, architecture and engine aiconfigurator has data for (when installed,
    `pinned_vllm` given) takes its timings from there."""
    traffic, facts = model.traffic, model.llm
    if facts is not None and facts.encoder_decoder:
        if traffic is None or traffic.audio_seconds is None or traffic.output_tokens is None:
            return None, "no traffic with audio_seconds and output_tokens"
    elif traffic is None or traffic.input_tokens is None or traffic.output_tokens is None:
        return None, "no traffic with input_tokens and output_tokens"
    if facts is None:
        return None, "the model's architecture is unknown (add model_info)"
    if pool.sharing != "exclusive":
        return None, f"pool {pool.name} shares its GPUs ({pool.sharing})"
    peak = gpus.peak(pool.gpu.id)
    if peak is None:
        return None, f"no peak FLOPs and bandwidth for {pool.gpu.id}"
    if model.vllm is not None:
        v = model.vllm
        weight = fit.weight_bytes(model.precision, v.quantization)
        kv = fit.kv_cache_bytes(model.precision, v.kv_cache_dtype)
        # vLLM's default of the release that runs (inferplane/facts/vllm/<release>/), as
        # the fit check reads it.
        release = pinned_vllm if pinned_vllm and vllm_owned.has_facts(pinned_vllm) else None
        util = (
            v.gpu_memory_utilization
            or vllm_owned.engine_defaults(release)["gpu_memory_utilization"]
        )
        fp8 = v.quantization in _FP8_QUANTIZATION
        cap, kv_fraction = v.max_num_seqs, 1.0
    elif model.tensorrt_llm is not None:
        t = model.tensorrt_llm
        plain = PRECISION_BYTES.get(model.precision, 2)
        weight = WEIGHT_BYTES.get(t.quantization or "", plain)
        kv = KV_CACHE_BYTES.get(t.kv_cache_quantization or "", plain)
        util, fp8 = 1.0, t.quantization == "fp8"
        cap, kv_fraction = t.max_batch_size, t.kv_cache_free_gpu_mem_fraction
    else:
        return None, "not an LLM server"
    est = fit.estimate(
        parameters=facts.parameters,
        bytes_per_weight=weight,
        layers=facts.layers,
        kv_heads=facts.kv_heads,
        head_dim=facts.head_dim,
        kv_bytes=kv,
        max_model_len=None,
        max_num_seqs=None,
        gpus=model.gpus,
        gpu_memory_gib=pool.gpu.memory_gib,
        gpu_memory_utilization=util,
        kv_fraction=kv_fraction,
        kv_per_head=facts.kv_per_head,
    )
    flops = peak.fp8_tflops if fp8 and peak.fp8_tflops else peak.bf16_tflops
    slo = model.slo
    speech = _speech(model)
    load = roofline.LlmLoad(
        parameters=facts.parameters - speech.encoder_parameters,
        weight_bytes=weight,
        kv_bytes_per_token=est.kv_gib_per_token * fit.GIB,
        kv_room_bytes=max(0.0, est.kv_room_gib) * fit.GIB,
        gpus=model.gpus,
        flops=flops * 1e12,
        bandwidth=peak.bandwidth_gb_s * 1e9,
        layers=facts.layers,
        kernel=gpus.KERNEL_FLOORS.get(pool.gpu.id),
        routed_parameters=facts.routed_parameters,
        experts=facts.experts if facts.moe else 0,
        experts_per_token=facts.experts_per_token if facts.moe else 0,
        input_tokens=speech.input_tokens or traffic.input_tokens or 0,
        output_tokens=speech.output_tokens or traffic.output_tokens or 0,
        encoder_parameters=speech.encoder_parameters,
        encoder_layers=facts.encoder_layers,
        encoder_tokens=facts.encoder_frames,
        sequences_per_request=speech.clips,
        cached_share=traffic.shared_prefix if prefix_cached(model) else 0.0,
        ttft_ms=slo.ttft_p95_ms if slo else None,
        itl_ms=slo.itl_p95_ms if slo else None,
        e2e_ms=slo.p95_ms if slo else None,
        batch_cap=cap,
    )
    # aiconfigurator's tables are used for checkpoints served as they are: this module does
    # not map vLLM's quantization methods onto its quantization modes. A checkpoint that is
    # itself FP8 (its config.json's quantization_config, as aiconfigurator ships it) is timed
    # as aiconfigurator times that checkpoint.
    settings = model.vllm
    if settings is not None and pinned_vllm is not None and not facts.encoder_decoder:
        load = _with_aiconfigurator(model, pool, load, pinned_vllm, kv == weight)
    return load, ""


DECODER_PROMPT_TOKENS = 4
"""Whisper's decoder prompt in vLLM v0.33.0: ``<|startoftranscript|><|{language}|>
<|{task_type}|><|notimestamps|>`` (``vllm/model_executor/models/whisper.py``
``get_generation_prompt``), four tokens without a request prompt."""


@dataclass(frozen=True)
class _Speech:
    """How a speech model's request maps onto the engine's sequences: vLLM cuts its audio
    into clips (`llm_config.clips`) and runs each as a sequence of its own, the encoder over
    the clip's frames, the decoder over the prompt and the clip's share of the output."""

    clips: int = 1
    input_tokens: int = 0
    output_tokens: int = 0
    encoder_parameters: float = 0.0


def _speech(model: Model) -> _Speech:
    facts, traffic = model.llm, model.traffic
    if facts is None or not facts.encoder_decoder or traffic is None:
        return _Speech()
    clips = llm_config.clips(traffic.audio_seconds or 0)
    return _Speech(
        clips=clips,
        input_tokens=traffic.input_tokens or DECODER_PROMPT_TOKENS,
        output_tokens=math.ceil((traffic.output_tokens or 1) / clips),
        encoder_parameters=facts.encoder_parameters_billions * 1e9,
    )


def clip_tokens(model: Model) -> tuple[int, int, int] | None:
    """(clips, decoder prompt tokens, output tokens per clip) of a speech model's request;
    None for any other model."""
    speech = _speech(model)
    if not speech.input_tokens:
        return None
    return speech.clips, speech.input_tokens, speech.output_tokens


def _with_aiconfigurator(
    model: Model, pool: GpuPool, load: roofline.LlmLoad, pinned: str, plain: bool
) -> roofline.LlmLoad:
    """`load` timed by aiconfigurator where it has the GPU and the checkpoint as served:
    `plain` (16-bit weights and KV cache, no quantization) for a 16-bit checkpoint; an FP8
    checkpoint with no other quantization and a 16-bit KV cache."""
    repo = model.source.hf_repo or (
        model.llm.source.split("huggingface.co/")[-1].rsplit("/blob/", 1)[0]
        if model.llm and "huggingface.co/" in model.llm.source
        else None
    )
    source = aiconfigurator.source_for(pool.gpu.id, repo, "vllm", pinned)
    if source is None or model.vllm is None:
        return load
    quant = aiconfigurator.checkpoint_quantization(source)
    v = model.vllm
    if quant is None:
        served_as_is = plain and not v.quantization
    else:
        served_as_is = (
            quant == "fp8"
            and v.quantization in (None, "fp8")
            and not (v.kv_cache_dtype or "").startswith("fp8")
        )
    if not served_as_is:
        return load
    tp, isl, osl = model.gpus, load.input_tokens, load.output_tokens
    cached = int(isl * load.cached_share)
    moe = ("ep" if expert_parallel(model) else "tp") if load.experts else ""

    def timings(batch: int) -> tuple[float, float]:
        return (
            aiconfigurator.prefill_ms(source, tp, isl, cached, moe) / 1000,
            aiconfigurator.step_ms(source, tp, batch, isl, osl, moe) / 1000,
        )

    return replace(load, timings=timings, band=aiconfigurator.BAND, engine_source=source)


def expert_parallel(model: Model) -> bool:
    """Whether vLLM runs the model's experts by expert parallelism (``--enable-expert-parallel``
    in `vllm.extra_args`; `semantic_vllm.expert_parallel`)."""
    if model.vllm is None:
        return False
    on = False
    for arg in model.vllm.extra_args:
        flag = arg.split("=", 1)[0]
        if flag in ("--enable-expert-parallel", "-ep"):
            on = True
        elif flag == "--no-enable-expert-parallel":
            on = False
    return on


def model_basis(model: Model) -> str:
    """How the planner counts the model, for the plan: dense or a mixture of experts, and
    where its description comes from."""
    facts = model.llm
    if facts is None:
        return ""
    origin = facts.copy or facts.source
    text = f"{facts.basis()}; " + (origin if origin.startswith("transcribed") else f"from {origin}")
    if not facts.moe:
        return text
    if model.gpus > 1:
        if expert_parallel(model):
            per = facts.experts / model.gpus
            split = f"expert parallel: each of {model.gpus} GPUs holds {per:g} whole experts"
        else:
            split = (
                f"tensor parallel: each of {model.gpus} GPUs holds 1/{model.gpus} of every expert"
            )
        text += f"; {split}"
    return (
        text + "; memory holds every expert, prefill computes with the active parameters, a decode "
        "step reads the shared weights and the experts its batch touches"
    )


def batch_setting(model: Model) -> str:
    """The engine setting that caps the batch."""
    if model.vllm is not None:
        return "vllm.max_num_seqs"
    if model.tensorrt_llm is not None:
        return "tensorrt_llm.max_batch_size"
    return "batching.max_batch_size"


def batch_limit(model: Model) -> int | None:
    """The value of `batch_setting`; None when the blueprint leaves it to the engine."""
    if model.vllm is not None:
        return model.vllm.max_num_seqs
    if model.tensorrt_llm is not None:
        return model.tensorrt_llm.max_batch_size
    return max_batch(model)


def window_us(model: Model) -> int:
    if model.batching is None:
        return 0
    return model.batching.max_queue_delay_us


def max_batch(model: Model) -> int:
    return model.batching.max_batch_size if model.batching else 1


DEFAULT_WINDOW_US = defaults.BATCHING_MAX_QUEUE_DELAY_US
