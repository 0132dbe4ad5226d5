"""latency-signal: realtime models autoscale on queueing or latency, not GPU utilisation."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from inferplane.blueprint import naming
from inferplane.blueprint.errors import YamlPath
from inferplane.policies.framework import ConfigKey, Finding, Rule, RuleConfig
from inferplane.policies.resources import SCALED_OBJECT
from inferplane.policies.stack import Stack

_NAME = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")


def trigger_kind(trigger: Mapping[str, Any], config: RuleConfig) -> str:
    """``utilisation``, ``latency``, ``schedule`` or ``other`` for one KEDA trigger.

    A ``cron`` trigger follows the clock, not load, so it neither helps nor hurts. The KEDA
    HTTP add-on's ``external-push`` trigger counts requests waiting in or passing through
    its interceptor: a queue signal."""
    kind = str(trigger.get("type", ""))
    if kind in ("cpu", "memory"):
        return "utilisation"
    if kind == "cron":
        return "schedule"
    metadata = trigger.get("metadata")
    http_route = isinstance(metadata, Mapping) and (
        "httpScaledObject" in metadata or "interceptorRoute" in metadata
    )
    if kind == "external-push" and http_route:
        return "latency"
    query = str(metadata.get("query", "")) if isinstance(metadata, Mapping) else ""
    names = {n.lower() for n in _NAME.findall(query)}
    if any(s in n for n in names for s in config["latency_markers"]):
        return "latency"
    if any(s in n for n in names for s in config["utilisation_markers"]):
        return "utilisation"
    return "other"


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    for so in stack.of_type(SCALED_OBJECT):
        model = so.labels.get(naming.MODEL_LABEL)
        latency = so.labels.get(naming.LATENCY_CLASS_LABEL)
        if not latency and model and stack.env is not None and model in stack.env.models:
            latency = stack.env.models[model].latency_class
        if latency == "batch":
            continue
        triggers = [t for t in so.spec.get("triggers") or () if isinstance(t, Mapping)]
        kinds = [k for k in (trigger_kind(t, config) for t in triggers) if k != "schedule"]
        if kinds and all(k == "utilisation" for k in kinds):
            name = model or so.k8s_name
            yield Finding(
                f"models.{name}",
                _signal_field(stack, name),
                f"realtime model {name} autoscales on GPU utilisation alone, which reaches "
                "100% with one request and says nothing about waiting users; scale on "
                "queue_depth or a latency metric",
                so.ref,
            )


def _signal_field(stack: Stack, name: str) -> YamlPath:
    """``autoscaling.metric``, or the first listed signal when the model lists several."""
    env = stack.env
    model = env.models.get(name) if env is not None else None
    if model is not None and len(model.autoscaling.signals) > 1:
        return ("models", name, "autoscaling", 0, "metric")
    return ("models", name, "autoscaling", "metric")


RULE = Rule(
    id="latency-signal",
    title="Realtime models autoscale on a queue or latency signal",
    level="advisory",
    scope="resource",
    check=check,
    rationale=(
        "GPU utilisation goes to 100% with a single in-flight request and stays there; it "
        "cannot tell a busy GPU from one with a growing queue. Queue depth and latency track "
        "what users feel, so scaling on them adds replicas before the SLO is missed."
    ),
    remediation=(
        "Set models.<m>.autoscaling.metric to queue_depth, p95_latency_ms or (vLLM) "
        "ttft_p95_ms, or list one of them beside gpu_utilization. Hand-written "
        "ScaledObjects: add a Prometheus trigger on a queue or latency metric."
    ),
    links=("https://github.com/NVIDIA/dcgm-exporter/issues/301",),
    config=(
        ConfigKey(
            "latency_markers",
            [
                "queue",
                "latency",
                "duration",
                "waiting",
                "pending",
                "first_token",
                "ttft",
                "summary_us",
                "first_response",
            ],
            {"type": "array", "items": {"type": "string"}},
            "Substrings of metric names that carry a queue or latency signal.",
        ),
        ConfigKey(
            "utilisation_markers",
            [
                "dcgm_fi_dev_gpu_util",
                "dcgm_fi_prof_gr_engine_active",
                "nv_gpu_utilization",
                "gpu_util",
            ],
            {"type": "array", "items": {"type": "string"}},
            "Substrings of metric names that measure GPU busyness.",
        ),
    ),
    sources=(
        "Each ScaledObject alone: its triggers (cpu/memory, or Prometheus queries by the "
        "metric names they read) and its latency-class label. Offline and online alike."
    ),
    passing_example="""\
models:
  chat:
    latency_class: realtime
    autoscaling: {metric: queue_depth, target: 4}
""",
    failing_example="""\
models:
  chat:
    latency_class: realtime
    autoscaling: {metric: gpu_utilization, target: 70}
""",
)
