"""Every PromQL query of a served model, built from its `ServedModel`: one definition per signal.

The same functions feed the KEDA trigger (`autoscaling_query`), the recording and alerting
rules (`inferplane.components.serving.observability.rules`) and the Grafana dashboard
(`inferplane.components.serving.observability.dashboards`), so a metric renamed upstream
changes in one place.

Triton p95 latency. The first-response histogram has only 100/500/2000/5000 ms buckets (and
exists only for decoupled models), useless for millisecond SLOs, so Triton runs with latency
*summaries* (`triton_metrics_args`). Verified against Triton's source:
``src/command_line_parser.cc`` (server) declares ``--metrics-config <setting>=<value>``,
repeatable, and ``ParseMetricsConfigOption`` splits at the first ``=`` and rejects a ``,``
only *before* it, so a comma-separated value passes; ``src/metric_model_reporter.cc`` (core)
reads ``summary_latencies=true`` and ``summary_quantiles`` as ``<quantile>:<error>`` pairs
split on ``,`` (its comment's space-separated example is wrong: spaces are not split). The
same file creates ``nv_inference_request_summary_us`` only when the model's response cache is
*off* ("request_duration summary is currently disabled when cache is enabled"), so for a
cached model p95 is the sum of the per-stage p95s (queue, compute input, infer, output):
not an exact quantile of the sum, and an over-estimate for cache hits (they skip compute),
which errs towards scaling out. Summary quantile labels are normalised by Prometheus 3
(kube-prometheus-stack ships v3) to the shortest float form, so ``quantile="0.95"`` matches
whatever digits the C++ client prints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Final, Literal

from inferplane.blueprint.model import Metric, Server
from inferplane.components.serving.observability.known_metrics import KNOWN_METRICS as KNOWN_METRICS
from inferplane.components.serving.observability.promql_router import (
    pool_saturation as pool_saturation,
)
from inferplane.components.serving.observability.promql_router import router_queue as router_queue
from inferplane.components.serving.observability.promql_router import (
    router_ready_endpoints as router_ready_endpoints,
)
from inferplane.components.serving.observability.promql_router import (
    router_ready_pickers as router_ready_pickers,
)
from inferplane.components.serving.observability.promql_router import (
    router_running as router_running,
)
from inferplane.components.serving.observability.promql_scope import Scope, selector, streams_tokens
from inferplane.components.serving.spec import ServedModel

RATE_WINDOW: Final = "2m"
"""Window of every rate() the rules and dashboards read: long enough to survive a missed
scrape and to smooth a quantile the SLO alerts judge."""

SCALING_WINDOW: Final = "30s"
"""Window of the latency quantile a trigger reads: six 5 s scrapes. Short because a latency
trigger is a ``Value`` metric, and each 15 s HPA sync asks for ``ceil(ready x value /
target)`` (kubernetes ``pkg/controller/podautoscaler/replica_calculator.go``,
``GetExternalMetricReplicas``): a p95 stays high until under 5% of its window is slow, so
over 2 m the HPA would go on multiplying replicas for two minutes after the load eased."""

TRITON_SUMMARY_QUANTILES: Final[tuple[tuple[float, float], ...]] = (
    (0.5, 0.01),
    (0.95, 0.001),
    (0.99, 0.001),
)
"""(quantile, allowed rank error) of Triton's latency summaries."""

MetricType = Literal["AverageValue", "Value"]

AUTOSCALING_METRIC_TYPE: Final[Mapping[Metric, MetricType]] = MappingProxyType(
    {
        # Additive: the HPA divides the total by the replica count (desired = total/target).
        "queue_depth": "AverageValue",
        "concurrency": "AverageValue",
        # Not additive: a latency or a mean percentage is compared as is (desired =
        # current * value/target). `Utilization` is for resource metrics only; KEDA's
        # prometheus scaler rejects it.
        "gpu_utilization": "Value",
        "p95_latency_ms": "Value",
        "ttft_p95_ms": "Value",
        # The router's own counts are additive like the server's queue; its saturation is
        # a ratio of the pool (1.0 = where flow control starts holding requests).
        "router_queue": "AverageValue",
        "router_running": "AverageValue",
        "pool_saturation": "Value",
    }
)


