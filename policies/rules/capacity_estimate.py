"""capacity-estimate: a model's traffic fits its SLO within the estimate's band and budget."""

from __future__ import annotations

from collections.abc import Iterator

from inferplane.blueprint.capacity import planner, prices
from inferplane.policies.framework import ConfigKey, Finding, Rule, RuleConfig
from inferplane.policies.stack import Stack


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    if stack.env is None:
        return  # online without the blueprint: the plan needs the model's traffic and SLO
    env_plan = planner.plan_env(stack.env, prices.platform_rows(config["prices"]))
    for problem in env_plan.problems:
        if problem.severity != "warning" or problem.path[0] != "models":
            continue  # errors are refused by validate before any rule runs
        name = str(problem.path[1])
        view = stack.models.get(name)
        ref = view.workloads[0].ref if view and view.workloads else None
        yield Finding(f"models.{name}", problem.path, f"{problem.message}; {problem.hint}", ref)
    for name, plan in sorted(env_plan.plans.items()):
        if plan.source != "roofline":
            continue
        view = stack.models.get(name)
        ref = view.workloads[0].ref if view and view.workloads else None
        yield Finding(
            f"models.{name}",
            ("models", name, "traffic"),
            f"the capacity of {name} ({plan.replicas} replicas at {plan.peak_rps:g} "
            f"requests/s) rests on the roofline model alone (±{plan.band:.0%}), not on a "
            f"measurement: measure one replica at its planned {plan.rps[1]:.2f} requests/s "
            "(scripts/measure/measure_capacity.py runs vLLM's own benchmark) before the peak "
            "arrives",
            ref,
        )


RULE = Rule(
    id="capacity-estimate",
    title="A model's peak traffic fits its SLO, its replicas and its budget with room",
    level="advisory",
    scope="stack",
    check=check,
    rationale=(
        "A blueprint that states a model's peak traffic (models.<m>.traffic) gets a capacity "
        "estimate: what one replica carries within the SLO, from a roofline model of the GPU "
        "for LLMs or from a measured latency profile for Triton models. validate refuses a "
        "peak that even the optimistic end of the estimate's band cannot carry within "
        "replicas.max or the pool's nodes.max. Below that line a plan can still be thin: the "
        "central estimate or its pessimistic end may need more replicas than replicas.max "
        "allows, a roofline estimate has never been measured, the month may cost more than "
        "the model's budget, and an explicit queue target above what a replica drains within "
        "the SLO lets requests wait past it before the autoscaler reacts."
    ),
    remediation=(
        "Measure the model at the planned rate and correct the traffic or the SLO; leave room "
        "in replicas.max; lower replicas.min or the schedule windows to meet the budget; set "
        "the queue target to the derived one, or remove autoscaling to use the derived "
        "targets. `inferplane plan` prints the whole estimate."
    ),
    config=(
        ConfigKey(
            "prices",
            [],
            {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["instance_type", "region", "usd_per_hour", "source", "read_on"],
                    "properties": {
                        "instance_type": {"type": "string", "minLength": 1},
                        "region": {"type": "string", "minLength": 1},
                        "usd_per_hour": {"type": "number", "exclusiveMinimum": 0},
                        "source": {"type": "string", "minLength": 1},
                        "read_on": {"type": "string", "format": "date"},
                    },
                },
            },
            "The platform's node prices, US dollars per hour per node, each with its source "
            "(a price page, a contract) and the day it was read: negotiated prices, or the "
            "instance types and regions the built-in table lacks (the plan names a missing "
            "one), and `instance_type: load-balancer` for one model's load balancer in a "
            "region. They win over the built-in table's rows in plan and check.",
        ),
    ),
    links=(
        "https://docs.vllm.ai/en/latest/cli/bench/serve.html",
        "https://docs.nvidia.com/deeplearning/triton-inference-server/user-guide/docs/user_guide/perf_analyzer.html",
    ),
    offline_only=True,
    sources=(
        "The blueprint (traffic, slo, profile, budget, replicas, autoscaling) and the "
        "capacity planner's tables (GPU peaks, prices). Offline only: online, CrossGuard has "
        "no blueprint, and validate has already refused what the estimate cannot carry."
    ),
    passing_example="""\
models:
  ranker:
    traffic: {peak_rps: 500}
    profile: {points: [{batch_size: 1, p95_ms: 2.0}, {batch_size: 16, p95_ms: 7.9}]}
""",
    failing_example="""\
models:
  ranker:
    traffic: {peak_rps: 500}
    profile: {points: [{batch_size: 1, p95_ms: 2.0}, {batch_size: 16, p95_ms: 7.9}]}
    budget: {usd_per_month: 10}   # two warm replicas cost more than $10 a month
""",
)
