"""What the real `pulumi up` prints and when it returns when a model with a `rollout` changes
version (e2e/rehearse_rollout_up.py): how it reads `up`'s output (fast), and the whole run
where the tools are built (`needs_tools`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ci_gate import cannot_run

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "e2e" / "rehearse_rollout_up.py"
sys.path.insert(0, str(ROOT / "e2e"))

import rehearse_rollout_up  # noqa: E402


def test_the_change_is_one_flag_of_the_rehearsal_s_blueprint() -> None:
    text = rehearse_rollout_up.BLUEPRINT.read_text()
    assert text.count(rehearse_rollout_up.OLD_FLAG) == 1
    assert rehearse_rollout_up.NEW_FLAG not in text


def test_it_keeps_the_model_s_lines_and_the_summary() -> None:
    out = "\n".join(
        [
            "Updating (local):",
            "    ~  kubernetes:apps/v1:Deployment chat-zone-a updating (0s) [diff: ~spec]",
            "    ~  kubernetes:apps/v1:Deployment chat-zone-a updated (1s) [diff: ~spec]",
            "       kubernetes:argoproj.io/v1alpha1:Rollout chat-zone-b  ",
            "    ~  kubernetes:core/v1:ConfigMap other updated (0s)",
            "Resources:",
            "    ~ 2 updated",
            "    40 unchanged",
            "",
            "Duration: 31s",
        ]
    )
    got = rehearse_rollout_up.printed(out)
    assert got["resource_lines"] == [
        "    ~  kubernetes:apps/v1:Deployment chat-zone-a updating (0s) [diff: ~spec]",
        "    ~  kubernetes:apps/v1:Deployment chat-zone-a updated (1s) [diff: ~spec]",
        "       kubernetes:argoproj.io/v1alpha1:Rollout chat-zone-b",
    ]
    assert got["summary"] == ["Resources:", "    ~ 2 updated", "    40 unchanged", "Duration: 31s"]


def test_without_the_tools_it_does_not_run(tmp_path: Path) -> None:
    res = subprocess.run(
        [sys.executable, str(SCRIPT)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "XDG_CACHE_HOME": str(tmp_path)},
    )
    assert res.returncode == 2
    assert json.loads(res.stdout)["not_run"].startswith("not built: ")


MISSING = rehearse_rollout_up.not_built()


@pytest.mark.needs_tools
@pytest.mark.skipif(
    bool(MISSING) and os.environ.get("CI") != "true",  # CI builds them first: a fail there
    reason=f"tools the rehearsal needs are not built: {', '.join(MISSING)}",
)
def test_up_returns_while_the_canary_is_in_flight() -> None:
    res = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=900)
    report = json.loads(res.stdout)
    if res.returncode == 2:
        cannot_run(report["not_run"])
    assert res.returncode == 0, report.get("error", "") + json.dumps(
        report.get("log_tails"), indent=1
    )
    up1, up2, up3, up4 = (report[f"up_{i}"] for i in (1, 2, 3, 4))
    old = report["old_stable"]
    assert up1["exit"] == 0 and set(up1["changes"]) == {"create"}
    # The new version: `up` updates each zone's Deployment and leaves the Rollout as it is
    # (no line of a Rollout), exits 0 within seconds, while the first zone's canary has
    # only started and the second waits at its gate.
    assert up2["exit"] == 0 and up2["seconds"] < 90
    assert up2["changes"]["update"] >= 2
    assert any(
        "Deployment" in line and "chat-zone-a updated" in line for line in up2["resource_lines"]
    )
    assert not any("Rollout" in line for line in up2["resource_lines"])
    a, b = (up2["rollouts_when_it_returned"][z] for z in ("zone-a", "zone-b"))
    assert a["phase"] in ("Progressing", "Paused") and a["stable"] == old["zone-a"]
    assert a["current"] != a["stable"]
    assert b["phase"] == "Progressing" and b["step"] == 0 and b["stable"] == old["zone-b"]
    # With the canary in flight, `up` again sees nothing to do.
    assert up3["exit"] == 0 and set(up3["changes"]) <= {"same", "read"}
    assert up3["rollouts_when_it_returned"]["zone-a"]["stable"] == old["zone-a"]
    # The first zone is Healthy on the new template only after its pause (`step_s` 120 s).
    final = report["final"]["zone-a"]
    assert final["phase"] == "Healthy" and final["stable"] not in (None, old["zone-a"])
    healthy_t = min(
        e["t"]
        for e in report["events"]
        if e["zone"] == "zone-a" and e["phase"] == "Healthy" and e["stable"] != old["zone-a"]
    )
    assert healthy_t - up2["ended_at"] >= 100
    # A zone aborted: `up` still exits 0 and changes nothing; only the Rollout says it.
    assert up4["exit"] == 0 and set(up4["changes"]) <= {"same", "read"}
    assert up4["rollouts_when_it_returned"]["zone-b"]["phase"] == "Degraded"
    assert not up4["resource_lines"]
