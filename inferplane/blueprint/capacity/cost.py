"""What a model costs as the bill shows it: whole GPU nodes, per zone, at their on-demand price.

A cloud bills nodes, not GPUs: a replica of 4 GPUs on an 8-GPU node in each of two zones
keeps two whole nodes running. The cost of a model therefore counts whole nodes:

- the pool's nodes: when the model is its pool's only model, every node the pool keeps in
  each zone (``nodes.min``, or more where the warm replicas and ``spare_gpus`` need more)
  is the model's; in a pool shared with other models, the nodes its own replicas fill
  (``ceil(replicas per zone × GPUs / GPU units per node)`` per zone), the rest of the pool
  being shared;
- the floor: the replicas ``replicas.min`` keeps; the peak: the replicas the peak traffic
  needs (never fewer than the floor, never more nodes than ``nodes.max``);
- a month is 730 hours: each ``replicas.schedule`` window runs at the larger of its own
  floor (the replicas it keeps) and the peak, for the share of the year that window covers
  where no larger window does (`wake.year_share`); the rest of the month at the floor.
  Without windows the whole month runs at the peak (an upper bound).

The environment adds what every hour of every model pays for too (`overhead`), counted in
each model's figures so that a budget compares like with like:

- the model's own load balancer (one per model: `inferplane.components.serving.load_balancer`);
- an equal share, over the environment's models, of the system nodes a created cluster keeps
  (`system_nodes.system_nodes`: the add-ons and the llm-aware routing pods run there); an
  attached cluster's system nodes are its owner's.

The price of a node is the platform's row for (instance type, region) where its policy
config states one (``prices``: negotiated prices, or types and regions the table lacks),
else the built-in table's (`prices`); a load balancer's is the platform's row for
(``load-balancer``, region), else `prices.LOAD_BALANCERS`. A price neither has is named in
the plan with how the platform adds it, and that item is left out of the figure. Control
planes, disks and traffic are not counted: the plan says so next to the figure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from inferplane.blueprint import system_nodes, wake
from inferplane.blueprint.capacity import prices
from inferplane.blueprint.model import Environment, Model, zone_share

HOURS_PER_MONTH = 730


@dataclass(frozen=True)
class Cost:
    price: prices.Price
    instance_type: str
    floor_nodes: int
    """Nodes per zone at the floor."""
    peak_nodes: int
    """Nodes per zone at the peak."""
    zones: int
    floor_usd_h: float
    peak_usd_h: float
    usd_month: float
    usd_per_million: float
    per_million_of: str
    """``output tokens`` (LLMs) or ``requests``."""
    month_basis: str
    counts: str
    """What the figure counts, in words (``whole nodes of pool h100 ...``)."""
    overhead_usd_h: float = 0.0
    """The model's share of the environment's system nodes and its load balancer, per hour
    (in `floor_usd_h`, `peak_usd_h` and `usd_month`)."""
    overhead: str = ""
    """What `overhead_usd_h` counts, in words."""
    missing: tuple[str, ...] = ()
    """Prices neither the platform nor the table has: which, and how the platform adds them."""


def price_of(
    instance_type: str, region: str, platform: Mapping[tuple[str, str], prices.Price]
) -> prices.Price | None:
    """The platform's row for (instance type, region), else the built-in table's."""
    return platform.get((instance_type, region)) or prices.price(instance_type, region)


def missing_note(instance_type: str, region: str) -> str:
    """Which price is missing, and how the platform adds it."""
    return (
        f"no price for {instance_type} in {region}: the built-in table has no row for it; "
        f"the platform adds one in its policy config under prices (instance_type: "
        f"{instance_type}, region: {region}, usd_per_hour, source, read_on)"
    )


def overhead(
    env: Environment, platform: Mapping[tuple[str, str], prices.Price]
) -> tuple[float, str, tuple[str, ...]]:
    """(US dollars per hour, what it counts, missing prices) of one model's share of what the
    environment adds: its load balancer and 1/N of the created cluster's system nodes."""
    usd, parts, missing = 0.0, [], []
    n = max(1, len(env.models))
    if env.cluster.create:
        system_type = {
            "aws": system_nodes.EKS_INSTANCE_TYPE,
            "gcp": system_nodes.GKE_MACHINE_TYPE,
        }.get(env.cloud)
        count = system_nodes.system_nodes(env)
        if system_type is not None:
            row = price_of(system_type, env.region, platform)
            if row is None:
                missing.append(missing_note(system_type, env.region))
            else:
                usd += count * row.usd_per_hour / n
                parts.append(
                    f"1/{n} of {count} x {system_type} system nodes at "
                    f"${row.usd_per_hour:,.4g}/h ({row.source}, {row.read_on})"
                )
    else:
        parts.append("no system nodes (the attached cluster's own)")
    lb = platform.get((prices.LOAD_BALANCER, env.region)) or prices.load_balancer(
        env.cloud, env.region
    )
    if lb is None:
        missing.append(
            f"no price for the model's load balancer in {env.region}: the built-in table has "
            "no row for it; the platform adds one in its policy config under prices "
            f"(instance_type: {prices.LOAD_BALANCER}, region: {env.region}, usd_per_hour, "
            "source, read_on)"
        )
    else:
        usd += lb.usd_per_hour
        parts.append(
            f"its load balancer at ${lb.usd_per_hour:,.4g}/h before traffic "
            f"({lb.source}, {lb.read_on})"
        )
    return usd, "; ".join(parts), tuple(missing)


