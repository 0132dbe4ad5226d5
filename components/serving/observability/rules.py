"""Recording rules and SLO alerts of one model, as Prometheus rule groups (plain data).

`ModelMonitoring` puts them in a PrometheusRule; the tests hand the same groups to
``promtool check rules`` and ``promtool test rules``.

Recording rules keep the ``namespace`` label and add ``model``, so one dashboard or alert
expression reads the same for Triton and vLLM. Alerts read the recorded series (or
kube-state-metrics directly) and carry ``severity`` plus summary/description/runbook
annotations.
"""

from __future__ import annotations

from typing import Any, Final

from inferplane.blueprint import defaults, naming
from inferplane.components.serving.observability import promql
from inferplane.components.serving.observability.promql_scope import Scope, selector
from inferplane.components.serving.spec import ServedModel, ServingEnvironment

BY_NAMESPACE: Final = ("namespace",)
BY_DEPLOYMENT: Final = ("namespace", "deployment")

LATENCY_FOR: Final = "5m"
QUEUE_GROWING_FOR: Final = "10m"
QUEUE_DERIV_WINDOW: Final = "5m"
GPU_MEMORY_FOR: Final = "10m"
AT_MAX_FOR: Final = "15m"
NO_READY_REALTIME_FOR: Final = "2m"
GPU_MEMORY_RATIO: Final = 0.95
KV_CACHE_RATIO: Final = 0.95
"""TensorRT-LLM: share of KV-cache blocks in use beyond which new requests wait for memory."""
KV_CACHE_FOR: Final = "10m"
ROUTER_DOWN_FOR: Final = "5m"
"""Longer than a leader election takes to hand over: a picker down this long is no handover."""


def duration(seconds: int) -> str:
    """A Prometheus duration in the largest whole unit: 120 -> ``2m``."""
    for unit, size in (("h", 3600), ("m", 60)):
        if seconds % size == 0 and seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def group_name(namespace: str, model: str, kind: str) -> str:
    return f"inferplane.{namespace}.{model}.{kind}"


def recording_rules(scope: Scope) -> list[dict[str, Any]]:
    """The ``inferplane:model_*`` series of one model."""
    labels = {"model": scope.model}
    exprs: dict[str, str] = {
        name: promql.latency_quantile_ms(scope, q, BY_NAMESPACE)
        for q, name in promql.LATENCY_MS.items()
    }
    exprs.update(
        {
            promql.QUEUE_TIME_MS: promql.queue_time_ms(scope, BY_NAMESPACE),
            promql.COMPUTE_TIME_MS: promql.compute_time_ms(scope, BY_NAMESPACE),
            promql.REQUEST_RATE: promql.request_rate(scope, BY_NAMESPACE),
            promql.ERROR_RATIO: promql.error_ratio(scope, BY_NAMESPACE),
            promql.QUEUE_DEPTH: promql.queue_depth(scope, BY_NAMESPACE),
            promql.GPU_UTILIZATION_PERCENT: promql.gpu_utilization_percent(scope, BY_NAMESPACE),
            promql.GPU_MEMORY_USED_RATIO: promql.gpu_memory_used_ratio(scope, BY_NAMESPACE),
        }
    )
    if scope.trtllm:
        exprs[promql.INFLIGHT_REQUESTS] = promql.inflight_requests(scope, BY_NAMESPACE)
        exprs[promql.KV_CACHE_USED_RATIO] = promql.kv_cache_used_ratio(scope, BY_NAMESPACE)
    if scope.server == "vllm" or scope.streaming:
        exprs[promql.TTFT_P95_MS] = promql.ttft_p95_ms(scope, BY_NAMESPACE)
    if scope.server == "vllm":
        exprs[promql.TOKENS_PER_SECOND] = promql.tokens_per_second(scope, BY_NAMESPACE)
    return [{"record": name, "expr": expr, "labels": dict(labels)} for name, expr in exprs.items()]


def recorded(name: str, scope: Scope) -> str:
    """A recorded series of this model."""
    return f"{name}{selector(namespace=scope.namespace, model=scope.model)}"


def gpu_memory_threshold(model: ServedModel) -> float:
    """vLLM reserves ``gpu_memory_utilization`` of the GPU up front (0.92 by default in
    v0.33.0, 0.9 in v0.10.2: inferplane/facts/vllm/<release>/defaults.txt), so its alert
    sits above that reservation; Triton allocates as it goes."""
    if model.server == "vllm" and model.vllm and model.vllm.gpu_memory_utilization:
        return round(min(0.99, max(GPU_MEMORY_RATIO, model.vllm.gpu_memory_utilization + 0.03)), 2)
    return GPU_MEMORY_RATIO


def queue_threshold(model: ServedModel) -> float:
    """Queue depth beyond which a growing queue is a problem: the autoscaling target when
    queue depth is one of the model's signals, else the default per-replica target."""
    target = model.autoscaling.target_of("queue_depth")
    return target if target is not None else float(defaults.MODEL_AUTOSCALING_TARGET)


