"""`replicas.wake`: the schedule that brings a model back from zero replicas, and whether a
model at zero has any way back.

A model at zero replicas has no pod, so no series of its own: a KEDA trigger on its own
metrics reads nothing and never activates. It comes back only through

- its own HTTP traffic, held and counted by the KEDA HTTP add-on's interceptor (a model
  that serves only HTTP: `serves_only_http`), or
- a schedule: a KEDA ``cron`` trigger, which takes ``timezone``, ``start``, ``end`` (both
  five-field cron expressions, never equal) and ``desiredReplicas``
  (https://keda.sh/docs/2.20/scalers/cron/). The blueprint names the start and a duration;
  `window_end` computes ``end``.

Everything here is plain text in, plain text out, so `semantic` can judge a blueprint and
the serving components can build the trigger from the same functions.
"""

from __future__ import annotations

import datetime
import functools
import re
import zoneinfo
from dataclasses import dataclass
from typing import Final

DEFAULT_TIMEZONE: Final = "UTC"
FIELDS: Final = ("minute", "hour", "day-of-month", "month", "day-of-week")
_RANGES: Final = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 6))
"""Each field's values as KEDA's cron scaler parses them (robfig/cron v3 ``spec.go``: ``dow =
bounds{0, 6, ...}``; ``parser.go`` refuses 7, "end of range (7) above maximum (6)"), so
Sunday is 0 only."""
_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?$")
_ITEM = re.compile(r"^(\*|\d+(?:-\d+)?)(?:/(\d+))?$")
DAY_MINUTES: Final = 24 * 60
SCHEDULE_TRIGGER_PREFIX: Final = "schedule-"
"""Names of the cron triggers of `replicas.schedule` windows: ``schedule-<index>``, the
window's index in the blueprint (the warm-replicas rule points back at it)."""


class WakeError(ValueError):
    """A schedule or duration that cannot become a cron window: `problem` and `fix`."""

    def __init__(self, problem: str, fix: str) -> None:
        self.problem, self.fix = problem, fix
        super().__init__(f"{problem}; {fix}")


@dataclass(frozen=True)
class CronWindow:
    """What KEDA's cron trigger needs (all strings in its metadata)."""

    timezone: str
    start: str
    end: str


def parse_duration(text: str) -> int:
    """``3h``, ``90m`` or ``1h30m`` -> seconds; more than 0 and less than a day."""
    match = _DURATION.match(text)
    if not text or match is None:
        raise WakeError(f"invalid duration {text!r}", "write hours and minutes, e.g. 3h or 1h30m")
    minutes = int(match.group(1) or 0) * 60 + int(match.group(2) or 0)
    if not 0 < minutes < DAY_MINUTES:
        raise WakeError(
            f"duration {text} is not between 1m and 23h59m",
            "a window must end before the next day's start; use a shorter duration",
        )
    return minutes * 60


def _field_values(text: str, index: int) -> set[int]:
    """The values one cron field allows; `WakeError` when it is not numeric cron syntax."""
    low, high = _RANGES[index]
    values: set[int] = set()
    for item in text.split(","):
        match = _ITEM.match(item)
        if match is None:
            raise WakeError(
                f"the {FIELDS[index]} field {text!r} is not cron syntax",
                f"use numbers from {low} to {high}, ranges (a-b), lists (a,b), steps (*/n) or *",
            )
        span, step = match.group(1), int(match.group(2) or 1)
        first, last = low, high
        if span != "*":
            start, _, end = span.partition("-")
            first, last = int(start), int(end or start)
            if not low <= first <= last <= high:
                raise WakeError(
                    f"the {FIELDS[index]} field {text!r} is outside {low}-{high}",
                    f"use values from {low} to {high}, a range low-high",
                )
        if step < 1:
            raise WakeError(f"the {FIELDS[index]} field {text!r} has step 0", "use a step of 1+")
        values.update(range(first, last + 1, step))
    return values


def _fields(schedule: str) -> list[str]:
    fields = schedule.split()
    if len(fields) != len(FIELDS):
        raise WakeError(
            f"schedule {schedule!r} has {len(fields)} fields, not 5",
            'write minute hour day-of-month month day-of-week, e.g. "0 2 * * *"',
        )
    for i, text in enumerate(fields):
        _field_values(text, i)
    return fields


YEAR_MINUTES: Final = 365 * DAY_MINUTES


