"""Semantic checks of scaling: autoscaling signals, `replicas.wake`, and the refusal of a
model at zero replicas that has no way back. Exact diagnostics."""

from __future__ import annotations

import os

import pytest
from test_semantic import diagnostics, schema_errors
from test_semantic import edit as edit_base

from inferplane.blueprint import wake

BASE = """\
apiVersion: inferplane/v1
kind: Blueprint
name: demo
environments:
  stg:
    cloud: aws
    region: us-east-1
    zones: [us-east-1a]
    model_store: s3://models-use1/
    cluster: {create: true}
    overrides:
      models:
        chat:
          replicas: {min: 0, max: 2}
gpu_pools:
  l4:
    gpu: nvidia-l4
    nodes: {min: 2, max: 4}
models:
  chat:
    server: vllm
    source: llama/
    pool: l4
    replicas: {min: 2, max: 4}
  embed:
    server: triton
    source: embed/model.onnx
    pool: l4
    latency_class: batch
    replicas:
      min: 0
      max: 2
      wake: {schedule: "0 2 * * *", duration: 3h}
    autoscaling: {metric: queue_depth, target: 64}
"""


def edit(old: str, new: str, text: str = BASE) -> str:
    return edit_base(old, new, text)


def test_base_is_valid() -> None:
    # staging's chat is at zero but serves HTTP (it wakes on its requests); embed has a
    # schedule.
    assert schema_errors(BASE) == []
    assert diagnostics(BASE) == []


def test_a_model_at_zero_without_a_way_back_is_refused_at_its_minimum() -> None:
    text = edit('      wake: {schedule: "0 2 * * *", duration: 3h}\n', "")
    assert diagnostics(text) == [
        "bp.yaml:31:12: error: models.embed.replicas.min: at 0 replicas this model has no "
        "way to wake: it serves both, not HTTP only, and its own metrics vanish with its "
        'last pod; add replicas.wake (e.g. {schedule: "0 2 * * *", duration: 3h}) or '
        "replicas.schedule windows, serve HTTP only (expose.protocol: http), or keep "
        "replicas.min at 1 or more"
    ]


def test_an_override_to_zero_is_refused_at_the_override() -> None:
    text = edit(
        "    replicas: {min: 2, max: 4}\n",
        "    replicas: {min: 2, max: 4}\n    expose: {protocol: grpc}\n",
    )
    text = edit("    server: vllm\n", "    server: triton\n", text)
    text = edit("    source: llama/\n", "    source: chat/model.onnx\n", text)
    assert diagnostics(text) == [
        "bp.yaml:14:27: error: environments.stg.overrides.models.chat.replicas.min: at 0 "
        "replicas this model has no way to wake: it serves grpc, not HTTP only, and its own "
        'metrics vanish with its last pod; add replicas.wake (e.g. {schedule: "0 2 * * *", '
        "duration: 3h}) or replicas.schedule windows, serve HTTP only (expose.protocol: "
        "http), or keep replicas.min at 1 or more"
    ]


def test_a_batch_model_at_its_default_minimum_needs_a_way_back_too() -> None:
    text = edit(
        "    replicas:\n      min: 0\n      max: 2\n"
        '      wake: {schedule: "0 2 * * *", duration: 3h}\n',
        "",
    )
    (found,) = diagnostics(text)
    assert found.startswith(
        "bp.yaml:26:5: error: models.embed.replicas.min: at 0 replicas this model has no way "
        "to wake"
    )


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        (
            "0 2 * *",
            "bp.yaml:33:24: error: models.embed.replicas.wake.schedule: schedule '0 2 * *' has "
            '4 fields, not 5; write minute hour day-of-month month day-of-week, e.g. "0 2 * * *"',
        ),
        (
            # KEDA's cron parser (robfig/cron v3) has Sunday as 0 only: 7 fails the trigger.
            "0 2 * * 7",
            "bp.yaml:33:24: error: models.embed.replicas.wake.schedule: the day-of-week field "
            "'7' is outside 0-6; use values from 0 to 6, a range low-high",
        ),
        (
            "0 25 * * *",
            "bp.yaml:33:24: error: models.embed.replicas.wake.schedule: the hour field '25' is "
            "outside 0-23; use values from 0 to 23, a range low-high",
        ),
        (
            "0 2 * * MON",
            "bp.yaml:33:24: error: models.embed.replicas.wake.schedule: the day-of-week field "
            "'MON' is not cron syntax; use numbers from 0 to 6, ranges (a-b), lists (a,b), "
            "steps (*/n) or *",
        ),
        (
            "*/15 2 * * *",
            "bp.yaml:33:24: error: models.embed.replicas.wake.schedule: the minute field "
            "'*/15' must be one number; start windows at one minute of the hour, e.g. "
            '"0 2 * * *"',
        ),
        (
            "0 22 1 * *",
            "bp.yaml:33:24: error: models.embed.replicas.wake.schedule: a window that runs "
            "past midnight needs day-of-month and month *; end the window before midnight, "
            "or restrict days with day-of-week",
        ),
        (
            "0 * * * *",
            "bp.yaml:33:24: error: models.embed.replicas.wake.schedule: an hourly schedule "
            "(hour *) needs a duration under 1h; shorten the duration, or start at one hour "
            "of the day",
        ),
    ],
)
def test_bad_schedules(schedule: str, message: str) -> None:
    assert diagnostics(edit('schedule: "0 2 * * *"', f'schedule: "{schedule}"')) == [message]


