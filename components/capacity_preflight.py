"""The capacity preflight, asked of the cloud while ``pulumi preview`` runs.

For every pool that lists its capacity sources, on AWS the pinned pulumi-aws 7.51.1 data
sources (invokes, which a preview runs with the stack's credentials):

- ``ec2.get_instance_type_offerings`` (``pulumi_aws/ec2/get_instance_type_offerings.py``:
  ``location_type`` ``availability-zone``, filters ``instance-type`` and ``location``;
  ``locations`` are the zones that offer it);
- ``ec2.get_instance_type`` (``get_instance_type.py``: ``default_vcpus``), the vCPUs a quota
  counts per node;
- ``servicequotas.get_service_quota`` (``pulumi_aws/servicequotas/get_service_quota.py``:
  ``service_code`` ``ec2`` and ``quota_name``; ``value``), for each quota a source draws on
  (`inferplane.blueprint.capacity.preflight.QUOTAS`);
- ``ec2.get_capacity_block_reservation`` (``get_capacity_block_reservation.py``: by ``id``;
  ``availability_zone``, ``instance_count``, ``start_date``, ``end_date``, ``state``), for a
  Capacity Block given by id;
- ``ec2.get_spot_price`` (``get_spot_price.py``: ``instance_type``, ``availability_zone``,
  the ``product-description`` filter ``Linux/UNIX`` as in its example; ``spot_price``), for
  the record.

For a GCP environment, the pinned pulumi-gcp 10.2.0:

- ``compute.get_machine_types`` (``pulumi_gcp/compute/get_machine_types.py``: ``zone``,
  ``filter`` ``name = "<type>"``, ``project``; ``machine_types``), per zone: the type is
  offered there when the list is not empty;
- ``compute.get_reservation`` (``pulumi_gcp/compute/get_reservation.py``: ``name``, ``zone``,
  ``project``; ``zone``, ``specific_reservations[].count`` and ``in_use_count``,
  ``status``), for a reservation source, in its zone. The API looks a reservation up by
  zone, so one in another zone is not found and the preview stops with the provider's
  error rather than a located message.

The answers are judged by `inferplane.blueprint.capacity.preflight.judge` and written, as
JSON under the key ``preflight.json``, to the `naming.PREFLIGHT_CONFIGMAP` ConfigMap of the
blueprint's namespace, where the rules read them. The run needs read access to EC2
(``DescribeInstanceTypeOfferings``, ``DescribeInstanceTypes``,
``DescribeCapacityReservations``, ``DescribeSpotPriceHistory``) and Service Quotas
(``GetServiceQuota``); a denied call, or a Capacity Block or reservation that is not found,
fails the preview with the provider's error, as any data source does.

Offline (``inferplane:offline``) the preflight is skipped unless the run is handed recorded
answers (``inferplane:preflight`` set to ``recorded``): the offline harness then answers the
invokes from the recording (`inferplane.app.offline_mocks`).
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_gcp as gcp

from inferplane.blueprint.capacity.preflight import PoolAnswers, judge, quota_name
from inferplane.blueprint.model import Environment, GpuPool

RECORDED = "recorded"
"""``inferplane:preflight`` value under which an offline run asks the recorded answers."""


def wanted(env: Environment) -> bool:
    """Whether `env`'s stack runs the preflight: an AWS or GCP environment with a pool that lists
    its sources, in a run with credentials or handed recorded answers."""
    if env.cloud not in ("aws", "gcp") or not any(p.capacity_sources for p in env.pools.values()):
        return False
    config = pulumi.Config("inferplane")
    return not config.get_bool("offline") or config.get("preflight") == RECORDED


def _value(result: Any, name: str) -> Any:
    return getattr(result, name, None)


def _pool_answers(pool: GpuPool, opts: pulumi.InvokeOutputOptions) -> pulumi.Output[Any]:
    """The cloud's answers for `pool`, as a plain dict for `PoolAnswers`."""
    offerings = aws.ec2.get_instance_type_offerings_output(
        location_type="availability-zone",
        filters=[
            {"name": "instance-type", "values": [pool.instance_type]},
            {"name": "location", "values": list(pool.zones)},
        ],
        opts=opts,
    )
    itype = aws.ec2.get_instance_type_output(instance_type=pool.instance_type, opts=opts)
    kinds = {s.kind for s in pool.capacity_sources}
    quotas = {
        name: aws.servicequotas.get_service_quota_output(
            service_code="ec2", quota_name=name, opts=opts
        )
        for market in ("on_demand", "spot")
        if market in kinds and (name := quota_name(pool.instance_type, market))
    }
    blocks = {
        str(s.reservation): aws.ec2.get_capacity_block_reservation_output(
            id=s.reservation, opts=opts
        )
        for s in pool.capacity_sources
        if s.kind == "capacity_block" and s.reservation
    }
    spot = (
        {
            zone: aws.ec2.get_spot_price_output(
                instance_type=pool.instance_type,
                availability_zone=zone,
                # The nodes run Linux: without the filter the newest price of any platform
                # (Windows, SUSE) may come back (the data source's own example filters so).
                filters=[{"name": "product-description", "values": ["Linux/UNIX"]}],
                opts=opts,
            )
            for zone in pool.zones
        }
        if "spot" in kinds
        else {}
    )

    def plain(values: list[Any]) -> dict[str, Any]:
        o, t, *rest = values
        q = dict(zip(quotas, rest[: len(quotas)], strict=True))
        b = dict(zip(blocks, rest[len(quotas) : len(quotas) + len(blocks)], strict=True))
        p = dict(zip(spot, rest[len(quotas) + len(blocks) :], strict=True))
        locations = _value(o, "locations")
        return {
            "offered_zones": None if locations is None else sorted(str(z) for z in locations),
            "vcpus": _value(t, "default_vcpus"),
            "quotas": {k: v.value for k, v in q.items() if _value(v, "value") is not None},
            "blocks": {
                k: {
                    "availabilityZone": _value(v, "availability_zone"),
                    "instanceCount": _value(v, "instance_count"),
                    "startDate": _value(v, "start_date"),
                    "endDate": _value(v, "end_date"),
                    "state": _value(v, "state"),
                }
                for k, v in b.items()
            },
            "spot_prices": {
                k: v.spot_price for k, v in p.items() if _value(v, "spot_price") is not None
            },
        }

    return pulumi.Output.all(
        offerings, itype, *quotas.values(), *blocks.values(), *spot.values()
    ).apply(plain)


