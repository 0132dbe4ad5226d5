"""Zones that exist, and GPUs that exist in them: what the cloud's API would refuse on the
first ``pulumi up``, said at the zone.

GCP names its zones the same for every project, so a table can say which zones a region has
and which of them offer each GPU (``gcp_zones.json``, with its sources and the day it was
read): a zone the region does not have, or a GPU pool in a zone that does not offer the
pool's GPU, is refused here. A region or GPU the table does not list is not checked (the
table may be older than the cloud).

AWS maps zone names (``us-east-1a``) to different physical zones in each account of its
oldest regions, and which zones offer an instance type differs by account too
(https://docs.aws.amazon.com/ram/latest/userguide/working-with-az-ids.html), so GPU offers
are not checked there. Which names a region can have is known, though: ``aws_zones.json``
lists, per region, the letters up to its highest AZ ID (six in us-east-1: a to f), the most
any account sees, so a zone outside them (``us-east-1g``) is refused and none that an
account has is. The name's form and region prefix are checked first
(`semantic_environment.check_region_and_zones`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from importlib import resources
from typing import Any

from inferplane.blueprint import naming
from inferplane.blueprint.checks.semantic_env import EnvView
from inferplane.blueprint.checks.semantic_environment import zone_pattern
from inferplane.blueprint.errors import YamlPath

TABLE_FILE = "gcp_zones.json"
AWS_TABLE_FILE = "aws_zones.json"


@functools.cache
def table() -> Mapping[str, Any]:
    """``gcp_zones.json``: ``zones`` (region -> zones) and ``gpus`` (GPU -> zones)."""
    text = resources.files("inferplane.blueprint.upstream").joinpath(TABLE_FILE).read_text()
    data: Mapping[str, Any] = json.loads(text)
    return data


@functools.cache
def aws_table() -> Mapping[str, Any]:
    """``aws_zones.json``: ``zones`` (region -> its AZ IDs and the zone names they can
    have)."""
    text = resources.files("inferplane.blueprint.upstream").joinpath(AWS_TABLE_FILE).read_text()
    data: Mapping[str, Any] = json.loads(text)
    return data


def aws_region_zones(region: str) -> tuple[str, ...] | None:
    """The zone names AWS `region` can have in some account; None when the table does not
    list the region."""
    row = aws_table()["zones"].get(region)
    return tuple(row["names"]) if row is not None else None


def check_aws_zones(env: EnvView) -> None:
    """Zone names of the region, on an aws environment (a misformed name is refused by
    `semantic_environment.check_region_and_zones`)."""
    if env.spec["cloud"] != "aws":
        return
    region = env.spec["region"]
    known = aws_region_zones(region)
    if known is None:
        return
    places: list[tuple[YamlPath, str]] = [
        (("environments", env.name, "zones", i), zone) for i, zone in enumerate(env.spec["zones"])
    ]
    for name, pool in (env.data.get("gpu_pools") or {}).items():
        places += [
            (("gpu_pools", name, "zones", i), z) for i, z in enumerate(pool.get("zones") or [])
        ]
    for where, zone in places:
        if zone_pattern("aws", region).match(zone) and zone not in known:
            env.error(
                where,
                f"zone {zone!r} does not exist in region {region}: no AWS account has it",
                f"use one of {', '.join(known)} ({AWS_TABLE_FILE}, read from AWS's list of "
                f"Availability Zone IDs on {aws_table()['sources']['read']})",
            )


def region_zones(region: str) -> tuple[str, ...] | None:
    """The zones of GCP `region`; None when the table does not list the region."""
    zones = table()["zones"].get(region)
    return tuple(zones) if zones is not None else None


def gpu_zones(gpu: str) -> frozenset[str] | None:
    """The GCP zones that offer `gpu` (a catalog id); None when the table does not list it."""
    row = table()["gpus"].get(gpu)
    return frozenset(row["zones"]) if row is not None else None


def check_gcp_zones(env: EnvView) -> None:
    """Zones of the region, and GPUs of the zones, on a gcp environment."""
    if env.spec["cloud"] != "gcp":
        return
    region = env.spec["region"]
    known = region_zones(region)
    base: YamlPath = ("environments", env.name)
    missing: set[str] = set()
    if known is not None:
        for i, zone in enumerate(env.spec["zones"]):
            if zone.startswith(f"{region}-") and zone not in known:
                missing.add(zone)
                env.error((*base, "zones", i), *_no_such_zone(zone, region, known))
    for name, pool in (env.data.get("gpu_pools") or {}).items():
        own = pool.get("zones")
        for i, zone in enumerate(own or []):
            if known is not None and zone.startswith(f"{region}-") and zone not in known:
                env.error(("gpu_pools", name, "zones", i), *_no_such_zone(zone, region, known))
                missing.add(zone)
        _gpu_offered(env, name, pool, region, missing)


def check_zone_suffixes(env: EnvView) -> None:
    """Per-zone objects (node groups, response-cache Deployments) are named by the zone's
    last part (`naming.zone_suffix`): two zones of an environment that end alike (``zone-a``
    and ``rack-a`` on an attached cluster) would give two objects one name."""
    seen: dict[str, str] = {}
    for i, zone in enumerate(env.spec["zones"]):
        suffix = naming.zone_suffix(str(zone))
        other = seen.setdefault(suffix, str(zone))
        if other != zone:
            env.error(
                ("environments", env.name, "zones", i),
                f"zones {other!r} and {zone!r} both end in {suffix!r}, which names each "
                "zone's node group and per-zone objects: the two would get one name",
                "give the zones names that differ in their last part after '-' (as the "
                "clouds' do: us-east-1a, us-east-1b)",
            )


def _no_such_zone(zone: str, region: str, known: tuple[str, ...]) -> tuple[str, str]:
    return (
        f"zone {zone!r} does not exist in region {region}",
        f"use one of {', '.join(known)} ({TABLE_FILE}, read from Compute Engine's zone list)",
    )


def _gpu_offered(
    env: EnvView, name: str, pool: Mapping[str, Any], region: str, missing: set[str]
) -> None:
    gpu = pool["gpu"]
    offered = gpu_zones(gpu)
    if offered is None or "instance_type" in pool:
        return  # not in the table; an explicit machine type is checked elsewhere
    own = pool.get("zones")
    zones = list(own) if own else list(env.spec["zones"])
    there = sorted(z for z in offered if z.startswith(f"{region}-"))
    hint_zones = ", ".join(there) if there else f"none: choose a region that offers {gpu}"
    for i, zone in enumerate(zones):
        if (
            zone in missing
            or zone in offered
            or zone not in env.spec["zones"]
            or not zone.startswith(f"{region}-")
        ):
            continue  # a misnamed zone, or one outside the environment's, is refused as such
        what = (
            f"{gpu} is not offered in {zone}: GKE cannot create the node pool of pool "
            f"{name!r} there (machine types {table()['gpus'][gpu]['machine_types']})"
        )
        if own:
            env.error(
                ("gpu_pools", name, "zones", i),
                what,
                f"use zones of {region} that offer it: {hint_zones}",
            )
        else:
            env.error(
                ("gpu_pools", name, "gpu"),
                what + f"; the pool runs in every zone of environment {env.name}",
                f"give the pool zones that offer it (zones of {region} with {gpu}: "
                f"{hint_zones}), or choose another GPU",
            )


__all__ = [
    "aws_region_zones",
    "aws_table",
    "check_aws_zones",
    "check_gcp_zones",
    "gpu_zones",
    "region_zones",
    "table",
]
