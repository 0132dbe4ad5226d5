"""Semantic checks of how a model scales: its autoscaling signals and its way back from zero.

Run by `inferplane.blueprint.checks.semantic.check` on each environment's merged view, so a
problem an override introduces (``replicas: {min: 0}`` in staging) is reported at the
override's line.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from inferplane.blueprint import defaults, wake
from inferplane.blueprint.errors import YamlPath

if TYPE_CHECKING:
    from inferplane.blueprint.checks.semantic_env import EnvView


class Reporter(Protocol):
    """The part of semantic's per-environment view these checks use."""

    def error(self, path: YamlPath, message: str, hint: str) -> None: ...


def check_model(env: Reporter, path: YamlPath, model: Mapping[str, Any], zones: int = 1) -> None:
    """Every scaling problem of one model (already schema-valid); `zones`: its pool's."""
    _signals(env, path, model)
    replicas = model.get("replicas") or {}
    spec = replicas.get("wake") or {}
    schedule = spec if "schedule" in spec else None  # `hosts` alone wakes nothing
    if ("schedule" in spec) != ("duration" in spec):
        # The schema requires both together; an override may still bring one of them to a
        # base `wake` that has only `hosts`.
        given, needed = ("schedule", "duration") if schedule else ("duration", "schedule")
        env.error(
            (*path, "replicas", "wake", given), f"`{given}` needs `{needed}`", f"add `{needed}:`"
        )
        schedule = None
    if schedule is not None:
        _wake(env, (*path, "replicas", "wake"), schedule)
    server = model["server"]
    protocol = (model.get("expose") or {}).get("protocol", defaults.EXPOSE_BY_SERVER[server])
    minimum, maximum = defaults.model_replicas(model, zones)
    windows = replicas.get("schedule") or []
    if windows:
        _windows(env, (*path, "replicas"), windows, minimum, maximum, zones)
        if schedule is not None:
            env.error(
                (*path, "replicas", "wake"),
                "replicas.wake and replicas.schedule both bring the model back from its "
                "minimum; only one of them may be given",
                "write the wake window as a window of replicas.schedule (e.g. "
                '{schedule: "0 2 * * *", duration: 3h, min: 1}) and remove replicas.wake',
            )
    if (
        minimum == 0
        and schedule is None
        and not windows
        and not wake.serves_only_http(server, protocol)
    ):
        env.error(
            (*path, "replicas", "min"),
            f"at 0 replicas this model has no way to wake: it serves {protocol}, not HTTP "
            "only, and its own metrics vanish with its last pod",
            'add replicas.wake (e.g. {schedule: "0 2 * * *", duration: 3h}) or '
            "replicas.schedule windows, serve HTTP only (expose.protocol: http), or keep "
            "replicas.min at 1 or more",
        )


def _signals(env: Reporter, path: YamlPath, model: Mapping[str, Any]) -> None:
    auto = model.get("autoscaling")
    if isinstance(auto, list):
        entries = [((*path, "autoscaling", i, "metric"), s["metric"]) for i, s in enumerate(auto)]
    elif auto and "metric" in auto:
        entries = [((*path, "autoscaling", "metric"), auto["metric"])]
    else:
        entries = []
    seen: set[str] = set()
    for where, metric in entries:
        if metric in seen:
            env.error(
                where,
                f"{metric} is listed twice",
                "list each metric once, with one target",
            )
        seen.add(metric)
        # TensorRT-LLM exports it when streaming: semantic_trtllm judges those.
        if model["server"] != "vllm" and "tensorrt_llm" not in model and metric == "ttft_p95_ms":
            env.error(
                where,
                "time to first token is a vLLM (token streaming) signal",
                "use p95_latency_ms or queue_depth for Triton",
            )
        if model["server"] != "vllm" and "tensorrt_llm" not in model and metric == "concurrency":
            env.error(
                where,
                "concurrency counts the requests in an in-flight batch, which only vLLM and "
                "TensorRT-LLM report",
                "use queue_depth (requests waiting for Triton's batcher) or p95_latency_ms",
            )


def _windows(
    env: Reporter,
    path: YamlPath,
    windows: list[Mapping[str, Any]],
    minimum: int,
    maximum: int,
    zones: int,
) -> None:
    """Each window of `replicas.schedule`: a valid cron window, and a floor that means
    something: above `replicas.min` (else the window changes nothing), within `max`."""
    seen: dict[tuple[str, str, str], int] = {}
    for i, window in enumerate(windows):
        where: YamlPath = (*path, "schedule", i)
        _wake(env, where, window)
        floor = window["min"] * zones
        each = f"{window['min']} per zone x {zones} zone{'s' if zones != 1 else ''}"
        if floor > maximum:
            env.error(
                (*where, "min"),
                f"the window keeps {floor} replicas ({each}), more than replicas.max ({maximum})",
                f"raise replicas.max to {floor} or more, or lower the window's min",
            )
        elif floor <= minimum:
            env.error(
                (*where, "min"),
                f"the window keeps {floor} replicas ({each}), no more than replicas.min "
                f"({minimum}) keeps all the time, so it changes nothing",
                "lower replicas.min to what the model needs outside the windows (0 lets it "
                "scale to zero), or raise the window's min",
            )
        key = (
            " ".join(str(window["schedule"]).split()),
            str(window["duration"]),
            str(window.get("timezone", wake.DEFAULT_TIMEZONE)),
        )
        if key in seen:
            env.error(
                (*where, "schedule"),
                f"window {i} repeats window {seen[key]} (same schedule, duration and time zone)",
                "remove one of them; overlapping windows take the larger min",
            )
        seen.setdefault(key, i)
    _contained(env, path, windows)


