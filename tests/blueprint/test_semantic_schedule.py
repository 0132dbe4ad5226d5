"""`replicas.schedule`: windows with their own minimum per zone. Exact diagnostics."""

from __future__ import annotations

import pytest
from test_semantic import diagnostics
from test_semantic import edit as edit_base

from inferplane.blueprint import wake
from inferplane.blueprint.checks.semantic_vllm import advisories
from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.loading.schema import validate_document
from inferplane.blueprint.model import ScheduleWindow
from inferplane.blueprint.resolution.resolve import resolve

# A realtime chat model in two zones: at night none (it wakes on its HTTP requests), on
# weekdays one warm replica per zone, and two per zone at the Monday peak.
BASE = """\
apiVersion: inferplane/v1
kind: Blueprint
name: demo
environments:
  stg:
    cloud: aws
    region: us-east-1
    zones: [us-east-1a, us-east-1b]
    model_store: s3://models-use1/
    cluster: {create: true}
gpu_pools:
  l4:
    gpu: nvidia-l4
    nodes: {min: 0, max: 4}
models:
  chat:
    server: vllm
    source: llama/
    pool: l4
    replicas:
      min: 0
      max: 6
      schedule:
        - {schedule: "0 7 * * 1-5", duration: 12h, min: 1, timezone: Europe/Berlin}
        - {schedule: "0 9 * * 1", duration: 2h, min: 2}
"""


def edit(old: str, new: str, text: str = BASE) -> str:
    return edit_base(old, new, text)


def test_base_is_valid_and_resolves_each_window_per_zone() -> None:
    doc = load_text(BASE, "bp.yaml")
    assert [d.format() for d in validate_document(doc)] == []
    assert diagnostics(BASE) == []
    chat = resolve(doc, "stg").models["chat"]
    assert chat.schedule == (
        ScheduleWindow("0 7 * * 1-5", 12 * 3600, "Europe/Berlin", min_per_zone=1, replicas=2),
        ScheduleWindow("0 9 * * 1", 2 * 3600, "UTC", min_per_zone=2, replicas=4),
    )
    assert chat.replicas.min == 0


def test_a_window_above_max_is_refused_at_its_min() -> None:
    text = edit("      max: 6\n", "      max: 3\n")
    assert diagnostics(text) == [
        "bp.yaml:25:54: error: models.chat.replicas.schedule[1].min: the window keeps 4 "
        "replicas (2 per zone x 2 zones), more than replicas.max (3); raise replicas.max "
        "to 4 or more, or lower the window's min"
    ]


def test_a_window_that_does_not_raise_the_floor_is_refused() -> None:
    text = edit("      min: 0\n", "      min: 2\n")
    assert diagnostics(text) == [
        "bp.yaml:24:57: error: models.chat.replicas.schedule[0].min: the window keeps 2 "
        "replicas (1 per zone x 2 zones), no more than replicas.min (2) keeps all the time, "
        "so it changes nothing; lower replicas.min to what the model needs outside the "
        "windows (0 lets it scale to zero), or raise the window's min"
    ]


def test_a_bad_cron_expression_and_time_zone_are_located() -> None:
    text = edit('"0 9 * * 1", duration: 2h, min: 2}', '"0 9 * * MON", duration: 25h, min: 2}')
    text = edit("timezone: Europe/Berlin}", "timezone: Europe/Berlni}", text)
    assert diagnostics(text) == [
        "bp.yaml:24:70: error: models.chat.replicas.schedule[0].timezone: unknown time zone "
        "'Europe/Berlni'; use a name of the IANA time zone database, e.g. UTC or "
        "Europe/Berlin",
        "bp.yaml:25:47: error: models.chat.replicas.schedule[1].duration: duration 25h is not "
        "between 1m and 23h59m; a window must end before the next day's start; use a "
        "shorter duration",
        "bp.yaml:25:22: error: models.chat.replicas.schedule[1].schedule: the day-of-week "
        "field 'MON' is not cron syntax; use numbers from 0 to 6, ranges (a-b), lists (a,b), "
        "steps (*/n) or *",
    ]


def test_a_repeated_window_is_refused() -> None:
    text = edit(
        '"0 9 * * 1", duration: 2h, min: 2}',
        '"0 7 * * 1-5", duration: 12h, min: 2, timezone: Europe/Berlin}',
    )
    (found,) = diagnostics(text)
    assert found == (
        "bp.yaml:25:22: error: models.chat.replicas.schedule[1].schedule: window 1 repeats "
        "window 0 (same schedule, duration and time zone); remove one of them; overlapping "
        "windows take the larger min"
    )


def test_wake_and_schedule_together_are_refused() -> None:
    text = edit(
        "      schedule:\n", '      wake: {schedule: "0 2 * * *", duration: 3h}\n      schedule:\n'
    )
    assert diagnostics(text) == [
        "bp.yaml:23:13: error: models.chat.replicas.wake: replicas.wake and replicas.schedule "
        "both bring the model back from its minimum; only one of them may be given; write "
        'the wake window as a window of replicas.schedule (e.g. {schedule: "0 2 * * *", '
        "duration: 3h, min: 1}) and remove replicas.wake"
    ]


def test_a_window_is_a_way_back_for_a_model_that_does_not_serve_http_only() -> None:
    text = edit(
        "    server: vllm\n    source: llama/\n",
        "    server: triton\n    source: chat/model.onnx\n",
    )
    assert diagnostics(text) == []  # Triton serves gRPC too: only the windows bring it back
    without = edit(
        '      schedule:\n        - {schedule: "0 7 * * 1-5", duration: 12h, min: 1,'
        ' timezone: Europe/Berlin}\n        - {schedule: "0 9 * * 1", duration: 2h,'
        " min: 2}\n",
        "",
        text,
    )
    (found,) = diagnostics(without)
    assert found.startswith("bp.yaml:21:12: error: models.chat.replicas.min: at 0 replicas")