def year_share(windows: list[tuple[str, int]]) -> float:
    """The share of a year (365 days from a Monday) that `windows` ((schedule, duration in
    seconds), overlapping or not) cover, as a cron reader counts days: with both
    day-of-month and day-of-week restricted a day matches either (robfig/cron v3
    ``spec.go`` ``dayMatches``, as Vixie cron does); time zones only shift the windows."""
    covered = bytearray(YEAR_MINUTES + DAY_MINUTES)
    for schedule, duration_s in windows:
        minute, hour, dom, month, dow = (
            _field_values(f, i) for i, f in enumerate(_fields(schedule))
        )
        fields = schedule.split()
        dom_any, dow_any = fields[2].startswith("*"), fields[4].startswith("*")
        starts = sorted(h * 60 + m for h in hour for m in minute)
        length = max(1, duration_s // 60)
        for day in range(365):
            month_of, day_of_month = _month_day(day)
            weekday = (day + 1) % 7  # day 0 is a Monday; cron's 0 is Sunday
            in_dom, in_dow = day_of_month in dom, weekday in dow
            matches = in_dom or in_dow if not (dom_any or dow_any) else in_dom and in_dow
            if month_of not in month or not matches:
                continue
            base = day * DAY_MINUTES
            for start in starts:
                covered[base + start : base + start + length] = b"\x01" * length
    return sum(covered[:YEAR_MINUTES]) / YEAR_MINUTES


_MONTH_DAYS: Final = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _month_day(day: int) -> tuple[int, int]:
    """(month 1-12, day of month 1-31) of day `day` (0-based) of a 365-day year."""
    for month, days in enumerate(_MONTH_DAYS, start=1):
        if day < days:
            return month, day + 1
        day -= days
    raise ValueError(day)


def window_end(schedule: str, duration_s: int) -> str:
    """The cron expression of the moment each window of `schedule` closes.

    The start's minute must be one number and its hour one number or ``*`` (hourly), so
    that the end is again one cron expression. A window that crosses midnight ends on the
    next day: day-of-week moves on by one day; day-of-month and month must then be ``*``
    (the day after the 31st is not the 32nd).
    """
    minute, hour, dom, month, dow = _fields(schedule)
    minutes = duration_s // 60
    if not minute.isdigit():
        raise WakeError(
            f"the minute field {minute!r} must be one number",
            'start windows at one minute of the hour, e.g. "0 2 * * *"',
        )
    start_minute = int(minute)
    every_day = (dom, month, dow) == ("*", "*", "*")
    if hour == "*":
        if minutes >= 60:
            raise WakeError(
                "an hourly schedule (hour *) needs a duration under 1h",
                "shorten the duration, or start at one hour of the day",
            )
        crosses = start_minute + minutes >= 60
        if crosses and not every_day:
            raise WakeError(
                "an hourly window that runs into the next hour needs day-of-month, month "
                "and day-of-week *",
                "end windows within the hour, or schedule every day",
            )
        return f"{(start_minute + minutes) % 60} * {dom} {month} {dow}"
    if not hour.isdigit():
        raise WakeError(
            f"the hour field {hour!r} must be one number or *",
            'start windows at one hour of the day, e.g. "0 2 * * *"',
        )
    days, rest = divmod(int(hour) * 60 + start_minute + minutes, DAY_MINUTES)
    end_hour, end_minute = divmod(rest, 60)
    if days == 0 or every_day:
        return f"{end_minute} {end_hour} {dom} {month} {dow}"
    if (dom, month) != ("*", "*"):
        raise WakeError(
            "a window that runs past midnight needs day-of-month and month *",
            "end the window before midnight, or restrict days with day-of-week",
        )
    next_days = sorted({(d + 1) % 7 for d in _field_values(dow, 4)})
    return f"{end_minute} {end_hour} * * {','.join(map(str, next_days))}"


_CYCLE_START: Final = datetime.date(2001, 1, 1)
CYCLE_DAYS: Final = 10_227
"""28 Gregorian years (2001-2028): every pairing of date and weekday recurs in them, and the
cycle repeats unchanged from 1901 to 2099, so what holds on its days holds on every day a
cron reader will meet."""


@functools.cache
def _day_matcher(schedule: str) -> tuple[bool, ...]:
    """For each day of the 28-year cycle, whether `schedule` starts windows on it (the
    day rule of `year_share`)."""
    _, _, dom, month, dow = (_field_values(f, i) for i, f in enumerate(_fields(schedule)))
    fields = schedule.split()
    dom_any, dow_any = fields[2].startswith("*"), fields[4].startswith("*")
    days = []
    for n in range(CYCLE_DAYS):
        day = _CYCLE_START + datetime.timedelta(days=n)
        in_dom, in_dow = day.day in dom, day.isoweekday() % 7 in dow
        matches = in_dom or in_dow if not (dom_any or dow_any) else in_dom and in_dow
        days.append(day.month in month and matches)
    return tuple(days)


def _starts(schedule: str) -> list[int]:
    """The minutes of the day at which `schedule` opens a window."""
    minute, hour = (_field_values(f, i) for i, f in enumerate(_fields(schedule)[:2]))
    return sorted(h * 60 + m for h in hour for m in minute)


def contains(outer: tuple[str, int], inner: tuple[str, int]) -> bool:
    """Whether every window of `inner` ((schedule, duration in seconds), read in the same
    time zone as `outer`) lies wholly within a window of `outer`, on every day of the
    calendar. Exact for every schedule `window_end` accepts (one start minute, one hour or
    every hour, any day-of-month, month and day-of-week), and windows shorter than a day
    or, hourly, than an hour: one window of `outer` ends before its next starts, so an
    inner window is covered by one outer window or not at all. An inner window starting
    at minute `s` of day D is covered by an outer window opened at `o` on D itself
    (``o <= s`` and ``o + outer duration >= s + inner duration``) or on the day before,
    running past midnight (``o + outer duration - 1440 >= s + inner duration``)."""
    (out_schedule, out_s), (in_schedule, in_s) = outer, inner
    out_len, in_len = out_s // 60, in_s // 60
    out_starts = _starts(out_schedule)
    out_days, in_days = _day_matcher(out_schedule), _day_matcher(in_schedule)
    needs = []
    for s in _starts(in_schedule):
        same = any(o <= s and o + out_len >= s + in_len for o in out_starts)
        before = any(o + out_len - DAY_MINUTES >= s + in_len for o in out_starts)
        if not same and not before:
            return False
        needs.append((same, before))
    for day, opens in enumerate(in_days):
        if not opens:
            continue
        today, yesterday = out_days[day], out_days[day - 1]  # the cycle wraps around
        if not all((same and today) or (before and yesterday) for same, before in needs):
            return False
    return True


def timezone_known(name: str) -> bool:
    """Whether `name` is in the IANA time zone database (KEDA loads it with Go's
    ``time.LoadLocation``). Without a local database nothing can be judged: True."""
    known = zoneinfo.available_timezones()
    return not known or name in known


def cron_window(schedule: str, duration_s: int, timezone: str) -> CronWindow:
    return CronWindow(
        timezone=timezone, start=" ".join(schedule.split()), end=window_end(schedule, duration_s)
    )


OWN_HOST: Final = re.compile(
    r"^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\.)+[a-z]([-a-z0-9]{0,61}[a-z0-9])?$"
)
"""A name ``replicas.wake.hosts`` may list (the schema's pattern): a lowercase DNS name of two
labels or more whose last label starts with a letter, so no wildcard, catch-all or IP address,
which the interceptor would match against other routes' requests (http-add-on v0.15.0
``pkg/routing/tablememory.go``)."""
IN_CLUSTER_SUFFIXES: Final = (".svc", ".cluster.local")
"""A Service's DNS names end so (``<service>.<namespace>.svc.cluster.local``,
https://kubernetes.io/docs/concepts/services-networking/dns-pod-service/#services)."""


def own_host(host: str) -> bool:
    """`host` may be routed as a model's own name (`OWN_HOST`, at most 253 characters, not an
    in-cluster Service name)."""
    return (
        len(host) <= 253 and bool(OWN_HOST.match(host)) and not host.endswith(IN_CLUSTER_SUFFIXES)
    )


def serves_only_http(server: str, protocol: str) -> bool:
    """The model's load balancer carries HTTP only (vLLM speaks nothing else), so the HTTP
    add-on's interceptor can hold and count all of its traffic."""
    return server == "vllm" or protocol == "http"


def wakes_on_traffic(
    server: str, protocol: str, min_replicas: int, *, llm_aware: bool = False
) -> bool:
    """A model at zero whose own HTTP traffic wakes it through the interceptor. An
    llm-aware model does not: its router holds the requests (`wakes_in_router_queue`)."""
    return min_replicas == 0 and serves_only_http(server, protocol) and not llm_aware


def wakes_in_router_queue(min_replicas: int, *, llm_aware: bool, flow_control: bool) -> bool:
    """A model at zero that the llm-d router's flow control wakes: the router holds its
    requests in its queue while no replica is ready (llm-d-router v0.10.0
    ``pkg/epp/flowcontrol/README.md``: requests wait in the EPP, bounded by a TTL), and
    KEDA scales from zero on ``llm_d_epp_flow_control_queue_size``. Validation refuses an
    llm-aware model at zero without flow control."""
    return min_replicas == 0 and llm_aware and flow_control


def wake_path(
    server: str,
    protocol: str,
    min_replicas: int,
    *,
    llm_aware: bool = False,
    flow_control: bool = False,
    scheduled: bool = False,
) -> str | None:
    """In words, what brings a model at zero back; None for a model that never is."""
    if min_replicas > 0:
        return None
    if wakes_in_router_queue(min_replicas, llm_aware=llm_aware, flow_control=flow_control):
        return "the router's flow-control queue holds its requests and KEDA scales on it"
    if wakes_on_traffic(server, protocol, min_replicas, llm_aware=llm_aware):
        return "the KEDA HTTP add-on's interceptor holds its HTTP requests and scales on them"
    if scheduled:
        return "its schedule (a KEDA cron trigger)"
    return None
