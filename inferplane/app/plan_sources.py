"""plan.json's ``capacity_sources`` and the plan's text about them: per pool, zone and
capacity source, the node group that launches from it, its floor and ceiling, its price where
the price table has one, and the preflight.

Offline the preflight is never run: whether the instance type is offered in the zone, the
quota covers ``nodes.max``, a reservation is in the zone with room for ``nodes.min`` and a
Capacity Block's window covers the schedule are the cloud's answers, which only a run with
credentials (``pulumi preview``) gets. Each source says so (``preflight.status: not
checked``) rather than passing silently. Handed recorded answers (``--invokes``), the
offline run does ask them (`inferplane.components.capacity_preflight`), and each source
carries what was judged (`inferplane.blueprint.capacity.preflight.judge`): ``status`` ``ok``,
``refused`` (with the ``problems``, each naming its rule) or ``not checked``, what was
``checked`` and what was not, and a spot source's current price, which then prices it.

Only environments whose pools list their capacity sources get the section, so the plan of
a pool with a scalar ``capacity`` is what it was.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from inferplane.blueprint import naming
from inferplane.blueprint.capacity.prices import Price, price
from inferplane.blueprint.model import CapacitySource, Environment, GpuPool

EKS_NAME_MAX = 63
GKE_NAME_MAX = 40
"""Node group name limits (`inferplane.components.node_pool`): EKS 63, GKE 40 characters."""
HOURS_PER_MONTH = 730
"""The month the cost figures use: 365 × 24 / 12 hours."""
NOT_CHECKED = (
    "offline: the zone's offering of the instance type, the quota, the reservation's zone "
    "and free count and the Capacity Block's window are the cloud's answers, which only a "
    "run with credentials (pulumi preview) gets"
)
PRICED_AS_ON_DEMAND = ("reservation", "on_demand")
"""Sources billed at the on-demand rate: an On-Demand Capacity Reservation is billed as
on-demand instances whether used or not (EC2 User Guide, "Capacity Reservation pricing and
billing"); a GCP reservation likewise at the machine's on-demand price."""


def listed(env: Environment) -> bool:
    """Whether any pool of `env` lists its capacity sources."""
    return any(p.capacity_sources for p in env.pools.values())


def section(
    env: Environment,
    platform: Mapping[tuple[str, str], Price] | None = None,
    preflight: Mapping[str, Any] | None = None,
) -> dict[str, Any] | None:
    """plan.json's ``capacity_sources``: pool -> zone -> sources in order; None when no pool
    lists its sources. `preflight`: the judged rows of a run that asked the cloud
    (`preflight_of`); without it every source says ``not checked``."""
    if env.kubernetes or not listed(env):
        return None
    out: dict[str, Any] = {}
    for name, pool in sorted(env.pools.items()):
        rate = (platform or {}).get((pool.instance_type, env.region)) or price(
            pool.instance_type, env.region
        )
        judged = (preflight or {}).get(name) or {}
        out[name] = {
            zone: _zone(env, pool, zone, rate, judged.get(zone) or []) for zone in pool.zones
        }
    return out


def _zone(
    env: Environment,
    pool: GpuPool,
    zone: str,
    rate: Price | None,
    judged: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    limit = EKS_NAME_MAX if env.cloud == "aws" else GKE_NAME_MAX
    first = naming.node_group_name(env.blueprint, env.name, pool.name, zone, limit)
    rows = []
    for i, source in enumerate(pool.sources_in(zone)):
        floor = source.floor(i, pool.nodes.min)
        row: dict[str, Any] = {
            "source": source.kind,
            "node_group": first
            if i == 0
            else naming.source_group_name(first, source.kind, source.reservation, limit),
            "nodes": {"min": floor, "max": pool.nodes.max},
        }
        if source.reservation:
            row["reservation"] = source.reservation
        if source.ends:
            row["ends"] = source.ends
        if source.kind == "capacity_block" and source.reservation is None:
            row["offering"] = {"hours": source.offering_hours, "buy": source.buy}
        answer = judged[i] if i < len(judged) and judged[i].get("source") == source.kind else None
        spot = answer.get("spot_usd_per_hour") if answer else None
        row["cost"] = _cost(source, floor, rate, spot)
        row["preflight"] = _preflight(answer)
        rows.append(row)
    return rows


def _preflight(answer: Mapping[str, Any] | None) -> dict[str, Any]:
    if answer is None:
        return {"status": "not checked", "reason": NOT_CHECKED}
    keep = ("status", "checked", "problems", "not_checked", "reason", "spot_usd_per_hour")
    return {k: answer[k] for k in keep if k in answer}


def preflight_of(resources: Iterable[Any]) -> dict[str, Any] | None:
    """The judged preflight rows a run published (the `naming.PREFLIGHT_CONFIGMAP`
    ConfigMap among recorded `resources`); None when it did not run."""
    for r in resources:
        if r.type != "kubernetes:core/v1:ConfigMap":
            continue
        if (r.inputs.get("metadata") or {}).get("name") != naming.PREFLIGHT_CONFIGMAP:
            continue
        text = (r.inputs.get("data") or {}).get("preflight.json")
        rows = json.loads(text) if isinstance(text, str) else None
        return rows if isinstance(rows, dict) else None
    return None


def cost_by_source(doc: Mapping[str, Any] | None) -> dict[str, Any]:
    """plan.json's ``capacity_cost_by_source``: per source kind, the monthly cost of the
    nodes held at the floor in every pool and zone, in USD, where every such row has a
    price; a kind with an unpriced row at a floor above zero says why instead."""
    out: dict[str, Any] = {}
    for zones in (doc or {}).values():
        for rows in zones.values():
            for row in rows:
                kind = row["source"]
                entry = out.setdefault(kind, {"monthly_usd_at_floor": 0.0})
                monthly = row["cost"].get("monthly_usd_at_floor")
                if monthly is not None and "monthly_usd_at_floor" in entry:
                    entry["monthly_usd_at_floor"] = round(
                        entry["monthly_usd_at_floor"] + monthly, 2
                    )
                elif row["nodes"]["min"] > 0:
                    entry.pop("monthly_usd_at_floor", None)
                    entry["why"] = row["cost"].get("why", "unpriced")
    return dict(sorted(out.items()))


def _cost(
    source: CapacitySource, floor: int, rate: Price | None, spot: str | None = None
) -> dict[str, Any]:
    if source.kind == "spot" and spot is not None:
        usd = float(spot)
        return {
            "usd_per_node_hour": usd,
            "monthly_usd_at_floor": round(usd * floor * HOURS_PER_MONTH, 2),
            "price_source": "EC2 spot price at the preflight (ec2.get_spot_price)",
        }
    if rate is None:
        return {"usd_per_node_hour": None, "why": "the price table has no row for the type"}
    if source.kind not in PRICED_AS_ON_DEMAND:
        return {
            "usd_per_node_hour": None,
            "why": f"the price table lists on-demand prices only, not {source.kind}",
        }
    return {
        "usd_per_node_hour": rate.usd_per_hour,
        "monthly_usd_at_floor": round(rate.usd_per_hour * floor * HOURS_PER_MONTH, 2),
        "price_source": rate.source,
    }


def render(doc: Mapping[str, Any] | None) -> list[str]:
    """The plan's text: one line per pool, zone and source."""
    if not doc:
        return []
    checked = any(
        row["preflight"]["status"] != "not checked"
        for zones in doc.values()
        for rows in zones.values()
        for row in rows
    )
    head = "preflight from recorded answers" if checked else "preflight not checked offline"
    lines = [f"Capacity sources, tried in order per zone ({head}):"]
    for pool, zones in doc.items():
        for zone, rows in zones.items():
            parts = []
            for row in rows:
                what = row["source"] + (f" {row['reservation']}" if "reservation" in row else "")
                status = row["preflight"]["status"]
                mark = f" {status}" if checked and status != "not checked" else ""
                parts.append(f"{what} [{row['nodes']['min']}..{row['nodes']['max']}]{mark}")
            lines.append(f"  {pool} / {zone}: " + " -> ".join(parts))
    return lines


__all__ = ["NOT_CHECKED", "cost_by_source", "listed", "preflight_of", "render", "section"]
