"""warm-replicas: every realtime model keeps a warm replica in each zone it serves."""

from __future__ import annotations

import math
from collections.abc import Iterator

from inferplane.blueprint.wake import SCHEDULE_TRIGGER_PREFIX, year_share
from inferplane.policies.framework import ConfigKey, Finding, Rule, RuleConfig
from inferplane.policies.resources import Resource, as_number, gpu_units
from inferplane.policies.stack import ModelView, Stack, min_replicas, wake_paths, zone_min_replicas


def schedule_windows(model: ModelView) -> list[tuple[int, float, Resource, str]]:
    """The model's `replicas.schedule` windows, from its ScaledObjects' cron triggers named
    ``schedule-<index>``: (index, desiredReplicas, the ScaledObject, "start to end, tz")."""
    found = []
    for so in model.scaled_objects:
        triggers = so.spec.get("triggers")
        for trigger in triggers if isinstance(triggers, list) else []:
            name = str(trigger.get("name") or "") if isinstance(trigger, dict) else ""
            suffix = name.removeprefix(SCHEDULE_TRIGGER_PREFIX)
            if trigger.get("type") != "cron" or suffix == name or not suffix.isdigit():
                continue
            meta = trigger.get("metadata") or {}
            desired = as_number(meta.get("desiredReplicas")) or 0.0
            text = f"{meta.get('start')} to {meta.get('end')}, {meta.get('timezone')}"
            found.append((int(suffix), desired, so, text))
    return found


def served_zones(stack: Stack, model: ModelView) -> tuple[str, ...]:
    """Zones the model's replicas are spread over: its pool's zones."""
    return stack.pool_zones(model.pool) if model.pool else ()


def _schedule_share(stack: Stack, model: ModelView) -> float | None:
    """The share of the year the model's `replicas.schedule` windows cover (offline, where
    the blueprint's windows and their durations are known); None online."""
    env = stack.env
    served = env.models.get(model.name) if env is not None else None
    if served is None or not served.schedule:
        return None
    return year_share([(w.schedule, w.duration_s) for w in served.schedule])


def _replica_findings(
    stack: Stack, model: ModelView, per_zone: int, min_share: float = 0.0
) -> Iterator[Finding]:
    target = f"models.{model.name}"
    field = ("models", model.name, "replicas", "min")
    zones = served_zones(stack, model)
    need = max(1, per_zone * len(zones))
    where = (
        f"{per_zone} per zone of pool {model.pool}: {', '.join(zones)}" if zones else "at least one"
    )
    for so in model.scaled_objects:
        if "idleReplicaCount" in so.spec:
            yield Finding(
                target,
                field,
                f"ScaledObject {so.k8s_name} sets idleReplicaCount "
                f"({so.spec['idleReplicaCount']}), which scales an idle realtime model below "
                "its warm minimum; remove idleReplicaCount",
                so.ref,
            )
        if "minReplicaCount" not in so.spec:
            yield Finding(
                target,
                field,
                f"ScaledObject {so.k8s_name} renders no minReplicaCount, and KEDA's default "
                f"is 0 (scale to zero); a realtime model needs {need} warm replicas "
                f"({where})",
                so.ref,
            )
            return
    count, source = min_replicas(model)
    if count is None or source is None:
        return
    windows = schedule_windows(model)
    if windows and count < need:
        # Fewer outside the windows is the point of a schedule: warm replicas are owed in
        # each window instead, and the windows must be the model's hours, not a minute a
        # year that would make a realtime model cold all but that minute.
        share = _schedule_share(stack, model)
        if share is not None and share < min_share:
            yield Finding(
                target,
                ("models", model.name, "replicas", "schedule"),
                f"its schedule windows cover {share:.1%} of the time, and outside them it "
                f"keeps {count:g} warm replica{'' if count == 1 else 's'}; a realtime model "
                f"must keep {need} ({where}) at least {min_share:.0%} of the time "
                "(warm-replicas.min_schedule_share), because a cold start on a GPU takes "
                "minutes: widen the windows to the hours its users come, or raise "
                "replicas.min",
                source.ref,
            )
        # A model with one Deployment per zone (llm-aware routing) has a ScaledObject per
        # zone, each with the window's per-zone floor: the window's replicas add up, as
        # `min_replicas` adds their minimums.
        by_index: dict[int, tuple[float, Resource, str]] = {}
        for index, desired, so, text in windows:
            total, first, first_text = by_index.get(index, (0.0, so, text))
            by_index[index] = (total + desired, first, first_text)
        for index, (desired, so, text) in sorted(by_index.items()):
            if desired < need:
                yield Finding(
                    target,
                    ("models", model.name, "replicas", "schedule", index, "min"),
                    f"window {index} ({text}) keeps {desired:g} warm replicas; a realtime "
                    f"model needs at least {need} in each window ({where}), because a cold "
                    "start on a GPU takes minutes",
                    so.ref,
                )
        return
    if count < need:
        yield Finding(
            target,
            field,
            f"keeps {count:g} warm replica{'' if count == 1 else 's'}; a realtime model needs "
            f"at least {need} ({where}), "
            "because a cold start on a GPU takes minutes" + _at_zero(model, count),
            source.ref,
        )


