"""How a model scales and how requests reach it: autoscaling signals and their metrics,
wake schedules and scheduled floors, the SLO and traffic the capacity estimate plans for,
and LLM-aware routing.

Part of the resolved blueprint; import these from `inferplane.blueprint.model`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from inferplane.blueprint import defaults

Metric = Literal[
    "queue_depth",
    "concurrency",
    "gpu_utilization",
    "p95_latency_ms",
    "ttft_p95_ms",
    "router_queue",
    "router_running",
    "pool_saturation",
]
RoutingMode = Literal["round_robin", "llm_aware"]
PrefixCache = Literal["approximate", "precise", "off"]
ROUTER_METRICS: tuple[Metric, ...] = ("router_queue", "router_running", "pool_saturation")
"""Signals the llm-d router exports: only for `routing.mode: llm_aware`."""
FLOW_CONTROL_METRICS: tuple[Metric, ...] = ("router_queue", "pool_saturation")
"""Series the router exports only with its ``flowControl`` feature gate on
(llm-d/llm-d-router v0.10.0 ``pkg/epp/metrics/llm_d_router_metrics.go``, the
``flow_control_*`` family; ``pkg/epp/flowcontrol/README.md``: off by default)."""


@dataclass(frozen=True)
class Routing:
    """How requests reach the replicas (`models.<m>.routing`)."""

    mode: RoutingMode = defaults.ROUTING_MODE
    """``round_robin``: the zone-local load balancer alone. ``llm_aware``: per zone, the
    llm-d router picks each request's replica; the model runs one Deployment per zone."""
    prefix_cache: PrefixCache = defaults.ROUTING_PREFIX_CACHE
    """``llm_aware``: how cached prefixes are scored; ``precise`` needs vLLM's KV events."""
    flow_control: bool = defaults.ROUTING_FLOW_CONTROL
    """``llm_aware``: the router queues requests while the pool is saturated."""
    priorities: tuple[tuple[str, int], ...] = ()
    """(objective name, priority) pairs, one ``InferenceObjective`` each."""
    pickers: int = defaults.ROUTING_PICKERS
    """``llm_aware``: endpoint pickers per zone's router (leader election above one)."""

    @classmethod
    def of(cls, spec: Mapping[str, Any] | None) -> Routing:
        """`models.<m>.routing` as the blueprint writes it (None: not given), with its
        defaults: what `resolve()` gives the model and what the semantic checks read."""
        spec = spec or {}
        return cls(
            mode=spec.get("mode", defaults.ROUTING_MODE),
            prefix_cache=spec.get("prefix_cache", defaults.ROUTING_PREFIX_CACHE),
            flow_control=spec.get("flow_control", defaults.ROUTING_FLOW_CONTROL),
            priorities=tuple(sorted((spec.get("priorities") or {}).items())),
            pickers=spec.get("pickers", defaults.ROUTING_PICKERS),
        )

    @property
    def llm_aware(self) -> bool:
        """Requests reach the model through the llm-d router: one Deployment, InferencePool
        and router per zone of its pool. The one test of `routing.mode` for it."""
        return self.mode == "llm_aware"


@dataclass(frozen=True)
class Signal:
    """One autoscaling signal: a metric and its per-replica target."""

    metric: Metric
    target: float
    """Per replica: waiting requests, running plus waiting requests, percent GPU busy, or
    milliseconds."""


@dataclass(frozen=True)
class Autoscaling:
    """The signals replicas follow. Each becomes one trigger of the model's ScaledObject and
    the HPA follows the largest demand among them."""

    signals: tuple[Signal, ...]
    """At least one; each metric at most once."""
    scale_down_stabilization_s: int

    @classmethod
    def single(cls, metric: Metric, target: float, scale_down_stabilization_s: int) -> Autoscaling:
        """The common case: one signal."""
        return cls((Signal(metric, target),), scale_down_stabilization_s)

    @property
    def metrics(self) -> tuple[Metric, ...]:
        return tuple(s.metric for s in self.signals)

    def target_of(self, metric: Metric) -> float | None:
        """The target of `metric` when it is one of the signals, else None."""
        return next((s.target for s in self.signals if s.metric == metric), None)


