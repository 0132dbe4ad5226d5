"""Numbers in the wrong unit: seconds where milliseconds are asked, microseconds read as
milliseconds, fractions where percent are asked. Each is valid to the schema and plausible
to its writer, and each makes the model scale, batch or plan for something else: a
GPU-utilisation target of 0.7 (percent) keeps every replica "overloaded" at max, a TTFT
target of 0.5 ms is never met, a 2 µs batching window forms no batch, a profile in seconds
plans for throughput no GPU has.

Run on each environment's merged view, so a value an override sets is reported there.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from inferplane.blueprint.checks.semantic_env import EnvView
from inferplane.blueprint.errors import YamlPath

_LATENCY_METRICS = ("ttft_p95_ms", "p95_latency_ms")
FASTEST_BATCH_MS = 0.1
"""No Triton request completes in under 100 µs: the input's copy to the GPU and the
output's back over PCIe, one kernel launch, and the server's own scheduling each take
microseconds to tens of them. A p95 below it is a measurement in seconds."""
_SHORTEST_WINDOW_US = 10
"""A batching window under 10 µs forms no batch (requests do not arrive that close): such a
value is milliseconds written as microseconds."""


def check_units(env: EnvView) -> None:
    for name, model in (env.data.get("models") or {}).items():
        path: YamlPath = ("models", name)
        _targets(env, path, model)
        _window(env, path, model)
        _profile(env, path, model, (env.data.get("gpu_pools") or {}).get(model["pool"]) or {})


def _targets(env: EnvView, path: YamlPath, model: Mapping[str, Any]) -> None:
    auto = model.get("autoscaling")
    if isinstance(auto, list):
        signals = [((*path, "autoscaling", i), s) for i, s in enumerate(auto)]
    elif auto and "metric" in auto:
        signals = [((*path, "autoscaling"), auto)]
    else:
        signals = []
    for where, signal in signals:
        metric, target = signal["metric"], signal["target"]
        if metric == "gpu_utilization" and target <= 1:
            env.error(
                (*where, "target"),
                f"gpu_utilization {target:g} is {target:g} percent, not a fraction: every "
                "replica is above it whenever the GPU works, so the model stays at "
                "replicas.max",
                f"write the percent: target: {target * 100:g}",
            )
        elif metric in _LATENCY_METRICS and target < 1:
            env.error(
                (*where, "target"),
                f"{metric} {target:g} is {target * 1000:g} µs: no request is served that "
                "fast, so the model stays at replicas.max",
                f"write milliseconds: target: {target * 1000:g} if you meant {target:g} s",
            )


def _window(env: EnvView, path: YamlPath, model: Mapping[str, Any]) -> None:
    window = (model.get("batching") or {}).get("max_queue_delay_us")
    if window is not None and 0 < window < _SHORTEST_WINDOW_US:
        env.error(
            (*path, "batching", "max_queue_delay_us"),
            f"a batching window of {window} µs forms no batch: requests do not arrive "
            "within microseconds of each other",
            f"write microseconds: {window * 1000} if you meant {window} ms, or 0 for no window",
        )


def _profile(
    env: EnvView, path: YamlPath, model: Mapping[str, Any], pool: Mapping[str, Any]
) -> None:
    points = (model.get("profile") or {}).get("points") or []
    where: YamlPath = (*path, "profile", "points")
    for i, point in enumerate(points):
        batch, p95 = point["batch_size"], point["p95_ms"]
        if p95 < FASTEST_BATCH_MS:
            rate = batch * 1000 / p95
            env.error(
                (*where, i, "p95_ms"),
                f"batch {batch} in {p95:g} ms is {rate:,.0f} requests/s on one "
                f"{pool.get('gpu', 'GPU')}, beyond any GPU: a Triton request takes at "
                f"least {FASTEST_BATCH_MS:g} ms (copies over PCIe, a kernel launch, the "
                "server's scheduling)",
                f"write milliseconds: p95_ms: {p95 * 1000:g} if you measured {p95:g} s",
            )
    ordered = sorted(enumerate(points), key=lambda p: p[1]["batch_size"])
    for (_, small), (j, large) in itertools.pairwise(ordered):
        if large["p95_ms"] < small["p95_ms"] * 0.9:
            env.error(
                (*where, j, "p95_ms"),
                f"batch {large['batch_size']} ({large['p95_ms']:g} ms) is faster than batch "
                f"{small['batch_size']} ({small['p95_ms']:g} ms) by more than the "
                "measurement's 10%: a larger batch does more work",
                "measure both again (perf_analyzer, same concurrency and inputs) and check "
                "the columns are batch size and p95 in ms",
            )
