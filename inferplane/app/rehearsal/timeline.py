"""A rehearsal's timeline: one row every 5 s of what the loops saw and did.

Each row (`Row`) holds, per model: the load offered per zone (the rehearsal's own sender),
the requests waiting and running and the TTFT / inter-token / end-to-end p50, p95 and p99
as the real Prometheus computes them from what the replicas export (`queries`), the
replicas the HPA wants and the Deployment has ready, the pods the scheduler has not placed
(the API server), and the alerts Prometheus has pending and firing.

The queries are the serving components' own builders (`inferplane.components.serving
.promql`), so the rehearsal reads what the dashboards, rules and triggers read:
``queue_depth``, ``latency_quantile_ms`` (the dashboards' p50/p95/p99 panel records it) and
``ttft_p95_ms``. The builders have no TTFT p50/p99 and no inter-token quantiles; those are
written here in the same form (`_quantile_ms`: ``histogram_quantile`` over the summed
``rate`` of the buckets over `promql.RATE_WINDOW`, by the model's `Scope`).

Sampling is bounded: `resample` puts samples taken at any times onto the 5 s grid (the last
sample at or before each point; None where none is). Everything here is pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from inferplane.components.serving.observability import promql
from inferplane.components.serving.observability.promql_scope import Scope

STEP_S: Final = 5
LATENCIES: Final = ("ttft", "itl", "e2e")
QUANTILES: Final = (0.5, 0.95, 0.99)
_HISTOGRAMS: Final = {
    "ttft": "vllm:time_to_first_token_seconds_bucket",
    "itl": "vllm:inter_token_latency_seconds_bucket",
    "e2e": "vllm:e2e_request_latency_seconds_bucket",
}


def latency_key(kind: str, quantile: float) -> str:
    """``ttft_p95``, ``e2e_p50``."""
    return f"{kind}_p{round(quantile * 100):d}"


def _quantile_ms(scope: Scope, metric: str, quantile: float) -> str:
    rate = f"rate({metric}{scope.server_selector()}[{promql.RATE_WINDOW}])"
    return f"histogram_quantile({quantile:g}, sum by (le) ({rate})) * 1000"


def queries(scope: Scope) -> dict[str, str]:
    """PromQL per timeline column of one vLLM model: ``queue``, ``running`` and each
    ``<latency>_p<q>`` in ms."""
    if scope.server != "vllm":
        raise ValueError(f"the rehearsal's timeline reads vLLM models; {scope.model} is not")
    out = {
        "queue": promql.queue_depth(scope),
        "running": f"sum(vllm:num_requests_running{scope.server_selector()})",
    }
    for kind in LATENCIES:
        for q in QUANTILES:
            if kind == "e2e":
                expr = promql.latency_quantile_ms(scope, q)
            elif kind == "ttft" and q == 0.95:
                expr = promql.ttft_p95_ms(scope)
            else:
                expr = _quantile_ms(scope, _HISTOGRAMS[kind], q)
            out[latency_key(kind, q)] = expr
    return out


@dataclass(frozen=True)
class Row:
    """One model at one moment, `t` seconds from the start of the traffic."""

    t: float
    offered_rps: Mapping[str, float] = field(default_factory=dict)
    """Per zone, what the sender offered (requests per second)."""
    queue: float | None = None
    running: float | None = None
    desired: int | None = None
    ready: int | None = None
    pending_pods: int | None = None
    latency_ms: Mapping[str, float | None] = field(default_factory=dict)
    """By `latency_key`; None where Prometheus has no value (no requests in the window)."""
    alerts_pending: tuple[str, ...] = ()
    alerts_firing: tuple[str, ...] = ()

    @property
    def offered(self) -> float:
        return sum(self.offered_rps.values())

    def as_json(self) -> dict[str, object]:
        return {
            "t": self.t,
            "offered_rps": dict(self.offered_rps),
            "queue": self.queue,
            "running": self.running,
            "desired": self.desired,
            "ready": self.ready,
            "pending_pods": self.pending_pods,
            "latency_ms": dict(self.latency_ms),
            "alerts_pending": list(self.alerts_pending),
            "alerts_firing": list(self.alerts_firing),
        }


def resample(samples: Sequence[Row], until: float, step: int = STEP_S) -> list[Row]:
    """`samples` (any times, any order) on the grid 0, step, ... up to `until`: at each
    point the last sample taken at or before it, re-timed to the point; a point before
    the first sample is an empty row."""
    ordered = sorted(samples, key=lambda r: r.t)
    out: list[Row] = []
    i, last = 0, None
    for n in range(int(until // step) + 1):
        t = n * step
        while i < len(ordered) and ordered[i].t <= t:
            last = ordered[i]
            i += 1
        out.append(Row(t=t) if last is None else _at(last, t))
    return out


def _at(row: Row, t: float) -> Row:
    return Row(
        t,
        row.offered_rps,
        row.queue,
        row.running,
        row.desired,
        row.ready,
        row.pending_pods,
        row.latency_ms,
        row.alerts_pending,
        row.alerts_firing,
    )


def value_of(result: Sequence[Mapping[str, object]]) -> float | None:
    """The one value of an instant query's vector (Prometheus's JSON), None when empty or
    NaN (``histogram_quantile`` over no observations)."""
    if not result:
        return None
    pair = result[0].get("value")
    if not isinstance(pair, (list, tuple)) or len(pair) != 2:
        return None
    try:
        value = float(str(pair[1]))
    except ValueError:
        return None
    return None if value != value else value


def alerts_of(
    alerts: Sequence[Mapping[str, object]], namespace: str
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(pending, firing) alert names of a namespace from Prometheus's ``/api/v1/alerts``."""
    pending, firing = set(), set()
    for alert in alerts:
        labels = alert.get("labels")
        if not isinstance(labels, Mapping) or labels.get("namespace") != namespace:
            continue
        name = str(labels.get("alertname", ""))
        if alert.get("state") == "firing":
            firing.add(name)
        elif alert.get("state") == "pending":
            pending.add(name)
    return tuple(sorted(pending)), tuple(sorted(firing))
