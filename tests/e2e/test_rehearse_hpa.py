"""The real HPA scales a model on a value KEDA reads from the real Prometheus
(e2e/rehearse_hpa.py): what it creates for the model, the count it expects, and the whole
chain where the tools are built (`needs_tools`; skipped with the reason elsewhere)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ci_gate import cannot_run

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "e2e" / "rehearse_hpa.py"
sys.path.insert(0, str(ROOT / "e2e"))

import rehearse_hpa  # noqa: E402

from inferplane.blueprint.resolution.resolve import load_blueprint, resolve  # noqa: E402
from inferplane.components import stack_serving  # noqa: E402
from inferplane.components.serving.observability import monitoring  # noqa: E402
from inferplane.components.serving.scaling import autoscaling  # noqa: E402

PROMETHEUS = "http://127.0.0.1:9999"


def run(env: dict[str, str] | None = None) -> tuple[int, dict]:
    res = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=900, env=env
    )
    return res.returncode, json.loads(res.stdout)


def test_without_the_tools_it_does_not_run_and_says_which_to_build(tmp_path: Path) -> None:
    code, report = run({**os.environ, "XDG_CACHE_HOME": str(tmp_path)})
    assert code == 2
    assert report == {
        "steps": [],
        "passed": False,
        "not_run": "not built: kubernetes, etcd, kwok, keda, prometheus, prometheus-operator, "
        "keda-metrics-apiserver; run `python e2e/tools.py build` and "
        "`python e2e/tools.py build --group rehearsal`",
    }


def test_the_model_gets_the_stacks_own_scaled_object_and_service_monitor() -> None:
    doc, _ = load_blueprint(ROOT / "blueprints" / "chat-minimal.yaml")
    env = resolve(doc, "local")
    serving_env = stack_serving.serving_environment(env)
    model = stack_serving.served_model(env, env.models["chat"])
    got = rehearse_hpa.model_objects(PROMETHEUS)
    paths = [p for p, _ in got["objects"]]
    assert paths == [
        "/apis/apps/v1/namespaces/chat-minimal/deployments",
        "/api/v1/namespaces/chat-minimal/services",
        "/apis/monitoring.coreos.com/v1/namespaces/chat-minimal/servicemonitors",
        "/apis/keda.sh/v1alpha1/namespaces/chat-minimal/scaledobjects",
    ]
    deployment, service, monitor, scaled = (o for _, o in got["objects"])
    # The stack's ScaledObject but for the address of Prometheus.
    want = autoscaling.scaled_object_spec(serving_env, model, "chat-minimal", "chat")
    assert want["triggers"][0]["metadata"]["serverAddress"] != PROMETHEUS
    want["triggers"][0]["metadata"]["serverAddress"] = PROMETHEUS
    assert scaled["spec"] == want
    assert monitor["spec"] == monitoring.service_monitor_spec(
        serving_env, model, "chat-minimal", "chat"
    )
    assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    # The ServiceMonitor's selector finds the Service, the Service the stand-in pods, on the
    # port it scrapes.
    selector = monitor["spec"]["selector"]["matchLabels"]
    assert selector.items() <= service["metadata"]["labels"].items()
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    assert service["spec"]["ports"] == [{"name": "http", "port": 8000, "targetPort": "http"}]
    assert deployment["spec"]["replicas"] == 2
    assert {k: got[k] for k in ("namespace", "hpa", "min", "max", "target", "query")} == {
        "namespace": "chat-minimal",
        "hpa": "keda-hpa-chat",
        "min": 2,
        "max": 8,
        "target": 4.0,
        "query": 'sum(vllm:num_requests_waiting{namespace="chat-minimal", model_name="chat"})',
    }


@pytest.mark.parametrize(("value", "want"), [(0.0, 2), (8.0, 2), (8.5, 3), (30.0, 8), (400.0, 8)])
def test_the_hpa_wants_the_value_over_the_target_within_the_range(value: float, want: int) -> None:
    assert rehearse_hpa.expected_replicas(value, 4.0, 2, 8) == want


MISSING = rehearse_hpa.not_built()


@pytest.mark.needs_tools
@pytest.mark.skipif(
    bool(MISSING), reason=f"tools the rehearsal needs are not built: {', '.join(MISSING)}"
)
def test_the_real_hpa_scales_the_model_on_the_value_keda_reads_from_prometheus() -> None:
    code, report = run()
    if code == 2:
        cannot_run(report["not_run"])
    assert code == 0, report.get("error", "") + json.dumps(report.get("log_tails"), indent=1)
    before, after = report["hpa_before"], report["hpa_after"]
    assert before["metric"]["selector"] == {"matchLabels": {"scaledobject.keda.sh/name": "chat"}}
    assert before["target"] == {"type": "AverageValue", "averageValue": "4"}
    assert before["current"] == {"averageValue": "0"}
    assert (before["desiredReplicas"], before["conditions"]["ScalingActive"]) == (2, "True")
    # 30 waiting requests over a target of 4 per replica: the maximum, 8.
    assert after["desiredReplicas"] == 8
    assert after["conditions"]["ScalingActive"] == "True"
    assert [s["step"] for s in report["steps"]] == [
        "control plane up",
        "operator CRDs",
        "operator started",
        "operator generated the configuration",
        "Prometheus ready",
        "KEDA CRDs",
        "KEDA operator started",
        "the metrics API server's pod has an IP",
        "the aggregator serves external.metrics.k8s.io",
        "the model's stand-in pods Running",
        "Prometheus answers the trigger's query",
        "KEDA made the HPA, which reads the value through the aggregator",
        "the HPA scales the Deployment from 2 to 8",
    ]
    marks = report["seconds_after_the_change"]
    assert marks["prometheus"] <= marks["hpa_read"] <= marks["first_scale"] <= marks["full"]
    assert marks["full"] <= rehearse_hpa.SCALE_WAIT


def test_every_prometheus_trigger_asks_the_rehearsals_prometheus() -> None:
    # llm-serving's chat-8b has no `autoscaling`: its targets follow from its traffic, two
    # Prometheus triggers (concurrency and the TTFT p95).
    got = rehearse_hpa.model_objects(
        PROMETHEUS, ROOT / "blueprints" / "llm-serving.yaml", "local", "chat-8b"
    )
    scaled = next(o for p, o in got["objects"] if p.endswith("/scaledobjects"))
    triggers = [t for t in scaled["spec"]["triggers"] if t["type"] == "prometheus"]
    assert len(triggers) == 2
    assert {t["metadata"]["serverAddress"] for t in triggers} == {PROMETHEUS}
    assert got["query"] == triggers[0]["metadata"]["query"]
