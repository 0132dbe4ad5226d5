"""The Grafana dashboard of one model, built with Grafana's own typed SDK.

``grafana-foundation-sdk`` (Grafana Labs, Apache-2.0) generates its builders from Grafana's
schemas, so panel and field names are the ones Grafana reads. Every query comes from
`promql` (mostly the recorded ``inferplane:model_*`` series) and targets
the datasource uid ``prometheus`` that kube-prometheus-stack provisions.

Rows: latency (p50/p95/p99 against the SLO line, queue vs compute time, vLLM TTFT), traffic
(throughput, errors, queue, vLLM tokens/s), capacity (desired vs ready replicas, cold
starts, GPU utilisation and memory), and one panel per autoscaling signal against its target.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Final

from grafana_foundation_sdk.builders import common as common_builders
from grafana_foundation_sdk.builders.dashboard import Dashboard, Row, ThresholdsConfig
from grafana_foundation_sdk.builders.prometheus import Dataquery
from grafana_foundation_sdk.builders.timeseries import Panel as Timeseries
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import common as common_models
from grafana_foundation_sdk.models import dashboard as dashboard_models

from inferplane.blueprint import naming
from inferplane.blueprint.model import Signal
from inferplane.blueprint.triton_model import step_model_name
from inferplane.components.serving.observability import promql, rules
from inferplane.components.serving.observability.promql_scope import Scope
from inferplane.components.serving.spec import ServedModel, ServingEnvironment

DATASOURCE_UID: Final = "prometheus"
DATASOURCE: Final = dashboard_models.DataSourceRef(type_val="prometheus", uid=DATASOURCE_UID)
PANEL_HEIGHT: Final = 8
HALF_WIDTH: Final = 12


def dashboard_uid(env: ServingEnvironment, namespace: str, model: str) -> str:
    """Stable, unique per Grafana, within Grafana's 40-character limit."""
    return f"inferplane-{naming.short_hash(env.part_of, env.environment, namespace, model)}"


def _panel(
    title: str,
    unit: str,
    queries: list[tuple[str, str]],
    description: str,
    threshold: float | None = None,
) -> Timeseries:
    panel = (
        Timeseries()
        .title(title)
        .description(description)
        .unit(unit)
        .datasource(DATASOURCE)
        .height(PANEL_HEIGHT)
        .span(HALF_WIDTH)
        .min(0)
    )
    for ref, (expr, legend) in zip("ABCDEFGH", queries, strict=False):
        panel = panel.with_target(
            Dataquery().ref_id(ref).datasource(DATASOURCE).expr(expr).legend_format(legend)
        )
    if threshold is not None:
        panel = panel.thresholds(
            ThresholdsConfig()
            .mode(dashboard_models.ThresholdsMode.ABSOLUTE)
            .steps(
                [
                    dashboard_models.Threshold(value=None, color="green"),
                    dashboard_models.Threshold(value=threshold, color="red"),
                ]
            )
        ).thresholds_style(
            common_builders.GraphThresholdsStyleConfig().mode(
                common_models.GraphThresholdsStyleMode.DASHED
            )
        )
    return panel