def signal_alerts(model: ServedModel, scope: Scope, where: str, pods: str) -> list[dict[str, Any]]:
    """One alert per autoscaling signal: it has stayed above its target for `AT_MAX_FOR`,
    i.e. the autoscaler has not brought it down (replicas at max, or new replicas cannot
    start). The expression is the trigger's own query against its threshold, so the alert
    sees what KEDA sees (per replica for a queue: the HPA divides it by the replicas)."""
    out = []
    for signal in model.autoscaling.signals:
        value = f"({promql.autoscaling_query(scope, signal.metric)})"
        if promql.AUTOSCALING_METRIC_TYPE[signal.metric] == "AverageValue":
            value = f"{value} / clamp_min({promql.spec_replicas(scope)}, 1)"
        out.append(
            {
                "alert": "InferenceScalingSignalAboveTarget",
                "expr": f"{value} > {promql.threshold(signal.target)}",
                "for": AT_MAX_FOR,
                "labels": {"signal": signal.metric},
                "annotations": {
                    "summary": f"{signal.metric} of {model.name} stays above its autoscaling "
                    f"target of {promql.threshold(signal.target)}",
                    "description": f"{signal.metric} of {where} has been {{{{ $value | "
                    f"humanize }}}} for {AT_MAX_FOR}, above the target "
                    f"{promql.threshold(signal.target)} the autoscaler works towards: it "
                    "cannot add the replicas this signal asks for.",
                    "runbook": f"Check `{pods}`: replicas at max (raise models.{model.name}."
                    "replicas.max and the pool's nodes.max), Pending pods (no GPU in the "
                    "zone), or a target the model cannot reach at any replica count.",
                },
            }
        )
    return out