def triton_metrics_args(model: ServedModel | str) -> list[str]:
    """tritonserver flags that turn on the latency summaries every Triton query here needs.

    Triton's metrics config is server-wide; each server runs one model, so a streaming
    TensorRT-LLM model also turns on the first-response histogram (``histogram_latencies``),
    its time-to-first-token signal.
    """
    quantiles = ",".join(f"{q}:{err}" for q, err in TRITON_SUMMARY_QUANTILES)
    args = [
        "--metrics-config=summary_latencies=true",
        f"--metrics-config=summary_quantiles={quantiles}",
    ]
    if isinstance(model, ServedModel) and streams_tokens(model):
        args.append("--metrics-config=histogram_latencies=true")
    return args


# --- recording-rule names (the PrometheusRule of each model records them) -----------------

LATENCY_MS: Final[Mapping[float, str]] = MappingProxyType(
    {
        0.5: "inferplane:model_latency_p50_ms",
        0.95: "inferplane:model_latency_p95_ms",
        0.99: "inferplane:model_latency_p99_ms",
    }
)
QUEUE_TIME_MS: Final = "inferplane:model_queue_time_ms"
COMPUTE_TIME_MS: Final = "inferplane:model_compute_time_ms"
TTFT_P95_MS: Final = "inferplane:model_ttft_p95_ms"
TOKENS_PER_SECOND: Final = "inferplane:model_tokens_per_second"
REQUEST_RATE: Final = "inferplane:model_request_rate"
ERROR_RATIO: Final = "inferplane:model_error_ratio"
QUEUE_DEPTH: Final = "inferplane:model_queue_depth"
GPU_UTILIZATION_PERCENT: Final = "inferplane:model_gpu_utilization_percent"
GPU_MEMORY_USED_RATIO: Final = "inferplane:model_gpu_memory_used_ratio"
INFLIGHT_REQUESTS: Final = "inferplane:model_inflight_requests"
KV_CACHE_USED_RATIO: Final = "inferplane:model_kv_cache_used_ratio"

RECORDED_METRICS: Final[frozenset[str]] = frozenset(
    {
        *LATENCY_MS.values(),
        QUEUE_TIME_MS,
        COMPUTE_TIME_MS,
        TTFT_P95_MS,
        TOKENS_PER_SECOND,
        REQUEST_RATE,
        ERROR_RATIO,
        QUEUE_DEPTH,
        GPU_UTILIZATION_PERCENT,
        GPU_MEMORY_USED_RATIO,
        INFLIGHT_REQUESTS,
        KV_CACHE_USED_RATIO,
    }
)
"""Series the recording rules produce; labels ``namespace`` and ``model``."""


def _agg(op: str, expr: str, by: Sequence[str] = ()) -> str:
    return f"{op} by ({', '.join(by)}) ({expr})" if by else f"{op}({expr})"


def _rate(series: str, window: str = RATE_WINDOW) -> str:
    return f"rate({series}[{window}])"