def test_duration_out_of_range() -> None:
    text = edit("duration: 3h}", "duration: 24h}")
    assert diagnostics(text) == [
        "bp.yaml:33:47: error: models.embed.replicas.wake.duration: duration 24h is not "
        "between 1m and 23h59m; a window must end before the next day's start; use a shorter "
        "duration"
    ]


def test_duration_syntax_is_a_schema_error() -> None:
    text = edit("duration: 3h}", "duration: 3 hours}")
    assert schema_errors(text) == [
        'bp.yaml:33:47: error: models.embed.replicas.wake.duration: invalid value "3 hours"; '
        "write hours and minutes, e.g. 3h or 1h30m"
    ]


def test_unknown_time_zone() -> None:
    if not wake.timezone_known("UTC") or wake.timezone_known("Mars/Olympus_Mons"):
        if os.environ.get("CI") == "true":
            pytest.fail("the IANA time zone database is required under CI (Debian tzdata)")
        pytest.skip("no IANA time zone database on this machine")
    text = edit("duration: 3h}", "duration: 3h, timezone: Mars/Olympus_Mons}")
    assert diagnostics(text) == [
        "bp.yaml:33:61: error: models.embed.replicas.wake.timezone: unknown time zone "
        "'Mars/Olympus_Mons'; use a name of the IANA time zone database, e.g. UTC or "
        "Europe/Berlin"
    ]


def test_a_metric_listed_twice() -> None:
    text = edit(
        "autoscaling: {metric: queue_depth, target: 64}",
        "autoscaling: [{metric: queue_depth, target: 64}, {metric: queue_depth, target: 8}]",
    )
    assert diagnostics(text) == [
        "bp.yaml:34:63: error: models.embed.autoscaling[1].metric: queue_depth is listed "
        "twice; list each metric once, with one target"
    ]


def test_ttft_in_a_triton_list() -> None:
    text = edit(
        "autoscaling: {metric: queue_depth, target: 64}",
        "autoscaling: [{metric: queue_depth, target: 64}, {metric: ttft_p95_ms, target: 300}]",
    )
    assert diagnostics(text) == [
        "bp.yaml:34:63: error: models.embed.autoscaling[1].metric: time to first token is a "
        "vLLM (token streaming) signal; use p95_latency_ms or queue_depth for Triton"
    ]


def test_concurrency_on_a_triton_model_without_an_in_flight_batch() -> None:
    text = edit(
        "autoscaling: {metric: queue_depth, target: 64}",
        "autoscaling: {metric: concurrency, target: 8}",
    )
    assert diagnostics(text) == [
        "bp.yaml:34:27: error: models.embed.autoscaling.metric: concurrency counts the "
        "requests in an in-flight batch, which only vLLM and TensorRT-LLM report; use "
        "queue_depth (requests waiting for Triton's batcher) or p95_latency_ms"
    ]


def test_concurrency_on_a_vllm_model_is_valid() -> None:
    text = edit(
        "    replicas: {min: 2, max: 4}\n  embed:",
        "    replicas: {min: 2, max: 4}\n    autoscaling: {metric: concurrency, target: 8}\n"
        "  embed:",
    )
    assert schema_errors(text) == []
    assert diagnostics(text) == []


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            "[{metric: queue_depth}]",
            "bp.yaml:34:19: error: models.embed.autoscaling[0]: missing required key `target`; "
            "add `target:`, e.g. `target: 4`",
        ),
        (
            "[{metric: queue_size, target: 4}]",
            'bp.yaml:34:28: error: models.embed.autoscaling[0].metric: "queue_size" is not one '
            "of queue_depth, concurrency, gpu_utilization, p95_latency_ms, ttft_p95_ms, "
            "router_queue, "
            "router_running, pool_saturation; did you mean `queue_depth`?",
        ),
        (
            "[]",
            "bp.yaml:34:18: error: models.embed.autoscaling: the list is empty; give at least 1 "
            "item",
        ),
        (
            "queue_depth",
            "bp.yaml:34:18: error: models.embed.autoscaling: expected a mapping or a list, got "
            '"queue_depth" (a string); write a mapping with keys such as metric, target, '
            "scale_down_stabilization_s",
        ),
        (
            "{metric: queue_size, target: 4}",
            'bp.yaml:34:27: error: models.embed.autoscaling.metric: "queue_size" is not one of '
            "queue_depth, concurrency, gpu_utilization, p95_latency_ms, ttft_p95_ms, "
            "router_queue, "
            "router_running, pool_saturation; did you mean `queue_depth`?",
        ),
    ],
)
def test_autoscaling_shapes_are_explained_by_the_shape_of_the_value(
    value: str, message: str
) -> None:
    text = edit("autoscaling: {metric: queue_depth, target: 64}", f"autoscaling: {value}")
    assert schema_errors(text) == [message]


def test_a_list_of_signals_is_valid() -> None:
    text = edit(
        "autoscaling: {metric: queue_depth, target: 64}",
        "autoscaling: [{metric: queue_depth, target: 64}, {metric: p95_latency_ms, target: 50}]",
    )
    assert schema_errors(text) == [] and diagnostics(text) == []
