"""An idle router's empty queue gauge and a warm llm-aware zone's scale-in
(e2e/rehearse_router_idle.py): the query as it was holds the zone's replicas on KEDA's
fallback, the stack's query lets it scale in and still reports a lost picker. The objects
are checked here; the real loops where the tools are built (`needs_tools`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ci_gate import cannot_run

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "e2e" / "rehearse_router_idle.py"
sys.path.insert(0, str(ROOT / "e2e"))

import rehearse_router_idle as idle  # noqa: E402

PROMETHEUS = "http://127.0.0.1:9999"
NS = "router-idle"


def run(env: dict[str, str] | None = None) -> tuple[int, dict]:
    res = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=900, env=env
    )
    return res.returncode, json.loads(res.stdout)


def test_without_the_tools_it_does_not_run_and_says_which_to_build(tmp_path: Path) -> None:
    code, report = run({**os.environ, "XDG_CACHE_HOME": str(tmp_path)})
    assert code == 2
    assert report["not_run"].startswith("not built: kubernetes, etcd, kwok, keda, prometheus")


def test_the_two_zones_differ_only_in_the_triggers_query() -> None:
    before = idle.zone_objects(PROMETHEUS, "zone-a", before=True)
    after = idle.zone_objects(PROMETHEUS, "zone-b", before=False)
    picker = 'namespace="router-idle", service="chat-zone-b-epp"'
    assert after["query"] == (
        f"sum(llm_d_epp_flow_control_queue_size{{{picker}}}) or max(up{{{picker}}} == 1) * 0"
    )
    assert before["query"] == (
        'sum(llm_d_epp_flow_control_queue_size{namespace="router-idle", service="chat-zone-a-epp"})'
    )
    # A warm zone: an empty answer is an error to KEDA, and the fallback keeps what it has.
    for zone in (before, after):
        assert zone["ignore_null_values"] == "false"
        assert zone["fallback"] == {
            "failureThreshold": 3,
            "replicas": 1,
            "behavior": "currentReplicasIfHigher",
        }
        assert zone["min"] == 1
    spec_a = next(o for p, o in before["objects"] if p.endswith("/scaledobjects"))["spec"]
    spec_b = next(o for p, o in after["objects"] if p.endswith("/scaledobjects"))["spec"]
    assert spec_a["triggers"][0]["metadata"]["serverAddress"] == PROMETHEUS
    for spec, zone in ((spec_a, "zone-a"), (spec_b, "zone-b")):
        spec["triggers"][0]["metadata"].pop("query")
        assert spec["scaleTargetRef"]["name"] == f"chat-{zone}"
        spec["scaleTargetRef"]["name"] = "chat-zone"
        hpa = spec["advanced"]["horizontalPodAutoscalerConfig"]
        assert hpa["name"] == f"keda-hpa-chat-{zone}"
        hpa["name"] = "keda-hpa-chat-zone"
        assert hpa["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 30
    assert spec_a == spec_b


def test_the_pickers_monitor_finds_the_pickers_service_on_its_metrics_port() -> None:
    zone = idle.zone_objects(PROMETHEUS, "zone-b", before=False)
    by_kind = {o["kind"]: o for _, o in zone["objects"] if o["kind"] != "Deployment"}
    service, monitor = by_kind["Service"], by_kind["ServiceMonitor"]
    picker = next(
        o
        for _, o in zone["objects"]
        if o["kind"] == "Deployment" and o["metadata"]["name"] == "chat-zone-b-epp"
    )
    assert (
        monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    )
    assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    assert [e["port"] for e in monitor["spec"]["endpoints"]] == ["http-metrics"]
    assert service["spec"]["ports"] == [{"name": "http-metrics", "port": 9090}]
    assert (
        service["spec"]["selector"].items()
        <= picker["spec"]["template"]["metadata"]["labels"].items()
    )


MISSING = idle.not_built()


@pytest.mark.needs_tools
@pytest.mark.skipif(
    bool(MISSING), reason=f"tools the rehearsal needs are not built: {', '.join(MISSING)}"
)
def test_the_old_query_holds_an_idle_zone_and_the_stacks_lets_it_scale_in() -> None:
    code, report = run()
    if code == 2:
        cannot_run(report["not_run"])
    assert code == 0, report.get("error", "") + json.dumps(report.get("log_tails"), indent=1)
    before, after = report["timeline"]["zone-a"], report["timeline"]["zone-b"]
    # Before: Prometheus answers nothing, KEDA counts failures, the fallback engages and the
    # HPA reads the fallback's value (the target, 2, per replica): the zone keeps 2.
    assert all(row["prometheus"] == [] for row in before)
    assert all(row["replicas"] == idle.START for row in before)
    assert before[-1]["fallback"] == "True"
    assert before[-1]["health"]["s0-prometheus"]["status"] == "Failing"
    assert before[-1]["hpa_current"] == "2"
    # After: 0 while the picker is scraped; the zone scales in to its minimum.
    idle_rows = [r for r in after if r["t"] <= report["seconds"]["before_fallback"]]
    assert all(row["prometheus"] == [0.0] for row in idle_rows)
    assert report["seconds"]["after_scaled_in"] is not None
    assert report["seconds"]["after_scaled_in"] < report["seconds"]["before_fallback"] + 60
    assert after[-1]["replicas"] == 1
    # Its picker lost: the query is empty again and KEDA's fallback engages.
    assert after[-1]["prometheus"] == []
    assert after[-1]["fallback"] == "True"