def alert_rules(env: ServingEnvironment, model: ServedModel, scope: Scope) -> list[dict[str, Any]]:
    """SLO and capacity alerts of one model."""
    where = f"{model.name} in {scope.namespace} ({env.part_of}/{env.environment})"
    dashboard = f"the {model.name} dashboard (Grafana, tag inferplane)"
    pods = (
        f"kubectl -n {scope.namespace} get scaledobject,hpa,pods "
        f"-l {naming.MODEL_LABEL}={model.name}"
    )
    base = {
        "model": model.name,
        "environment": env.environment,
        "latency_class": model.latency_class,
    }
    num = promql.threshold
    alerts: list[dict[str, Any]] = []

    def add(
        alert: str,
        expr: str,
        for_: str,
        severity: str,
        summary: str,
        description: str,
        runbook: str,
    ) -> None:
        alerts.append(
            {
                "alert": alert,
                "expr": expr,
                "for": for_,
                "labels": {**base, "severity": severity},
                "annotations": {
                    "summary": summary,
                    "description": description,
                    "runbook": runbook,
                },
            }
        )

    page = "critical" if model.realtime else "warning"
    if model.slo and model.slo.p95_ms:
        add(
            "InferenceP95LatencyAboveSLO",
            f"{recorded(promql.LATENCY_MS[0.95], scope)} > {num(model.slo.p95_ms)}",
            LATENCY_FOR,
            page,
            f"p95 latency of {model.name} is above its {model.slo.p95_ms} ms SLO",
            f"p95 request latency of {where} has been {{{{ $value | humanize }}}} ms for "
            f"{LATENCY_FOR} (slo.p95_ms: {model.slo.p95_ms}).",
            f"Open {dashboard} and compare queue time with compute time. Queue time rising: "
            f"too few replicas; check `{pods}` for Pending pods (no free GPU) or replicas "
            "at max. Compute time rising: a slower engine or a larger batch; check the "
            "last rollout.",
        )
    if (model.server == "vllm" or scope.streaming) and model.slo and model.slo.ttft_p95_ms:
        batch = "vllm.max_num_seqs" if model.server == "vllm" else "tensorrt_llm.max_batch_size"
        add(
            "InferenceTTFTAboveSLO",
            f"{recorded(promql.TTFT_P95_MS, scope)} > {num(model.slo.ttft_p95_ms)}",
            LATENCY_FOR,
            page,
            f"p95 time to first token of {model.name} is above its {model.slo.ttft_p95_ms} ms SLO",
            f"p95 time to first token of {where} has been {{{{ $value | humanize }}}} ms "
            f"for {LATENCY_FOR} (slo.ttft_p95_ms: {model.slo.ttft_p95_ms}).",
            f"Long prompts or a full batch delay prefill. Check waiting requests and KV-cache "
            f"usage on {dashboard}; lower {batch} or add replicas "
            f"(models.{model.name}.replicas.max).",
        )
    threshold_q = queue_threshold(model)
    queue = recorded(promql.QUEUE_DEPTH, scope)
    add(
        "InferenceQueueGrowing",
        # The queue first, so that $value is its depth.
        f"{queue} > {num(threshold_q)} and deriv({queue}[{QUEUE_DERIV_WINDOW}]) > 0",
        QUEUE_GROWING_FOR,
        "warning",
        f"Request queue of {model.name} keeps growing",
        f"{{{{ $value | humanize }}}} requests wait for {where} and the queue has grown for "
        f"{QUEUE_GROWING_FOR}: the replicas do not keep up.",
        f"Check `{pods}`: replicas at max (raise models.{model.name}.replicas.max and the "
        f"pool's nodes.max), Pending pods (no GPU capacity in the zone), or a slow replica.",
    )
    for alert in signal_alerts(model, scope, where, pods):
        alerts.append({**alert, "labels": {**base, "severity": "warning", **alert["labels"]}})
    if scope.trtllm:
        # The backend reserves kv_cache_free_gpu_mem_fraction of the free GPU memory for its
        # KV cache at load, so GPU memory always looks full: the cache's blocks are the signal.
        add(
            "InferenceKVCacheFull",
            f"{recorded(promql.KV_CACHE_USED_RATIO, scope)} > {num(KV_CACHE_RATIO)}",
            KV_CACHE_FOR,
            "warning",
            f"KV cache of {model.name} is nearly full",
            f"The fullest replica of {where} has {{{{ $value | humanizePercentage }}}} of its "
            f"KV-cache blocks in use for {KV_CACHE_FOR}: new requests wait for memory.",
            f"Add replicas (models.{model.name}.replicas.max), quantize the KV cache "
            "(tensorrt_llm.kv_cache_quantization), raise tensorrt_llm."
            "kv_cache_free_gpu_mem_fraction, or shorten tensorrt_llm.max_seq_len.",
        )
    else:
        ratio = gpu_memory_threshold(model)
        add(
            "InferenceGPUMemoryHigh",
            f"{recorded(promql.GPU_MEMORY_USED_RATIO, scope)} > {num(ratio)}",
            GPU_MEMORY_FOR,
            "warning",
            f"GPU memory of {model.name} is above {round(ratio * 100)}%",
            f"The fullest GPU of {where} has {{{{ $value | humanizePercentage }}}} of its "
            "memory in use: the next larger batch or longer sequence may run out of memory.",
            "Lower the batch size (batching.max_batch_size, vllm.max_num_seqs or "
            "vllm.max_model_len), lower vllm.gpu_memory_utilization, or move the model to a "
            "GPU with more memory.",
        )
    if model.replicas.max > model.replicas.min:
        add(
            "InferenceReplicasAtMax",
            f"{promql.spec_replicas(scope, BY_DEPLOYMENT)} >= {model.replicas.max}",
            AT_MAX_FOR,
            "warning",
            f"{model.name} has run at its maximum of {model.replicas.max} replicas",
            f"{where} has wanted {{{{ $value }}}} replicas, its maximum, for {AT_MAX_FOR}; "
            "more load will queue.",
            f"Raise models.{model.name}.replicas.max, and the pool's nodes.max so the new "
            "replicas get GPUs.",
        )
    if scope.router_service is not None:
        add(
            "InferenceRouterDown",
            f"{promql.router_ready_pickers(scope)} < 1",
            ROUTER_DOWN_FOR,
            "warning",
            f"The router of {model.name} has no active endpoint picker",
            f"No endpoint picker of {{{{ $labels.deployment }}}} ({where}) has been ready for "
            f"{ROUTER_DOWN_FOR}: its proxy fails open, so requests still flow but unscored, "
            "without prefix-cache or load awareness.",
            f"`kubectl -n {scope.namespace} get pods -l llm-d-router-gateway="
            "{{ $labels.deployment }}` and their logs: leader election (the Lease), the "
            "InferencePool, or the picker's RBAC.",
        )
    ready = promql.ready_replicas(scope, BY_DEPLOYMENT)
    if model.realtime and model.replicas.min > 0:
        add(
            "InferenceNoReadyReplica",
            f"{ready} < 1",
            NO_READY_REALTIME_FOR,
            "critical",
            f"{model.name} has no ready replica",
            f"No replica of {where} has been ready for {NO_READY_REALTIME_FOR}: every "
            "request fails.",
            f"`{pods}` and `kubectl describe` the pods: Pending (no GPU node in the zone), "
            "CrashLoopBackOff, a failed model load or engine build, or a startup probe "
            "that gave up.",
        )
    else:
        startup = duration(max(model.startup_timeout_s, 300))
        add(
            "InferenceNoReadyReplica",
            f"{promql.spec_replicas(scope, BY_DEPLOYMENT)} > 0 and {ready} < 1",
            startup,
            "warning",
            f"{model.name} wants replicas but none is ready",
            f"{where} has wanted replicas for {startup}, longer than its startup timeout, "
            "and none is ready.",
            f"`{pods}` and `kubectl describe` the pods: Pending (no GPU node; a pool at zero "
            "nodes must scale up first), a failed model load or engine build.",
        )
    return alerts


def rule_groups(
    env: ServingEnvironment, model: ServedModel, namespace: str, deployment: str | None = None
) -> list[dict[str, Any]]:
    """The rule groups of one model: recording rules, and alerts when
    ``observability.alerts.enabled``."""
    scope = Scope.of(env, model, namespace, deployment)
    groups = [
        {"name": group_name(namespace, model.name, "recording"), "rules": recording_rules(scope)}
    ]
    if env.alerts:
        groups.append(
            {
                "name": group_name(namespace, model.name, "alerts"),
                "rules": alert_rules(env, model, scope),
            }
        )
    return groups
