"""The capacity plan's verdicts on one model (`judge`): `replicas.max` against the
estimate's band, the month's cost against the budget, and explicit autoscaling targets
against the derived ones. The rules are `inferplane.blueprint.capacity.planner`'s."""

from __future__ import annotations

from inferplane.blueprint.capacity import cost as costs
from inferplane.blueprint.capacity import load, targets
from inferplane.blueprint.capacity.plans import EnvPlan, Plan, Problem
from inferplane.blueprint.errors import YamlPath
from inferplane.blueprint.model import Metric, Model


def judge(model: Model, plan: Plan, out: EnvPlan) -> None:
    """`replicas.max` against the estimate's band: an error when even its optimistic end
    needs more (no estimate in the band meets the SLO), a warning when the central estimate
    or the pessimistic end does."""
    limit = model.replicas.max
    band = f"{plan.band_text} {plan.source} band"
    peak = f"the peak of {plan.peak_rps:g} requests/s"
    fastest = plan.replicas_optimistic
    needs = f"{plan.replicas} replicas at the central estimate of the {band}"
    each = f"({plan.rps[1]:.2f} requests/s each)"
    worst = (
        "at its pessimistic end no batch meets the SLO"
        if plan.replicas_pessimistic is None
        else f"up to {plan.replicas_pessimistic} at its pessimistic end"
    )
    where: YamlPath = ("models", model.name, "replicas", "max")
    if fastest > limit:
        zones = f"{plan.zones} zone{'s' if plan.zones != 1 else ''}"
        out.problems.append(
            Problem(
                "error",
                where,
                f"replicas.max {limit} cannot carry {peak} within the SLO under any estimate "
                f"of the {band}: even at its optimistic end ({plan.rps[2]:.2f} requests/s a "
                f"replica) the peak needs {fastest} replicas ({fastest // plan.zones} per "
                f"zone x {zones}), and "
                + (
                    f"{plan.replicas} at the central estimate {each}"
                    if plan.rps[1] > 0
                    else "at the central estimate no batch meets the SLO"
                ),
                f"raise replicas.max to {plan.replicas} (and the pool's nodes.max to hold "
                "them), lower traffic.peak_rps, or serve on faster GPUs"
                if plan.rps[1] > 0
                else "relax the SLO or serve on faster GPUs: only the optimistic end of the "
                "band meets it",
            )
        )
    elif plan.rps[1] <= 0:
        out.problems.append(
            Problem(
                "warning",
                where,
                f"at the central estimate of the {band} no batch meets the SLO, nor at its "
                f"pessimistic end: replicas.max {limit} carries {peak} only if the optimistic "
                f"end holds ({fastest} replicas)",
                _MEASURE.format(rps=plan.rps[2]),
            )
        )
    elif plan.replicas > limit:
        out.problems.append(
            Problem(
                "warning",
                where,
                f"{peak} needs {needs} {each} and {worst}: replicas.max {limit} carries it "
                f"only if the optimistic end holds ({fastest} replicas)",
                _MEASURE.format(rps=plan.rps[1]),
            )
        )
    elif plan.replicas_pessimistic is None or plan.replicas_pessimistic > limit:
        out.problems.append(
            Problem(
                "warning",
                where,
                f"{peak} needs {needs} {each}, within replicas.max {limit}, but {worst}",
                _MEASURE.format(rps=plan.rps[1]),
            )
        )
    _judge_cost(model, plan, out)


_MEASURE = (
    "measure one replica at {rps:.2f} requests/s (scripts/measure/measure_capacity.py runs vLLM's "
    "own benchmark) before relying on the estimate, or leave more room in replicas.max"
)


def _judge_cost(model: Model, plan: Plan, out: EnvPlan) -> None:
    """The month's cost against the budget, and the explicit targets against the derived."""
    path: YamlPath = ("models", model.name)
    budget = model.budget_usd_per_month
    if budget is not None and plan.cost is not None and plan.cost.usd_month > budget:
        out.problems.append(
            Problem(
                "warning",
                (*path, "budget", "usd_per_month"),
                f"the estimate costs ${plan.cost.usd_month:,.0f} a month, over the budget "
                f"of ${budget:,.0f}: {plan.cost.counts}; {plan.cost.month_basis}; "
                f"{plan.cost.instance_type} at ${plan.cost.price.usd_per_hour:,.4g}/h "
                f"({plan.cost.price.source}, {plan.cost.price.read_on}); "
                f"{costs.counted_beyond(plan.cost)}",
                "lower replicas.min or the schedule windows, or raise the budget",
            )
        )
    if budget is not None and plan.cost is None:
        out.problems.append(
            Problem(
                "warning",
                (*path, "budget", "usd_per_month"),
                f"the budget is not compared: {plan.cost_note}",
                "have the platform add the price to its policy config (prices), or compare "
                "the cost by hand",
            )
        )
    if not model.autoscaling_derived:
        _judge_targets(model, plan, out)


def _target_path(model: Model, metric: Metric) -> YamlPath:
    path: YamlPath = ("models", model.name, "autoscaling")
    if len(model.autoscaling.signals) > 1:
        return (*path, model.autoscaling.metrics.index(metric), "target")
    return (*path, "target")


def _judge_targets(model: Model, plan: Plan, out: EnvPlan) -> None:
    """The blueprint's own targets against the derived ones: where they act after the SLO."""
    remove = "or remove `autoscaling` to use the derived targets"
    for derived in plan.targets:
        explicit = model.autoscaling.target_of(derived.metric)
        if explicit is None or explicit <= derived.target:
            continue
        message = {
            "queue_depth": f"a queue of {explicit:g} per replica waits longer than the SLO "
            f"allows before the HPA acts: at {plan.rps[1]:.2f} requests/s a replica drains "
            f"{derived.target:g} within it, and the HPA acts only 10% above its target",
            "concurrency": f"a concurrency of {explicit:g} per replica is acted on only "
            f"above {explicit * 1.1:.4g}, past the planned batch of {plan.batch} that "
            "meets the SLO",
        }.get(
            derived.metric,
            f"a {derived.metric} target of {explicit:g} is acted on only above "
            f"{explicit * 1.1:.4g}, at or past the SLO",
        )
        out.problems.append(
            Problem(
                "warning",
                _target_path(model, derived.metric),
                message,
                f"set the target to {derived.target:g}, {remove}",
            )
        )
    limit = load.batch_limit(model)
    waits_late = limit is None or plan.batch < limit
    if (
        targets.in_flight_batching(model)
        and "queue_depth" in model.autoscaling.metrics
        and "concurrency" not in model.autoscaling.metrics
        and waits_late
    ):
        cap = f"{plan.batch_setting} ({limit if limit is not None else 'the engine default'})"
        wanted = plan.targets[0].target
        out.problems.append(
            Problem(
                "warning",
                _target_path(model, "queue_depth"),
                f"queue_depth counts only the requests beyond {cap}: below it every request "
                f"runs in the batch and none waits, past the planned batch of {plan.batch} "
                "that meets the SLO",
                f"scale on concurrency (requests running plus waiting) with target "
                f"{wanted:g}, {remove}",
            )
        )