def _number(value: float) -> str:
    """A PromQL/KEDA number literal without a spurious ``.0``."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _require(scope: Scope, server: Server, signal: str) -> None:
    if scope.server != server:
        raise ValueError(
            f"{signal} exists only for {server} models; {scope.model} is {scope.server}"
        )


# --- signals ----------------------------------------------------------------------------------


def queue_depth(scope: Scope, by: Sequence[str] = ()) -> str:
    """Requests waiting for a batch slot, summed over the model's replicas.

    TensorRT-LLM: the backend takes requests out of Triton's queue into its own executor,
    where they wait for in-flight batch slots and KV-cache blocks; ``nv_trt_llm_request_
    metrics{request_type="waiting"}`` counts those, Triton's pending count the rest.
    """
    name = (
        "nv_inference_pending_request_count"
        if scope.server == "triton"
        else "vllm:num_requests_waiting"
    )
    # An ensemble counts its requests as executing once it hands them to its first step
    # (core r25.08 src/ensemble_scheduler/ensemble_scheduler.cc, EnsembleScheduler::Enqueue:
    # "Composing model requests will track their own states"): they wait in the steps.
    where = (
        selector(namespace=scope.namespace, model=f"~{scope.queued_in}")
        if scope.queued_in
        else scope.server_selector()
    )
    queued = _agg("sum", f"{name}{where}", by)
    if not scope.trtllm:
        return queued
    waiting = _agg(
        "sum", f"nv_trt_llm_request_metrics{scope.server_selector(request_type='waiting')}", by
    )
    return f"{waiting} + {queued}"


def concurrency(scope: Scope, by: Sequence[str] = ()) -> str:
    """Requests in the server, running plus waiting, summed over the replicas. An in-flight
    batching server admits requests into its batch up to its limit, so nothing waits below it
    (vLLM v0.33.0 ``vllm/v1/metrics/loggers.py``: ``vllm:num_requests_running`` "in model
    execution batches", ``vllm:num_requests_waiting``; TensorRT-LLM ``request_type`` active
    and waiting, plus Triton's pending count as in `queue_depth`)."""
    if scope.trtllm:
        return f"{inflight_requests(scope, by)} + {queue_depth(scope, by)}"
    _require(scope, "vllm", "concurrency")
    sel = scope.server_selector()
    running = _agg("sum", f"vllm:num_requests_running{sel}", by)
    return f"{running} + {queue_depth(scope, by)}"


def _require_trtllm(scope: Scope, signal: str) -> None:
    if not scope.trtllm:
        raise ValueError(f"{signal} exists only for TensorRT-LLM models; {scope.model} is not one")


def inflight_requests(scope: Scope, by: Sequence[str] = ()) -> str:
    """TensorRT-LLM: requests being generated (in flight), summed over the replicas."""
    _require_trtllm(scope, "in-flight requests")
    sel = scope.server_selector(request_type="active")
    return _agg("sum", f"nv_trt_llm_request_metrics{sel}", by)


def kv_cache_used_ratio(scope: Scope, by: Sequence[str] = ()) -> str:
    """TensorRT-LLM: used / total paged KV-cache blocks of the fullest replica, 0–1."""
    _require_trtllm(scope, "KV-cache usage")
    used = f"nv_trt_llm_kv_cache_block_metrics{scope.server_selector(kv_cache_block_type='used')}"
    total = f"nv_trt_llm_kv_cache_block_metrics{scope.server_selector(kv_cache_block_type='max')}"
    # The type label differs between the two: match on the others.
    return _agg("max", f"{used} / ignoring(kv_cache_block_type) {total}", by)


def latency_quantile_ms(scope: Scope, quantile: float, by: Sequence[str] = ()) -> str:
    """End-to-end request latency quantile in ms (the worst replica's, for Triton)."""
    if scope.server == "vllm":
        buckets = _rate(f"vllm:e2e_request_latency_seconds_bucket{scope.server_selector()}")
        return (
            f"histogram_quantile({_number(quantile)}, {_agg('sum', buckets, ('le', *by))}) * 1000"
        )
    if quantile not in dict(TRITON_SUMMARY_QUANTILES):
        raise ValueError(f"Triton exposes only the quantiles {TRITON_SUMMARY_QUANTILES}")
    q = str(quantile)
    if not scope.response_cache:
        series = f"nv_inference_request_summary_us{scope.server_selector(quantile=q)}"
        return f"{_agg('max', series, by)} / 1000"
    stages = (
        "nv_inference_queue_summary_us",
        "nv_inference_compute_input_summary_us",
        "nv_inference_compute_infer_summary_us",
        "nv_inference_compute_output_summary_us",
    )
    total = " + ".join(_agg("max", f"{s}{scope.server_selector(quantile=q)}", by) for s in stages)
    return f"({total}) / 1000"


def ttft_p95_ms(scope: Scope, by: Sequence[str] = (), window: str = RATE_WINDOW) -> str:
    """Time to first token, p95 in ms: vLLM's histogram, or, for a streaming TensorRT-LLM
    model, Triton's first-response histogram (already in ms; its 100/500/2000/5000 ms
    buckets make the quantile coarse: an interpolation inside the bucket it falls in)."""
    if scope.server == "triton" and scope.streaming:
        sel = scope.server_selector()
        buckets = _rate(f"nv_inference_first_response_histogram_ms_bucket{sel}", window)
        return f"histogram_quantile(0.95, {_agg('sum', buckets, ('le', *by))})"
    _require(scope, "vllm", "time to first token")
    buckets = _rate(f"vllm:time_to_first_token_seconds_bucket{scope.server_selector()}", window)
    return f"histogram_quantile(0.95, {_agg('sum', buckets, ('le', *by))}) * 1000"


def itl_p95_ms(scope: Scope, by: Sequence[str] = (), window: str = RATE_WINDOW) -> str:
    """Inter-token latency, p95 in ms: vLLM's ``vllm:inter_token_latency_seconds``
    histogram, a family of v0.10.2 and v0.33.0 alike (inferplane/facts/vllm/*/metrics.txt)."""
    _require(scope, "vllm", "inter-token latency")
    sel = scope.server_selector()
    buckets = _rate(f"vllm:inter_token_latency_seconds_bucket{sel}", window)
    return f"histogram_quantile(0.95, {_agg('sum', buckets, ('le', *by))}) * 1000"


def queue_time_ms(scope: Scope, by: Sequence[str] = ()) -> str:
    """Mean time a request waited in the server's queue, ms."""
    sel = scope.server_selector()
    if scope.server == "triton":
        waited = _agg("sum", _rate(f"nv_inference_queue_duration_us{sel}"), by)
        done = _agg("sum", _rate(f"nv_inference_request_success{sel}"), by)
        return f"{waited} / {done} / 1000"
    waited = _agg("sum", _rate(f"vllm:request_queue_time_seconds_sum{sel}"), by)
    done = _agg("sum", _rate(f"vllm:request_queue_time_seconds_count{sel}"), by)
    return f"{waited} / {done} * 1000"


def compute_time_ms(scope: Scope, by: Sequence[str] = ()) -> str:
    """Mean time a request spent computing (Triton: input + infer + output; vLLM:
    prefill + decode), ms. Cached Triton requests are left out: they compute nothing."""
    sel = scope.server_selector()
    if scope.server == "triton":
        stages = (
            "nv_inference_compute_input_duration_us",
            "nv_inference_compute_infer_duration_us",
            "nv_inference_compute_output_duration_us",
        )
        spent = " + ".join(_agg("sum", _rate(f"{s}{sel}"), by) for s in stages)
        done = _agg("sum", _rate(f"nv_inference_request_success{sel}"), by)
        if scope.response_cache:
            hits = _agg("sum", _rate(f"nv_cache_num_hits_per_model{sel}"), by)
            done = f"({done} - {hits})"
        return f"({spent}) / {done} / 1000"
    spent = _agg("sum", _rate(f"vllm:request_inference_time_seconds_sum{sel}"), by)
    done = _agg("sum", _rate(f"vllm:request_inference_time_seconds_count{sel}"), by)
    return f"{spent} / {done} * 1000"


def cache_hit_ratio(scope: Scope, by: Sequence[str] = ()) -> str:
    """Share of lookups answered from Triton's response cache. Triton itself counts hits and
    misses per model ("Triton-reported Response Cache Metrics"), so the series are the same
    for the local and the Redis cache (triton-inference-server/server r25.08
    ``docs/user_guide/metrics.md`` l.390-413)."""
    if scope.server != "triton" or not scope.response_cache:
        raise ValueError(f"{scope.model} has no Triton response cache")
    sel = scope.server_selector()
    hits = _agg("sum", _rate(f"nv_cache_num_hits_per_model{sel}"), by)
    misses = _agg("sum", _rate(f"nv_cache_num_misses_per_model{sel}"), by)
    return f"{hits} / ({hits} + {misses})"


def success_rate(scope: Scope, by: Sequence[str] = ()) -> str:
    """Requests/s that completed without error."""
    if scope.server == "triton":
        return _agg("sum", _rate(f"nv_inference_request_success{scope.server_selector()}"), by)
    # Client aborts are neither served nor failed by the server.
    ok = scope.server_selector(finished_reason="!~error|abort")
    return _agg("sum", _rate(f"vllm:request_success_total{ok}"), by)


def failure_rate(scope: Scope, by: Sequence[str] = ()) -> str:
    """Requests/s the server failed (Triton: any reason; vLLM: finished_reason="error")."""
    if scope.server == "triton":
        failed = _agg("sum", _rate(f"nv_inference_request_failure{scope.server_selector()}"), by)
        if not scope.queued_in:
            return failed
        # An ensemble's count adds its steps' failures to its clients' ("EnsembleA will have
        # a failed request metric reflecting ... count=2": server r25.08
        # docs/user_guide/metrics.md); the clients' failures are the difference.
        steps = selector(namespace=scope.namespace, model=f"~{scope.queued_in}")
        inner = _agg("sum", _rate(f"nv_inference_request_failure{steps}"), by)
        return f"({failed} - ({inner} or {failed} * 0))"
    # vLLM 0.10 has no "error" finish reason: no series is zero errors while requests finish.
    err = scope.server_selector(finished_reason="error")
    errors = _agg("sum", _rate(f"vllm:request_success_total{err}"), by)
    return f"({errors} or {request_rate(scope, by)} * 0)"


def request_rate(scope: Scope, by: Sequence[str] = ()) -> str:
    """Requests/s finished, successful or not (vLLM counts client aborts too)."""
    if scope.server == "triton":
        return f"{success_rate(scope, by)} + {failure_rate(scope, by)}"
    return _agg("sum", _rate(f"vllm:request_success_total{scope.server_selector()}"), by)


def error_ratio(scope: Scope, by: Sequence[str] = ()) -> str:
    """Failed / finished requests, 0–1."""
    return f"{failure_rate(scope, by)} / ({request_rate(scope, by)})"


def tokens_per_second(scope: Scope, by: Sequence[str] = ()) -> str:
    """vLLM generated tokens/s."""
    _require(scope, "vllm", "token throughput")
    return _agg("sum", _rate(f"vllm:generation_tokens_total{scope.server_selector()}"), by)


def gpu_utilization_percent(scope: Scope, by: Sequence[str] = ()) -> str:
    """GPU busy %, averaged over the model's GPUs (MIG: graphics-engine activity)."""
    if scope.mig:
        return f"{_agg('avg', f'DCGM_FI_PROF_GR_ENGINE_ACTIVE{scope.pods_selector()}', by)} * 100"
    return _agg("avg", f"DCGM_FI_DEV_GPU_UTIL{scope.pods_selector()}", by)


def gpu_memory_used_ratio(scope: Scope, by: Sequence[str] = ()) -> str:
    """Framebuffer used / (used + free) of the fullest GPU of the model, 0–1."""
    pods = scope.pods_selector()
    used, free = f"DCGM_FI_DEV_FB_USED{pods}", f"DCGM_FI_DEV_FB_FREE{pods}"
    return _agg("max", f"{used} / ({used} + {free})", by)


def spec_replicas(scope: Scope, by: Sequence[str] = ()) -> str:
    if scope.rollout:
        return _rollout_replicas(scope, "kube_replicaset_spec_replicas", by)
    return _agg("max", f"kube_deployment_spec_replicas{scope.deployment_selector()}", by)


def ready_replicas(scope: Scope, by: Sequence[str] = ()) -> str:
    if scope.rollout:
        return _rollout_replicas(scope, "kube_replicaset_status_ready_replicas", by)
    sel = scope.deployment_selector()
    return _agg("max", f"kube_deployment_status_replicas_ready{sel}", by)


def _rollout_replicas(scope: Scope, series: str, by: Sequence[str]) -> str:
    """A model with a rollout: its Deployments sit at zero once their Rollouts are Healthy
    (``scaleDown: onsuccess``), and kube-state-metrics exports no Rollout. The replicas are
    its ReplicaSets' (the Rollout's stable and canary ones, and the Deployment's at zero),
    summed per Deployment name (``<deployment>-<hash>`` read back into ``deployment``)."""
    named = (
        f"label_replace({series}{scope.replicasets_selector()}, "
        '"deployment", "$1", "replicaset", "(.+)-[a-z0-9]+")'
    )
    return _agg("max", _agg("sum", named, ("namespace", "deployment")), by)


def desired_replicas(scope: Scope, by: Sequence[str] = ()) -> str:
    """What the HPA behind the ScaledObject asks for."""
    sel = selector(namespace=scope.namespace, horizontalpodautoscaler=scope.hpa)
    return _agg("max", f"kube_horizontalpodautoscaler_status_desired_replicas{sel}", by)


def container_restarts(scope: Scope, window: str = "15m", by: Sequence[str] = ()) -> str:
    pods = scope.pods_selector()
    return _agg("sum", f"increase(kube_pod_container_status_restarts_total{pods}[{window}])", by)


def time_to_ready_s(scope: Scope) -> str:
    """Per pod: seconds from creation to Ready (image pull, weights, engine load, warm-up)."""
    pods = scope.pods_selector()
    return f"kube_pod_status_ready_time{pods} - kube_pod_created{pods}"


def pods_started(scope: Scope, window: str = "1h") -> str:
    """Pods of the model created within `window` (scale-outs, rollouts, evictions)."""
    pods = scope.pods_selector()
    return f"count(kube_pod_created{pods} > time() - {window_seconds(window)}) or vector(0)"


def window_seconds(window: str) -> int:
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    return int(window[:-1]) * units[window[-1]]


# --- the autoscaling query --------------------------------------------------------------------


def autoscaling_query(scope: Scope, metric: Metric) -> str:
    """The KEDA trigger's query: one element, or none when the model has no series at all.

    Idle is not missing: a latency quantile over zero requests is NaN, which KEDA would
    treat like an absent metric, so the query turns it into 0 while the server's counters
    exist (``x >= 0`` drops NaN; ``or`` then supplies 0). An empty result therefore means
    Prometheus sees no replica of the model, which KEDA can report as an error.
    """
    if metric == "queue_depth":
        return queue_depth(scope)
    if metric == "concurrency":
        return concurrency(scope)
    if metric == "gpu_utilization":
        return gpu_utilization_percent(scope)
    if metric == "p95_latency_ms":
        return f"{latency_quantile_ms(scope, 0.95)} >= 0 or {_zero_while_serving(scope)}"
    if metric == "ttft_p95_ms":
        quantile = ttft_p95_ms(scope, window=SCALING_WINDOW)
        return f"{quantile} >= 0 or {_zero_while_serving(scope)}"
    if metric == "router_queue":
        return f"{router_queue(scope)} or {_zero_while_picking(scope)}"
    if metric == "router_running":
        return router_running(scope)
    if metric == "pool_saturation":
        return pool_saturation(scope)
    raise ValueError(f"unknown autoscaling metric {metric!r}")


def _zero_while_picking(scope: Scope) -> str:
    """0 while Prometheus scrapes the zone's pickers, else nothing. The flow-control queue
    gauge has a series per queue only once a request was queued (llm-d-router v0.10.0
    ``pkg/epp/metrics/llm_d_router_metrics.go``: a labelled GaugeVec, set as queues
    appear), so an idle router reads empty; an empty answer is an error to a warm model's
    trigger (``ignoreNullValues: false``), and KEDA's fallback then holds the replicas it
    has, scale-in included. ``up == 1`` still leaves it empty when no picker is scraped
    (Prometheus' ``up`` per target, 1 on a successful scrape), so a lost router is still
    reported."""
    return f"max(up{scope.router_selector()} == 1) * 0"


def _zero_while_serving(scope: Scope) -> str:
    if scope.server == "triton":
        return f"{_agg('sum', f'nv_inference_request_success{scope.server_selector()}')} * 0"
    series = f"vllm:e2e_request_latency_seconds_count{scope.server_selector()}"
    return f"{_agg('sum', series)} * 0"


def threshold(value: float) -> str:
    """A KEDA threshold: a string holding a plain number."""
    return _number(value)
