"""The capacity preflight: what the cloud answers about a pool's capacity sources, judged
against the blueprint before anything is created.

`inferplane.components.capacity_preflight` asks the cloud (provider invokes, which
``pulumi preview`` runs with the stack's credentials) and hands the plain answers
(`PoolAnswers`) to `judge`; the judged rows go into the `naming.PREFLIGHT_CONFIGMAP`
ConfigMap, where the CrossGuard rules read them (they never see the blueprint). Offline no
cloud answers, so nothing is judged and plan.json says ``not checked`` and why
(`inferplane.app.plan_sources`), unless the offline run is handed recorded answers.

What is judged, per pool, zone and source (each problem names the rule that reports it):

- ``capacity-offered``: the cloud offers the instance type in the zone (EC2
  ``DescribeInstanceTypeOfferings`` with location type ``availability-zone``; Compute Engine's
  machine types of the zone).
- ``capacity-quota``: the region's vCPU quota of the instance family, for the market of each
  on-demand or spot source, holds ``nodes.max`` plus the update surge in every zone of every
  pool of that family, at the type's vCPUs (`SURGE_NODES_PER_GROUP`).
- ``reservation-zone``: a Capacity Block given by id (AWS) or a specific reservation (GCP) is
  in the zone its source names.
- ``reservation-floor``: a GCP specific reservation holds at least the zone's ``nodes.min``
  machines. (AWS On-Demand Capacity Reservations: not checked, the pinned provider has no
  data source for them.)
- ``capacity-block-window``: a Capacity Block given by id covers the next window of every
  ``replicas.schedule`` of the models on the pool.

The spot price per zone is kept for the record; it refuses nothing.
"""

from __future__ import annotations

import datetime as dt
import math
import zoneinfo
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from inferplane.blueprint.model import CapacitySource, Environment, GpuPool
from inferplane.blueprint.wake import _CYCLE_START, _day_matcher, _starts

OFFERER = {"aws": "EC2", "gcp": "Compute Engine"}
"""Who offers the instance types, in messages."""

BLOCK_USABLE_STATES = ("active", "scheduled", "payment-pending")
"""The Capacity Block states nodes can launch into now or once it starts (pulumi-aws 7.51.1
``ec2/get_capacity_block_reservation.py``, ``state``: "One of `active`, `expired`,
`cancelled`, `pending`, `failed`, `scheduled`, `payment-pending`, `payment-failed`, or
`assessing`"); the others have ended, failed, or are not a purchase yet."""

SURGE_NODES_PER_GROUP = 2
"""Nodes an EKS managed node group may add beyond its maximum while it updates: EKS raises
the Auto Scaling group's maximum "by the larger of either: up to twice the number of
Availability Zones that the Auto Scaling group is deployed in [or] the maximum unavailable
of upgrade" (EKS User Guide, "Managed node update behavior", scale up phase). Each group is
in one zone with ``maxUnavailable: 1`` (`inferplane.components.node_pool`): max(2 × 1, 1)."""

QUOTAS: Mapping[tuple[str, str], str] = {
    ("p", "on_demand"): "Running On-Demand P instances",
    ("g", "on_demand"): "Running On-Demand G and VT instances",
    ("p", "spot"): "All P Spot Instance Requests",
    ("g", "spot"): "All G and VT Spot Instance Requests",
}
"""EC2 vCPU quota names (service code ``ec2``) by instance family and market: the spot names
are listed in the EC2 User Guide, "Spot Instance quotas"; the on-demand ones in the Service
Quotas console's EC2 list ("Running On-Demand P instances"). Each counts vCPUs across the
region."""

QUOTA_MARKETS = ("on_demand", "spot")
"""Sources whose nodes count against a quota that `capacity-quota` judges. An instance in an
On-Demand Capacity Reservation is an on-demand instance too, but whether it counts is not
judged here; a Capacity Block's instances are its own."""

OK = "ok"
REFUSED = "refused"
NOT_CHECKED = "not checked"
PARTLY_CHECKED = "partly checked"
"""Some answers came and refused nothing; what could not be checked is in ``not_checked``."""


def quota_name(instance_type: str, market: str) -> str | None:
    """The vCPU quota `instance_type`'s nodes count against in `market`; None for a family
    `QUOTAS` does not list."""
    family = instance_type[:1].lower()
    return QUOTAS.get((family, market))


