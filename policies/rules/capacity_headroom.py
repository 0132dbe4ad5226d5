"""capacity-headroom: a pool can hold every model at max, plus a rolling update."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from inferplane.policies.framework import Finding, Rule, RuleConfig
from inferplane.policies.resources import DEPLOYMENT, Resource, as_number, gpu_units
from inferplane.policies.stack import (
    ModelView,
    Stack,
    max_replicas,
    most_nodes,
    rollout_of,
    workload_min_replicas,
)


def _scaled(value: Any, replicas: float, round_up: bool) -> int:
    """A maxSurge/maxUnavailable value (int or percentage) as a replica count."""
    if isinstance(value, str) and value.endswith("%"):
        exact = float(value[:-1]) / 100 * replicas
        return math.ceil(exact) if round_up else math.floor(exact)
    number = as_number(value)
    return int(number) if number is not None else 0


def surge(w: Resource, replicas: float) -> tuple[int, int]:
    """(extra pods during a rollout, pods it may take down) of a Deployment."""
    if w.type != DEPLOYMENT:
        return 0, 1
    strategy = w.spec.get("strategy") or {}
    if strategy.get("type") == "Recreate":
        return 0, int(replicas)
    rolling = strategy.get("rollingUpdate") or {}
    return (
        _scaled(rolling.get("maxSurge", "25%"), replicas, round_up=True),
        _scaled(rolling.get("maxUnavailable", "25%"), replicas, round_up=False),
    )


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    by_pool: dict[str, list[ModelView]] = {}
    for model in stack.iter_models():
        if model.pool and model.workloads:
            by_pool.setdefault(model.pool, []).append(model)
    for pool_name, models in sorted(by_pool.items()):
        pool = stack.pool(pool_name)
        if pool is None:
            continue
        groups = [g for g in stack.node_groups if g.pool == pool_name]
        if groups:
            if any(g.max_nodes is None for g in groups):
                continue  # unknown during preview
            nodes = most_nodes(groups)
        else:
            nodes = pool.nodes_max * len(pool.zones)
        capacity = nodes * pool.units_per_node
        demand: list[tuple[ModelView, float, float]] = []
        for model in models:
            top = max_replicas(model)
            units = gpu_units(model.workloads[0], pool.gpu_resource)
            if top is not None and units:
                demand.append((model, top, units))
        # Placeholders keep their GPUs until a replica preempts one, and are then replaced
        # on a new node: at max replicas they still need their own GPUs, or the pool has
        # no spare left exactly when a surge is under way.
        spare_gpus = stack.spare_gpu_units(pool_name)
        needed = sum(top * units for _, top, units in demand) + spare_gpus
        unit = "MIG slices" if pool.slices_per_gpu > 1 else "GPUs"
        target, field = f"gpu_pools.{pool_name}", ("gpu_pools", pool_name, "nodes", "max")
        ref = groups[0].resource.ref if groups else None
        if needed > capacity:
            parts = [f"{m.name} {top:g}x{units:g}" for m, top, units in demand]
            if spare_gpus:
                parts.append(f"spare_gpus {spare_gpus:g}")
            if stack.fixed_nodes:
                # No node autoscaler: what does not fit the nodes that exist stays Pending.
                have = f"its nodes across zones (nothing adds more) give {capacity:g}"
                fix = "add nodes and raise nodes.min and nodes.max to match, or lower replicas.max"
            else:
                have = f"its nodes.max across zones gives {capacity:g}"
                fix = "raise nodes.max or lower replicas.max"
            yield Finding(
                target,
                field,
                f"at max replicas the models on pool {pool_name} need {needed:g} {unit} ("
                + ", ".join(parts)
                + f") but {have}; {fix}"
                + (" or spare_gpus" if spare_gpus else ""),
                ref,
            )
            continue
        # A surge pod preempts a placeholder: its GPUs are room for a rollout.
        spare = capacity - needed + spare_gpus
        for model, top, units in demand:
            w = model.workloads[0]
            if rollout_of(model, w) is not None:
                # The Rollout replaces the pods, not the Deployment's rolling update (held
                # at zero once the Rollout is Healthy): canary-headroom judges its surge.
                continue
            extra, down = surge(w, top)
            low = workload_min_replicas(model, w)
            if extra > 0 and extra * units > spare:
                yield Finding(
                    target,
                    field,
                    f"a rolling update of {model.name} at max replicas adds {extra} pod(s) "
                    f"needing {extra * units:g} {unit}, but pool {pool_name} has {spare:g} "
                    f"spare; the rollout would hang — raise nodes.max, or roll with "
                    "maxSurge: 0, maxUnavailable: 1 and at least 2 replicas",
                    w.ref,
                )
            elif extra == 0 and down > 0 and low == 1:
                yield Finding(
                    f"models.{model.name}",
                    ("models", model.name, "replicas", "min"),
                    f"{model.name} rolls out by replacing its only warm replica in place "
                    "(maxSurge 0), so every update interrupts it; keep at least 2 replicas or "
                    "leave a spare GPU for a surge pod",
                    w.ref,
                )


RULE = Rule(
    id="capacity-headroom",
    title="GPU pools can hold every model at max replicas and a rolling update",
    level="advisory",
    scope="stack",
    check=check,
    rationale=(
        "Autoscaling stops at the pool's node maximum: if the models' maximum replicas need "
        "more GPUs than the pool can ever have, the extra replicas stay Pending exactly "
        "when traffic peaks. GPUs are scarce, so a rollout with maxSurge needs a spare GPU "
        "or it deadlocks; rolling with maxSurge 0 instead needs at least two replicas to "
        "stay up. Spare GPUs (placeholders a replica preempts) count on top of the "
        "replicas: they are re-created on a new node once preempted. On a kubernetes "
        "environment nothing adds nodes: the pool's nodes (nodes.min == nodes.max) are all "
        "there is, and a replica beyond them never becomes ready. A model with a `rollout` "
        "is replaced by its Argo Rollouts canary, not by its Deployment's rolling update: "
        "canary-headroom judges that surge, per zone, and this rule does not."
    ),
    remediation=(
        "Raise gpu_pools.<p>.nodes.max (per zone) until it covers the models' "
        "replicas.max x gpus plus spare_gpus per zone plus one replica's GPUs, or lower "
        "replicas.max."
    ),
    links=(
        "https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#rolling-update-deployment",
    ),
    sources=(
        "Resources only: ScaledObject maxReplicaCount (or workload replicas), Deployment "
        "rollout strategy, serving pods' GPU limits, spare-GPU placeholders' replicas and GPU "
        "limits, node group maximums, and GPUs per node "
        "from the environment ConfigMap (without it the rule is skipped)."
    ),
    passing_example="""\
gpu_pools:
  l4: {gpu: nvidia-l4, nodes: {min: 3, max: 7}, spare_gpus: 1}   # 2 zones: 14 GPUs
models:
  chat: {pool: l4, gpus: 1, replicas: {min: 2, max: 8}}
  ranker: {pool: l4, gpus: 1, replicas: {min: 2, max: 4}}   # 8 + 4 + 2 spare = 14 GPUs
""",
    failing_example="""\
gpu_pools:
  l4: {gpu: nvidia-l4, nodes: {min: 2, max: 4}}   # 2 zones: 8 GPUs
models:
  chat: {pool: l4, gpus: 1, replicas: {min: 2, max: 8}}
  ranker: {pool: l4, gpus: 1, replicas: {min: 2, max: 4}}   # 8 + 4 = 12 GPUs at most
""",
)
