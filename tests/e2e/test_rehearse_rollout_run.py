"""The stack's rollout objects under the real Argo Rollouts controller, Prometheus and
stand-ins in two zones (e2e/rehearse_rollout_run.py): what it applies and how it reads the
timeline (fast), and the whole run where the tools are built (`needs_tools`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ci_gate import cannot_run

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "e2e" / "rehearse_rollout_run.py"
sys.path.insert(0, str(ROOT / "e2e"))

import rehearse_rollout_run  # noqa: E402
import rollout_objects as ro  # noqa: E402

URL = "http://127.0.0.1:9090"


def objects(version: str, slower: float) -> dict:
    return ro.model_objects(URL, rehearse_rollout_run.BLUEPRINT, "local", "chat", version, slower)


def test_the_rehearsal_s_blueprint_passes_the_check() -> None:
    """Like the end-to-end blueprints: valid, and no mandatory rule broken without a config."""
    from inferplane.app.check import check_files

    report = check_files([str(rehearse_rollout_run.BLUEPRINT)], ["local"])
    assert report.invalid == []
    assert [
        r.rule for r in report.results if r.status == "violation" and r.level == "mandatory"
    ] == []


def test_each_zone_gets_the_stack_s_objects_with_one_revision() -> None:
    v1 = objects("v1", 1)
    assert v1["zones"] == ["zone-a", "zone-b"]
    assert sorted(v1["deployments"]) == sorted(v1["rollouts"]) == v1["zones"]
    assert list(v1["gates"]) == ["zone-b"]  # the first zone waits on nothing
    for zone, dep in v1["deployments"].items():
        template = dep["spec"]["template"]
        assert dep["metadata"]["name"] == f"chat-{zone}"
        assert template["metadata"]["labels"]["inferplane.dev/revision"] == v1["revision"]
        assert template["metadata"]["labels"]["inferplane.dev/zone"] == zone
        assert template["spec"]["nodeSelector"] == {"topology.kubernetes.io/zone": zone}
        assert template["metadata"]["annotations"][ro.VERSION_ANNOTATION] == "v1"
        assert dep["spec"]["replicas"] == 2
        guard = v1["guards"][zone]["spec"]["metrics"]
        assert {m["provider"]["prometheus"]["address"] for m in guard} == {URL}
    gate = v1["rollouts"]["zone-b"]["spec"]["strategy"]["canary"]["steps"][0]
    assert gate == {"analysis": {"templates": [{"templateName": "chat-zone-b-after-zone"}]}}
    assert "analysis" not in v1["rollouts"]["zone-a"]["spec"]["strategy"]["canary"]["steps"][0]
    query = v1["gates"]["zone-b"]["spec"]["metrics"][0]["provider"]["prometheus"]["query"]
    assert f'inferplane_dev_revision="{v1["revision"]}"' in query
    assert 'pod=~"chat-zone-a-' in query
    assert v1["monitor"]["spec"]["podTargetLabels"] == [
        "rollouts-pod-template-hash",
        "inferplane.dev/revision",
    ]


def test_a_new_version_is_a_new_template_and_revision() -> None:
    v1, v2, v3 = objects("v1", 1), objects("v2", 1), objects("v3", 3)
    assert len({v1["revision"], v2["revision"], v3["revision"]}) == 3
    notes = v3["deployments"]["zone-a"]["spec"]["template"]["metadata"]["annotations"]
    assert notes[ro.SLOWER_ANNOTATION] == "3"
    patch = ro.template_patch(v2["deployments"]["zone-a"])
    assert patch == {"spec": {"template": v2["deployments"]["zone-a"]["spec"]["template"]}}


def test_the_blueprint_s_ttft_bound_sits_between_the_stand_in_s_speeds() -> None:
    from standin_vllm import engine_for

    bound = objects("v1", 1)["guards"]["zone-a"]["spec"]["metrics"][0]
    assert bound["name"] == "ttft-p95-ms"
    assert "> 500 unless" in bound["provider"]["prometheus"]["query"]
    ttft = {}
    for slower in (1.0, 3.0):
        engine = engine_for(str(rehearse_rollout_run.BLUEPRINT), "local", "chat", 512, 16, slower)
        # 2 requests a second, one pod's share of the blueprint's 8 over four pods.
        got = []
        for i in range(120):
            engine.submit(i * 0.5)
            got += [d.ttft_s for d in engine.advance(i * 0.5)]
        got += [d.ttft_s for d in engine.advance(200)]
        ttft[slower] = sorted(got)[int(len(got) * 0.95)] * 1000
    assert ttft[1.0] < 500 / 2  # far from the bound: the p95 from buckets sits below 250 ms
    assert ttft[3.0] > 500 * 1.5


def test_the_guard_s_canary_side_is_the_p95_of_one_template() -> None:
    query = objects("v1", 1)["guards"]["zone-a"]["spec"]["metrics"][0]["provider"]["prometheus"]
    side = ro.guard_side(query["query"], "abc123")
    assert side.startswith("histogram_quantile(0.95,")
    assert 'rollouts_pod_template_hash="abc123"' in side
    assert "{{args" not in side and " unless " not in side
    with pytest.raises(ValueError):
        ro.guard_side("up == 1", "abc")


def pod(name: str, pod_hash: str, deleting: bool = False) -> dict:
    meta: dict = {"name": name, "labels": {ro.POD_HASH: pod_hash}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta}


def test_a_zone_s_state_counts_the_pods_on_each_template() -> None:
    status = {"phase": "Paused", "currentStepIndex": 1, "stableRS": "old", "currentPodHash": "new"}
    pods = [pod("a", "old"), pod("b", "new"), pod("c", "new", deleting=True), pod("d", "older")]
    assert ro.zone_state({"status": status}, pods) == {
        "phase": "Paused",
        "step": 1,
        "abort": False,
        "stable": "old",
        "current": "new",
        "stable_pods": 1,
        "canary_pods": 1,
        "other_pods": 1,
    }
    healthy = {**status, "currentPodHash": "old", "phase": "Healthy"}
    assert ro.zone_state({"status": healthy}, pods)["canary_pods"] == 0


def test_an_analysis_run_is_a_gate_or_a_guard() -> None:
    run = {
        "spec": {"metrics": [{"name": "zone-before"}]},
        "status": {
            "phase": "Running",
            "metricResults": [
                {"name": "zone-before", "measurements": [{"phase": "Failed", "value": "[]"}]}
            ],
        },
    }
    assert ro.analysis_state(run) == {
        "kind": "gate",
        "phase": "Running",
        "measurements": {"zone-before": [("Failed", "[]")]},
    }
    assert ro.analysis_state({"spec": {"metrics": [{"name": "ttft-p95-ms"}]}})["kind"] == "guard"


def test_milestones_read_one_zone_s_events() -> None:
    def state(t: float, zone: str, **kw: object) -> dict:
        base = {"phase": "Progressing", "step": 0, "abort": False, "stable": "old"}
        base.update(current="new", stable_pods=2, canary_pods=0, other_pods=0)
        return {"t": t, "zone": zone, **base, **kw}

    events = [
        state(0.5, "b"),
        {"t": 1.0, "zone": "b", "analysis": "gate", "analysis_phase": "Running"},
        {"t": 90.0, "zone": "b", "analysis": "gate", "analysis_phase": "Successful"},
        state(91.0, "b", step=1, canary_pods=1),
        state(92.0, "b", step=2, phase="Paused", canary_pods=1),
        state(215.0, "b", step=4, phase="Healthy", stable="new", stable_pods=2),
        state(3.0, "a", abort=True, phase="Degraded"),
    ]
    assert ro.milestones(events, "b", "old") == {
        "steps": [[0.5, 0], [91.0, 1], [92.0, 2], [215.0, 4]],
        "gate_passed": 90.0,
        "canary_start": 91.0,
        "healthy_on_new": 215.0,
    }
    assert ro.milestones(events, "a", "old") == {"steps": [[3.0, 0]], "aborted": 3.0}
    # Healthy, but a new template is already under way: not yet on the new version.
    healthy = [state(1.0, "a", phase="Healthy", stable="new", current="newer")]
    assert "healthy_on_new" not in ro.milestones(healthy, "a", "old")


def test_without_the_tools_it_does_not_run(tmp_path: Path) -> None:
    res = subprocess.run(
        [sys.executable, str(SCRIPT)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "XDG_CACHE_HOME": str(tmp_path)},
    )
    assert res.returncode == 2
    report = json.loads(res.stdout)
    assert report["not_run"].startswith("not built: kubernetes, etcd, kwok, prometheus")


MISSING = rehearse_rollout_run.not_built()


@pytest.mark.needs_tools
@pytest.mark.skipif(
    bool(MISSING) and os.environ.get("CI") != "true",  # CI builds them first: a fail there
    reason=f"tools the rehearsal needs are not built: {', '.join(MISSING)}",
)
def test_a_good_version_goes_zone_by_zone_and_a_slow_one_stops_in_the_first() -> None:
    res = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=1200
    )
    report = json.loads(res.stdout)
    if res.returncode == 2:
        cannot_run(report["not_run"])
    assert res.returncode == 0, report.get("error", "") + json.dumps(
        report.get("log_tails"), indent=1
    )
    assert report["expectations"] and all(report["expectations"].values())
    a = report["run_a"]["milestones"]
    assert a["zone-a"]["healthy_on_new"] <= a["zone-b"]["gate_passed"]
    assert a["zone-b"]["gate_passed"] <= a["zone-b"]["canary_start"]
    assert a["zone-b"]["canary_start"] < a["zone-b"]["healthy_on_new"]
    b = report["run_b"]
    assert "aborted" in b["milestones"]["zone-a"]
    assert "canary_start" not in b["milestones"]["zone-b"]
    assert b["zone_b_canary_pods_max"] == 0
    # The guard saw the canary over the bound while the stable pods were under it.
    assert any(
        s["canary"] is not None and s["canary"] > 500 and (s["stable"] or 0) < 500
        for s in b["p95_ms_seen"]
    )
    assert 0 < b["requests"]["slow_share"] < 0.5