@dataclass(frozen=True)
class PoolAnswers:
    """What the cloud answered for one pool (None: not asked, or no answer)."""

    offered_zones: tuple[str, ...] | None = None
    """Zones where the instance type is offered."""
    vcpus: int | None = None
    """The instance type's default vCPUs."""
    quotas: Mapping[str, float] = field(default_factory=dict)
    """Quota name -> its value in vCPUs."""
    blocks: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Capacity Block id -> ``availabilityZone``, ``instanceCount``, ``startDate``,
    ``endDate`` (RFC 3339), ``state``."""
    spot_prices: Mapping[str, str] = field(default_factory=dict)
    """Zone -> the current spot price (USD per hour)."""
    reservations: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """GCP reservation name -> ``zone``, ``count``, ``inUseCount``, ``status``."""


def _parse_time(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def next_window(
    schedule: str, duration_s: int, timezone: str, after: dt.datetime
) -> tuple[dt.datetime, dt.datetime] | None:
    """The first window of `schedule` (read in `timezone`) that opens at or after `after`,
    as (start, end) in UTC; None when none opens within 400 days."""
    tz = zoneinfo.ZoneInfo(timezone)
    local = after.astimezone(tz)
    days = _day_matcher(schedule)
    starts = _starts(schedule)
    # `_day_matcher` indexes days from the 28-year cycle's first day.
    for offset in range(400):
        day = local.date() + dt.timedelta(days=offset)
        if not days[(day - _CYCLE_START).days % len(days)]:
            continue
        for minute in starts:
            start = dt.datetime.combine(day, dt.time(minute // 60, minute % 60), tzinfo=tz)
            if start >= local:
                utc = start.astimezone(dt.UTC)
                return utc, utc + dt.timedelta(seconds=duration_s)
    return None


def _problem(rule: str, source: CapacitySource, message: str) -> dict[str, Any]:
    return {"rule": rule, "path": list(source.path), "message": message}


def _quota_needs(env: Environment, answers: Mapping[str, PoolAnswers]) -> dict[str, float]:
    """Per quota name: the vCPUs all pools' on-demand or spot sources may hold at once."""
    needs: dict[str, float] = {}
    if env.cloud != "aws":
        return needs
    # With the cluster's Karpenter no managed node group updates: its NodePools launch
    # within their `limits` (`inferplane.components.karpenter`), so no surge is added.
    surge = 0 if env.cluster.addons.karpenter.existing else SURGE_NODES_PER_GROUP
    for name, pool in env.pools.items():
        vcpus = answers.get(name, PoolAnswers()).vcpus
        for market in QUOTA_MARKETS:
            quota = quota_name(pool.instance_type, market)
            zones = [z for z in pool.zones if any(s.kind == market for s in pool.sources_in(z))]
            if not (quota and zones):
                continue
            if not vcpus:
                # A pool of the same quota whose size is unknown: the sum would be short.
                needs[quota] = float("nan")
                continue
            nodes = len(zones) * (pool.nodes.max + surge)
            needs[quota] = needs.get(quota, 0) + nodes * vcpus
    return needs


