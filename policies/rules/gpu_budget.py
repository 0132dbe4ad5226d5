"""gpu-budget: an environment's GPU pools can never grow past the platform's GPU budget."""

from __future__ import annotations

from collections.abc import Iterator

from inferplane.policies.framework import ConfigKey, Finding, Rule, RuleConfig
from inferplane.policies.stack import Stack, most_nodes


def pool_gpus(stack: Stack) -> dict[str, tuple[int, int, int]]:
    """Pool -> (GPUs at most, zones, nodes.max per zone) from the node groups (or, without
    them, the pool's facts): nodes.max x gpus_per_node summed over the pool's zones. Spare
    GPUs run on those nodes, so they are inside the count."""
    out: dict[str, tuple[int, int, int]] = {}
    if stack.facts is None:
        return out
    for name, pool in sorted(stack.facts.pools.items()):
        groups = [g for g in stack.node_groups if g.pool == name]
        if groups:
            if any(g.max_nodes is None for g in groups):
                continue  # unknown during preview
            nodes = most_nodes(groups)
            zones = len({g.zones or (str(i),) for i, g in enumerate(groups)})
            per_zone = max(g.max_nodes or 0 for g in groups)
        else:
            zones, per_zone = len(pool.zones), pool.nodes_max
            nodes = zones * per_zone
        out[name] = (nodes * pool.gpus_per_node, zones, per_zone)
    return out


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    budget = int(config["max_gpus"])
    pools = pool_gpus(stack)
    total = sum(gpus for gpus, _, _ in pools.values())
    if total <= budget or not pools:
        return
    largest = max(pools, key=lambda p: pools[p][0])
    parts = ", ".join(
        f"{name} {zones} zone(s) x {per_zone} nodes = {gpus} GPUs"
        for name, (gpus, zones, per_zone) in pools.items()
    )
    groups = [g for g in stack.node_groups if g.pool == largest]
    yield Finding(
        f"gpu_pools.{largest}",
        ("gpu_pools", largest, "nodes", "max"),
        f"the environment's GPU pools can grow to {total} GPUs ({parts}), over the "
        f"platform's budget of {budget} (gpu-budget.max_gpus in the policy config); lower "
        "nodes.max, or ask the platform team to raise max_gpus",
        groups[0].resource.ref if groups else None,
    )


RULE = Rule(
    id="gpu-budget",
    title="An environment's GPU pools stay within the platform's GPU budget",
    level="mandatory",
    scope="stack",
    check=check,
    rationale=(
        "nodes.max is a promise the cloud keeps: the autoscaler buys GPUs up to it whenever "
        "pods are pending, and a blueprint author can raise it in one line. GPUs are the "
        "most expensive and scarcest thing a stack holds, and the quota they draw on is "
        "shared by every team of the account, so how many one environment may ever hold is "
        "the platform's decision, written in its policy config, not the blueprint's."
    ),
    remediation=(
        "Lower gpu_pools.<p>.nodes.max (per zone) until nodes.max x gpus_per_node summed over "
        "every pool and zone, spare GPUs included, is at most the budget; or have the "
        "platform team raise gpu-budget.max_gpus in its policy config."
    ),
    links=("https://kubernetes.io/docs/concepts/cluster-administration/cluster-autoscaling/",),
    config=(
        ConfigKey(
            "max_gpus",
            64,
            {"type": "integer", "minimum": 0},
            "Most GPUs one environment's pools may hold: nodes.max x gpus_per_node over "
            "every pool and zone.",
        ),
    ),
    sources=(
        "Resources only: node group maximums per pool and zone, and GPUs per node from the "
        "environment ConfigMap (without them the rule is skipped). Offline and online alike."
    ),
    passing_example="""\
gpu_pools:   # two zones: 2 x 6 + 2 x 2 = 16 GPUs
  l4: {gpu: nvidia-l4, nodes: {min: 3, max: 6}}
  shared: {gpu: nvidia-l4, nodes: {min: 0, max: 2}}
""",
    failing_example="""\
gpu_pools:   # two zones: 2 x 5 x 8 = 80 GPUs, over the default budget of 64
  h100: {gpu: nvidia-h100-80gb, gpus_per_node: 8, nodes: {min: 1, max: 5}}
""",
)
