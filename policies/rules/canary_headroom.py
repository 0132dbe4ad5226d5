"""canary-headroom: a zone's GPUs hold a rollout's canary pods beside its stable pods.

Argo Rollouts v1.10.1, basic canary (no traffic router), from the module's source:

- A step's counts: utils/replicaset/canary.go ``CalculateReplicaCountsForBasicCanary``
  takes ``approximateWeightedCanaryStableReplicaCounts(replicas, setWeight, 100,
  maxSurge)``: the canary count (ceil or floor of ``replicas * weight / 100``) and a total of
  ``replicas`` or, when maxSurge allows, ``replicas + 1``, whichever comes closest to the
  weight; both at least 1 for a weight of 1..99 (`canary_counts`). The maximum weight is
  100 without a traffic router (utils/weightutil ``MaxTrafficWeight``).
- Moving to a step, the canary ReplicaSet grows before the stable one shrinks, the total of
  every ReplicaSet's replicas capped at ``replicas + maxSurge`` (``maxReplicaCountAllowed``,
  same function); the stable shrinks as far as ``replicas - maxUnavailable`` pods stay
  available (``minAvailableReplicaCount``, same function). So a step needs, at once, the
  stable pods of the step before plus the step's canary pods, at most ``replicas +
  maxSurge`` (`peak_extra`).
- maxSurge and maxUnavailable: the Rollout's ``strategy.canary`` values, else "25" each
  (utils/defaults/defaults.go ``DefaultMaxSurge``, ``DefaultMaxUnavailable``;
  ``GetMaxSurgeOrDefault``). Resolved by utils/replicaset/replicaset.go
  ``resolveFenceposts`` with k8s.io/apimachinery v0.34.5 intstr ``GetValueFromIntOrPercent``,
  whose ``getIntOrPercentValue`` reads every string as a percentage ("25" and "25%" alike):
  maxSurge rounds up, maxUnavailable down, and when both come to 0 maxUnavailable is 1
  (`fenceposts`).

With maxUnavailable 0 (fewer than 4 replicas at the default) a stable pod goes only once a
canary pod is available: a canary pod that finds no GPU stays Pending and the rollout stops
at that step. With maxUnavailable of 1 or more the stable pods make way first, and the zone
serves with fewer replicas while the canary waits for their GPUs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from typing import Any

from inferplane.blueprint import naming
from inferplane.policies.framework import Finding, Rule, RuleConfig
from inferplane.policies.resources import Resource, _dict, _list, as_number, gpu_units
from inferplane.policies.stack import (
    ModelView,
    Stack,
    rollout_of,
    scaled_max,
    zone_max_replicas,
)

DEFAULT_MAX_SURGE = "25"
"""``DefaultMaxSurge`` (v1.10.1 utils/defaults/defaults.go): a percentage."""
DEFAULT_MAX_UNAVAILABLE = "25"
"""``DefaultMaxUnavailable`` (same file)."""
MAX_WEIGHT = 100
"""``MaxTrafficWeight`` without a traffic router (v1.10.1 utils/weightutil)."""


def fencepost(value: Any, replicas: int, round_up: bool) -> int | None:
    """A maxSurge or maxUnavailable value as pods: an int as it is, a string (with or
    without "%") as a percentage of `replicas`, rounded up or down (apimachinery v0.34.5
    intstr ``getIntOrPercentValue``, ``GetValueFromIntOrPercent``). None: not a number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.replace("%", "")
        if not re.fullmatch(r"[+-]?[0-9]+", text):  # strconv.Atoi's syntax, ASCII digits
            return None
        exact = int(text) * replicas / 100
        return math.ceil(exact) if round_up else math.floor(exact)
    return None


def fenceposts(canary: Any, replicas: int) -> tuple[int, int] | None:
    """(maxSurge, maxUnavailable) of a Rollout's ``strategy.canary`` at `replicas`
    (``resolveFenceposts``); None when a value is not a number."""
    surge = fencepost(canary.get("maxSurge", DEFAULT_MAX_SURGE), replicas, round_up=True)
    down = fencepost(
        canary.get("maxUnavailable", DEFAULT_MAX_UNAVAILABLE), replicas, round_up=False
    )
    if surge is None or down is None:
        return None
    if surge == 0 and down == 0:
        down = 1
    return surge, min(down, replicas)


