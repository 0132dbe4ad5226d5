"""A rehearsal's verdict per model, from its timeline (`timeline.Row`s every 5 s). Pure.

For each model:

- **SLO**: each of ``slo.ttft_p95_ms``, ``slo.itl_p95_ms`` and ``slo.p95_ms`` against the
  p95 Prometheus computed: held, or breached — for how long (seconds of the timeline above
  the line), when first, and by how much at worst;
- **scale-out**: seconds from the first overload (requests waiting, more offered than the
  ready replicas carry by the plan's per-replica rate, or a p95 over its SLO) to the first
  new ready replica, against the plan's scale-out budget;
- **replicas at peak**: the most replicas ready while the offered load was at its peak,
  against the capacity plan's count;
- **alerts**: those that fired, against those that should have (the SLO alerts during a
  breach that lasted their ``for``; none while every SLO held);
- **scale-in**: whether, and how long after, the ready replicas fell once the load fell;
- **client side**: what a caller saw (`ClientFigures`): the sender streams every request
  and times it (`rehearsal.stream`), so its TTFT, ITL and end-to-end p95s over the served
  requests, and the requests that failed (an error status, refused, cut mid-stream, timed
  out), are printed next to Prometheus's.

The client-side p95s are reported, each marked where it is above its SLO line, and not
judged: the SLO, its alerts and what the HPA reads are the p95s Prometheus computes from
vLLM's histograms, and that is what the verdict holds the loops to. The sender's own times
also include the sender itself, a Python process on the rehearsal's machine beside the
control plane, Prometheus, KEDA and every stand-in, so a client-side p95 over the line may
be the machine's and not the loops'; and it is one p95 over the whole run, not the 2-minute
window the alert rules read every 5 s.

Each figure names its source (`REAL_LOOPS`, `STAND_IN_MODEL`, or both): the latencies are
Prometheus's, from what the stand-ins' model produced; the replica counts, alerts and
seconds are the real loops'; a replica's start-up is the stand-ins' (the plan's parts,
shortened by ``--time-scale`` when given).

`exit_code`: 0 when every model held its SLO, 1 when one did not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from inferplane.app.rehearsal.timeline import STEP_S, Row

REAL_LOOPS: Final = "measured from the real loops"
CLIENT: Final = "measured by the sender, as a caller sees it"
PROMETHEUS: Final = "Prometheus"
"""What the judged p95s are: Prometheus's, from the exported histograms."""
STAND_IN_MODEL: Final = "from the stand-ins' model"
BOTH: Final = "the real loops acting on the stand-ins' model"
SLO_FIELDS: Final = (
    ("ttft_p95_ms", "ttft_p95", "InferenceTTFTAboveSLO"),
    ("itl_p95_ms", "itl_p95", ""),
    ("p95_ms", "e2e_p95", "InferenceP95LatencyAboveSLO"),
)
"""(blueprint SLO field, timeline column, the stack's alert on it — none for ITL)."""
CLIENT_FIELDS: Final = (
    ("ttft_p95_ms", "ttft_p95_ms", "ttft"),
    ("itl_p95_ms", "itl_p95_ms", "itl"),
    ("p95_ms", "e2e_p95_ms", "e2e"),
)
"""(blueprint SLO field, the sender's figure (`stream.Latencies.as_json`), its short name)."""
PEAK_SHARE: Final = 0.95
"""Rows offering at least this share of the profile's peak count as the peak."""
FALL_SHARE: Final = 0.5


@dataclass(frozen=True)
class Expectation:
    """What the blueprint and its plan say about one model."""

    model: str
    slo_ms: Mapping[str, float]
    """By SLO field (``ttft_p95_ms``, ``itl_p95_ms``, ``p95_ms``); absent ones are not judged."""
    replicas_min: int
    replicas_max: int
    planned_replicas: int | None = None
    """The capacity plan's replicas at the traffic's peak; None without a plan."""
    replica_rps: float | None = None
    """Requests per second one replica carries by the plan (its central estimate)."""
    scale_out_budget_s: float | None = None
    alert_for_s: Mapping[str, float] | None = None
    """The ``for`` of each SLO alert (an alert fires only after a breach that long)."""
    scale_in_wait_s: float = 600.0
    """How long the HPA waits before it scales in (the stack's stabilization window)."""
    time_scale: float = 1.0
    """How many times shorter the stand-ins' start-up was than the plan's (``--time-scale``)."""