def build_dashboard(
    env: ServingEnvironment, model: ServedModel, namespace: str, deployment: str | None = None
) -> Dashboard:
    """The dashboard builder (see `dashboard` for the JSON)."""
    scope = Scope.of(env, model, namespace, deployment)
    rec = {name: rules.recorded(name, scope) for name in promql.RECORDED_METRICS}
    slo = model.slo
    vllm = model.server == "vllm"

    latency = [
        _panel(
            "Request latency",
            "ms",
            [
                (rec[promql.LATENCY_MS[0.5]], "p50"),
                (rec[promql.LATENCY_MS[0.95]], "p95"),
                (rec[promql.LATENCY_MS[0.99]], "p99"),
            ],
            "End-to-end latency quantiles; the dashed line is slo.p95_ms.",
            slo.p95_ms if slo else None,
        ),
        _panel(
            "Queue time vs compute time per request",
            "ms",
            [(rec[promql.QUEUE_TIME_MS], "queue"), (rec[promql.COMPUTE_TIME_MS], "compute")],
            "Mean time a request waits for a batch slot, and spends on the GPU. Queue time "
            "rising with flat compute time means too few replicas.",
        ),
    ]
    if vllm or scope.streaming:
        latency.append(
            _panel(
                "Time to first token (p95)",
                "ms",
                [(rec[promql.TTFT_P95_MS], "TTFT p95")],
                "Prefill latency users feel before streaming starts; the dashed line is "
                "slo.ttft_p95_ms.",
                slo.ttft_p95_ms if slo else None,
            )
        )

    traffic = [
        _panel(
            "Throughput",
            "reqps",
            [(rec[promql.REQUEST_RATE], "finished"), (promql.success_rate(scope), "succeeded")],
            "Requests finished per second.",
        ),
        _panel(
            "Errors",
            "percentunit",
            [(rec[promql.ERROR_RATIO], "error ratio")],
            "Failed / finished requests.",
        ),
        _panel(
            "Waiting requests",
            "short",
            [(rec[promql.QUEUE_DEPTH], "queue")],
            "Requests queued in the servers, summed over replicas.",
        ),
    ]
    if scope.trtllm:
        traffic += [
            _panel(
                "In-flight requests",
                "short",
                [(rec[promql.INFLIGHT_REQUESTS], "active")],
                "Requests TensorRT-LLM is generating, summed over replicas (at most "
                "tensorrt_llm.max_batch_size per replica).",
            ),
            _panel(
                "KV cache blocks used",
                "percentunit",
                [(rec[promql.KV_CACHE_USED_RATIO], "fullest replica")],
                "Paged KV-cache blocks in use; near the dashed line new requests wait for memory.",
                rules.KV_CACHE_RATIO,
            ),
        ]
    if scope.response_cache:
        traffic.append(
            _panel(
                "Response cache hit rate",
                "percentunit",
                [(promql.cache_hit_ratio(scope), "hits / lookups")],
                "Requests answered from the response cache without running the model. Low "
                "with repeated inputs: the cache is too small (response_cache.size_mb).",
            )
        )
    if vllm:
        traffic.append(
            _panel(
                "Generated tokens",
                "short",
                [(rec[promql.TOKENS_PER_SECOND], "tokens/s")],
                "Output tokens generated per second.",
            )
        )

    capacity = [
        _panel(
            "Replicas: desired vs ready",
            "short",
            [
                (promql.desired_replicas(scope), "desired (HPA)"),
                (promql.spec_replicas(scope), "scheduled"),
                (promql.ready_replicas(scope), "ready"),
            ],
            f"Autoscaler's wish, the Deployment's replicas, and those ready to serve "
            f"(range {model.replicas.min}–{model.replicas.max}).",
            float(model.replicas.max),
        ),
        _panel(
            "Cold starts: time to ready",
            "s",
            [(promql.time_to_ready_s(scope), "{{pod}}")],
            "Seconds each replica took from creation to Ready: image pull, weights, engine "
            "load and warm-up. This is what a scale-out or a lost node costs.",
            float(model.startup_timeout_s),
        ),
        _panel(
            "Pod starts and restarts",
            "short",
            [
                (promql.pods_started(scope), "pods created (last 1h)"),
                (promql.container_restarts(scope), "container restarts (15m)"),
            ],
            "New replicas (scale-outs, rollouts, evictions) and crashed containers.",
        ),
        _panel(
            "GPU utilisation",
            "percent",
            [(rec[promql.GPU_UTILIZATION_PERCENT], "mean over the model's GPUs")],
            "DCGM utilisation (MIG: graphics-engine activity). Busy is not saturated: one "
            "request can keep a GPU at 100%.",
        ),
        _panel(
            "GPU memory used",
            "percentunit",
            [(rec[promql.GPU_MEMORY_USED_RATIO], "fullest GPU")],
            "Framebuffer in use on the fullest GPU of the model; the dashed line is the alert.",
            rules.gpu_memory_threshold(model),
        ),
    ]

    scaling = [_signal_panel(model, scope, signal) for signal in model.autoscaling.signals]
    steps = _step_panels(model, scope)
    routing = _router_panels(model, scope) if scope.router_service else []

    board = (
        Dashboard(f"{env.part_of} / {model.name} ({env.environment})")
        .uid(dashboard_uid(env, namespace, model.name))
        .description(
            f"{model.server} model {model.name} ({model.latency_class}) of blueprint "
            f"{env.part_of}, environment {env.environment}, namespace {namespace}."
        )
        .tags(["inferplane", env.part_of, env.environment, model.server, model.latency_class])
        .refresh("30s")
        .time("now-3h", "now")
        .editable()
    )
    panel_id = 1
    rows = (
        ("Latency", latency),
        ("Traffic", traffic),
        ("Capacity", capacity),
        ("Autoscaling signals", scaling),
        *((("Pipeline steps", steps),) if steps else ()),
        *([("Router", routing)] if routing else []),
    )
    for title, panels in rows:
        board = board.with_row(Row(title).id(panel_id))
        panel_id += 1
        for panel in panels:
            board = board.with_panel(panel.id(panel_id))
            panel_id += 1
    return board


