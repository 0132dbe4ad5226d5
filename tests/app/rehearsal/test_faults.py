"""What each injected fault did (`inferplane.app.rehearsal.faults`): the worst p95 of each SLO
from the fault until two minutes after its pod served again, and the line the verdict prints."""

from __future__ import annotations

from inferplane.app.rehearsal import faults
from inferplane.app.rehearsal.timeline import Row


def rows(ttft: dict[float, float]) -> list[Row]:
    return [Row(t=t, latency_ms={"ttft_p95": v, "e2e_p95": 900.0}) for t, v in ttft.items()]


def kill_event(
    at_s: float, ready_again_at_s: float | None, failed: int, **more: object
) -> dict[str, object]:
    """A kill-replica event as the harness records it."""
    return {
        "kind": "kill-replica",
        "at_s": at_s,
        "model": "chat",
        "pod": "chat-abc-1",
        "ip": "10.244.0.7",
        "ready_again_at_s": ready_again_at_s,
        "failed_requests": failed,
        **more,
    }


def test_parse_reads_kind_and_seconds() -> None:
    assert faults.parse("kill-replica@120", 150) == faults.Fault("kill-replica", 120.0)
    assert faults.parse("kill-replica@0.5", 150).arg() == "kill-replica@0.5"


def test_the_slo_is_read_from_the_fault_until_two_minutes_after_the_pod_serves_again() -> None:
    timeline = rows({55: 900.0, 60: 200.0, 90: 520.0, 200: 390.0, 215: 1000.0})
    event = kill_event(60.0, 85.0, 6)
    (got,) = faults.judge(timeline, [event], {"ttft_p95_ms": 400.0, "p95_ms": 2000.0})
    # 55 s is before the fault and 215 s past 85 + 120: neither counts.
    assert got["slo_after"] == [
        {"field": "ttft_p95_ms", "limit_ms": 400.0, "worst_ms": 520.0, "held": False},
        {"field": "p95_ms", "limit_ms": 2000.0, "worst_ms": 900.0, "held": True},
    ]
    assert faults.lines([got]) == [
        "  fault kill-replica at 60 s (pod chat-abc-1): 6 requests failed with it; served "
        "again at 85 s; after it: ttft_p95_ms worst 520 ms over 400; p95_ms worst 900 ms held"
    ]


def test_a_pod_that_never_serves_again_is_read_to_the_end() -> None:
    event = kill_event(10.0, None, 0)
    (got,) = faults.judge(rows({5: 100.0, 500: 450.0}), [event], {"ttft_p95_ms": 400.0})
    assert got["slo_after"][0]["worst_ms"] == 450.0
    assert "not serving again" in faults.lines([got])[0]


def test_a_window_without_samples_says_no_data_not_held() -> None:
    event = kill_event(10.0, 20.0, 2)
    (got,) = faults.judge([Row(t=5.0, latency_ms={})], [event], {"ttft_p95_ms": 400.0})
    assert got["slo_after"] == [
        {"field": "ttft_p95_ms", "limit_ms": 400.0, "worst_ms": None, "held": None}
    ]
    assert faults.lines([got])[0].endswith("after it: ttft_p95_ms no data")


def test_a_streamed_fault_says_how_many_were_cut_mid_stream_and_how_many_refused() -> None:
    event = kill_event(60.0, 85.0, 9, cut_mid_stream=7, refused=1, failed_otherwise={"timeout": 1})
    (got,) = faults.judge(rows({60: 100.0}), [event], {})
    assert faults.lines([got]) == [
        "  fault kill-replica at 60 s (pod chat-abc-1): 9 requests failed with it (7 cut "
        "mid-stream, 1 refused, 1 otherwise); served again at 85 s"
    ]