def judge(
    env: Environment, answers: Mapping[str, PoolAnswers], now: dt.datetime
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Pool -> zone -> one row per source of the zone, in order: ``source``, ``status``
    (``ok``, ``refused``, ``partly checked`` or ``not checked``), ``checked`` and
    ``not_checked`` (what was and was not asked), ``problems`` (rule, YAML path, message) and
    ``reason`` where nothing could be checked; ``spot_usd_per_hour`` on spot rows."""
    needs = _quota_needs(env, answers)
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for name, pool in sorted(env.pools.items()):
        if not pool.capacity_sources:
            continue
        got = answers.get(name)
        out[name] = {
            zone: [_row(env, pool, zone, s, got, needs, now) for s in pool.sources_in(zone)]
            for zone in pool.zones
        }
    return out


def _row(
    env: Environment,
    pool: GpuPool,
    zone: str,
    source: CapacitySource,
    got: PoolAnswers | None,
    needs: Mapping[str, float],
    now: dt.datetime,
) -> dict[str, Any]:
    row: dict[str, Any] = {"source": source.kind}
    if source.reservation:
        row["reservation"] = source.reservation
    if got is None:
        return {**row, "status": NOT_CHECKED, "reason": "the cloud was not asked about this pool"}
    problems: list[dict[str, Any]] = []
    checked: list[str] = []
    unchecked: list[str] = []
    if got.offered_zones is not None and source.kind != "capacity_block":
        checked.append("offered")
        if zone not in got.offered_zones:
            problems.append(
                _problem(
                    "capacity-offered",
                    source,
                    f"pool {pool.name}: {OFFERER[env.cloud]} does not offer "
                    f"{pool.instance_type} in {zone} "
                    f"(offered in: {', '.join(sorted(got.offered_zones)) or 'no zone'}); "
                    "move the pool to zones that offer it, or pick another instance type",
                )
            )
    if source.kind in QUOTA_MARKETS and env.cloud == "aws":
        _judge_quota(pool, source, got, needs, problems, checked, unchecked)
    elif source.kind in QUOTA_MARKETS:
        unchecked.append(
            "the region's GPU quota (not asked on GCP: the quota ids per GPU model that "
            "pulumi-gcp 10.2.0's cloudquota.get_s_quota_info takes are not mapped yet)"
        )
    if source.kind == "capacity_block" and source.reservation:
        _judge_block(env, pool, zone, source, got, now, problems, checked, unchecked)
    elif source.kind == "reservation" and env.cloud == "gcp":
        _judge_reservation(pool, zone, source, got, problems, checked, unchecked)
    elif source.kind == "reservation":
        unchecked.append(
            "an On-Demand Capacity Reservation's zone and free count (pulumi-aws 7.51.1 has "
            "no data source for one: ec2.get_capacity_block_reservation returns Capacity "
            "Blocks only)"
        )
    if source.kind == "spot" and zone in got.spot_prices:
        row["spot_usd_per_hour"] = got.spot_prices[zone]
    if problems:
        row["status"] = REFUSED
    elif unchecked:
        row["status"] = PARTLY_CHECKED if checked else NOT_CHECKED
    else:
        row["status"] = OK if checked else NOT_CHECKED
    row["checked"] = checked
    if problems:
        row["problems"] = problems
    if unchecked:
        row["not_checked"] = unchecked
    return row


def _judge_quota(
    pool: GpuPool,
    source: CapacitySource,
    got: PoolAnswers,
    needs: Mapping[str, float],
    problems: list[dict[str, Any]],
    checked: list[str],
    unchecked: list[str],
) -> None:
    quota = quota_name(pool.instance_type, source.kind)
    if quota is None:
        unchecked.append(f"the quota of {pool.instance_type} (a family with no known quota)")
        return
    if quota not in got.quotas or not got.vcpus:
        unchecked.append(f"quota {quota!r} (no answer)")
        return
    if math.isnan(needs.get(quota, 0)):  # a pool's vCPUs are unknown
        unchecked.append(
            f"quota {quota!r} (another pool on it got no vCPU answer, so its sum is unknown)"
        )
        return
    checked.append("quota")
    value, need = got.quotas[quota], needs.get(quota, 0)
    if need > value:
        problems.append(
            _problem(
                "capacity-quota",
                source,
                f"pool {pool.name}: the environment's {source.kind} nodes under quota "
                f"{quota!r} may need {need:g} vCPUs ({pool.instance_type} has {got.vcpus}; "
                f"nodes.max {pool.nodes.max} plus {SURGE_NODES_PER_GROUP} for an update, "
                f"per zone), more than the quota of {value:g}; ask AWS to raise the quota "
                "(Service Quotas, service ec2), or lower nodes.max",
            )
        )


def _judge_reservation(
    pool: GpuPool,
    zone: str,
    source: CapacitySource,
    got: PoolAnswers,
    problems: list[dict[str, Any]],
    checked: list[str],
    unchecked: list[str],
) -> None:
    """A GCP specific reservation, looked up in the source's zone (``compute.get_reservation``
    takes the zone)."""
    found = got.reservations.get(str(source.reservation))
    if found is None:
        unchecked.append(f"reservation {source.reservation} (no answer)")
        return
    # Looked up by the source's zone: an answer in another zone cannot come back (the
    # provider fails the lookup instead), so the zone is only checked where one is named.
    where = str(found.get("zone") or "").rsplit("/", 1)[-1]
    if where:
        checked.append("zone")
    else:
        unchecked.append(f"reservation {source.reservation}'s zone (no answer)")
    if where and where != zone:
        problems.append(
            _problem(
                "reservation-zone",
                source,
                f"pool {pool.name}: reservation {source.reservation} is in {where}, not "
                f"{zone}: the zone's node pool cannot consume it; set the source's `zone:` "
                f"to {where}, or reserve in {zone}",
            )
        )
    count = found.get("count")
    if count is None:
        unchecked.append(f"reservation {source.reservation}'s count (no answer)")
        return
    checked.append("floor")
    if int(count) < pool.nodes.min:
        in_use = found.get("inUseCount")
        used = f", {in_use} in use" if in_use is not None else ""
        problems.append(
            _problem(
                "reservation-floor",
                source,
                f"pool {pool.name}: reservation {source.reservation} holds {count} "
                f"machine(s){used}, fewer than the zone's nodes.min {pool.nodes.min}: the "
                "floor's other nodes would come from the next source, or not at all; "
                "reserve at least nodes.min machines, or lower nodes.min",
            )
        )


def _judge_block(
    env: Environment,
    pool: GpuPool,
    zone: str,
    source: CapacitySource,
    got: PoolAnswers,
    now: dt.datetime,
    problems: list[dict[str, Any]],
    checked: list[str],
    unchecked: list[str],
) -> None:
    block = got.blocks.get(str(source.reservation))
    if block is None:
        unchecked.append(f"Capacity Block {source.reservation} (no answer)")
        return
    where = str(block.get("availabilityZone") or "")
    if where:
        checked.append("zone")
    else:
        unchecked.append(f"Capacity Block {source.reservation}'s zone (no answer)")
    if where and where != zone:
        problems.append(
            _problem(
                "reservation-zone",
                source,
                f"pool {pool.name}: Capacity Block {source.reservation} is in {where}, not "
                f"{zone}: the zone's node group cannot launch into it; set the source's "
                f"`zone:` to {where}, or list a block bought in {zone}",
            )
        )
    state = block.get("state")
    if state is None:
        unchecked.append(f"Capacity Block {source.reservation}'s state (no answer)")
    else:
        checked.append("state")
        if str(state) not in BLOCK_USABLE_STATES:
            problems.append(
                _problem(
                    "capacity-block-window",
                    source,
                    f"pool {pool.name}: Capacity Block {source.reservation} is {state}: no "
                    "node can launch into it; remove the source, or list a block that is "
                    f"{', '.join(BLOCK_USABLE_STATES)}",
                )
            )
    if not block.get("endDate"):
        unchecked.append(f"Capacity Block {source.reservation}'s window (no end date)")
        return
    start = _parse_time(str(block.get("startDate") or block["endDate"]))
    end = _parse_time(str(block["endDate"]))
    checked.append("end")
    if end <= now:
        problems.append(
            _problem(
                "capacity-block-window",
                source,
                f"pool {pool.name}: Capacity Block {source.reservation} ended "
                f"{end:%Y-%m-%dT%H:%MZ}: no node can launch into it; remove the source, or "
                "list a block that runs past today",
            )
        )
        return
    windows = [
        window
        for model in env.models.values()
        if model.pool == pool.name
        for window in model.schedule
    ]
    if windows:
        checked.append("window")
    for model in env.models.values():
        if model.pool != pool.name:
            continue
        for window in model.schedule:
            found = next_window(
                window.schedule, window.duration_s, window.timezone, max(now, start)
            )
            if found is not None and found[1] > end:
                problems.append(
                    _problem(
                        "capacity-block-window",
                        source,
                        f"pool {pool.name}: Capacity Block {source.reservation} ends "
                        f"{end:%Y-%m-%dT%H:%MZ}, before model {model.name}'s schedule "
                        f"window {window.schedule!r} ({window.timezone}) next closes at "
                        f"{found[1]:%Y-%m-%dT%H:%MZ}; buy a block that runs past it, or let "
                        "the next source carry the window",
                    )
                )


def problems_of(rows: Mapping[str, Any]) -> Sequence[tuple[str, str, dict[str, Any]]]:
    """(pool, zone, problem) for every problem in judged `rows` (`judge`'s result)."""
    out = []
    for pool, zones in rows.items():
        for zone, sources in (zones or {}).items():
            for row in sources or []:
                for problem in row.get("problems") or []:
                    out.append((str(pool), str(zone), dict(problem)))
    return out


__all__ = [
    "NOT_CHECKED",
    "OK",
    "PARTLY_CHECKED",
    "QUOTAS",
    "REFUSED",
    "SURGE_NODES_PER_GROUP",
    "PoolAnswers",
    "judge",
    "next_window",
    "problems_of",
    "quota_name",
]
