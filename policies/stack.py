"""A stack as rules see it: its resources, indexed, plus the facts of its environment.

The facts come from the `inferplane-environment` ConfigMap that every stack deploys (so
that CrossGuard, which never sees the blueprint, knows the zones and pools), read with
`inferplane.blueprint.derived.facts` online and offline alike — or, offline, from the resolved
`Environment` through the same module when a program lacks that ConfigMap. Models are found by
the `inferplane.dev/model` label; GPU node groups by `inferplane.dev/pool`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from inferplane.blueprint import defaults, naming
from inferplane.blueprint.derived.facts import (
    EnvFacts,
    PoolFacts,
    environment_facts,
    from_config_map,
)
from inferplane.blueprint.model import Environment, zone_share
from inferplane.policies.resources import (
    CONFIG_MAP,
    DAEMON_SET,
    EKS_NODE_GROUP,
    GKE_NODE_POOL,
    GPU_RESOURCE,
    JOB,
    KARPENTER_NODE_POOL,
    PROMETHEUS_RULE,
    ROLLOUT,
    SCALED_OBJECT,
    SERVICE,
    SERVING_KINDS,
    WORKLOAD_KINDS,
    ImageRef,
    Resource,
    _dict,
    _list,
    as_number,
    gpu_units,
)

PAUSE_REPOSITORY = ImageRef.parse(defaults.PAUSE_IMAGE).repository
KEDA_DEFAULT_MAX = 100


@dataclass(frozen=True)
class NodeGroup:
    """A GPU node group (EKS managed node group or GKE node pool), cloud-neutral."""

    resource: Resource
    pool: str | None
    zones: tuple[str, ...] | None
    """Zones it places nodes in; None when the shape does not say."""
    spans: int
    """How many zones/subnets it spans (1 is the only correct answer)."""
    min_nodes: int | None
    """Minimum nodes per zone."""
    max_nodes: int | None
    on_demand: bool = False
    """Nodes exist only for the pods that ask (Karpenter): `min_nodes` is then the most
    nodes the pods may get, ``nodes.max``; there is no idle minimum."""


KARPENTER_GPU_COUNT = "karpenter.k8s.aws/instance-gpu-count"


def most_nodes(groups: tuple[NodeGroup, ...] | list[NodeGroup]) -> int:
    """The most nodes `groups` (of one pool) hold: per zone the largest ``max_nodes``, summed
    over zones. A zone's groups are its capacity sources, tried in order
    (the blueprint's `capacity` list): the autoscaler adds a node to a later one
    only for a pod the earlier ones could not place, so together they hold what the zone's
    pods need, at most ``nodes.max``, not the sum of their maxima. A group whose zone is
    unknown counts alone."""
    per_zone: dict[object, int] = {}
    for i, g in enumerate(groups):
        key: object = g.zones if g.zones else i
        per_zone[key] = max(per_zone.get(key, 0), g.max_nodes or 0)
    return sum(per_zone.values())


def _karpenter_node_pool(r: Resource) -> NodeGroup:
    """A Karpenter NodePool (`inferplane.components.karpenter`). Karpenter keeps no minimum:
    it launches nodes for the pods that ask, up to the NodePool's total GPU limit, and warm
    replicas and spare-GPU placeholders are such pods. What holds them is therefore the
    limit, in nodes of the required GPU count: it is both the minimum and the maximum here."""
    template = _dict(r.spec.get("template"))
    labels = _dict(_dict(template.get("metadata")).get("labels"))
    values: dict[str, list[Any]] = {}
    for req in _list(_dict(template.get("spec")).get("requirements")):
        req = _dict(req)
        if req.get("operator") == "In":
            values[str(req.get("key"))] = list(_list(req.get("values")))
    zones = tuple(str(z) for z in values.get(naming.TOPOLOGY_ZONE_LABEL, ()))
    per_node = as_number((values.get(KARPENTER_GPU_COUNT) or [None])[0])
    limit = as_number(_dict(r.spec.get("limits")).get(GPU_RESOURCE))
    nodes = None if not per_node or limit is None else int(limit // per_node)
    return NodeGroup(
        resource=r,
        pool=labels.get(naming.POOL_LABEL),
        zones=zones or None,
        spans=max(len(zones), 1),
        min_nodes=nodes,
        max_nodes=nodes,
        on_demand=True,
    )


def _node_group(r: Resource) -> NodeGroup:
    if r.type == KARPENTER_NODE_POOL:
        return _karpenter_node_pool(r)
    if r.type == EKS_NODE_GROUP:
        labels = _dict(r.props.get("labels"))
        scaling = _dict(r.props.get("scalingConfig"))
        subnets = _list(r.props.get("subnetIds"))
        zone = labels.get(naming.ZONE_LABEL)
        mn, mx = as_number(scaling.get("minSize")), as_number(scaling.get("maxSize"))
        return NodeGroup(
            resource=r,
            pool=labels.get(naming.POOL_LABEL),
            zones=(str(zone),) if zone else None,
            spans=max(len(subnets), 1),
            min_nodes=None if mn is None else int(mn),
            max_nodes=None if mx is None else int(mx),
        )
    config = _dict(r.props.get("nodeConfig"))
    labels = _dict(config.get("labels"))
    locations = tuple(str(z) for z in _list(r.props.get("nodeLocations")))
    auto = _dict(r.props.get("autoscaling"))
    fixed = as_number(r.props.get("nodeCount"))
    zone_label = labels.get(naming.ZONE_LABEL)
    zones = locations or ((str(zone_label),) if zone_label else None)
    spans = max(len(locations), 1)
    mn = as_number(auto.get("minNodeCount"))
    mx = as_number(auto.get("maxNodeCount"))
    total_mn, total_mx = (
        as_number(auto.get("totalMinNodeCount")),
        as_number(auto.get("totalMaxNodeCount")),
    )
    if mn is None and total_mn is not None:
        mn = total_mn / spans
    if mx is None and total_mx is not None:
        mx = total_mx / spans
    if not auto and fixed is not None:
        mn = mx = fixed
    return NodeGroup(
        resource=r,
        pool=labels.get(naming.POOL_LABEL),
        zones=zones,
        spans=spans,
        min_nodes=None if mn is None else int(mn),
        max_nodes=None if mx is None else int(mx),
    )


@dataclass(frozen=True)
class ModelView:
    """Everything the stack registers for one model, found by the `inferplane.dev/model` label."""

    name: str
    workloads: tuple[Resource, ...]
    """Serving workloads (Deployments and the like that request GPUs)."""
    scaled_objects: tuple[Resource, ...]
    services: tuple[Resource, ...]
    prometheus_rules: tuple[Resource, ...]
    jobs: tuple[Resource, ...]
    config_maps: tuple[Resource, ...]
    latency_class: str
    pool: str | None
    rollouts: tuple[Resource, ...] = ()
    """Argo Rollouts that take over a workload of the model (``workloadRef``)."""

    @property
    def realtime(self) -> bool:
        return self.latency_class == "realtime"


@dataclass
class Stack:
    """The resources of one stack plus the facts of its environment."""

    resources: tuple[Resource, ...]
    env: Environment | None = None
    """The resolved blueprint environment (offline only); rules must work without it."""
    facts: EnvFacts | None = field(default=None)

    def __post_init__(self) -> None:
        if self.facts is None:
            self.facts = self._facts_from_config_map()
        if self.facts is None and self.env is not None:
            self.facts = environment_facts(self.env)

    @property
    def fixed_nodes(self) -> bool:
        """A ``kubernetes`` environment: no node autoscaler, and each pool's nodes are the
        ones that exist (the facts' ``nodes_min`` == ``nodes_max`` per zone)."""
        return self.facts is not None and self.facts.cloud == "kubernetes"

    @classmethod
    def of(cls, resources: Iterable[Resource], env: Environment | None = None) -> Stack:
        return cls(tuple(resources), env)

    @cached_property
    def by_type(self) -> Mapping[str, tuple[Resource, ...]]:
        out: dict[str, list[Resource]] = {}
        for r in self.resources:
            out.setdefault(r.type, []).append(r)
        return {k: tuple(v) for k, v in out.items()}

    def of_type(self, *types: str) -> tuple[Resource, ...]:
        return tuple(r for t in types for r in self.by_type.get(t, ()))

    @property
    def environment(self) -> str:
        if self.env is not None:
            return self.env.name
        return self.facts.environment if self.facts else ""

    def _facts_from_config_map(self) -> EnvFacts | None:
        """The published facts; None while preview does not know them yet (unknown values
        are dropped). Facts that are there but wrong raise `FactsError`."""
        for r in self.of_type(CONFIG_MAP):
            if r.k8s_name == naming.ENVIRONMENT_CONFIGMAP:
                data = _dict(r.props.get("data"))
                return from_config_map(data) if data else None
        return None

    @cached_property
    def preflight(self) -> dict[str, Any] | None:
        """The capacity preflight's judged rows (`inferplane.blueprint.capacity.preflight
        .judge`) from the `naming.PREFLIGHT_CONFIGMAP` ConfigMap; None where the stack did
        not run it (offline, or on a cloud it does not ask) or preview does not know them."""
        for r in self.of_type(CONFIG_MAP):
            if r.k8s_name == naming.PREFLIGHT_CONFIGMAP:
                text = _dict(r.props.get("data")).get("preflight.json")
                if isinstance(text, str):
                    try:
                        rows = json.loads(text)
                    except ValueError:
                        return None
                    return rows if isinstance(rows, dict) else None
        return None

    @cached_property
    def node_groups(self) -> tuple[NodeGroup, ...]:
        return tuple(
            _node_group(r) for r in self.of_type(EKS_NODE_GROUP, GKE_NODE_POOL, KARPENTER_NODE_POOL)
        )

    @cached_property
    def serving_workloads(self) -> tuple[Resource, ...]:
        """Long-running workloads that hold GPUs: the model servers (spare-GPU placeholders
        excluded)."""
        return tuple(
            r
            for r in self.of_type(*SERVING_KINDS)
            if r.requests_gpu and not is_spare_gpu_placeholder(r)
        )

    @cached_property
    def spare_gpu_placeholders(self) -> tuple[Resource, ...]:
        """Deployments of pause pods holding a pool's spare GPUs (`is_spare_gpu_placeholder`)."""
        return tuple(r for r in self.of_type(*SERVING_KINDS) if is_spare_gpu_placeholder(r))

    @cached_property
    def _images_outside_prepull(self) -> frozenset[str]:
        return frozenset(
            c.image
            for r in self.of_type(*WORKLOAD_KINDS)
            if not is_image_prepull(r)
            for c in (*r.init_containers, *r.containers)
        )

    def prepull_copy(self, r: Resource, image: str) -> bool:
        """True when `image` in workload `r` is a pre-pull DaemonSet's copy of an image
        another workload of the stack runs: image rules report it there, at the model."""
        return is_image_prepull(r) and image in self._images_outside_prepull

    def spare_gpu_units(self, pool: str, zone: str | None = None) -> float:
        """GPU units the placeholders of `pool` hold (in `zone`, or in all zones): their
        replicas times each pod's units of the pool's GPU resource."""
        facts = self.pool(pool)
        total = 0.0
        for r in self.spare_gpu_placeholders:
            if (r.pod_labels.get(naming.POOL_LABEL) or r.labels.get(naming.POOL_LABEL)) != pool:
                continue
            if zone is not None and r.node_selection(naming.TOPOLOGY_ZONE_LABEL) != (zone,):
                continue
            replicas = as_number(r.spec.get("replicas", 1)) or 0.0
            total += replicas * gpu_units(r, facts.gpu_resource if facts else None)
        return total

    @cached_property
    def models(self) -> Mapping[str, ModelView]:
        grouped: dict[str, dict[str, list[Resource]]] = {}
        for r in self.resources:
            model = r.model
            if model:
                grouped.setdefault(model, {}).setdefault(r.type, []).append(r)
        for r in self.serving_workloads:  # unlabelled servers still count, under their name
            if not r.model:
                grouped.setdefault(r.k8s_name, {}).setdefault(r.type, []).append(r)
        return {name: self._model_view(name, by_type) for name, by_type in grouped.items()}

    def _model_view(self, name: str, by_type: Mapping[str, list[Resource]]) -> ModelView:
        # By URN: the engine and the offline run register a model's several workloads (one
        # Deployment per zone of an llm-aware model) in different orders, and a finding
        # names the first.
        workloads = tuple(
            sorted(
                (r for t in SERVING_KINDS for r in by_type.get(t, ()) if r.requests_gpu),
                key=lambda r: r.urn,
            )
        )
        scaled = tuple(sorted(by_type.get(SCALED_OBJECT, ()), key=lambda r: r.urn))
        services = tuple(by_type.get(SERVICE, ()))
        latency = None
        for r in (*workloads, *scaled, *services):
            latency = r.labels.get(naming.LATENCY_CLASS_LABEL) or r.pod_labels.get(
                naming.LATENCY_CLASS_LABEL
            )
            if latency:
                break
        if not latency and self.env is not None and name in self.env.models:
            latency = self.env.models[name].latency_class
        pool = None
        for r in workloads:
            pool = r.labels.get(naming.POOL_LABEL) or r.pod_labels.get(naming.POOL_LABEL)
            selected = r.node_selection(naming.POOL_LABEL)
            pool = pool or (selected[0] if selected and len(selected) == 1 else None)
            if pool:
                break
        if not pool and self.env is not None and name in self.env.models:
            pool = self.env.models[name].pool
        return ModelView(
            name=name,
            workloads=workloads,
            scaled_objects=scaled,
            services=services,
            prometheus_rules=tuple(by_type.get(PROMETHEUS_RULE, ())),
            jobs=tuple(by_type.get(JOB, ())),
            config_maps=tuple(by_type.get(CONFIG_MAP, ())),
            # Unlabelled means the blueprint default: realtime, the stricter reading.
            latency_class=latency or "realtime",
            pool=pool,
            rollouts=tuple(sorted(by_type.get(ROLLOUT, ()), key=lambda r: r.urn)),
        )

    def pool(self, name: str | None) -> PoolFacts | None:
        if name is None or self.facts is None:
            return None
        return self.facts.pools.get(name)

    def pool_zones(self, pool: str) -> tuple[str, ...]:
        """A pool's zones: from the facts, else from its node groups."""
        facts = self.pool(pool)
        if facts is not None and facts.zones:
            return facts.zones
        zones: list[str] = []
        for group in self.node_groups:
            if group.pool == pool and group.zones:
                zones.extend(group.zones)
        return tuple(dict.fromkeys(zones))

    def iter_models(self) -> Iterator[ModelView]:
        yield from sorted(self.models.values(), key=lambda m: m.name)


def is_spare_gpu_placeholder(r: Resource) -> bool:
    """A spare-GPU placeholder (`inferplane.components.serving.scaling.spare_gpus`): labelled with
    `naming.SPARE_GPU_ROLE`, belonging to no model, and running nothing but the pause image.
    A model server cannot pass for one: its server image is not the pause image."""
    if r.model or r.pod_labels.get(naming.ROLE_LABEL) != naming.SPARE_GPU_ROLE:
        return False
    images = [c.image for c in (*r.containers, *r.init_containers)]
    return bool(images) and all(ImageRef.parse(i).repository == PAUSE_REPOSITORY for i in images)


def is_image_prepull(r: Resource) -> bool:
    """A pool's pre-pull DaemonSet (`inferplane.components.serving.scaling.image_prepull`)."""
    return (
        r.type == DAEMON_SET
        and not r.model
        and r.pod_labels.get(naming.ROLE_LABEL) == naming.IMAGE_PREPULL_ROLE
    )


def wake_paths(model: ModelView) -> tuple[str, ...]:
    """How a model at zero replicas comes back, from its ScaledObjects' triggers: a ``cron``
    window, or requests the KEDA HTTP add-on's interceptor holds (an ``external-push``
    trigger naming an HTTPScaledObject or InterceptorRoute). Triggers on the model's own
    metrics (Prometheus, CPU, memory) read nothing once its last pod is gone."""
    found: list[str] = []
    for so in model.scaled_objects:
        for trigger in _list(so.spec.get("triggers")):
            kind = _dict(trigger).get("type")
            metadata = _dict(_dict(trigger).get("metadata"))
            if kind == "cron":
                window = f"{metadata.get('start')} to {metadata.get('end')}"
                found.append(f"its schedule ({window}, {metadata.get('timezone')})")
            elif kind == "external-push" and (
                "httpScaledObject" in metadata or "interceptorRoute" in metadata
            ):
                found.append("its own HTTP requests (held by the KEDA HTTP add-on)")
    return tuple(dict.fromkeys(found))


def min_replicas(model: ModelView) -> tuple[float | None, Resource | None]:
    """The replicas a model keeps when idle: KEDA's minReplicaCount (default 0) when a
    ScaledObject drives it, else the workload's own replica count (default 1). A model
    that runs one Deployment per zone (llm-aware routing) has a ScaledObject per
    Deployment: their minimums add up."""
    if model.scaled_objects:
        total = sum(as_number(so.spec.get("minReplicaCount")) or 0.0 for so in model.scaled_objects)
        return total, model.scaled_objects[0]
    for w in model.workloads:
        value = w.spec.get("replicas", 1)
        return as_number(value), w
    return None, None


def max_replicas(model: ModelView) -> float | None:
    """The model's replicas at most: KEDA's maxReplicaCount (default `KEDA_DEFAULT_MAX`)
    when a ScaledObject drives it, else the workload's own replica count; a ScaledObject
    per zone's Deployment (one Deployment per zone) adds up."""
    if model.scaled_objects:
        found = [
            as_number(so.spec.get("maxReplicaCount", KEDA_DEFAULT_MAX)) or 0.0
            for so in model.scaled_objects
        ]
        return sum(found)
    for w in model.workloads:
        return as_number(w.spec.get("replicas", 1))
    return None


def scaled_max(model: ModelView, target: str) -> float | None:
    """The maxReplicaCount of the ScaledObject of `model` that scales the object named
    `target` (a Deployment or the Rollout of the same name); None when none does."""
    for so in model.scaled_objects:
        if _dict(so.spec.get("scaleTargetRef")).get("name") == target:
            return as_number(so.spec.get("maxReplicaCount", KEDA_DEFAULT_MAX)) or 0.0
    return None


def rollout_of(model: ModelView, workload: Resource) -> Resource | None:
    """The Rollout of `model` whose ``workloadRef`` names `workload`, if any."""
    for r in model.rollouts:
        ref = _dict(r.spec.get("workloadRef"))
        if ref.get("kind") == "Deployment" and ref.get("name") == workload.k8s_name:
            return r
    return None


def zone_max_replicas(model: ModelView, zone: str, zones: int) -> float | None:
    """The most replicas of a model in `zone`, one of its pool's `zones` zones: a model
    that runs one Deployment per zone (labelled with its zone), the maxReplicaCount of that
    Deployment's ScaledObject as rendered; one Deployment spread over the zones, its
    maximum's `zone_share` (the fullest zone). The mirror of `zone_min_replicas`."""
    names = [w.k8s_name for w in model.workloads if w.labels.get(naming.ZONE_LABEL) == zone]
    for name in names:
        found = scaled_max(model, name)
        if found is not None:
            return found
    if any(w.labels.get(naming.ZONE_LABEL) for w in model.workloads):
        # Zoned, and no Deployment in this zone: none of its replicas runs here.
        return sum(
            as_number(w.spec.get("replicas", 1)) or 0.0
            for w in model.workloads
            if w.labels.get(naming.ZONE_LABEL) == zone
        )
    total = max_replicas(model)
    return None if total is None else zone_share(total, zones)


def workload_min_replicas(model: ModelView, workload: Resource) -> float | None:
    """The idle replicas of one of the model's workloads: the minReplicaCount of the
    ScaledObject that scales it, else the model's (`min_replicas`)."""
    for so in model.scaled_objects:
        if _dict(so.spec.get("scaleTargetRef")).get("name") == workload.k8s_name:
            return as_number(so.spec.get("minReplicaCount")) or 0.0
    return min_replicas(model)[0]


def zone_min_replicas(model: ModelView, zone: str, zones: int) -> float | None:
    """The idle replicas of a model in `zone`, one of its pool's `zones` zones: a model that
    runs one Deployment per zone (labelled with its zone), the minReplicaCount of that
    Deployment's ScaledObject as rendered, not the model's sum divided back; one Deployment
    spread over the zones, its minimum's `zone_share` (the fullest zone)."""
    names = {w.k8s_name for w in model.workloads if w.labels.get(naming.ZONE_LABEL) == zone}
    for so in model.scaled_objects:
        if _dict(so.spec.get("scaleTargetRef")).get("name") in names:
            return as_number(so.spec.get("minReplicaCount")) or 0.0
    total = min_replicas(model)[0]
    return None if total is None else zone_share(total, zones)