@dataclass(frozen=True)
class SloFigure:
    field: str
    limit_ms: float
    held: bool
    breached_s: float
    first_breach_s: float | None
    worst_ms: float | None
    over_by_ms: float
    source: str = STAND_IN_MODEL

    def as_json(self) -> dict[str, Any]:
        return self.__dict__.copy()


@dataclass(frozen=True)
class ClientFigures:
    """What the callers saw (the sender's streamed requests): reported, not judged."""

    p95_ms: Mapping[str, float | None]
    """By SLO field (``ttft_p95_ms``, ``itl_p95_ms``, ``p95_ms``), over the served requests."""
    over_slo: tuple[str, ...]
    """The SLO fields whose client-side p95 is above the line."""
    served: int
    failed: int
    outcomes: Mapping[str, int]
    """Requests by how they ended (`stream.OUTCOMES`)."""
    slo_ms: Mapping[str, float]
    source: str = CLIENT

    def as_json(self) -> dict[str, Any]:
        return {
            "p95_ms": dict(self.p95_ms),
            "over_slo": list(self.over_slo),
            "served": self.served,
            "failed": self.failed,
            "outcomes": dict(self.outcomes),
            "judged": False,
            "source": self.source,
        }

    def line(self) -> str:
        parts = []
        for field, _, short in CLIENT_FIELDS:
            value = self.p95_ms.get(field)
            text = f"{short} {'-' if value is None else f'{value:.0f} ms'}"
            if field in self.over_slo:
                text += f" (over its SLO {self.slo_ms[field]:g} ms)"
            parts.append(text)
        how = {
            "cut": "cut mid-stream",
            "refused": "refused",
            "error_status": "an error status",
            "timeout": "timed out",
            "malformed": "malformed",
        }
        failed = ", ".join(
            f"{n} {how.get(k, k)}" for k, n in self.outcomes.items() if k != "ok" and n
        )
        return (
            f"  client-side p95 ({self.source}; reported, not judged): {', '.join(parts)}; "
            f"{self.served} served, {self.failed} failed" + (f" ({failed})" if failed else "")
        )


def client_figures(got: Mapping[str, Any] | None, exp: Expectation) -> ClientFigures | None:
    """The sender's figures of one model (`stream.Latencies.as_json`, as the harness reports
    them) against `exp`'s SLO lines; None without them."""
    if not got:
        return None
    p95 = {field: got.get(key) for field, key, _ in CLIENT_FIELDS}
    over = tuple(
        f for f, v in p95.items() if v is not None and f in exp.slo_ms and v > exp.slo_ms[f]
    )
    return ClientFigures(
        p95_ms=p95,
        over_slo=over,
        served=int(got.get("served") or 0),
        failed=int(got.get("failed") or 0),
        outcomes=dict(got.get("outcomes") or {}),
        slo_ms=dict(exp.slo_ms),
    )


@dataclass(frozen=True)
class Verdict:
    model: str
    held: bool
    slo: tuple[SloFigure, ...]
    scale_out: dict[str, Any]
    replicas_at_peak: dict[str, Any]
    alerts: dict[str, Any]
    scale_in: dict[str, Any]
    client: ClientFigures | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "held": self.held,
            "slo": [s.as_json() for s in self.slo],
            "client": self.client.as_json() if self.client else None,
            "scale_out": self.scale_out,
            "replicas_at_peak": self.replicas_at_peak,
            "alerts": self.alerts,
            "scale_in": self.scale_in,
        }

    def lines(self) -> list[str]:
        """The verdict in a few plain lines."""
        word = "held its SLO" if self.held else "BREACHED its SLO"
        out = [f"{self.model}: {word}"]
        for s in self.slo:
            if s.held:
                worst = f", worst p95 {s.worst_ms:.0f} ms" if s.worst_ms is not None else ""
                out.append(f"  {s.field} {s.limit_ms:g} ms: held{worst} ({PROMETHEUS}, {s.source})")
            else:
                out.append(
                    f"  {s.field} {s.limit_ms:g} ms: breached for {s.breached_s:.0f} s from "
                    f"{s.first_breach_s:.0f} s, worst {s.worst_ms:.0f} ms "
                    f"(+{s.over_by_ms:.0f} ms) ({PROMETHEUS}, {s.source})"
                )
        if self.client is not None:
            out.append(self.client.line())
        so = self.scale_out
        if so.get("seconds") is not None:
            budget = so.get("budget_s")
            against = f" against a budget of {budget:.0f} s" if budget is not None else ""
            if so.get("startup_shortened", 1.0) != 1.0:
                against += f" (start-up shortened {so['startup_shortened']:g}-fold)"
            out.append(
                f"  scale-out: {so['seconds']:.0f} s from the first overload to a new ready "
                f"replica{against} ({so['source']})"
            )
        else:
            out.append(f"  scale-out: {so['note']}")
        rp = self.replicas_at_peak
        planned = (
            f"the capacity plan says {rp['planned']}"
            if rp["planned"] is not None
            else "no capacity plan (the model has no traffic)"
        )
        if rp["planned"] is not None and rp["planned"] > rp.get("max", rp["planned"]):
            planned += f", above replicas.max {rp['max']}"
        out.append(f"  replicas at peak: {rp['ready']} ready; {planned} ({rp['source']})")
        al = self.alerts
        out.append(
            f"  alerts fired: {', '.join(al['fired']) or 'none'}; expected: "
            f"{', '.join(al['expected']) or 'none'}"
            + ("" if al["as_expected"] else " (NOT as expected)")
        )
        out.append(f"  scale-in: {self.scale_in['note']}")
        return out


