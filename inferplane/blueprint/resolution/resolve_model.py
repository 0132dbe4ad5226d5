"""One model of a validated blueprint, resolved: defaults applied, its sources made
absolute under the model store, its server's settings (vLLM, TensorRT, TensorRT-LLM, Triton
batching, cache and warm-up), its scaling, wake schedule, traffic, profile and routing.

Called by `resolve.resolve` for every model of an environment, on the merged view.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from inferplane.blueprint import defaults, resolve_triton, wake
from inferplane.blueprint.checks import semantic_vllm
from inferplane.blueprint.model import (
    Autoscaling,
    Batching,
    GpuPool,
    Lora,
    LoraAdapter,
    MinMax,
    Model,
    ModelSource,
    ResponseCache,
    Rollout,
    RolloutGuard,
    Routing,
    ScaleOut,
    ScheduleWindow,
    SecretRef,
    Signal,
    Slo,
    Speculative,
    TensorRt,
    TensorRtInput,
    TensorRtLlm,
    Traffic,
    VllmSettings,
    Wake,
    Warmup,
    guarded_latencies,
)


def parse_source(source: str, model_store: str) -> ModelSource:
    """An absolute `ModelSource` for a blueprint `source`; relative ones resolve under the
    model store."""
    uri = source if "://" in source else model_store + source
    scheme, rest = uri.split("://", 1)
    if scheme == "hf":
        repo, _, revision = rest.partition("@")
        return ModelSource(
            uri=uri, scheme="hf", bucket=None, key=None, hf_repo=repo, hf_revision=revision or None
        )
    bucket, _, key = rest.partition("/")
    return ModelSource(uri=uri, scheme="s3" if scheme == "s3" else "gs", bucket=bucket, key=key)


def resolve_model(
    name: str,
    spec: Mapping[str, Any],
    pools: Mapping[str, GpuPool],
    model_store: str,
    here: Path = Path(),
) -> Model:
    """Model `name` of an environment, on its pool; relative sources resolve under
    `model_store`, a profile file under `here` (the blueprint's directory)."""
    server = spec["server"]
    pool = pools[spec["pool"]]
    latency_class = spec.get("latency_class", defaults.MODEL_LATENCY_CLASS)
    replicas = spec.get("replicas") or {}
    rmin, rmax = defaults.model_replicas(spec, len(pool.zones))
    slo = spec.get("slo")
    return Model(
        name=name,
        path=("models", name),
        server=server,
        source=parse_source(spec["source"], model_store),
        pool=pool.name,
        gpus=spec.get("gpus", defaults.MODEL_GPUS),
        latency_class=latency_class,
        precision=spec.get("precision", defaults.MODEL_PRECISION),
        replicas=MinMax(rmin, rmax),
        autoscaling=_autoscaling(spec.get("autoscaling")),
        slo=Slo(
            p95_ms=slo.get("p95_ms"),
            ttft_p95_ms=slo.get("ttft_p95_ms"),
            itl_p95_ms=slo.get("itl_p95_ms"),
        )
        if slo
        else None,
        expose=(spec.get("expose") or {}).get("protocol", defaults.EXPOSE_BY_SERVER[server]),
        secrets=tuple(
            SecretRef(
                name=key,
                path=("models", name, "secrets", key),
                from_env=ref.get("from_env"),
                from_pulumi_config=ref.get("from_pulumi_config"),
                from_secret_manager=ref.get("from_secret_manager"),
            )
            for key, ref in (spec.get("secrets") or {}).items()
        ),
        image=spec.get("image"),
        base_release=spec.get("base_release"),
        startup_timeout_s=spec.get("startup_timeout_s", defaults.STARTUP_TIMEOUT_S),
        max_request_s=spec.get("max_request_s", defaults.MAX_REQUEST_S),
        vllm=_vllm(spec.get("vllm") or {}, model_store) if server == "vllm" else None,
        tensorrt=_tensorrt(spec.get("tensorrt"))
        if resolve_triton.backend_of(spec) == "tensorrt"
        else None,
        tensorrt_llm=TensorRtLlm(**spec["tensorrt_llm"]) if "tensorrt_llm" in spec else None,
        batching=_batching(spec["batching"]) if "batching" in spec else None,
        response_cache=ResponseCache(
            enabled=spec["response_cache"].get("enabled", True),
            size_mb=spec["response_cache"].get("size_mb", defaults.RESPONSE_CACHE_SIZE_MB),
            backend=spec["response_cache"].get("backend", defaults.RESPONSE_CACHE_BACKEND),
        )
        if "response_cache" in spec
        else None,
        warmup=Warmup(batch_sizes=tuple(spec["warmup"].get("batch_sizes") or (1,)))
        if "warmup" in spec
        else None,
        wake=_wake(replicas.get("wake")),
        wake_hosts=tuple((replicas.get("wake") or {}).get("hosts") or ()),
        schedule=_schedule(replicas.get("schedule") or (), len(pool.zones)),
        llm=semantic_vllm.facts_of(spec, here)[0]
        if server == "vllm" or "tensorrt_llm" in spec
        else None,
        backend=resolve_triton.backend_of(spec),
        accelerator=spec.get("accelerator", "cuda"),
        inputs=resolve_triton.tensors(spec.get("inputs")),
        outputs=resolve_triton.tensors(spec.get("outputs")),
        shapes=resolve_triton.shapes(spec.get("shapes")),
        pipeline=resolve_triton.pipeline(spec.get("pipeline")),
        traffic=_traffic(spec.get("traffic")),
        profile=_profile(spec.get("profile"), here),
        budget_usd_per_month=(spec.get("budget") or {}).get("usd_per_month"),
        autoscaling_derived="traffic" in spec and "autoscaling" not in spec,
        routing=Routing.of(spec.get("routing")),
        scale_out=_scale_out(spec.get("scale_out")),
        rollout=_rollout(spec.get("rollout"), slo, guarded_latencies(spec)),
    )


def _rollout(
    spec: Mapping[str, Any] | None, slo: Mapping[str, Any] | None, measured: frozenset[str]
) -> Rollout | None:
    """The rollout in effect: its steps (default `defaults.ROLLOUT_STEPS`), and each bound
    of its guard as written, else the SLO's where the guard can measure it
    (`guarded_latencies`), and the default error ratio."""
    if spec is None:
        return None
    given = spec.get("guard") or {}
    bounds = {k: v for k, v in (slo or {}).items() if k in measured}
    bounds.update({k: v for k, v in given.items() if k != "error_ratio"})
    return Rollout(
        steps=tuple(spec.get("steps") or defaults.ROLLOUT_STEPS),
        step_s=spec.get("step_s", defaults.ROLLOUT_STEP_S),
        guard=RolloutGuard(
            p95_ms=bounds.get("p95_ms"),
            ttft_p95_ms=bounds.get("ttft_p95_ms"),
            itl_p95_ms=bounds.get("itl_p95_ms"),
            error_ratio=float(given.get("error_ratio", defaults.ROLLOUT_ERROR_RATIO)),
        ),
    )


def _scale_out(spec: Mapping[str, Any] | None) -> ScaleOut:
    """The model's bound and the levers it asks for; the levers in effect are chosen once
    the environment is whole (`inferplane.blueprint.derived.levers.apply`)."""
    if spec is None:
        return ScaleOut()
    levers = spec.get("levers", "auto")
    return ScaleOut(
        budget_s=spec.get("budget_s"),
        requested="auto" if levers == "auto" else tuple(levers),
    )


def _traffic(spec: Mapping[str, Any] | None) -> Traffic | None:
    if spec is None:
        return None
    return Traffic(
        peak_rps=float(spec["peak_rps"]),
        input_tokens=spec.get("input_tokens"),
        output_tokens=spec.get("output_tokens"),
        shared_prefix=float(spec.get("shared_prefix", 0.0)),
        items_per_request=int(spec.get("items_per_request", 1)),
        audio_seconds=float(spec["audio_seconds"]) if "audio_seconds" in spec else None,
    )


def _profile(spec: Mapping[str, Any] | None, here: Path) -> tuple[tuple[int, float], ...]:
    """The profile's points, inline or from its CSV file (validation has read the file
    already, so an unreadable one here is empty)."""
    if not spec:
        return ()
    if "points" in spec:
        return tuple((p["batch_size"], float(p["p95_ms"])) for p in spec["points"])
    from inferplane.blueprint.capacity import profile

    try:
        return tuple(profile.read_csv(profile.read_file(here, spec["file"])))
    except (OSError, ValueError):
        return ()


def _autoscaling(spec: Mapping[str, Any] | list[Mapping[str, Any]] | None) -> Autoscaling:
    """One signal (a mapping, defaults filled in) or a list of signals."""
    if isinstance(spec, list):
        return Autoscaling(
            tuple(Signal(s["metric"], float(s["target"])) for s in spec),
            defaults.SCALE_DOWN_STABILIZATION_S,
        )
    auto = spec or {}
    return Autoscaling.single(
        auto.get("metric", defaults.MODEL_AUTOSCALING_METRIC),
        float(auto.get("target", defaults.MODEL_AUTOSCALING_TARGET)),
        auto.get("scale_down_stabilization_s", defaults.SCALE_DOWN_STABILIZATION_S),
    )


def _wake(spec: Mapping[str, Any] | None) -> Wake | None:
    """The schedule of `replicas.wake`; None without one (it may name only `hosts`)."""
    if spec is None or "schedule" not in spec:
        return None
    return Wake(
        schedule=" ".join(spec["schedule"].split()),
        duration_s=wake.parse_duration(spec["duration"]),
        timezone=spec.get("timezone", wake.DEFAULT_TIMEZONE),
    )


def _schedule(windows: Sequence[Mapping[str, Any]], zones: int) -> tuple[ScheduleWindow, ...]:
    return tuple(
        ScheduleWindow(
            schedule=" ".join(w["schedule"].split()),
            duration_s=wake.parse_duration(w["duration"]),
            timezone=w.get("timezone", wake.DEFAULT_TIMEZONE),
            min_per_zone=w["min"],
            replicas=w["min"] * max(zones, 1),
        )
        for w in windows
    )


def _vllm(spec: Mapping[str, Any], model_store: str) -> VllmSettings:
    plain = {k: v for k, v in spec.items() if k in _VLLM_PLAIN}
    spec_dec = spec.get("speculative")
    speculative = None
    if spec_dec:
        draft = spec_dec.get("draft_model")
        source = parse_source(draft, model_store) if draft else None
        speculative = Speculative(
            method=spec_dec["method"],
            num_speculative_tokens=spec_dec.get(
                "num_speculative_tokens", defaults.VLLM_SPECULATIVE_TOKENS
            ),
            draft_repo=source.hf_repo if source else None,
            draft_revision=source.hf_revision if source else None,
            prompt_lookup_max=spec_dec.get("prompt_lookup_max"),
            prompt_lookup_min=spec_dec.get("prompt_lookup_min"),
        )
    lora_spec = spec.get("lora")
    lora = None
    if lora_spec:
        adapters = tuple(
            LoraAdapter(name, parse_source(src, model_store))
            for name, src in lora_spec["adapters"].items()
        )
        lora = Lora(
            adapters=adapters,
            max_loras=lora_spec.get("max_loras", min(len(adapters), defaults.VLLM_MAX_LORAS)),
            max_lora_rank=lora_spec.get("max_lora_rank"),
        )
    return VllmSettings(
        **plain,
        speculative=speculative,
        lora=lora,
        served_model_aliases=tuple(spec.get("served_model_aliases") or ()),
        extra_args=tuple(spec.get("extra_args") or ()),
        env=tuple((spec.get("env") or {}).items()),
    )


_VLLM_PLAIN = frozenset(
    {
        "max_model_len",
        "max_num_seqs",
        "max_num_batched_tokens",
        "gpu_memory_utilization",
        "enable_prefix_caching",
        "enable_chunked_prefill",
        "kv_cache_dtype",
        "quantization",
        "enforce_eager",
        "chat_template",
        "tool_call_parser",
    }
)


def _tensorrt(spec: Mapping[str, Any] | None) -> TensorRt:
    spec = spec or {}
    return TensorRt(
        inputs=tuple(
            TensorRtInput(
                name, tuple(s["min"]), tuple(s["opt"]), tuple(s["max"]), s.get("data_type")
            )
            for name, s in (spec.get("inputs") or {}).items()
        ),
        workspace_mib=spec.get("workspace_mib"),
        builder_optimization_level=spec.get(
            "builder_optimization_level", defaults.TENSORRT_BUILDER_OPTIMIZATION_LEVEL
        ),
    )


def _batching(spec: Mapping[str, Any]) -> Batching:
    return Batching(
        max_batch_size=spec["max_batch_size"],
        max_queue_delay_us=spec.get("max_queue_delay_us", defaults.BATCHING_MAX_QUEUE_DELAY_US),
        preferred_batch_sizes=tuple(spec.get("preferred_batch_sizes") or ()),
    )
