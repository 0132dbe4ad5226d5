"""The timeline's queries and resampling, and the verdict over synthetic timelines."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from inferplane.app.rehearsal import timeline, verdict
from inferplane.app.rehearsal.timeline import Row
from inferplane.blueprint.capacity import planner
from inferplane.blueprint.derived import scale_out
from inferplane.blueprint.resolution.resolve import load_blueprint, resolve
from inferplane.components import stack_serving
from inferplane.components.serving.observability import promql
from inferplane.components.serving.observability.promql_scope import Scope

ROOT = Path(__file__).resolve().parents[3]


def chat_scope() -> Scope:
    doc, _ = load_blueprint(ROOT / "blueprints" / "chat-minimal.yaml")
    env = resolve(doc, "local")
    serving_env = stack_serving.serving_environment(env)
    model = stack_serving.served_model(env, env.models["chat"])
    return Scope.of(serving_env, model, "chat-minimal")


def test_the_timeline_reads_what_the_dashboards_rules_and_triggers_read() -> None:
    scope = chat_scope()
    got = timeline.queries(scope)
    assert list(got) == [
        "queue",
        "running",
        "ttft_p50",
        "ttft_p95",
        "ttft_p99",
        "itl_p50",
        "itl_p95",
        "itl_p99",
        "e2e_p50",
        "e2e_p95",
        "e2e_p99",
    ]
    assert got["queue"] == promql.queue_depth(scope)
    assert got["ttft_p95"] == promql.ttft_p95_ms(scope)
    for q in (0.5, 0.95, 0.99):
        assert got[timeline.latency_key("e2e", q)] == promql.latency_quantile_ms(scope, q)
    sel = '{namespace="chat-minimal", model_name="chat"}'
    assert got["itl_p99"] == (
        "histogram_quantile(0.99, sum by (le) "
        f"(rate(vllm:inter_token_latency_seconds_bucket{sel}[2m]))) * 1000"
    )
    # The same form as the builder's own TTFT p95.
    assert got["ttft_p50"].replace("0.5,", "0.95,").replace(" ", "") == got["ttft_p95"].replace(
        " ", ""
    )


def test_resampling_keeps_the_last_sample_at_or_before_each_point() -> None:
    rows = [Row(t=7, queue=1), Row(t=2, queue=0), Row(t=12.5, queue=3)]
    got = timeline.resample(rows, until=15)
    assert [(r.t, r.queue) for r in got] == [(0, None), (5, 0), (10, 1), (15, 3)]


def test_values_and_alerts_from_prometheus_json() -> None:
    assert timeline.value_of([]) is None
    assert timeline.value_of([{"value": [1, "NaN"]}]) is None
    assert timeline.value_of([{"value": [1, "12.5"]}]) == 12.5
    alerts = [
        {"labels": {"alertname": "B", "namespace": "n"}, "state": "firing"},
        {"labels": {"alertname": "A", "namespace": "n"}, "state": "pending"},
        {"labels": {"alertname": "C", "namespace": "other"}, "state": "firing"},
    ]
    assert timeline.alerts_of(alerts, "n") == (("A",), ("B",))


EXP = verdict.Expectation(
    model="chat",
    slo_ms={"ttft_p95_ms": 400.0, "p95_ms": 2000.0},
    replicas_min=2,
    replicas_max=8,
    planned_replicas=4,
    replica_rps=1.0,
    scale_out_budget_s=60.0,
    alert_for_s={"InferenceTTFTAboveSLO": 30.0, "InferenceP95LatencyAboveSLO": 30.0},
    scale_in_wait_s=60.0,
)


def spike(ttft_during: float, ready_after: int, breach_alert: bool = False) -> list[Row]:
    """0-60 s at 1 rps on 2 replicas; 60-180 s at 4 rps (overload); then 1 rps again;
    a third replica ready at 90 s and `ready_after` from 100 s until 200 s."""
    rows = []
    for n in range(0, 61):
        t = n * 5
        offered = 4.0 if 60 <= t < 180 else 1.0
        ready = 2 if t < 90 else 3 if t < 100 else ready_after if t < 200 else 2
        hot = 60 <= t < 150
        firing = ("InferenceTTFTAboveSLO",) if breach_alert and 100 <= t < 150 else ()
        rows.append(
            Row(
                t=t,
                offered_rps={"zone-a": offered / 2, "zone-b": offered / 2},
                queue=5.0 if hot else 0.0,
                running=4.0,
                desired=ready,
                ready=ready,
                pending_pods=0,
                latency_ms={"ttft_p95": ttft_during if hot else 150.0, "e2e_p95": 1500.0},
                alerts_firing=firing,
            )
        )
    return rows


def test_a_model_that_stays_under_its_slo_holds() -> None:
    got = verdict.judge(spike(ttft_during=350.0, ready_after=4), EXP)
    assert got.held
    assert [s.held for s in got.slo] == [True, True]
    assert got.slo[0].worst_ms == 350.0 and got.slo[0].source == verdict.STAND_IN_MODEL
    # Overloaded at 60 s (requests waiting), a new replica ready at 90 s: 30 s of a 60 s budget.
    assert got.scale_out["seconds"] == 30 and got.scale_out["within_budget"] is True
    assert got.scale_out["source"] == verdict.BOTH
    assert got.replicas_at_peak == {
        "offered_rps": 4.0,
        "ready": 4,
        "desired": 4,
        "planned": 4,
        "max": 8,
        "at_max": False,
        "source": verdict.REAL_LOOPS,
    }
    assert got.alerts["as_expected"] and got.alerts["expected"] == []
    assert got.scale_in["fell_at_s"] == 180 and got.scale_in["seconds"] == 20
    assert verdict.exit_code([got]) == 0


def test_a_breach_says_how_long_when_and_by_how_much() -> None:
    got = verdict.judge(spike(ttft_during=900.0, ready_after=3, breach_alert=True), EXP)
    assert not got.held
    ttft = got.slo[0]
    assert (ttft.field, ttft.breached_s, ttft.first_breach_s) == ("ttft_p95_ms", 90.0, 60)
    assert (ttft.worst_ms, ttft.over_by_ms) == (900.0, 500.0)
    assert got.slo[1].held
    # The breach lasted longer than the alert's `for`: it had to fire, and did.
    assert got.alerts["expected"] == ["InferenceTTFTAboveSLO"]
    assert got.alerts["fired"] == ["InferenceTTFTAboveSLO"] and got.alerts["as_expected"]
    assert verdict.exit_code([got]) == 1
    text = "\n".join(got.lines())
    assert "chat: BREACHED its SLO" in text
    assert "ttft_p95_ms 400 ms: breached for 90 s from 60 s, worst 900 ms (+500 ms)" in text


def test_an_slo_alert_that_fires_while_the_slo_holds_is_unexpected() -> None:
    rows = spike(ttft_during=350.0, ready_after=4, breach_alert=True)
    got = verdict.judge(rows, EXP)
    assert got.held and got.alerts["unexpected"] == ["InferenceTTFTAboveSLO"]
    assert not got.alerts["as_expected"]


def test_a_breach_whose_alert_never_fired_is_reported_missing() -> None:
    got = verdict.judge(spike(ttft_during=900.0, ready_after=3), EXP)
    assert got.alerts["missing"] == ["InferenceTTFTAboveSLO"]


def test_a_plan_above_replicas_max_is_shown_not_capped() -> None:
    # The plan needs 4 at the peak and replicas.max is 2: the verdict names both numbers
    # instead of the plan's count capped at the max, so the reader sees why it breached.
    capped = dataclasses.replace(EXP, replicas_max=2)
    got = verdict.judge(spike(ttft_during=900.0, ready_after=2), capped)
    assert got.replicas_at_peak["planned"] == 4 and got.replicas_at_peak["at_max"]
    text = "\n".join(got.lines())
    assert "ready; the capacity plan says 4, above replicas.max 2 (" in text


def test_no_new_replica_and_no_scale_in_are_said_plainly() -> None:
    rows = [
        Row(t=n * 5, offered_rps={"a": 5.0}, queue=3.0, ready=2, latency_ms={}) for n in range(10)
    ]
    got = verdict.judge(rows, EXP)
    assert got.scale_out["seconds"] is None
    assert got.scale_out["note"] == "overloaded from 0 s and no new replica became ready"
    assert got.scale_in["note"] == "the load did not fall before the end"
    # No latency at all: nothing breached, nothing measured.
    assert got.held and got.slo[0].worst_ms is None


def test_the_expectation_comes_from_the_blueprint_and_its_plan() -> None:
    doc, _ = load_blueprint(ROOT / "blueprints" / "llm-serving.yaml")
    env = resolve(doc, "prod")
    got = verdict.expectation(env, "chat-8b")
    assert got.slo_ms == {"ttft_p95_ms": 500.0, "itl_p95_ms": 60.0, "p95_ms": 4000.0}
    assert (got.replicas_min, got.replicas_max) == (2, 6)
    plan = planner.plan_env(env).plans["chat-8b"]
    assert (got.planned_replicas, got.replica_rps) == (plan.replicas, plan.rps[1])
    assert got.scale_out_budget_s is not None and got.scale_out_budget_s > 0
    assert got.alert_for_s == {"InferenceTTFTAboveSLO": 300.0, "InferenceP95LatencyAboveSLO": 300.0}
    # The platform's estimates (its policy config) move the budget the scale-out is judged by.
    slower_start = scale_out.Constants(engine_init_s_vllm=600)
    later = verdict.expectation(env, "chat-8b", slower_start)
    assert later.scale_out_budget_s == scale_out.budgets(env, slower_start)["chat-8b"].total_s
    assert later.scale_out_budget_s > got.scale_out_budget_s


def test_the_client_side_p95s_are_reported_beside_prometheus_and_not_judged() -> None:
    client = {
        "ttft_p95_ms": 512.4,
        "itl_p95_ms": 41.0,
        "e2e_p95_ms": 1900.0,
        "served": 1500,
        "failed": 3,
        "outcomes": {"ok": 1500, "cut": 2, "refused": 1, "error_status": 0},
        "cut_after_tokens": 2,
    }
    got = verdict.judge(spike(ttft_during=350.0, ready_after=4), EXP, client)
    # Prometheus's ttft p95 held: so does the verdict, whatever the sender saw.
    assert got.held and verdict.exit_code([got]) == 0
    assert got.client is not None and got.client.over_slo == ("ttft_p95_ms",)
    assert got.as_json()["client"]["judged"] is False
    text = "\n".join(got.lines())
    assert "ttft_p95_ms 400 ms: held, worst p95 350 ms (Prometheus, from the stand-ins' model)" in (
        text
    )
    assert (
        "  client-side p95 (measured by the sender, as a caller sees it; reported, not judged): "
        "ttft 512 ms (over its SLO 400 ms), itl 41 ms, e2e 1900 ms; 1500 served, 3 failed "
        "(2 cut mid-stream, 1 refused)"
    ) in text
    # Without the sender's figures (an older harness report) there is no client line.
    assert "client-side" not in "\n".join(verdict.judge(spike(350.0, 4), EXP).lines())