def _at_zero(model: ModelView, count: float) -> str:
    """What happens at zero: who waits for the cold start, or that nothing wakes the model
    (a waiver that accepts cold starts does not make such a model come back)."""
    if count > 0:
        return ""
    paths = wake_paths(model)
    if paths:
        return f"; at zero it wakes on {' or '.join(paths)}, and that first request waits"
    return (
        "; at zero nothing wakes it (no cron or HTTP add-on trigger, and its own metrics "
        "vanish with its last pod): it does not come back until its minimum is raised"
    )


def _capacity_findings(stack: Stack) -> Iterator[Finding]:
    by_pool: dict[str, list[ModelView]] = {}
    for model in stack.iter_models():
        if model.pool:
            by_pool.setdefault(model.pool, []).append(model)
    for pool_name, models in sorted(by_pool.items()):
        pool = stack.pool(pool_name)
        groups = [g for g in stack.node_groups if g.pool == pool_name]
        if pool is None or not any(m.realtime for m in models):
            continue
        if not groups and not stack.fixed_nodes:
            continue  # capacity is only knowable with the pool's facts and its node groups
        zones = stack.pool_zones(pool_name)
        for zone in zones:
            in_zone = [g for g in groups if g.zones and zone in g.zones]
            if any(g.min_nodes is None for g in in_zone):
                continue  # unknown during preview
            # A kubernetes environment's nodes are described, not created: the facts' count.
            # A zone's Karpenter NodePools, one per capacity market, share one limit's worth
            # of pods; its node groups' later sources start at zero.
            karpenter = bool(in_zone) and all(g.on_demand for g in in_zone)
            held_nodes = (
                max(g.min_nodes or 0 for g in in_zone)
                if karpenter
                else sum(g.min_nodes or 0 for g in in_zone)
            )
            nodes = pool.nodes_min if stack.fixed_nodes else held_nodes
            held = nodes * pool.units_per_node
            demand: list[tuple[str, float]] = []
            for model in models:
                count, _ = min_replicas(model)
                if not count or not model.workloads:
                    continue
                warm_here = zone_min_replicas(model, zone, len(zones)) or 0.0
                units = gpu_units(model.workloads[0], pool.gpu_resource)
                if units:
                    demand.append((model.name, warm_here * units))
            # Spare GPUs are held on the same minimum nodes, or a surge finds none free.
            spare = stack.spare_gpu_units(pool_name, zone)
            if spare:
                demand.append(("spare_gpus", spare))
            needed = sum(u for _, u in demand)
            if needed > held:
                unit = "MIG slices" if pool.slices_per_gpu > 1 else "GPUs"
                per_node = pool.units_per_node
                nodes_needed = math.ceil(needed / per_node)
                if in_zone and all(g.on_demand for g in in_zone):
                    # Karpenter: the warm replicas and spare GPUs get nodes up to the limit.
                    yield Finding(
                        f"gpu_pools.{pool_name}",
                        ("gpu_pools", pool_name, "nodes", "max"),
                        f"in zone {zone}, nodes.max {nodes} ({held:g} {unit}, the limit of "
                        f"the Karpenter NodePool) cannot hold the {needed:g} {unit} of the "
                        "warm replicas placed there"
                        + (" and its spare GPUs" if spare else "")
                        + " ("
                        + ", ".join(f"{name} {u:g}" for name, u in demand)
                        + f"); raise nodes.max to {nodes_needed}",
                        in_zone[0].resource.ref,
                    )
                    continue
                yield Finding(
                    f"gpu_pools.{pool_name}",
                    ("gpu_pools", pool_name, "nodes", "min"),
                    f"in zone {zone}, nodes.min {nodes} ({held:g} {unit}) cannot hold the "
                    f"{needed:g} {unit} of the warm replicas placed there"
                    + (" and its spare GPUs" if spare else "")
                    + " ("
                    + ", ".join(f"{name} {u:g}" for name, u in demand)
                    + (
                        f"); add nodes in {zone} until it has {nodes_needed}, and set "
                        f"nodes.min and nodes.max to {nodes_needed}"
                        if stack.fixed_nodes
                        else f"); raise nodes.min to {nodes_needed}"
                    ),
                    (in_zone[0] if in_zone else groups[0]).resource.ref if groups else None,
                )


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    per_zone = int(config["min_warm_replicas_per_zone"])
    share = float(config["min_schedule_share"])
    for model in stack.iter_models():
        if model.realtime:
            yield from _replica_findings(stack, model, per_zone, share)
    yield from _capacity_findings(stack)


