"""Every AnalysisTemplate the stack generates passes the checks the Argo Rollouts controller
runs on a metric before it starts an analysis (argoproj/argo-rollouts v1.10.1
``utils/analysis/factory.go``, `ValidateMetrics` and `ValidateMetric`), transcribed here:
the CRD's schema, which `test_rollout.py` checks, does not hold these."""

from __future__ import annotations

import re
from typing import Any

from serving_fixtures import serve, with_model

from inferplane.blueprint.model import Environment, Rollout, RolloutGuard

TEMPLATE_TYPE = "kubernetes:argoproj.io/v1alpha1:AnalysisTemplate"
_DURATION = re.compile(r"^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$")
"""Go's ``time.ParseDuration`` units, which ``DurationString.Duration`` uses."""


def metric_problems(metric: dict[str, Any]) -> list[str]:
    """`ValidateMetric`'s refusals of one metric (empty: the controller accepts it)."""
    count = metric.get("count", 0)
    failure_limit = metric.get("failureLimit", 0)
    success_limit = metric.get("consecutiveSuccessLimit", 0)
    inconclusive_limit = metric.get("inconclusiveLimit", 0)
    found = []
    if success_limit < 0:
        found.append("consecutiveSuccessLimit must be >= 0")
    if failure_limit < -1:
        found.append("failureLimit must be >= 0, or -1 to be disabled")
    if success_limit == 0 and failure_limit == -1:
        found.append("failureLimit and consecutiveSuccessLimit cannot both be disabled")
    if inconclusive_limit < 0:
        found.append("inconclusiveLimit must be >= 0")
    if metric.get("consecutiveErrorLimit", 0) < 0:
        found.append("consecutiveErrorLimit must be >= 0")
    if count > 0:
        if success_limit >= 0 and failure_limit >= 0:
            if count < failure_limit + success_limit:
                found.append("count must be >= failureLimit + consecutiveSuccessLimit")
        elif success_limit >= 0 and failure_limit < 0 and count < success_limit:
            found.append("count must be >= consecutiveSuccessLimit")
        if count < inconclusive_limit:
            found.append("count must be >= inconclusiveLimit")
    if count > 1 and not metric.get("interval"):
        found.append("interval must be specified when count > 1")
    for key in ("interval", "initialDelay"):
        if metric.get(key) and not _DURATION.match(metric[key]):
            found.append(f"invalid {key} string")
    if len(metric.get("provider") or {}) != 1:
        found.append("exactly one provider")
    return found


def test_the_transcription_refuses_what_the_controller_refuses() -> None:
    prometheus = {"prometheus": {"address": "http://p", "query": "up"}}
    assert metric_problems({"provider": prometheus}) == []
    assert metric_problems({"failureLimit": -1, "provider": prometheus}) == [
        "failureLimit and consecutiveSuccessLimit cannot both be disabled"
    ]
    assert metric_problems(
        {"count": 1, "failureLimit": -1, "consecutiveSuccessLimit": 2, "provider": prometheus}
    ) == ["count must be >= consecutiveSuccessLimit"]
    assert metric_problems({"count": 3, "provider": prometheus}) == [
        "interval must be specified when count > 1"
    ]


def test_every_generated_analysis_passes_the_controller_s_checks(prod: Environment) -> None:
    guard = RolloutGuard(p95_ms=20000, ttft_p95_ms=800, itl_p95_ms=60, error_ratio=0.01)
    env = with_model(prod, "chat", rollout=Rollout(steps=(10, 50, 100), step_s=30, guard=guard))
    templates = serve(env, ["chat"]).of_type(TEMPLATE_TYPE)
    names = sorted(t.get("metadata", "name") for t in templates)
    assert any(n.endswith("-after-zone") for n in names), names
    for template in templates:
        metrics = template.get("spec", "metrics")
        assert metrics, template.get("metadata", "name")
        assert len({m["name"] for m in metrics}) == len(metrics)
        for metric in metrics:
            # The recording reads numbers back as floats; the controller reads integers.
            metric = {k: int(v) if isinstance(v, float) else v for k, v in metric.items()}
            assert metric_problems(metric) == [], (template.get("metadata", "name"), metric)