def test_the_schema_requires_each_windows_min() -> None:
    text = edit(", duration: 2h, min: 2}", ", duration: 2h}")
    assert [d.format() for d in validate_document(load_text(text, "bp.yaml"))] == [
        "bp.yaml:25:11: error: models.chat.replicas.schedule[1]: missing required key `min`; "
        "add `min:`"
    ]


def warnings(text: str) -> list[str]:
    """The advisories `inferplane validate` prints, less the GPU-fit one of a store source."""
    found = advisories(load_text(text, "bp.yaml"))
    return [d.format() for d in found if "GPU memory fit" not in d.message]


def test_a_window_without_a_time_zone_warns_that_utc_is_assumed() -> None:
    assert warnings(BASE) == [
        "bp.yaml:25:22: warning: models.chat.replicas.schedule[1].schedule: window 1 of "
        "replicas.schedule states no time zone, so its schedule '0 9 * * 1' is read in UTC, "
        "the default; state the zone its hours are meant in by its IANA name, e.g. timezone: "
        "Europe/Berlin, or write timezone: UTC if UTC is meant"
    ]
    stated = edit("duration: 2h, min: 2}", "duration: 2h, min: 2, timezone: UTC}")
    assert warnings(stated) == []


def test_a_wake_schedule_without_a_time_zone_warns_too() -> None:
    text = edit(
        '      schedule:\n        - {schedule: "0 7 * * 1-5", duration: 12h, min: 1,'
        ' timezone: Europe/Berlin}\n        - {schedule: "0 9 * * 1", duration: 2h,'
        " min: 2}\n",
        '      wake: {schedule: "0 2 * * *", duration: 3h}\n',
    )
    assert warnings(text) == [
        "bp.yaml:23:24: warning: models.chat.replicas.wake.schedule: replicas.wake states no "
        "time zone, so its schedule '0 2 * * *' is read in UTC, the default; state the zone "
        "its hours are meant in by its IANA name, e.g. timezone: Europe/Berlin, or write "
        "timezone: UTC if UTC is meant"
    ]


def test_a_window_inside_another_of_no_smaller_floor_is_refused() -> None:
    text = edit(
        '"0 9 * * 1", duration: 2h, min: 2}',
        '"0 9 * * 1", duration: 2h, min: 1, timezone: Europe/Berlin}',
    )
    assert diagnostics(text) == [
        "bp.yaml:25:22: error: models.chat.replicas.schedule[1].schedule: window 1 ('0 9 * * "
        "1' for 2h) lies wholly inside window 0 ('0 7 * * 1-5' for 12h) and keeps no more "
        "replicas (min 1 per zone, against window 0's 1): each window is one metric of the "
        "HPA, which takes the largest, so window 0's floor holds all through window 1 and "
        "window 1 never changes anything; remove window 1, or give it a min above 1 if it is "
        "meant to raise the floor within window 0"
    ]
    # A higher floor inside the window raises it; a window that runs past 19:00 is not
    # inside; nor is one on a Saturday; windows of other time zones are not compared.
    for old, new in (
        ("duration: 2h, min: 1,", "duration: 2h, min: 2,"),
        ('"0 9 * * 1", duration: 2h', '"0 18 * * 1", duration: 2h'),
        ('"0 9 * * 1", duration: 2h', '"0 9 * * 6", duration: 2h'),
        ("min: 1, timezone: Europe/Berlin}\n", "min: 1, timezone: Europe/Paris}\n"),
    ):
        assert diagnostics(edit(old, new, text)) == [], new


def test_the_same_hours_written_twice_are_refused_once() -> None:
    text = edit(
        '"0 9 * * 1", duration: 2h, min: 2}',
        '"0 7 * * 1,2,3,4,5", duration: 12h, min: 1, timezone: Europe/Berlin}',
    )
    (found,) = diagnostics(text)
    assert found.startswith(
        "bp.yaml:25:22: error: models.chat.replicas.schedule[1].schedule: window 1 ('0 7 * * "
        "1,2,3,4,5' for 12h) lies wholly inside window 0 ('0 7 * * 1-5' for 12h)"
    )


@pytest.mark.parametrize(
    ("outer", "inner", "inside"),
    [
        (("0 22 * * *", 6 * 3600), ("0 1 * * *", 3600), True),  # past midnight
        (("0 22 * * 1-5", 6 * 3600), ("0 1 * * 2-6", 3600), True),  # Mon-Fri nights
        (("0 22 * * 1-5", 6 * 3600), ("0 1 * * 1-5", 3600), False),  # Monday 01:00 is not
        (("0 * * * *", 50 * 60), ("10 * * * *", 30 * 60), True),  # hourly
        (("0 * * * *", 50 * 60), ("30 * * * *", 30 * 60), False),
        (("0 0 1 * *", 23 * 3600), ("0 5 1 1 *", 3600), True),  # 1 January is a 1st
        (("0 0 1 * *", 23 * 3600), ("0 5 * * 1", 3600), False),
        (("0 0 1,15 * 1", 23 * 3600), ("0 5 1 * *", 3600), True),  # day-of-month OR weekday
        (("0 0 29 2 *", 23 * 3600), ("0 1 * 2 4", 3600), False),  # not every February
    ],
)
def test_containment_holds_on_every_day_of_the_calendar(
    outer: tuple[str, int], inner: tuple[str, int], inside: bool
) -> None:
    assert wake.contains(outer, inner) is inside
