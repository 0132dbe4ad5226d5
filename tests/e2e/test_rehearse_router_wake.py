"""An llm-aware zone at zero and the request that wakes it (e2e/rehearse_router_wake.py): with
the router's TTL and KEDA's cooldown as they were, the request is shed and the zone goes back
to zero; with the stack's, the request waits for the replica and is served. The timers and
objects are checked here; the real loops where the tools are built (`needs_tools`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ci_gate import cannot_run

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "e2e" / "rehearse_router_wake.py"
sys.path.insert(0, str(ROOT / "e2e"))

import rehearse_router_wake as wake  # noqa: E402


def run(env: dict[str, str] | None = None) -> tuple[int, dict]:
    res = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=1200, env=env
    )
    return res.returncode, json.loads(res.stdout)


def test_without_the_tools_it_does_not_run_and_says_which_to_build(tmp_path: Path) -> None:
    code, report = run({**os.environ, "XDG_CACHE_HOME": str(tmp_path)})
    assert code == 2
    assert report["not_run"].startswith("not built: kubernetes, etcd, kwok, keda, prometheus")


def test_the_timers_before_and_after_and_the_start_they_race() -> None:
    got = wake.timers()
    # The pod's own parts of the plan's budget: 81 s of weights, 47 s of engine load, 10 s
    # of probes.
    assert got["start_s"] == 138
    # Before: flow control's default TTL, and a cooldown as long as the stabilisation; both
    # end before a woken replica is ready.
    assert got["before"] == {"ttl_s": 60, "cooldown_s": 60}
    assert got["before"]["ttl_s"] < got["start_s"]
    # After: the TTL covers the wake budget and the picker's discovery margin; the
    # cooldown the TTL, the longest request and headroom.
    assert got["after"] == {"ttl_s": 218, "cooldown_s": 308}
    assert got["after"]["ttl_s"] > got["start_s"]


def test_each_zone_wakes_from_zero_on_the_stacks_queue_trigger() -> None:
    for zone in ("zone-a", "zone-b"):
        got = wake.zone_objects("http://127.0.0.1:9999", zone, False, wake.BLUEPRINT, 0)
        spec = got["spec"]
        assert spec["minReplicaCount"] == 0
        (trigger,) = spec["triggers"]
        assert trigger["name"] == "router-queue"
        # At zero an empty answer is no error: nothing waits.
        assert trigger["metadata"]["ignoreNullValues"] == "true"
        assert trigger["metadata"]["activationThreshold"] == "0"
        assert got["query"].startswith("sum(llm_d_epp_flow_control_queue_size{")
        deployment = next(o for _, o in got["objects"] if o["metadata"]["name"] == f"chat-{zone}")
        assert deployment["spec"]["replicas"] == 0


def test_the_modelled_queue_dispatches_to_a_ready_replica_or_sheds_at_its_ttl() -> None:
    class Recorded(wake.ModelledQueue):
        def __init__(self, ttl_s: float) -> None:
            super().__init__("10.244.0.9", 'model_name="chat"', ttl_s)
            self.gauge: list[int] = []

        def _gauge(self, value: int) -> None:
            self.gauge.append(value)

    shed = Recorded(60)
    shed.enqueue(0.0)
    shed.tick(59.0, ready=False, endpoints=1)
    assert shed.state == "queued"
    shed.tick(60.0, ready=False, endpoints=0)
    # A TTL eviction with no endpoints in the pool is 503; with endpoints, 429.
    assert (shed.state, shed.status, shed.ended, shed.gauge) == ("shed", 503, 60.0, [1, 0])
    # A saturated pool (endpoints, none free) sheds with 429.
    busy = Recorded(60)
    busy.enqueue(0.0)
    busy.tick(61.0, ready=False, endpoints=1)
    assert (busy.state, busy.status) == ("shed", 429)
    served = Recorded(218)
    served.enqueue(0.0)
    served.tick(150.0, ready=True, endpoints=1)
    served.tick(300.0, ready=False, endpoints=0)
    assert (served.state, served.status, served.ended, served.gauge) == (
        "dispatched",
        200,
        150.0,
        [1, 0],
    )


MISSING = wake.not_built()


@pytest.mark.needs_tools
@pytest.mark.skipif(
    bool(MISSING), reason=f"tools the rehearsal needs are not built: {', '.join(MISSING)}"
)
def test_the_old_timers_drop_the_waking_request_and_the_stacks_serve_it() -> None:
    code, report = run()
    if code == 2:
        cannot_run(report["not_run"])
    assert code == 0, report.get("error", "") + json.dumps(report.get("log_tails"), indent=1)
    before, after = report["outcome"]["zone-a"], report["outcome"]["zone-b"]
    start = report["timers"]["start_s"]
    # KEDA woke both zones from zero on the queue gauge, and their pods ran.
    assert before["woke_at"] is not None and after["woke_at"] is not None
    assert before["first_running_at"] is not None and after["first_running_at"] is not None
    # Before: shed at the 60 s TTL while no replica was ready (503), then back to zero.
    assert (before["request"], before["status"]) == ("shed", 503)
    assert 60 <= before["seconds"] < 70
    # ... and KEDA's 60 s cooldown removed the replica that was still starting.
    assert before["back_to_zero_at"] is not None
    assert before["back_to_zero_at"] < before["first_running_at"] + start
    # After: the request waited for the replica and was dispatched once it was ready.
    assert (after["request"], after["status"]) == ("dispatched", 200)
    assert after["seconds"] >= start
    assert after["seconds"] < report["timers"]["after"]["ttl_s"]
    # (Zone B's longer cooldown is not what served it: its trigger stays active until the
    # dispatch, so the outcome rests on the TTL.)
