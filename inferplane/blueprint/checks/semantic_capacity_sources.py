"""Semantic checks of `gpu_pools.<pool>.capacity` as an ordered list of capacity sources.

What the schema cannot say: which sources each cloud has (Capacity Blocks are EC2's,
flex-start is GKE's, a `kubernetes` environment creates no nodes), that a Capacity Block is
either one bought (`id` and `ends`) or an offering to look up (`offering: auto`, `hours`),
that reservations come before the sources that are paid only when used, that each zone of
the pool is served by some source that can launch nodes, and that a reservation names the
zone it holds capacity in. Whether a reservation really is in that zone, for that instance
type, with room for `nodes.min`, is the preflight's question (it needs the cloud's answer).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from inferplane.blueprint.addons import is_existing

if TYPE_CHECKING:
    from inferplane.blueprint.checks.semantic_env import EnvView
    from inferplane.blueprint.errors import YamlPath

AWS_RESERVATION_ID = re.compile(r"^cr-[0-9a-f]{8,17}$")
"""EC2 capacity reservation ids (``cr-`` and 17 hex digits; older ones 8)."""
MARKET = ("flex_start", "on_demand", "spot")
CLOUD_SOURCES = {
    "aws": ("reservation", "capacity_block", "on_demand", "spot"),
    "gcp": ("reservation", "flex_start", "on_demand", "spot"),
    "kubernetes": ("on_demand",),
}
BLOCK_DAILY_HOURS = 336
BLOCK_WEEKLY_HOURS = 4368
BLOCK_MAX_INSTANCES = 64
"""Capacity Block lengths and size, EC2 ``DescribeCapacityBlockOfferings``
(``CapacityDurationHours``: "You must specify the duration in 1-day increments up 14 days,
and in 7-day increments up to 182 days"; ``InstanceCount``: "Each Capacity Block can have
up to 64 instances", AWS SDK for SAP ABAP API reference of the operation,
https://docs.aws.amazon.com/sdk-for-sap-abap/v1/api/latest/ec2/operation/DESCRCAPACITYBLOCKOFFERINGS.html)."""
CLOUD_WORDS = {"aws": "AWS (EKS)", "gcp": "GCP (GKE)", "kubernetes": "a kubernetes environment"}


def _kind(item: Any) -> str:
    if isinstance(item, str):
        return item
    if "reservation" in item:
        return "reservation"
    return "capacity_block" if "capacity_block" in item else ""


def check_capacity_sources(env: EnvView) -> None:
    cloud = env.spec["cloud"]
    karpenter = cloud == "aws" and is_existing(
        ((env.spec.get("cluster") or {}).get("addons") or {}).get("karpenter")
    )
    env_zones = tuple(env.spec.get("zones") or ())
    for name, pool in (env.data.get("gpu_pools") or {}).items():
        raw = pool.get("capacity")
        if not isinstance(raw, list):
            continue
        zones = tuple(pool.get("zones") or env_zones)
        _check_pool(env, name, raw, zones, cloud, karpenter)


def _check_pool(
    env: EnvView,
    name: str,
    items: Sequence[Any],
    zones: tuple[str, ...],
    cloud: str,
    karpenter: bool,
) -> None:
    base: YamlPath = ("gpu_pools", name, "capacity")
    allowed = CLOUD_SOURCES.get(cloud, ())
    seen_market: set[str] = set()
    seen_reservations: set[str] = set()
    first_market: int | None = None
    launch_zones: set[str] = set()
    errors_before = len(env.out)
    for i, item in enumerate(items):
        at: YamlPath = (*base, i)
        kind = _kind(item)
        if isinstance(item, Mapping) and not _one_source(env, at, name, item):
            continue
        if kind not in allowed:
            env.error(
                at,
                f"pool {name!r}: {_what(kind)} is not a capacity source on "
                f"{CLOUD_WORDS.get(cloud, cloud)} (environment {env.name}); it has "
                f"{', '.join(allowed)}",
                _remedy(kind, cloud),
            )
            continue
        if kind in MARKET:
            if kind in seen_market:
                env.error(
                    at,
                    f"pool {name!r} lists `{kind}` twice",
                    "list each of on_demand, spot and flex_start at most once",
                )
            seen_market.add(kind)
            first_market = i if first_market is None else first_market
            launch_zones.update(zones)
            continue
        if first_market is not None:
            env.error(
                at,
                f"pool {name!r}: {_what(kind)} comes after `{items[first_market]}`, "
                "but reservations and Capacity Blocks are paid for whether used or not, so "
                "the nodes must come from them first",
                "move reservations and Capacity Blocks to the top of the list",
            )
        zone = _zone(env, at, name, item, zones)
        if zone is None:
            continue
        if kind == "reservation":
            rid = item["reservation"]
            if cloud == "aws" and not AWS_RESERVATION_ID.match(rid):
                env.error(
                    (*at, "reservation"),
                    f"pool {name!r}: {rid!r} is not an EC2 capacity reservation id",
                    "write the reservation's id, such as cr-0123456789abcdef0 (EC2 console "
                    "> Capacity Reservations)",
                )
            if rid in seen_reservations:
                env.error(
                    (*at, "reservation"),
                    f"pool {name!r} lists reservation {rid!r} twice",
                    "list each reservation once",
                )
            seen_reservations.add(rid)
            launch_zones.add(zone)
            continue
        nodes_max = (env.data["gpu_pools"][name].get("nodes") or {}).get("max")
        if _check_block(env, at, name, item["capacity_block"], karpenter, nodes_max):
            launch_zones.add(zone)
    bare = [z for z in zones if z not in launch_zones]
    if bare and len(env.out) == errors_before:
        env.error(
            base,
            f"pool {name!r} has no capacity source that can launch nodes in zone "
            f"{bare[0]}: its reservations and Capacity Blocks are in other zones, or are "
            "offerings that are not bought",
            f"add a reservation with `zone: {bare[0]}`, or end the list with on_demand or spot",
        )


def _one_source(env: EnvView, at: YamlPath, name: str, item: Mapping[str, Any]) -> bool:
    count = ("reservation" in item) + ("capacity_block" in item)
    if count == 1:
        return True
    env.error(
        at,
        f"pool {name!r}: a capacity source mapping needs exactly one of `reservation` and "
        f"`capacity_block`, this one has {'both' if count else 'neither'}",
        "write each reservation and Capacity Block as a list item of its own",
    )
    return False


def _zone(
    env: EnvView, at: YamlPath, name: str, item: Mapping[str, Any], zones: tuple[str, ...]
) -> str | None:
    zone = item.get("zone")
    if zone is None:
        if len(zones) == 1:
            return zones[0]
        env.error(
            at,
            f"pool {name!r} runs in {len(zones)} zones ({', '.join(zones)}), and a "
            "reservation or Capacity Block holds capacity in one of them",
            "add `zone:` with the zone it holds capacity in",
        )
        return None
    if zone not in zones:
        env.error(
            (*at, "zone"),
            f"pool {name!r} has no nodes in zone {zone!r}; its zones are {', '.join(zones)}",
            "use one of the pool's zones, or add the zone to the pool's `zones`",
        )
        return None
    return str(zone)


def _check_block(
    env: EnvView,
    at: YamlPath,
    name: str,
    block: Mapping[str, Any],
    karpenter: bool,
    nodes_max: Any = None,
) -> bool:
    """Whether the block can launch nodes (bought, or to be bought); errors otherwise."""
    where: YamlPath = (*at, "capacity_block")
    if "id" in block:
        extra = [k for k in ("offering", "hours", "buy") if k in block]
        if extra:
            env.error(
                (*where, extra[0]),
                f"pool {name!r}: a Capacity Block named by `id` is bought already; "
                f"`{extra[0]}` applies only to `offering: auto`",
                f"remove `{extra[0]}`",
            )
        if "ends" not in block:
            env.error(
                where,
                f"pool {name!r}: Capacity Block {block['id']} has no `ends`: EC2 terminates "
                "its instances 30 minutes before the block ends, and the plan must know when",
                "add `ends:` with the block's end time in UTC, e.g. 2026-12-20T11:30:00Z",
            )
        return True
    if block.get("offering") != "auto" or "hours" not in block:
        env.error(
            where,
            f"pool {name!r}: a Capacity Block needs `id` and `ends` (one bought already) or "
            "`offering: auto` and `hours` (one to look up)",
            "add `id` and `ends`, or `offering: auto` and `hours`",
        )
        return False
    if "ends" in block:
        env.error(
            (*where, "ends"),
            f"pool {name!r}: `ends` belongs to a bought block (`id`); an offering's end "
            "follows from `hours`",
            "remove `ends`",
        )
    _check_hours(env, (*where, "hours"), name, block["hours"])
    if block.get("buy") and isinstance(nodes_max, int) and nodes_max > BLOCK_MAX_INSTANCES:
        env.error(
            (*where, "buy"),
            f"pool {name!r} would buy a Capacity Block of {nodes_max} instances (its "
            f"`nodes.max` per zone), and EC2 sells blocks of at most {BLOCK_MAX_INSTANCES}",
            f"lower the pool's `nodes.max` to {BLOCK_MAX_INSTANCES} or less, or buy the "
            "blocks outside the stack and list each with `id` and `ends`",
        )
        return False
    if block.get("buy") and karpenter:
        env.error(
            (*where, "buy"),
            f"pool {name!r}: the cluster's Karpenter selects reservations by id, and a block "
            "bought by the stack has none until it is bought",
            "buy the block first and name it with `id` and `ends`",
        )
        return False
    return bool(block.get("buy"))


def _check_hours(env: EnvView, at: YamlPath, name: str, hours: Any) -> None:
    if not isinstance(hours, int):
        return  # the schema's error
    step = 24 if hours <= BLOCK_DAILY_HOURS else 168
    if hours % step == 0 and hours <= BLOCK_WEEKLY_HOURS:
        return
    lower = max(24, hours - hours % step)
    env.error(
        at,
        f"pool {name!r}: EC2 sells Capacity Blocks of whole days up to 14 days "
        f"({BLOCK_DAILY_HOURS} hours) and of whole weeks up to 182 days "
        f"({BLOCK_WEEKLY_HOURS} hours); {hours} hours is neither",
        f"use {lower} hours, or another multiple of 24 up to {BLOCK_DAILY_HOURS} or of 168 "
        f"up to {BLOCK_WEEKLY_HOURS}",
    )


def _what(kind: str) -> str:
    return {
        "reservation": "a reservation",
        "capacity_block": "a Capacity Block",
        "flex_start": "`flex_start`",
    }.get(kind, f"`{kind}`")


def _remedy(kind: str, cloud: str) -> str:
    if cloud == "kubernetes":
        return (
            "remove `capacity` (or set it to on_demand) for this environment: its nodes "
            "exist already"
        )
    if kind == "capacity_block":
        return (
            "on GKE use a reservation or flex_start; set `capacity` per environment in its "
            "overrides"
        )
    if kind == "flex_start":
        return "on EKS use a Capacity Block (`capacity_block:`) instead"
    return "remove it"


__all__ = ["check_capacity_sources"]