def _window_spec(window: Mapping[str, Any]) -> tuple[str, int, str] | None:
    """(schedule, duration in seconds, time zone) of a window `_wake` accepts; else None."""
    try:
        duration_s = wake.parse_duration(window["duration"])
        wake.window_end(window["schedule"], duration_s)
    except wake.WakeError:
        return None
    schedule = " ".join(str(window["schedule"]).split())
    return schedule, duration_s, str(window.get("timezone", wake.DEFAULT_TIMEZONE))


def _contained(env: Reporter, path: YamlPath, windows: list[Mapping[str, Any]]) -> None:
    """A window that lies wholly inside another of no smaller floor changes nothing: each
    window is a KEDA cron trigger, each trigger one metric of the model's HPA, and the HPA
    scales to the largest replica count its metrics propose
    (https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/#algorithm-details).
    Only windows read in the same time zone are compared (`wake.contains`); exact repeats
    are reported by `_windows`."""
    specs = [_window_spec(w) for w in windows]
    for i, (inner, spec) in enumerate(zip(windows, specs, strict=True)):
        for j, (outer, other) in enumerate(zip(windows, specs, strict=True)):
            if spec is None or other is None or i == j or spec[2] != other[2] or spec == other:
                continue
            if outer["min"] < inner["min"] or not wake.contains(other[:2], spec[:2]):
                continue
            if outer["min"] == inner["min"] and i < j and wake.contains(spec[:2], other[:2]):
                continue  # the same hours written twice: only the later one is reported
            env.error(
                (*path, "schedule", i, "schedule"),
                f"window {i} ({spec[0]!r} for {inner['duration']}) lies wholly inside window "
                f"{j} ({other[0]!r} for {outer['duration']}) and keeps no more replicas "
                f"(min {inner['min']} per zone, against window {j}'s {outer['min']}): each "
                "window is one metric of the HPA, which takes the largest, so window "
                f"{j}'s floor holds all through window {i} and window {i} never changes "
                "anything",
                f"remove window {i}, or give it a min above {outer['min']} if it is meant to "
                f"raise the floor within window {j}",
            )
            break


def _wake(env: Reporter, path: YamlPath, spec: Mapping[str, Any]) -> None:
    try:
        duration_s = wake.parse_duration(spec["duration"])
    except wake.WakeError as e:
        env.error((*path, "duration"), e.problem, e.fix)
        duration_s = None
    try:
        if duration_s is None:
            wake.window_end(spec["schedule"], 60)  # the schedule's own syntax
        else:
            wake.window_end(spec["schedule"], duration_s)
    except wake.WakeError as e:
        env.error((*path, "schedule"), e.problem, e.fix)
    timezone = spec.get("timezone", wake.DEFAULT_TIMEZONE)
    if not wake.timezone_known(timezone):
        env.error(
            (*path, "timezone"),
            f"unknown time zone {timezone!r}",
            "use a name of the IANA time zone database, e.g. UTC or Europe/Berlin",
        )


def findings(env: EnvView) -> Iterator[tuple[YamlPath, str, str]]:
    """Advisories (printed by ``inferplane validate`` as warnings): a window or wake
    schedule that states no time zone. KEDA's cron trigger needs one
    (https://keda.sh/docs/2.20/scalers/cron/: ``timezone``, an IANA name, is required), and
    inferplane writes UTC when the blueprint gives none: right for a team that means UTC,
    an hour or more off for one that wrote its office hours."""
    for name, model in (env.data.get("models") or {}).items():
        replicas = model.get("replicas") or {}
        path: YamlPath = ("models", name, "replicas")
        spec = replicas.get("wake") or {}
        dated = [((*path, "wake"), "replicas.wake", spec)] if "schedule" in spec else []
        for i, window in enumerate(replicas.get("schedule") or []):
            dated.append(((*path, "schedule", i), f"window {i} of replicas.schedule", window))
        for where, what, window in dated:
            if "timezone" in window:
                continue
            schedule = " ".join(str(window["schedule"]).split())
            yield (
                (*where, "schedule"),
                f"{what} states no time zone, so its schedule {schedule!r} is read in "
                f"{wake.DEFAULT_TIMEZONE}, the default",
                "state the zone its hours are meant in by its IANA name, e.g. timezone: "
                "Europe/Berlin, or write timezone: UTC if UTC is meant",
            )