def _tied(weight: int, total: int) -> bool:
    """``floorCeilingTied``."""
    return math.modf(total * (weight / MAX_WEIGHT))[0] == 0.5


def _delta(weight: int, canary: int, total: int) -> float:
    """``weightDelta``."""
    return abs(canary * MAX_WEIGHT / total - weight)


def canary_counts(replicas: int, weight: int, max_surge: int) -> tuple[int, int]:
    """(canary, stable) pods at a ``setWeight`` of `weight`: v1.10.1
    utils/replicaset/canary.go ``approximateWeightedCanaryStableReplicaCounts``, line for
    line."""
    if replicas == 0:
        return 0, 0
    ceil = math.ceil(replicas * weight / MAX_WEIGHT)
    floor = math.floor(replicas * weight / MAX_WEIGHT)
    zero_allowed = weight in (MAX_WEIGHT, 0) or (replicas == 1 and max_surge == 0)
    options: list[tuple[int, int]] = []
    if ceil < replicas or zero_allowed:
        options.append((ceil, replicas))
    if not _tied(weight, replicas) and (floor != 0 or zero_allowed):
        options.append((floor, replicas))
    if max_surge > 0:
        options.append((ceil, replicas + 1))
        if not _tied(weight, replicas + 1) and (floor != 0 or zero_allowed):
            options.append((floor, replicas + 1))
    if not options:
        return 0, replicas
    best = options[0]
    for option in options[1:]:
        if _delta(weight, *option) < _delta(weight, *best):
            best = option
    return best[0], best[1] - best[0]


def peak_extra(replicas: int, weights: Sequence[int], max_surge: int) -> tuple[int, int, int, int]:
    """The most pods beyond `replicas` the canary's steps run at once, as (extra, weight of
    that step, stable pods of the step before, canary pods of the step): moving to a step,
    the canary grows to its count while the stable still holds the count of the step
    before, the total capped at ``replicas + maxSurge``
    (``CalculateReplicaCountsForBasicCanary``)."""
    stable = replicas
    best = (0, 0, replicas, 0)
    for weight in weights:
        canary, next_stable = canary_counts(replicas, weight, max_surge)
        extra = min(stable + canary, replicas + max_surge) - replicas
        if extra > best[0]:
            best = (extra, weight, stable, canary)
        stable = next_stable
    return best


def weights(rollout: Resource) -> list[int]:
    """The canary weights a rollout passes through, in order: each step's ``setWeight``, then
    `MAX_WEIGHT` once the steps are done (v1.10.1 utils/replicaset/canary.go
    ``GetCurrentSetWeight``: no current step, so ``MaxTrafficWeight``), which is also the
    only weight of a Rollout without ``setWeight`` steps."""
    canary = _dict(_dict(rollout.spec.get("strategy")).get("canary"))
    found = []
    for step in _list(canary.get("steps")):
        value = as_number(_dict(step).get("setWeight"))
        if value is not None:
            found.append(int(value))
    if not found or found[-1] < MAX_WEIGHT:
        found.append(MAX_WEIGHT)
    return found


def _zone_nodes(stack: Stack, pool_name: str, zone: str, nodes_max: int) -> int | None:
    """The most nodes `pool_name` has in `zone`: its node groups there (capacity sources
    tried in order hold the largest maximum among them, `most_nodes`), else the facts'
    ``nodes.max``; None while preview does not know a maximum."""
    groups = [g for g in stack.node_groups if g.pool == pool_name]
    in_zone = [g for g in groups if g.zones and zone in g.zones]
    if any(g.max_nodes is None for g in in_zone):
        return None
    if in_zone:
        return max(g.max_nodes or 0 for g in in_zone)
    return nodes_max


