"""batching-window: a realtime Triton model batches for at most a few milliseconds."""

from __future__ import annotations

import re
from collections.abc import Iterator

from inferplane.policies.framework import ConfigKey, Finding, Rule, RuleConfig
from inferplane.policies.resources import is_triton
from inferplane.policies.stack import ModelView, Stack

_DELAY = re.compile(r"max_queue_delay_microseconds\s*:\s*(\d+)")


def queue_delays_us(stack: Stack, model: ModelView) -> list[tuple[int, str]]:
    """Batching windows the model's Triton config declares (config.pbtxt in a ConfigMap),
    or, offline without one, the blueprint's value."""
    found: list[tuple[int, str]] = []
    for cm in model.config_maps:
        data = cm.props.get("data")
        for value in (data or {}).values() if isinstance(data, dict) else ():
            for match in _DELAY.finditer(str(value)):
                found.append((int(match.group(1)), f"ConfigMap {cm.k8s_name}"))
    if not found and stack.env is not None and model.name in stack.env.models:
        batching = stack.env.models[model.name].batching
        if batching is not None:
            found.append((batching.max_queue_delay_us, "the blueprint"))
    return found


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    limit = int(config["max_queue_delay_us"])
    for model in stack.iter_models():
        if not model.realtime:
            continue
        triton = any(is_triton(c) for w in model.workloads for c in w.containers)
        blueprint = stack.env.models.get(model.name) if stack.env is not None else None
        if not triton and not (blueprint is not None and blueprint.server == "triton"):
            continue
        for delay, where in queue_delays_us(stack, model):
            if delay > limit:
                yield Finding(
                    f"models.{model.name}",
                    ("models", model.name, "batching", "max_queue_delay_us"),
                    f"realtime model {model.name} waits up to {delay / 1000:g} ms to fill a "
                    f"batch ({where}), over the {limit / 1000:g} ms a realtime request can "
                    "spend queueing; lower batching.max_queue_delay_us",
                    model.workloads[0].ref if model.workloads else None,
                )
                break


RULE = Rule(
    id="batching-window",
    title="Realtime Triton models keep their batching window short",
    level="advisory",
    scope="stack",
    check=check,
    rationale=(
        "Triton's dynamic batcher holds a request for up to max_queue_delay_microseconds "
        "hoping to fill a batch. Every realtime request can pay that wait on top of its "
        "inference time, so a long window spends the latency budget on queueing. Batch "
        "models trade latency for throughput and may wait longer."
    ),
    remediation=(
        "Set models.<m>.batching.max_queue_delay_us at or under the threshold (10 ms by "
        "default), or mark a throughput-oriented model latency_class: batch."
    ),
    links=(
        "https://docs.nvidia.com/deeplearning/triton-inference-server/user-guide/docs/user_guide/batcher.html",
    ),
    config=(
        ConfigKey(
            "max_queue_delay_us",
            10000,
            {"type": "integer", "minimum": 0},
            "Longest batching window of a realtime Triton model, in microseconds.",
        ),
    ),
    sources=(
        "The model's Triton config (max_queue_delay_microseconds in a config.pbtxt "
        "ConfigMap labelled with the model). Offline, a program that renders no such "
        "ConfigMap is judged on the blueprint's batching.max_queue_delay_us; online "
        "such a program is not judged."
    ),
    passing_example="""\
models:
  ranker:
    server: triton
    batching: {max_batch_size: 32, max_queue_delay_us: 2000}
""",
    failing_example="""\
models:
  ranker:
    server: triton
    batching: {max_batch_size: 32, max_queue_delay_us: 50000}   # 50 ms of queueing
""",
)
