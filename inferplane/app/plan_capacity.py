"""The capacity block of `inferplane plan`: per model with `traffic`, what its peak needs.

Lines per model: the estimate (its source and band, what one replica carries at the batch
that fits the SLO), replicas at peak (per zone, and the band's ends), nodes per zone, each
`replicas.schedule` window's floor and what it carries, the autoscaling targets (derived,
or the blueprint's own) with how each derived one follows from the plan, and the cost from
the price table, whose date is printed. The same figures go to plan.json under
``models.<m>.capacity``.
"""

from __future__ import annotations

from typing import Any

from inferplane.blueprint.capacity import cost as costs
from inferplane.blueprint.capacity import prices
from inferplane.blueprint.capacity.planner import EnvPlan, Plan
from inferplane.blueprint.model import Environment


def _usd(value: float) -> str:
    return f"${value:,.2f}" if value < 100 else f"${value:,.0f}"


def render(env: Environment, env_plan: EnvPlan) -> list[str]:
    """The block's lines; empty when no model states traffic."""
    if not env_plan.plans and not env_plan.skipped:
        return []
    lines = [f"Capacity at peak traffic (prices of {prices.TABLE_DATE}, on-demand):"]
    for _name, plan in sorted(env_plan.plans.items()):
        lines += [f"  {line}" for line in _model_lines(env, plan)]
    for name, why in sorted(env_plan.skipped.items()):
        lines.append(f"  capacity {name}: no estimate ({why})")
    for p in env_plan.problems:
        lines.append(f"  {p.severity}: {'.'.join(map(str, p.path))}: {p.message}")
    return lines


def _batch_max(plan: Plan) -> str:
    """``max 16, batching.max_batch_size``: the cap the planned batch is within."""
    if plan.batch_max is None:
        return f"max: the engine's default, {plan.batch_setting} unset"
    return f"max {plan.batch_max}, {plan.batch_setting}"


def _model_lines(env: Environment, plan: Plan) -> list[str]:
    model = env.models[plan.model]
    low, mid, high = plan.rps
    source = {
        "roofline": "roofline model (FLOPs and memory bandwidth of the GPU; no measurement)",
        "aiconfigurator": "aiconfigurator's measured operation timings",
        "profile": "measured profile",
    }[plan.source]
    out = [
        f"capacity {plan.model}: {plan.peak_rps:g} requests/s at peak; one replica carries "
        f"{mid:.2f} requests/s (band {plan.band_text}: {low:.2f}-{high:.2f}) from the {source}"
        + (f"; {plan.calibration}" if plan.calibration else ""),
        f"  batch {plan.batch} ({_batch_max(plan)}; limited by {plan.limited_by}): {plan.latency}",
    ]
    if plan.model_basis:
        out.append(f"  model: {plan.model_basis}")
    pessimistic = (
        str(plan.replicas_pessimistic) if plan.replicas_pessimistic is not None else "none fits"
    )
    out.append(
        f"  replicas at peak: {plan.replicas} ({plan.per_zone} per zone x {plan.zones} "
        f"zone(s); optimistic {plan.replicas_optimistic}, pessimistic {pessimistic}); "
        f"replicas {model.replicas.min}-{model.replicas.max}; nodes per zone: "
        f"{plan.nodes_per_zone} of pool {model.pool}"
    )
    if plan.window_fits_us is not None:
        out.append(f"  batching window that fits: <= {plan.window_fits_us} us")
    for w in plan.windows:
        out.append(
            f"  window {w.schedule!r} for {w.duration_s // 60} min: floor {w.floor} replicas "
            f"carry {w.carries_rps:.2f} requests/s"
        )
    kind = "derived" if model.autoscaling_derived else "the blueprint's"
    targets = ", ".join(f"{s.metric} {s.target:g}" for s in model.autoscaling.signals)
    derived = ", ".join(f"{s.metric} {s.target:g}" for s in plan.targets)
    line = f"  autoscaling ({kind}): {targets}"
    if not model.autoscaling_derived:
        line += f"; derived from the estimate: {derived}"
    out.append(line)
    out += [f"    {basis}" for basis in plan.target_basis]
    if plan.cost is None:
        out.append(f"  cost: {plan.cost_note}")
    else:
        c = plan.cost
        out.append(
            f"  cost: {_usd(c.floor_usd_h)}/h at the floor, {_usd(c.peak_usd_h)}/h at peak, "
            f"{_usd(c.usd_month)}/month ({c.month_basis}), {_usd(c.usd_per_million)} per 1M "
            f"{c.per_million_of} at peak; {c.instance_type} in {env.region} "
            f"{_usd(c.price.usd_per_hour)}/h ({c.price.basis}, {c.price.source}, "
            f"dated {c.price.read_on})"
        )
        out.append(f"    counts {c.counts}; {costs.counted_beyond(c)}")
    return out


def as_json(env: Environment, plan: Plan) -> dict[str, Any]:
    """plan.json's ``models.<m>.capacity``."""
    model = env.models[plan.model]
    cost = plan.cost
    return {
        "source": plan.source,
        "band": plan.band,
        "band_optimistic": plan.band_fast if plan.band_fast is not None else plan.band,
        "calibration": plan.calibration or None,
        "model_basis": plan.model_basis or None,
        "replica_rps": {
            "pessimistic": plan.rps[0],
            "central": plan.rps[1],
            "optimistic": plan.rps[2],
        },
        "batch": {
            "size": plan.batch,
            "setting": plan.batch_setting,
            "max": plan.batch_max,
            "limited_by": plan.limited_by,
        },
        "peak_rps": plan.peak_rps,
        "replicas": {
            "at_peak": plan.replicas,
            "per_zone": plan.per_zone,
            "zones": plan.zones,
            "optimistic": plan.replicas_optimistic,
            "pessimistic": plan.replicas_pessimistic,
        },
        "nodes_per_zone": plan.nodes_per_zone,
        "batching_window_fits_us": plan.window_fits_us,
        "windows": [
            {
                "schedule": w.schedule,
                "duration_s": w.duration_s,
                "floor": w.floor,
                "carries_rps": w.carries_rps,
            }
            for w in plan.windows
        ],
        "autoscaling": {
            "derived": model.autoscaling_derived,
            "targets": {s.metric: s.target for s in plan.targets},
            "basis": {s.metric: b for s, b in zip(plan.targets, plan.target_basis, strict=True)},
        },
        "cost": None
        if cost is None
        else {
            "floor_usd_per_hour": cost.floor_usd_h,
            "peak_usd_per_hour": cost.peak_usd_h,
            "usd_per_month": cost.usd_month,
            "usd_per_million": cost.usd_per_million,
            "per_million_of": cost.per_million_of,
            "instance_type": cost.instance_type,
            "nodes_per_zone": {"floor": cost.floor_nodes, "peak": cost.peak_nodes},
            "zones": cost.zones,
            "counts": cost.counts,
            "overhead_usd_per_hour": cost.overhead_usd_h,
            "overhead": cost.overhead,
            "missing_prices": list(cost.missing),
            "price_table_date": prices.TABLE_DATE,
            "price_source": cost.price.source,
            "price_read_on": cost.price.read_on,
        },
    }