def _rollout_findings(
    stack: Stack, model: ModelView, workload: Resource, rollout: Resource
) -> Iterator[Finding]:
    pool_name = model.pool
    pool = stack.pool(pool_name)
    if pool_name is None or pool is None:
        return
    units = gpu_units(workload, pool.gpu_resource)
    steps = weights(rollout)
    if not units or not steps:
        return
    zones = stack.pool_zones(pool_name)
    zone = workload.labels.get(naming.ZONE_LABEL)
    here = (zone,) if zone else zones
    if not here:
        return
    top = scaled_max(model, rollout.k8s_name)
    if top is None:
        top = scaled_max(model, workload.k8s_name)
    if top is None:
        top = as_number(rollout.spec.get("replicas", workload.spec.get("replicas", 1)))
    if top is None:
        return
    replicas = int(top)
    canary = _dict(_dict(rollout.spec.get("strategy")).get("canary"))
    if canary.get("trafficRouting"):
        return  # a traffic-routed canary sizes its ReplicaSets otherwise
    posts = fenceposts(canary, replicas)
    if posts is None:
        return
    max_surge, max_unavailable = posts
    extra, weight, stable_before, canary_pods = peak_extra(replicas, steps, max_surge)
    if extra == 0:
        return
    capacity = 0.0
    node_counts = []
    for z in here:
        nodes = _zone_nodes(stack, pool_name, z, pool.nodes_max)
        if nodes is None:
            return  # unknown during preview
        node_counts.append(nodes)
        capacity += nodes * pool.units_per_node
    demand: list[tuple[str, float]] = []
    for other in stack.iter_models():
        if other.pool != pool_name or not other.workloads:
            continue
        other_units = gpu_units(other.workloads[0], pool.gpu_resource)
        if not other_units:
            continue
        if other.name == model.name:
            count: float = top
        else:
            count = sum(zone_max_replicas(other, z, len(zones)) or 0.0 for z in here)
        if count:
            demand.append((other.name, count * other_units))
    spare = stack.spare_gpu_units(pool_name, zone)  # without a zone, the pool's
    taken = sum(u for _, u in demand)
    if taken + spare > capacity:
        return  # the models at max do not fit: capacity-headroom's finding, not the canary's
    # A canary pod preempts a spare-GPU placeholder (negative priority): its GPUs are room.
    room = capacity - taken
    need = extra * units
    if need <= room:
        return
    unit = "MIG slices" if pool.slices_per_gpu > 1 else "GPUs"
    where = f"zone {zone}" if zone else f"pool {pool_name}"
    nodes_text = "+".join(str(n) for n in node_counts)
    per_node = pool.units_per_node
    short = need - room
    more_nodes = math.ceil(short / per_node)
    surge_text = (
        f"maxSurge {canary['maxSurge']}" if "maxSurge" in canary else "maxSurge 25% (default)"
    )
    if max_unavailable == 0:
        effect = (
            f"with maxUnavailable 0 of {replicas} no stable pod leaves before a canary pod is "
            "ready, so the canary's pods stay Pending and the rollout stops at that step"
        )
    else:
        effect = (
            f"the stable pods make way (maxUnavailable {max_unavailable}), so the zone serves "
            f"with up to {min(extra, max_unavailable)} replica(s) fewer than replicas.max while "
            "the canary waits for their GPUs"
        )
    grow = (
        f"add {more_nodes} node(s) there and raise nodes.min and nodes.max to match"
        if stack.fixed_nodes
        else f"raise gpu_pools.{pool_name}.nodes.max by {more_nodes} (to "
        f"{max(node_counts) + more_nodes} per zone)"
    )
    yield Finding(
        f"models.{model.name}",
        ("models", model.name, "rollout"),
        f"in {where}, the rollout of {model.name} at replicas.max ({replicas} there) runs up "
        f"to {extra} pod(s) beyond its replicas at its {weight}% step ({stable_before} stable "
        f"pod(s) of the step before and {canary_pods} canary pod(s), capped at replicas + "
        f"{surge_text} = {replicas + max_surge}), needing {need:g} {unit}; pool {pool_name} has "
        f"{capacity:g} {unit} there (nodes.max {nodes_text} x {per_node:g}) and the models at "
        "max take "
        + ", ".join(f"{name} {u:g}" for name, u in demand)
        + (f" (its {spare:g} spare GPUs the canary may preempt)" if spare else "")
        + f", leaving {room:g}: {effect}; {grow}, or lower replicas.max of {model.name} "
        "or of another model on the pool",
        rollout.ref,
    )


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    for model in stack.iter_models():
        for workload in model.workloads:
            rollout = rollout_of(model, workload)
            if rollout is not None:
                yield from _rollout_findings(stack, model, workload, rollout)


