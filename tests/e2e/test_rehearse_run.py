"""`inferplane rehearse` for real (`needs_tools`): blueprints/chat-minimal.yaml, environment
`local`, a short 10x spike (e2e/traffic/short-spike.yaml). Its queue_depth target of 4 per
replica cannot move the HPA while vLLM's batch has room (nothing waits below
``max_num_seqs``): the p95 goes over the SLO while the replicas stay at the minimum, and the
HPA acts only once the batches are full and requests wait. The rehearsal must report the
breach (exit 1) with the timeline, verdict and picture."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from ci_gate import rehearse

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "e2e"))

import rehearse_hpa  # noqa: E402

MISSING = rehearse_hpa.not_built()


@pytest.mark.needs_tools
@pytest.mark.skipif(
    # Until the tools are built; .ci/run builds them, then runs these tests again.
    bool(MISSING),
    reason=f"tools the rehearsal needs are not built: {', '.join(MISSING)}",
)
def test_a_short_spike_on_chat_minimal_breaches_before_anything_waits(
    tmp_path: Path,
) -> None:
    res = rehearse(
        ROOT / "blueprints" / "chat-minimal.yaml",
        ROOT / "e2e" / "traffic" / "short-spike.yaml",
        tmp_path,
    )
    assert res.returncode == 1, res.stdout + res.stderr[-3000:]
    assert "chat: BREACHED its SLO" in res.stdout
    verdict = json.loads((tmp_path / "verdict.json").read_text())
    (chat,) = verdict["models"]
    e2e = next(s for s in chat["slo"] if s["field"] == "p95_ms")
    assert not e2e["held"] and e2e["worst_ms"] > 2000
    rows = json.loads((tmp_path / "timeline.json").read_text())["chat"]
    # The SLO broke before anything waited: the queue target saw nothing to act on.
    first_wait = next((r["t"] for r in rows if (r["queue"] or 0) > 0), None)
    overload = chat["scale_out"]["overload_at_s"]
    assert first_wait is None or overload < first_wait
    assert next(r["ready"] for r in rows if r["t"] == overload) == 2
    sent = verdict["sent"]["chat"]
    assert sent["sent"] > 1000 and sent["failed"] == 0
    # Every request was streamed and read to its [DONE]: the callers' p95s sit beside
    # Prometheus's, the end to end over its SLO as Prometheus's is.
    client = chat["client"]
    assert client["served"] == sent["ok"] and client["failed"] == 0
    assert client["p95_ms"]["ttft_p95_ms"] > 0 and client["p95_ms"]["p95_ms"] > 2000
    assert "client-side p95 (measured by the sender" in res.stdout
    assert len(rows) == 31
    assert "SLO 2000 ms" in (tmp_path / "rehearsal.html").read_text()


@pytest.mark.needs_tools
@pytest.mark.skipif(
    bool(MISSING),
    reason=f"tools the rehearsal needs are not built: {', '.join(MISSING)}",
)
def test_a_replica_killed_mid_spike_fails_its_requests_and_serves_again_after_its_start_up(
    tmp_path: Path,
) -> None:
    res = rehearse(
        ROOT / "blueprints" / "chat-minimal.yaml",
        ROOT / "e2e" / "traffic" / "short-spike.yaml",
        tmp_path,
        "--fault",
        "kill-replica@60",
    )
    assert res.returncode in (0, 1), res.stdout + res.stderr[-3000:]
    harness = json.loads((tmp_path / "harness.json").read_text())
    startup = harness["models"]["chat"]["startup_s"]
    (chat,) = json.loads((tmp_path / "verdict.json").read_text())["models"]
    (fault,) = chat["faults"]
    assert (fault["kind"], fault["model"]) == ("kill-replica", "chat")
    assert fault["pod"].startswith("chat-")
    assert 60 <= fault["at_s"] < 61
    # Mid-spike each replica has requests in flight: they are cut mid-stream.
    assert fault["failed_requests"] > 0 and fault["cut_mid_stream"] > 0
    assert (
        fault["cut_mid_stream"] + fault["refused"] + sum(fault["failed_otherwise"].values())
        == fault["failed_requests"]
    )
    assert chat["client"]["outcomes"]["cut"] >= fault["cut_mid_stream"]
    assert (
        fault["failed_requests"]
        <= json.loads((tmp_path / "verdict.json").read_text())["sent"]["chat"]["failed"]
    )
    # The pod stays; its stand-in serves again after the model's start-up, as a restarted
    # container's would.
    assert fault["ready_again_at_s"] is not None
    assert fault["at_s"] + startup <= fault["ready_again_at_s"] <= fault["at_s"] + startup + 15
    assert [s["field"] for s in fault["slo_after"]] == ["ttft_p95_ms", "p95_ms"]
    assert "fault kill-replica at 60 s (pod chat-" in res.stdout
    assert "Faults: kill-replica@60." in res.stdout
