"""`replicas.schedule`: one KEDA cron trigger per window, asking for the window's minimum
per zone times the pool's zones, beside the load signals; the ScaledObject's
minReplicaCount stays the floor outside the windows. Validated against KEDA's CRD."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from crd_schema import errors
from serving_fixtures import args_of, with_model

from inferplane.blueprint.model import Environment, MinMax, ScheduleWindow
from inferplane.components.serving.scaling import autoscaling

NS = "support-assistant"

WEEKDAYS = ScheduleWindow("0 7 * * 1-5", 12 * 3600, "Europe/Berlin", 1, 2)
PEAK = ScheduleWindow("30 22 * * 1", 3 * 3600, "UTC", 2, 4)


def night_chat(env: Environment) -> dict[str, Any]:
    """prod's chat (realtime vLLM, pool l4 in two zones) at 0 outside two windows."""
    env = with_model(env, "chat", replicas=MinMax(0, 8), schedule=(WEEKDAYS, PEAK))
    return autoscaling.scaled_object_spec(*args_of(env, "chat"), NS, "chat")


def test_each_window_is_a_cron_trigger_of_its_floor(
    reference_env: Callable[[str], Environment],
) -> None:
    spec = night_chat(reference_env("prod"))
    assert spec["minReplicaCount"] == 0
    crons = [t for t in spec["triggers"] if t["type"] == "cron"]
    assert crons == [
        {
            "type": "cron",
            "name": "schedule-0",
            "metricType": "AverageValue",
            "metadata": {
                "timezone": "Europe/Berlin",
                "start": "0 7 * * 1-5",
                "end": "0 19 * * 1-5",
                "desiredReplicas": "2",
            },
        },
        {
            "type": "cron",
            "name": "schedule-1",
            "metricType": "AverageValue",
            # Past midnight: the window ends on the next day of the week.
            "metadata": {
                "timezone": "UTC",
                "start": "30 22 * * 1",
                "end": "30 1 * * 2",
                "desiredReplicas": "4",
            },
        },
    ]
    # The load signal stays, so traffic adds replicas above a window's floor.
    assert spec["triggers"][0]["type"] == "prometheus"
    doc = {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject", "spec": spec}
    assert errors(doc) == []


def test_a_window_above_a_warm_minimum_is_rendered_too(
    reference_env: Callable[[str], Environment],
) -> None:
    env = with_model(reference_env("prod"), "chat", replicas=MinMax(2, 8), schedule=(PEAK,))
    spec = autoscaling.scaled_object_spec(*args_of(env, "chat"), NS, "chat")
    assert spec["minReplicaCount"] == 2
    assert [t["name"] for t in spec["triggers"] if t["type"] == "cron"] == ["schedule-0"]


def test_without_a_schedule_there_is_no_cron_trigger(
    reference_env: Callable[[str], Environment],
) -> None:
    spec = autoscaling.scaled_object_spec(*args_of(reference_env("prod"), "chat"), NS, "chat")
    assert not [t for t in spec["triggers"] if t["type"] == "cron"]
