"""slo-defined: every realtime model has a latency SLO and alerts that watch it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from inferplane.policies.framework import Finding, Rule, RuleConfig
from inferplane.policies.stack import ModelView, Stack


def alert_names(model: ModelView) -> list[str]:
    """Alerting rules in the model's PrometheusRules."""
    names: list[str] = []
    for pr in model.prometheus_rules:
        for group in pr.spec.get("groups") or ():
            if not isinstance(group, Mapping):
                continue
            for rule in group.get("rules") or ():
                if isinstance(rule, Mapping) and rule.get("alert"):
                    names.append(str(rule["alert"]))
    return names


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    env = stack.env
    for model in stack.iter_models():
        if not model.realtime:
            continue
        target = f"models.{model.name}"
        ref = model.workloads[0].ref if model.workloads else None
        blueprint = env.models.get(model.name) if env is not None else None
        if blueprint is not None and blueprint.slo is None:
            yield Finding(
                target,
                ("models", model.name, "slo"),
                f"realtime model {model.name} has no SLO, so nothing says when it is too "
                "slow; add slo.p95_ms (and slo.ttft_p95_ms for vLLM)",
                ref,
            )
            continue
        if env is not None and not env.observability.alerts_enabled:
            yield Finding(
                target,
                ("observability", "alerts", "enabled"),
                f"alerts are off, so nobody hears when realtime model {model.name} misses its "
                "SLO; set observability.alerts.enabled: true",
                ref,
            )
            continue
        if not alert_names(model):
            yield Finding(
                target,
                ("models", model.name, "slo"),
                f"realtime model {model.name} has no alerting rule (no PrometheusRule labelled "
                "with the model holds an `alert`), so a missed SLO goes unnoticed",
                ref,
            )


RULE = Rule(
    id="slo-defined",
    title="Realtime models have an SLO and alerts on it",
    level="advisory",
    scope="stack",
    check=check,
    rationale=(
        "A realtime model exists to answer within a time budget. Without a written SLO "
        "nobody can tell whether it is fast enough, and without alerts nobody hears when it "
        "stops being so: SLO burn, queue growth and replicas pinned at max are the signals "
        "that something needs attention before users complain."
    ),
    remediation=(
        "Add models.<m>.slo.p95_ms (vLLM also slo.ttft_p95_ms) and keep "
        "observability.alerts.enabled: true. Hand-written programs: a PrometheusRule "
        "labelled with the model, holding at least one alert."
    ),
    links=("https://sre.google/workbook/alerting-on-slos/",),
    sources=(
        "Offline: the blueprint's slo and observability.alerts.enabled, then the model's "
        "PrometheusRules. Online: the PrometheusRules labelled with the model (an alert "
        "must exist)."
    ),
    passing_example="""\
models:
  ranker: {server: triton, slo: {p95_ms: 25}}
observability:
  alerts: {enabled: true}
""",
    failing_example="""\
models:
  ranker: {server: triton, slo: null}   # realtime, no slo
observability:
  alerts: {enabled: true}
""",
)