def _slo(rows: Sequence[Row], field: str, column: str, limit: float) -> SloFigure:
    values = [(r.t, r.latency_ms.get(column)) for r in rows]
    seen = [v for _, v in values if v is not None]
    over = [t for t, v in values if v is not None and v > limit]
    worst = max(seen) if seen else None
    return SloFigure(
        field=field,
        limit_ms=limit,
        held=not over,
        breached_s=float(len(over) * STEP_S),
        first_breach_s=over[0] if over else None,
        worst_ms=worst,
        over_by_ms=max(0.0, (worst or 0.0) - limit),
    )


def _overloaded(row: Row, exp: Expectation) -> bool:
    """Requests waiting, more offered than the ready replicas carry by the plan's rate, or
    a p95 over its SLO: more replicas were needed."""
    if row.queue is not None and row.queue > 0:
        return True
    if exp.replica_rps and row.ready is not None and row.offered > row.ready * exp.replica_rps:
        return True
    return any(
        (value := row.latency_ms.get(column)) is not None and value > exp.slo_ms[field]
        for field, column, _ in SLO_FIELDS
        if field in exp.slo_ms
    )


def _scale_out(rows: Sequence[Row], exp: Expectation) -> dict[str, Any]:
    first = next((r for r in rows if _overloaded(r, exp)), None)
    base: dict[str, Any] = {
        "budget_s": exp.scale_out_budget_s,
        "startup_shortened": exp.time_scale,
        "source": BOTH,
    }
    if first is None:
        return {**base, "seconds": None, "note": "no overload: nothing had to scale out"}
    before = first.ready or 0
    new = next((r for r in rows if r.t >= first.t and (r.ready or 0) > before), None)
    if new is None:
        return {
            **base,
            "overload_at_s": first.t,
            "seconds": None,
            "within_budget": False,
            "note": f"overloaded from {first.t:.0f} s and no new replica became ready",
        }
    seconds = new.t - first.t
    within = None if exp.scale_out_budget_s is None else seconds <= exp.scale_out_budget_s
    return {
        **base,
        "overload_at_s": first.t,
        "ready_at_s": new.t,
        "seconds": seconds,
        "within_budget": within,
    }


def _at_peak(rows: Sequence[Row], exp: Expectation) -> dict[str, Any]:
    peak = max((r.offered for r in rows), default=0.0)
    at = [r for r in rows if peak > 0 and r.offered >= PEAK_SHARE * peak]
    ready = max((r.ready or 0 for r in at), default=None)
    desired = max((r.desired or 0 for r in at), default=None)
    return {
        "offered_rps": peak,
        "ready": ready,
        "desired": desired,
        "planned": exp.planned_replicas,
        "max": exp.replicas_max,
        "at_max": ready is not None and ready >= exp.replicas_max,
        "source": REAL_LOOPS,
    }


def _alerts(rows: Sequence[Row], slo: Sequence[SloFigure], exp: Expectation) -> dict[str, Any]:
    fired = sorted({a for r in rows for a in r.alerts_firing})
    pending = sorted({a for r in rows for a in r.alerts_pending} - set(fired))
    wants = exp.alert_for_s or {}
    expected = []
    for figure, (_, _, alert) in zip(
        slo, [f for f in SLO_FIELDS if f[0] in exp.slo_ms], strict=True
    ):
        # An alert fires once its expression has held for its `for`; the rehearsal's
        # 5 s rows count how long the p95 stayed above the line.
        if alert and not figure.held and figure.breached_s >= wants.get(alert, 0.0):
            expected.append(alert)
    slo_alerts = {a for _, _, a in SLO_FIELDS if a}
    unexpected = sorted(a for a in fired if a in slo_alerts and a not in expected)
    missing = sorted(a for a in expected if a not in fired)
    return {
        "fired": fired,
        "pending_only": pending,
        "expected": sorted(expected),
        "missing": missing,
        "unexpected": unexpected,
        "as_expected": not missing and not unexpected,
        "source": REAL_LOOPS,
    }