def _nodes(units: int, per_node: int) -> int:
    return math.ceil(units / per_node) if units > 0 else 0


def model_cost(
    env: Environment,
    model: Model,
    peak_per_zone: int,
    out_tokens: int | None,
    peak_rps: float,
    platform: Mapping[tuple[str, str], prices.Price],
) -> tuple[Cost | None, str]:
    """The model's whole-node cost (see the module docstring), or None and why not."""
    pool = env.pool_of(model)
    if env.kubernetes:
        return None, "no price: the cluster's own nodes"
    row = price_of(pool.instance_type, env.region, platform)
    if row is None:
        return None, missing_note(pool.instance_type, env.region)
    zones = max(1, len(pool.zones))
    per_node = pool.gpu_units_per_node
    floor_zone = zone_share(model.replicas.min, zones)
    peak_zone = max(peak_per_zone, floor_zone)
    others = [m for m in env.models.values() if m.pool == pool.name and m.name != model.name]
    alone = not others

    def nodes(replicas_per_zone: int) -> int:
        if alone:
            units = replicas_per_zone * model.gpus + pool.spare_gpus
            return min(max(pool.nodes.min, _nodes(units, per_node)), max(pool.nodes.max, 1))
        return _nodes(replicas_per_zone * model.gpus, per_node)

    floor_n, peak_n = nodes(floor_zone), nodes(peak_zone)
    node_h = row.usd_per_hour * zones
    extra_h, extra, missing = overhead(env, platform)
    floor_h, peak_h = node_h * floor_n + extra_h, node_h * max(peak_n, floor_n) + extra_h
    if model.schedule:
        # Largest window first: each counts the time no larger window already covers.
        ranked = sorted(model.schedule, key=lambda w: -max(nodes(w.min_per_zone), peak_n, floor_n))
        month, covered, seen = 0.0, 0.0, []
        for w in ranked:
            seen.append((w.schedule, w.duration_s))
            share = wake.year_share(seen)
            month += (share - covered) * (
                node_h * max(nodes(w.min_per_zone), peak_n, floor_n) + extra_h
            )
            covered = share
        month = HOURS_PER_MONTH * (month + (1 - covered) * floor_h)
        basis = (
            f"each schedule window at the larger of its floor and the peak ({covered:.0%} of "
            "the time), the floor otherwise"
        )
    else:
        month = HOURS_PER_MONTH * peak_h
        basis = "peak all month (no replicas.schedule windows mark the busy hours)"
    per_hour_units = peak_rps * 3600 * (out_tokens or 1)
    zone_s = f"{zones} zone{'s' if zones != 1 else ''}"
    if alone:
        counts = (
            f"whole nodes of pool {pool.name}: {floor_n} x {pool.instance_type} per zone x "
            f"{zone_s} at the floor, {max(peak_n, floor_n)} at peak (nodes.min, spare_gpus "
            "included)"
        )
    else:
        shared = ", ".join(sorted(m.name for m in others))
        counts = (
            f"the whole nodes its replicas fill on pool {pool.name}: {floor_n} x "
            f"{pool.instance_type} per zone x {zone_s} at the floor, {max(peak_n, floor_n)} "
            f"at peak (the pool's other nodes are shared with {shared})"
        )
    return (
        Cost(
            price=row,
            instance_type=pool.instance_type,
            floor_nodes=floor_n,
            peak_nodes=max(peak_n, floor_n),
            zones=zones,
            floor_usd_h=floor_h,
            peak_usd_h=peak_h,
            usd_month=month,
            usd_per_million=peak_h / per_hour_units * 1e6 if per_hour_units else 0.0,
            per_million_of="output tokens" if out_tokens else "requests",
            month_basis=basis,
            counts=counts,
            overhead_usd_h=extra_h,
            overhead=extra,
            missing=missing,
        ),
        "",
    )


def counted_beyond(cost: Cost) -> str:
    """What the figure counts beyond the GPU nodes, what it leaves out, and which prices are
    missing, in words."""
    text = f"with {cost.overhead}" if cost.overhead else ""
    left = "not counted: the control plane, disks and traffic"
    if cost.missing:
        left += "; missing: " + "; ".join(cost.missing)
    return f"{text}; {left}" if text else left