RULE = Rule(
    id="warm-replicas",
    title="Realtime models keep a warm replica in every zone they serve",
    level="mandatory",
    scope="stack",
    check=check,
    rationale=(
        "A GPU replica takes minutes to start: a 10-20 GB image pull, the weight download, "
        "engine load and CUDA-graph capture. A realtime model that scales to zero makes the "
        "next user wait those minutes. KEDA's minReplicaCount defaults to 0, so the minimum "
        "must always be rendered, and idleReplicaCount must not undercut it. With zone-local "
        "routing each client zone needs its own warm replica, and a warm replica needs a "
        "warm GPU: the pool's minimum nodes in each zone must hold the GPUs (or MIG slices) "
        "of every warm replica placed there, plus the pool's spare_gpus, which placeholders "
        "hold on the same nodes. Batch models may scale to zero. A realtime model with "
        "replicas.schedule windows may keep fewer outside them (even none): each window "
        "must then keep the warm replicas. A waived "
        "realtime model at zero is still told apart by how it comes back: its own HTTP "
        "requests through the KEDA HTTP add-on, a wake schedule, or nothing at all."
    ),
    remediation=(
        "Set models.<m>.replicas.min to at least the number of zones of the model's pool "
        "(the default does this), and raise gpu_pools.<p>.nodes.min until each zone holds "
        "the warm replicas' GPUs plus spare_gpus. For an environment where cold starts are "
        "acceptable, add a waiver with a reason and an expiry."
    ),
    links=(
        "https://keda.sh/docs/2.20/reference/scaledobject-spec/#minreplicacount",
        "https://github.com/kserve/kserve/issues/1247",
        "https://github.com/vllm-project/vllm/issues/6319",
    ),
    config=(
        ConfigKey(
            "min_warm_replicas_per_zone",
            1,
            {"type": "integer", "minimum": 1},
            "Warm replicas a realtime model keeps in each zone of its pool.",
        ),
        ConfigKey(
            "min_schedule_share",
            0.15,
            {"type": "number", "minimum": 0, "maximum": 1},
            "Least share of the time a realtime model whose replicas.min is below the warm "
            "replicas must have them through replicas.schedule windows (0.15: about 25 hours "
            "a week; weekday business hours, 8 h x 5, are 24%). Checked offline, where the "
            "windows' durations are known.",
        ),
    ),
    sources=(
        "Resources only: ScaledObject minReplicaCount/idleReplicaCount (or the workload's "
        "replicas) and, at zero, its cron and HTTP add-on triggers; the serving pods' GPU "
        "limits, the spare-GPU placeholders' replicas and GPU limits, node group minimums, "
        "and the pools' zones and GPUs per node from the "
        "environment ConfigMap. Offline and online alike."
    ),
    passing_example="""\
gpu_pools:
  l4:   # per zone: chat's and ranker's warm replica, and one spare GPU
    gpu: nvidia-l4
    nodes: {min: 3, max: 6}
    spare_gpus: 1
models:
  chat:
    pool: l4
    replicas: {min: 2, max: 4}    # environment zones: [us-east-1a, us-east-1b]
""",
    failing_example="""\
gpu_pools:
  l4: {gpu: nvidia-l4, nodes: {min: 2, max: 6}}
models:
  chat:
    pool: l4
    replicas: {min: 0, max: 4}    # scales to zero: the next user waits minutes
""",
)