def _scale_in(rows: Sequence[Row], exp: Expectation) -> dict[str, Any]:
    peak = max((r.offered for r in rows), default=0.0)
    last_peak = max(
        (i for i, r in enumerate(rows) if peak and r.offered >= PEAK_SHARE * peak), default=None
    )
    base: dict[str, Any] = {"wait_s": exp.scale_in_wait_s, "source": REAL_LOOPS}
    if last_peak is None:
        return {**base, "fell_at_s": None, "note": "no load was offered"}
    fall = next((r for r in rows[last_peak + 1 :] if r.offered <= FALL_SHARE * peak), None)
    if fall is None:
        return {**base, "fell_at_s": None, "note": "the load did not fall before the end"}
    top = max((r.ready or 0) for r in rows[: rows.index(fall) + 1])
    shrunk = next((r for r in rows if r.t > fall.t and (r.ready or 0) < top), None)
    if shrunk is None:
        left = rows[-1].t - fall.t
        return {
            **base,
            "fell_at_s": fall.t,
            "seconds": None,
            "note": f"the load fell at {fall.t:.0f} s; no replica was removed in the "
            f"{left:.0f} s left (the HPA waits {exp.scale_in_wait_s:.0f} s)",
        }
    return {
        **base,
        "fell_at_s": fall.t,
        "seconds": shrunk.t - fall.t,
        "note": f"the load fell at {fall.t:.0f} s; replicas went from {top} to "
        f"{shrunk.ready} {shrunk.t - fall.t:.0f} s later",
    }


def judge(
    rows: Sequence[Row], exp: Expectation, client: Mapping[str, Any] | None = None
) -> Verdict:
    """The verdict of one model over its timeline; `client`: the sender's figures
    (`stream.Latencies.as_json`), reported beside it and not judged."""
    slo = tuple(
        _slo(rows, field, column, exp.slo_ms[field])
        for field, column, _ in SLO_FIELDS
        if field in exp.slo_ms
    )
    return Verdict(
        model=exp.model,
        held=all(s.held for s in slo),
        slo=slo,
        scale_out=_scale_out(rows, exp),
        replicas_at_peak=_at_peak(rows, exp),
        alerts=_alerts(rows, slo, exp),
        scale_in=_scale_in(rows, exp),
        client=client_figures(client, exp),
    )


def exit_code(verdicts: Sequence[Verdict]) -> int:
    """0 when every model held its SLO, 1 when one did not."""
    return 0 if all(v.held for v in verdicts) else 1


def expectation(env: Any, name: str, constants: Any = None) -> Expectation:
    """What the resolved environment `env` (a `resolution.Environment`) and its capacity
    plan say about model `name`: its SLO, replica range, the plan's replicas at peak and
    per-replica rate, its scale-out budget (with the platform's estimates `constants`, the
    defaults when None), its SLO alerts' ``for`` (the stack's rules)."""
    from inferplane.blueprint.capacity import planner
    from inferplane.blueprint.derived import scale_out
    from inferplane.components.serving.observability import promql, rules

    model = env.models[name]
    slo = model.slo
    slo_ms = {
        f: float(v)
        for f, v in (
            ("ttft_p95_ms", slo.ttft_p95_ms if slo else None),
            ("itl_p95_ms", slo.itl_p95_ms if slo else None),
            ("p95_ms", slo.p95_ms if slo else None),
        )
        if v
    }
    plan = planner.plan_env(env).plans.get(name)
    budget = scale_out.budgets(env, constants).get(name)
    for_s = float(promql.window_seconds(rules.LATENCY_FOR))
    return Expectation(
        model=name,
        slo_ms=slo_ms,
        replicas_min=model.replicas.min,
        replicas_max=model.replicas.max,
        planned_replicas=plan.replicas if plan else None,
        replica_rps=plan.rps[1] if plan else None,
        scale_out_budget_s=float(budget.total_s) if budget else None,
        alert_for_s={"InferenceTTFTAboveSLO": for_s, "InferenceP95LatencyAboveSLO": for_s},
        scale_in_wait_s=float(model.autoscaling.scale_down_stabilization_s),
    )