@dataclass(frozen=True)
class Wake:
    """A schedule that brings a model at zero replicas back: a KEDA cron trigger holds one
    replica from each `schedule` start for `duration_s` seconds (its load signals add more)."""

    schedule: str
    """Five-field cron expression (minute hour day-of-month month day-of-week)."""
    duration_s: int
    timezone: str
    """IANA time zone name the schedule is read in."""


@dataclass(frozen=True)
class ScheduleWindow:
    """One window of `replicas.schedule`: from each `schedule` start for `duration_s`
    seconds the model keeps at least `min_per_zone` replicas in each zone of its pool,
    `replicas` in all (a KEDA cron trigger's ``desiredReplicas``)."""

    schedule: str
    """Five-field cron expression (minute hour day-of-month month day-of-week)."""
    duration_s: int
    timezone: str
    """IANA time zone name the schedule is read in."""
    min_per_zone: int
    replicas: int
    """`min_per_zone` x the zones of the model's pool."""


@dataclass(frozen=True)
class Slo:
    p95_ms: int | None
    ttft_p95_ms: int | None
    itl_p95_ms: int | None = None


@dataclass(frozen=True)
class Traffic:
    """`traffic`: the load the capacity estimate plans for (`inferplane.blueprint.capacity`)."""

    peak_rps: float
    input_tokens: int | None = None
    output_tokens: int | None = None
    shared_prefix: float = 0.0
    items_per_request: int = 1
    """Batch items one request carries (a Triton model's profile counts items, e.g. the
    passages a reranker scores per query)."""
    audio_seconds: float | None = None
    """Seconds of audio one request carries (a speech model's encoder reads them)."""


Lever = Literal["compile_cache", "stream_weights", "lazy_image_pull", "standby"]
LEVERS: Final[tuple[Lever, ...]] = ("compile_cache", "stream_weights", "lazy_image_pull", "standby")
"""What shortens a scale-out, cheapest first (`inferplane.blueprint.derived.levers`)."""


@dataclass(frozen=True)
class ScaleOut:
    """`models.<m>.scale_out`: the seconds a new replica may take and what buys them."""

    budget_s: int | None = None
    """The model's own bound on its scale-out budget; None: the platform's
    (``scale-out-budget.max_total_s``). It may only tighten the platform's bound."""
    requested: Literal["auto"] | tuple[Lever, ...] | None = None
    """``auto``: the cheapest set of levers that meets the bound; a tuple: those levers;
    None: the blueprint states no ``scale_out`` (only the free compile cache)."""
    levers: tuple[Lever, ...] = ()
    """The levers in effect, in `LEVERS` order (set by `levers.apply`)."""
    options: Mapping[str, float | None] | None = None
    """Every lever the model could use, with the US dollars per month it adds to the
    blueprint's own pools (None: a price is missing); set by `levers.apply`, before a
    ``standby`` raised the pool's spare GPUs."""


@dataclass(frozen=True)
class RolloutGuard:
    """What the new pods of a rollout must meet at each step (`models.<m>.rollout.guard`).
    None: no bound on that series."""

    p95_ms: int | None = None
    ttft_p95_ms: int | None = None
    itl_p95_ms: int | None = None
    error_ratio: float | None = None


@dataclass(frozen=True)
class Rollout:
    """`models.<m>.rollout`: a changed pod template goes out as a canary in steps."""

    steps: tuple[int, ...]
    """The canary's share of the replicas at each step, percent, increasing, ending at 100."""
    step_s: int
    """Seconds each step but the last pauses while the guard is measured."""
    guard: RolloutGuard
    """The bounds in effect: the blueprint's, else the model's SLO (those its server
    measures) and the default error ratio."""


def guarded_latencies(spec: Mapping[str, Any]) -> frozenset[str]:
    """The latency bounds a rollout's guard can measure on a model's new pods (`spec`, the
    model's blueprint mapping): the request p95 always, time to first token on vLLM and a
    streaming TensorRT-LLM model (Triton's first-response histogram), inter-token latency
    on vLLM (``vllm:inter_token_latency_seconds``, in vLLM v0.10.2 and v0.33.0 alike:
    inferplane/facts/vllm/*/metrics.txt)."""
    vllm = spec["server"] == "vllm"
    streaming = bool((spec.get("tensorrt_llm") or {}).get("streaming"))
    found = {"p95_ms"}
    if vllm or streaming:
        found.add("ttft_p95_ms")
    if vllm:
        found.add("itl_p95_ms")
    return frozenset(found)