RULE = Rule(
    id="canary-headroom",
    title="A zone's GPUs hold a rollout's canary pods beside its stable pods at max replicas",
    level="advisory",
    scope="stack",
    check=check,
    rationale=(
        "Without a traffic router, an Argo Rollouts canary step runs new pods beside the "
        "stable ones: moving to a step, the canary ReplicaSet grows before the stable one "
        "shrinks, up to replicas + maxSurge pods in all (25% by default, rounded up). A model "
        "that rolls out over several zones does so one zone at a time, each zone's Rollout "
        "with that zone's replicas, so the extra pods need GPUs in that zone. At max "
        "replicas the pool has only what its nodes.max leaves after every model at max; a "
        "canary pod that finds no GPU waits, and with fewer than 4 replicas in the zone "
        "(maxUnavailable 25% rounds to 0) no stable pod makes way: the rollout stops at that "
        "step until traffic falls. With more, the stable pods go first and the zone serves "
        "below its maximum while the canary waits. A canary pod preempts a spare-GPU "
        "placeholder, so spare GPUs count as room. Advisory like capacity-headroom: a "
        "stalled canary leaves the stable version serving, it is not an outage, and the "
        "judgement assumes every model at its maximum at once. Each rule reports once: "
        "capacity-headroom leaves a rollout model's surge to this rule (its Deployment's "
        "rolling update never runs), and this rule stays silent in a zone whose models at "
        "max do not fit at all, the pool's shortfall capacity-headroom reports."
    ),
    remediation=(
        "Raise gpu_pools.<p>.nodes.max by the GPUs the message names (divided by GPUs per "
        "node), or lower replicas.max of the model or of another model on the pool."
    ),
    links=(
        "https://argoproj.github.io/argo-rollouts/features/canary/",
        "https://kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption/",
    ),
    sources=(
        "Resources only: each Rollout (its workloadRef, setWeight steps, maxSurge and "
        "maxUnavailable, default 25% each) and the ScaledObject that scales it "
        "(maxReplicaCount), the serving pods' GPU limits and zone labels, every model's "
        "ScaledObjects, spare-GPU placeholders per zone, node group maximums per zone, and GPUs "
        "per node from the environment ConfigMap (without it the rule is skipped)."
    ),
    passing_example="""\
environments:
  staging: {cluster: {addons: {argo_rollouts: {}}}}
  prod: {cluster: {addons: {argo_rollouts: {}}}}
gpu_pools:
  l4: {gpu: nvidia-l4, nodes: {min: 3, max: 5}, spare_gpus: 0}   # 5 GPUs per zone
models:
  chat: {rollout: {}, replicas: {min: 2, max: 4}}   # 2 per zone, +1 canary pod: 3
  ranker: {rollout: {}, replicas: {min: 2, max: 4}}   # 2 per zone: 5 of 5 at a canary
""",
    failing_example="""\
environments:
  staging: {cluster: {addons: {argo_rollouts: {}}}}
  prod: {cluster: {addons: {argo_rollouts: {}}}}
gpu_pools:
  l4: {gpu: nvidia-l4, nodes: {min: 3, max: 4}, spare_gpus: 0}   # 4 GPUs per zone
models:
  chat: {rollout: {}, replicas: {min: 2, max: 4}}   # 2 per zone, +1 canary pod
  ranker: {rollout: {}, replicas: {min: 2, max: 4}}   # 2 per zone: 4 of 4 before any canary
""",
)