def _step_panels(model: ServedModel, scope: Scope) -> list[Timeseries]:
    """A pipeline's steps, one series each: Triton reports every composing model of an
    ensemble under its own ``model`` label (``<model>-<step>``), the ensemble under the
    model's name (server r25.08 ``docs/user_guide/metrics.md``: the inference request
    counts and durations are "Per model", and an ensemble's failures also count its
    composing models')."""
    if model.pipeline is None:
        return []
    names = "|".join(step_model_name(model.name, s.name) for s in model.pipeline.steps)
    steps = dataclasses.replace(scope, model=f"~{names}", response_cache=False)
    by = ("model",)
    sel = steps.server_selector()
    requests = f"sum by (model) (rate(nv_inference_request_success{sel}[{promql.RATE_WINDOW}]))"
    batch = (
        f"sum by (model) (rate(nv_inference_count{sel}[{promql.RATE_WINDOW}])) / "
        f"sum by (model) (rate(nv_inference_exec_count{sel}[{promql.RATE_WINDOW}]))"
    )
    return [
        _panel(
            "Queue time per step",
            "ms",
            [(promql.queue_time_ms(steps, by), "{{model}}")],
            "Mean time a request waits for each step's batcher or a free instance. One "
            "step rising alone wants more instances (pipeline.steps.<step>.instances).",
        ),
        _panel(
            "Compute time per step",
            "ms",
            [(promql.compute_time_ms(steps, by), "{{model}}")],
            "Mean time each step spends on one request: where the pipeline's latency goes.",
        ),
        _panel(
            "Requests per step",
            "reqps",
            [(requests, "{{model}}")],
            "Requests each step finished per second.",
        ),
        _panel(
            "Batch size per step",
            "short",
            [(batch, "{{model}}")],
            "Inferences per execution: how full each step's batches run.",
        ),
    ]


SIGNAL_UNITS: Final = {
    "queue_depth": "short",
    "concurrency": "short",
    "gpu_utilization": "percent",
    "p95_latency_ms": "ms",
    "ttft_p95_ms": "ms",
    "router_queue": "short",
    "router_running": "short",
    "pool_saturation": "percentunit",
}


def _router_panels(model: ServedModel, scope: Scope) -> list[Timeseries]:
    """An llm-aware model's routers, one series per zone (the picker's Service)."""
    by = ["service"]
    panels = [
        _panel(
            "Ready endpoints per pool",
            "short",
            [(promql.router_ready_endpoints(scope, by), "{{service}}")],
            "Replicas each zone's router can send requests to; a zone at 0 serves nothing.",
        ),
        _panel(
            "Running requests per pool",
            "short",
            [(promql.router_running(scope, by), "{{service}}")],
            "Requests each zone's router has running on its replicas.",
        ),
    ]
    if model.routing.flow_control:
        panels += [
            _panel(
                "Pool saturation",
                "percentunit",
                [(promql.pool_saturation(scope, by), "{{service}}")],
                "Each zone's pool saturation as flow control reads it: at 100% the router "
                "starts holding requests in its queue.",
                1.0,
            ),
            _panel(
                "Router queue",
                "short",
                [(promql.router_queue(scope, by), "{{service}}")],
                "Requests each zone's router holds while its pool is saturated.",
            ),
        ]
    return panels


def _signal_panel(model: ServedModel, scope: Scope, signal: Signal) -> Timeseries:
    """One autoscaling signal as KEDA reads it (the trigger's own query; per replica for a
    queue, as the HPA divides it), against its target: the dashed line."""
    query = promql.autoscaling_query(scope, signal.metric)
    per_replica = promql.AUTOSCALING_METRIC_TYPE[signal.metric] == "AverageValue"
    if per_replica:
        query = f"({query}) / clamp_min({promql.spec_replicas(scope)}, 1)"
    return _panel(
        f"Scaling on {signal.metric}",
        SIGNAL_UNITS[signal.metric],
        [(query, f"{signal.metric}{' per replica' if per_replica else ''}")],
        f"What the autoscaler reads for {signal.metric}; the dashed line is its target "
        f"({promql.threshold(signal.target)}). Above the line it adds replicas (up to "
        f"{model.replicas.max}); the HPA follows the signal that asks for the most.",
        signal.target,
    )


def dashboard(
    env: ServingEnvironment, model: ServedModel, namespace: str, deployment: str | None = None
) -> dict[str, Any]:
    """The dashboard as Grafana's JSON model (plain data)."""
    encoded = JSONEncoder(sort_keys=True).encode(
        build_dashboard(env, model, namespace, deployment).build()
    )
    data: dict[str, Any] = json.loads(encoded)
    return data


def dashboard_json(
    env: ServingEnvironment, model: ServedModel, namespace: str, deployment: str | None = None
) -> str:
    """The dashboard file the Grafana sidecar loads (stable key order, one line per key)."""
    return json.dumps(dashboard(env, model, namespace, deployment), indent=2, sort_keys=True)


def queries(board: dict[str, Any]) -> list[str]:
    """Every PromQL expression of a dashboard's panels."""
    return [
        target["expr"]
        for panel in board.get("panels", [])
        for target in panel.get("targets", [])
        if "expr" in target
    ]