def _gcp_pool_answers(
    env: Environment, pool: GpuPool, opts: pulumi.InvokeOutputOptions
) -> pulumi.Output[Any]:
    """The cloud's answers for `pool` on GCP, as a plain dict for `PoolAnswers`."""
    types = {
        zone: gcp.compute.get_machine_types_output(
            zone=zone, filter=f'name = "{pool.instance_type}"', project=env.project, opts=opts
        )
        for zone in pool.zones
    }
    # A source without `zone:` is in a one-zone pool's zone.
    only = pool.zones[0] if len(pool.zones) == 1 else None
    reservations = {
        str(s.reservation): gcp.compute.get_reservation_output(
            name=s.reservation, zone=s.zone or only, project=env.project, opts=opts
        )
        for s in pool.capacity_sources
        if s.kind == "reservation" and s.reservation and (s.zone or only)
    }

    def plain(values: list[Any]) -> dict[str, Any]:
        t = dict(zip(types, values[: len(types)], strict=True))
        r = dict(zip(reservations, values[len(types) :], strict=True))
        answered = {z: _value(v, "machine_types") for z, v in t.items()}
        known = all(v is not None for v in answered.values())
        out: dict[str, Any] = {
            "offered_zones": sorted(z for z, v in answered.items() if v) if known else None,
            "vcpus": None,
            "quotas": {},
            "blocks": {},
            "spot_prices": {},
            "reservations": {},
        }
        for name, found in r.items():
            specific = list(_value(found, "specific_reservations") or [])
            first = specific[0] if specific else None
            out["reservations"][name] = {
                "zone": _value(found, "zone"),
                "count": _value(first, "count") if first is not None else None,
                "inUseCount": _value(first, "in_use_count") if first is not None else None,
                "status": _value(found, "status"),
            }
        return out

    return pulumi.Output.all(*types.values(), *reservations.values()).apply(plain)


def answers_json(env: Environment, parent: pulumi.Resource) -> pulumi.Output[str]:
    """`env`'s judged preflight (`judge`), as the ConfigMap's JSON."""
    opts = pulumi.InvokeOutputOptions(parent=parent)
    ask = _pool_answers if env.cloud == "aws" else (lambda p, o: _gcp_pool_answers(env, p, o))
    # On AWS every pool is asked: a pool that lists no sources still draws on the region's
    # vCPU quota that the listed ones are judged against.
    pools = {
        name: ask(pool, opts)
        for name, pool in sorted(env.pools.items())
        if pool.capacity_sources or env.cloud == "aws"
    }

    def judged(values: list[Any]) -> str:
        answers = {
            name: PoolAnswers(
                offered_zones=tuple(v["offered_zones"]) if v["offered_zones"] is not None else None,
                vcpus=int(v["vcpus"]) if v["vcpus"] else None,
                quotas={k: float(q) for k, q in v["quotas"].items()},
                blocks=v["blocks"],
                spot_prices=v["spot_prices"],
                reservations=v.get("reservations") or {},
            )
            for name, v in zip(pools, values, strict=True)
        }
        return json.dumps(judge(env, answers, now()), sort_keys=True)

    return pulumi.Output.all(*pools.values()).apply(judged)


def now() -> dt.datetime:
    """The moment schedules are judged from: ``inferplane:preflightNow`` (RFC 3339, for
    recorded runs) or the clock."""
    pinned = pulumi.Config("inferplane").get("preflightNow")
    if pinned:
        return dt.datetime.fromisoformat(pinned.replace("Z", "+00:00"))
    return dt.datetime.now(dt.UTC)


__all__ = ["RECORDED", "answers_json", "now", "wanted"]
