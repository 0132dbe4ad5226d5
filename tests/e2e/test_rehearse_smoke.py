"""The rehearsal's metrics path end to end (e2e/rehearse_smoke.py): the real control plane,
Prometheus operator and Prometheus, in a network namespace, scraping a stand-in pod.

The end-to-end test runs only where the tools are built (`python e2e/tools.py build` and
`python e2e/tools.py build --group rehearsal`); elsewhere it is skipped with the reason.
"""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ci_gate import cannot_run

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "e2e" / "rehearse_smoke.py"
sys.path.insert(0, str(ROOT / "e2e"))

import rehearse_smoke  # noqa: E402


def run(env: dict[str, str] | None = None) -> tuple[int, dict]:
    res = subprocess.run(
        [sys.executable, str(SCRIPT)],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    return res.returncode, json.loads(res.stdout)


def test_without_the_tools_it_does_not_run_and_says_which_to_build(tmp_path: Path) -> None:
    code, report = run({**os.environ, "XDG_CACHE_HOME": str(tmp_path)})
    assert code == 2
    assert report == {
        "steps": [],
        "passed": False,
        "not_run": "not built: kubernetes, etcd, kwok, prometheus, prometheus-operator; "
        "run `python e2e/tools.py build` and "
        "`python e2e/tools.py build --group rehearsal`",
    }


MISSING = rehearse_smoke.not_built()


@pytest.mark.needs_tools
@pytest.mark.skipif(
    bool(MISSING), reason=f"tools the rehearsal needs are not built: {', '.join(MISSING)}"
)
def test_prometheus_scrapes_a_stand_in_pod_through_the_operators_config() -> None:
    code, report = run()
    if code == 2:
        cannot_run(report["not_run"])
    assert code == 0, report.get("error", "") + json.dumps(report.get("log_tails"), indent=1)
    target = report["target"]
    ip, port = target["instance"].rsplit(":", 1)
    assert ipaddress.ip_address(ip) in ipaddress.ip_network("10.244.0.0/16")
    assert port == "8000"
    assert target["pod"].startswith("standin-")
    assert {k: v for k, v in target.items() if k not in ("instance", "pod")} == {
        "__name__": "up",
        "container": "standin",
        "endpoint": "metrics",
        "job": "standin",
        "namespace": "rehearsal-smoke",
        "service": "standin",
    }
    assert int(report["counter"]) >= 1
    # The ServiceMonitor and the PrometheusRule came after Prometheus started: the sync
    # reloaded it with the operator's new configuration.
    assert report["config_reloads"] >= 1
    assert [s["step"] for s in report["steps"]] == [
        "control plane up",
        "operator CRDs",
        "operator started",
        "operator generated the configuration",
        "Prometheus ready",
        "stand-in pod Running",
        "Prometheus scraped the stand-in",
        "the stand-in's counter is stored",
        "the PrometheusRule's recording rule is evaluated",
    ]
