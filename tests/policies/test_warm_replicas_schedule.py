"""warm-replicas with `replicas.schedule`: a realtime model may keep fewer replicas outside
its windows; the warm replicas are owed in each window. Exact findings."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from inferplane.app.check import stack_of
from inferplane.blueprint.model import Environment, MinMax, ScheduleWindow
from inferplane.policies.rules import rule

RULE = rule("warm-replicas")
WEEKDAYS = ScheduleWindow("0 7 * * 1-5", 12 * 3600, "Europe/Berlin", 1, 2)


def chat_at_night(env: Environment, *windows: ScheduleWindow) -> Environment:
    chat = dataclasses.replace(env.models["chat"], replicas=MinMax(0, 8), schedule=windows)
    return dataclasses.replace(env, models={**env.models, "chat": chat})


def test_no_replica_at_night_passes_with_a_warm_window(
    reference_env: Callable[[str], Environment],
) -> None:
    stack = stack_of(chat_at_night(reference_env("prod"), WEEKDAYS))
    assert [f for f in RULE.run(stack) if f.target == "models.chat"] == []


def test_each_window_must_keep_the_warm_replicas(
    reference_env: Callable[[str], Environment],
) -> None:
    stack = stack_of(chat_at_night(reference_env("prod"), WEEKDAYS))
    found = [
        f for f in RULE.run(stack, {"min_warm_replicas_per_zone": 2}) if f.target == "models.chat"
    ]
    assert [(f.field, f.message) for f in found] == [
        (
            ("models", "chat", "replicas", "schedule", 0, "min"),
            "window 0 (0 7 * * 1-5 to 0 19 * * 1-5, Europe/Berlin) keeps 2 warm replicas; a "
            "realtime model needs at least 4 in each window (2 per zone of pool l4: "
            "us-central1-a, us-central1-b), because a cold start on a GPU takes minutes",
        )
    ]


def test_without_windows_a_realtime_model_at_zero_is_still_refused(
    reference_env: Callable[[str], Environment],
) -> None:
    found = [
        f
        for f in RULE.run(stack_of(chat_at_night(reference_env("prod"))))
        if f.target == "models.chat"
    ]
    assert [f.field for f in found] == [("models", "chat", "replicas", "min")]
    assert found[0].message.startswith("keeps 0 warm replicas; a realtime model needs at least 2")


def test_a_window_of_a_minute_a_year_does_not_stand_for_warm_replicas(
    reference_env: Callable[[str], Environment],
) -> None:
    """A schedule must be the model's hours: one minute a year would leave a realtime model
    cold all but that minute, with no waiver."""
    tiny = ScheduleWindow("0 3 1 1 *", 60, "UTC", 1, 2)
    found = [
        f
        for f in RULE.run(stack_of(chat_at_night(reference_env("prod"), tiny)))
        if f.target == "models.chat"
    ]
    assert [(f.field, f.message) for f in found] == [
        (
            ("models", "chat", "replicas", "schedule"),
            "its schedule windows cover 0.0% of the time, and outside them it keeps 0 warm "
            "replicas; a realtime model must keep 2 (1 per zone of pool l4: us-central1-a, "
            "us-central1-b) at least 15% of the time (warm-replicas.min_schedule_share), "
            "because a cold start on a GPU takes minutes: widen the windows to the hours its "
            "users come, or raise replicas.min",
        )
    ]
    # Weekday business hours (12 h x 5, 36% of the time) are a schedule.
    assert [
        f
        for f in RULE.run(stack_of(chat_at_night(reference_env("prod"), WEEKDAYS)))
        if f.target == "models.chat"
    ] == []


def test_year_share_counts_days_as_cron_does() -> None:
    from inferplane.blueprint.wake import year_share

    assert round(year_share([("0 9 * * 1-5", 8 * 3600)]), 4) == 0.2384  # 8 h x 261 weekdays
    assert year_share([("0 7 * * *", 12 * 3600)]) == 0.5
    assert year_share([("* * * * *", 60)]) == 1.0
    # Overlapping windows count once.
    assert year_share([("0 7 * * *", 12 * 3600), ("0 8 * * *", 3600)]) == 0.5


def test_an_llm_aware_model_with_one_replica_per_zone_in_its_window_passes() -> None:
    """llm-aware routing runs one Deployment and ScaledObject per zone, each window trigger
    with the per-zone floor (1): the zones' triggers add up to the warm replicas owed."""
    from pathlib import Path

    from inferplane.blueprint.resolution.resolve import resolve_file

    root = Path(__file__).resolve().parents[2]
    env = resolve_file(root / "blueprints" / "llm-routing.yaml", "prod")
    stack = stack_of(chat_at_night(env, WEEKDAYS))
    assert len(stack.models["chat"].scaled_objects) == 2
    assert [f for f in RULE.run(stack) if f.target == "models.chat"] == []
    found = [
        f for f in RULE.run(stack, {"min_warm_replicas_per_zone": 2}) if f.target == "models.chat"
    ]
    assert [(f.field, f.message) for f in found] == [
        (
            ("models", "chat", "replicas", "schedule", 0, "min"),
            "window 0 (0 7 * * 1-5 to 0 19 * * 1-5, Europe/Berlin) keeps 2 warm replicas; a "
            "realtime model needs at least 4 in each window (2 per zone of pool l4: "
            "eu-west-1a, eu-west-1b), because a cold start on a GPU takes minutes",
        )
    ]


def test_each_zone_of_an_llm_aware_model_is_read_from_its_own_scaled_object() -> None:
    """The warm replicas a zone's nodes must hold: an llm-aware model's zone reads its own
    Deployment's ScaledObject (not the zones' sum divided back), a one-Deployment model's
    minimum is split by `zone_share`, the fullest zone."""
    from pathlib import Path

    from inferplane.blueprint.model import zone_share
    from inferplane.blueprint.resolution.resolve import resolve_file
    from inferplane.policies.stack import min_replicas, zone_min_replicas

    root = Path(__file__).resolve().parents[2]
    routed = stack_of(resolve_file(root / "blueprints" / "llm-routing.yaml", "prod"))
    chat = routed.models["chat"]
    zones = routed.pool_zones("l4")
    assert min_replicas(chat)[0] == 2
    assert [zone_min_replicas(chat, z, len(zones)) for z in zones] == [1, 1]
    spread = stack_of(resolve_file(root / "blueprints" / "support-assistant.yaml", "prod"))
    ranker = spread.models["ranker"]
    assert len(ranker.scaled_objects) == 1
    assert zone_min_replicas(ranker, "us-central1-a", 2) == zone_share(2, 2) == 1
