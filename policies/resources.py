"""The resource shapes rules read, the same offline (a mocked run) and online (CrossGuard).

A `Resource` is one registered resource: its Pulumi type token, name, URN and its
properties in the provider's own (camelCase) spelling. `Stack` indexes a list of them and
adds the environment's facts, read from the `inferplane-environment` ConfigMap that every
stack deploys (so that CrossGuard, which never sees the blueprint, knows the zones and
pools) — or, offline, from the resolved `Environment` when a program lacks that ConfigMap.

Everything here reads shapes only: type tokens, Kubernetes field names and the labels of
`inferplane.naming`. Nothing depends on how the components build them, so hand-written
programs are checked the same way.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from inferplane import naming
from inferplane.model import Environment

DEPLOYMENT = "kubernetes:apps/v1:Deployment"
STATEFUL_SET = "kubernetes:apps/v1:StatefulSet"
DAEMON_SET = "kubernetes:apps/v1:DaemonSet"
REPLICA_SET = "kubernetes:apps/v1:ReplicaSet"
POD = "kubernetes:core/v1:Pod"
JOB = "kubernetes:batch/v1:Job"
CRON_JOB = "kubernetes:batch/v1:CronJob"
SERVICE = "kubernetes:core/v1:Service"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
SCALED_OBJECT = "kubernetes:keda.sh/v1alpha1:ScaledObject"
PROMETHEUS_RULE = "kubernetes:monitoring.coreos.com/v1:PrometheusRule"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
GKE_NODE_POOL = "gcp:container/nodePool:NodePool"

SERVING_KINDS = (DEPLOYMENT, STATEFUL_SET, REPLICA_SET, POD)
"""Long-running workloads: the ones that serve. Jobs build engines; DaemonSets are add-ons."""
WORKLOAD_KINDS = (*SERVING_KINDS, DAEMON_SET, JOB, CRON_JOB)
GPU_RESOURCE = "nvidia.com/gpu"
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"


def is_gpu_resource(name: str) -> bool:
    return name == GPU_RESOURCE or name.startswith(MIG_RESOURCE_PREFIX)


def as_number(value: Any) -> float | None:
    """Numbers arrive as ints, floats (under mocks) or strings ("1"); None when not a number."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list | tuple) else ()


@dataclass(frozen=True)
class ResourceRef:
    """Which resource a result is about."""

    urn: str
    name: str
    type: str


@dataclass(frozen=True)
class Container:
    name: str
    image: str
    args: tuple[str, ...]
    """`command` followed by `args`, as strings."""
    requests: Mapping[str, Any]
    limits: Mapping[str, Any]

    @property
    def gpu_requests(self) -> dict[str, tuple[Any, Any]]:
        """GPU resource -> (request, limit) for every GPU resource this container names."""
        names = [n for n in (*self.requests, *self.limits) if is_gpu_resource(n)]
        return {n: (self.requests.get(n), self.limits.get(n)) for n in dict.fromkeys(names)}

    def flag(self, name: str) -> list[str]:
        """Values of ``--name=value`` and ``--name value`` in the command line."""
        out: list[str] = []
        for i, arg in enumerate(self.args):
            if arg.startswith(name + "="):
                out.append(arg.split("=", 1)[1])
            elif arg == name and i + 1 < len(self.args):
                out.append(self.args[i + 1])
        return out


@dataclass(frozen=True)
class Resource:
    """One registered resource, as a rule sees it."""

    type: str
    name: str
    urn: str
    props: Mapping[str, Any]
    parent: str | None = None

    @property
    def ref(self) -> ResourceRef:
        return ResourceRef(self.urn, self.name, self.type)

    @property
    def metadata(self) -> Mapping[str, Any]:
        return _dict(self.props.get("metadata"))

    @property
    def labels(self) -> Mapping[str, str]:
        return _dict(self.metadata.get("labels"))

    @property
    def annotations(self) -> Mapping[str, str]:
        return _dict(self.metadata.get("annotations"))

    @property
    def spec(self) -> Mapping[str, Any]:
        return _dict(self.props.get("spec"))

    @property
    def k8s_name(self) -> str:
        return str(self.metadata.get("name") or self.name)

    @property
    def pod_template(self) -> Mapping[str, Any]:
        """The pod template (metadata + spec) of a workload; the pod itself for a Pod."""
        if self.type == POD:
            return {"metadata": self.metadata, "spec": self.spec}
        if self.type == CRON_JOB:
            return _dict(_dict(_dict(self.spec.get("jobTemplate")).get("spec")).get("template"))
        return _dict(self.spec.get("template"))

    @property
    def pod_spec(self) -> Mapping[str, Any]:
        return _dict(self.pod_template.get("spec"))

    @property
    def pod_labels(self) -> Mapping[str, str]:
        return _dict(_dict(self.pod_template.get("metadata")).get("labels"))

    @cached_property
    def containers(self) -> tuple[Container, ...]:
        """Main containers (init containers excluded: they hold no GPU while serving)."""
        return tuple(_container(c) for c in _list(self.pod_spec.get("containers")))

    @cached_property
    def init_containers(self) -> tuple[Container, ...]:
        return tuple(_container(c) for c in _list(self.pod_spec.get("initContainers")))

    @property
    def model(self) -> str | None:
        """The blueprint model this resource belongs to (`inferplane.dev/model`)."""
        return self.labels.get(naming.MODEL_LABEL) or self.pod_labels.get(naming.MODEL_LABEL)

    @property
    def requests_gpu(self) -> bool:
        return any(c.gpu_requests for c in self.containers)

    def node_selection(self, key: str) -> tuple[str, ...] | None:
        """Values a pod may take for node label `key` (nodeSelector or required node
        affinity); None when the pod is not constrained on it."""
        spec = self.pod_spec
        selector = _dict(spec.get("nodeSelector"))
        if key in selector:
            return (str(selector[key]),)
        affinity = _dict(_dict(spec.get("affinity")).get("nodeAffinity"))
        required = _dict(affinity.get("requiredDuringSchedulingIgnoredDuringExecution"))
        terms = _list(required.get("nodeSelectorTerms"))
        values: list[str] = []
        for term in terms:
            matched = False
            for expr in _list(_dict(term).get("matchExpressions")):
                expr = _dict(expr)
                if expr.get("key") == key and expr.get("operator") == "In":
                    values.extend(str(v) for v in _list(expr.get("values")))
                    matched = True
            if not matched:
                return None  # one term leaves the key free: the pod may land anywhere
        return tuple(dict.fromkeys(values)) if terms and values else None


def _tokens(arg: str) -> list[str]:
    """One argument, or the words of a shell script passed as one (``sh -c "..."``)."""
    if not any(ch.isspace() for ch in arg):
        return [arg]
    try:
        return shlex.split(arg, comments=True)
    except ValueError:
        return arg.split()


def _container(raw: Any) -> Container:
    raw = _dict(raw)
    resources = _dict(raw.get("resources"))
    args: list[str] = []
    for arg in (*_list(raw.get("command")), *_list(raw.get("args"))):
        args.extend(_tokens(str(arg)))
    return Container(
        name=str(raw.get("name") or ""),
        image=str(raw.get("image") or ""),
        args=tuple(args),
        requests=_dict(resources.get("requests")),
        limits=_dict(resources.get("limits")),
    )


@dataclass(frozen=True)
class PoolFacts:
    """What the environment ConfigMap says about one GPU pool."""

    name: str
    gpu: str
    gpus_per_node: int
    gpu_resource: str
    slices_per_gpu: int
    sharing: str
    zones: tuple[str, ...]
    nodes_min: int
    nodes_max: int

    @property
    def units_per_node(self) -> int:
        """GPU units (whole GPUs or slices) one node offers to the scheduler."""
        return self.gpus_per_node * self.slices_per_gpu


@dataclass(frozen=True)
class EnvFacts:
    """The environment as a stack describes it (ConfigMap) or as the blueprint resolves it."""

    blueprint: str
    environment: str
    cloud: str
    region: str
    zones: tuple[str, ...]
    pools: Mapping[str, PoolFacts]
    waivers: tuple[Mapping[str, Any], ...] = ()
    """Optional: waivers the stack publishes for online runs (ConfigMap key `waivers`)."""

    @classmethod
    def from_config_map(cls, data: Mapping[str, Any]) -> EnvFacts | None:
        try:
            pools_raw = json.loads(str(data.get("pools") or "{}"))
            waivers_raw = json.loads(str(data.get("waivers") or "[]"))
            pools = {
                name: PoolFacts(
                    name=name,
                    gpu=str(p.get("gpu", "")),
                    gpus_per_node=int(p.get("gpus_per_node", 1)),
                    gpu_resource=str(p.get("gpu_resource", GPU_RESOURCE)),
                    slices_per_gpu=int(p.get("slices_per_gpu", 1)),
                    sharing=str(p.get("sharing", "exclusive")),
                    zones=tuple(p.get("zones") or ()),
                    nodes_min=int(p.get("nodes_min", 0)),
                    nodes_max=int(p.get("nodes_max", 0)),
                )
                for name, p in _dict(pools_raw).items()
            }
            return cls(
                blueprint=str(data.get("blueprint", "")),
                environment=str(data.get("environment", "")),
                cloud=str(data.get("cloud", "")),
                region=str(data.get("region", "")),
                zones=tuple(z.strip() for z in str(data.get("zones", "")).split(",") if z.strip()),
                pools=pools,
                waivers=tuple(w for w in _list(waivers_raw) if isinstance(w, Mapping)),
            )
        except (ValueError, TypeError, AttributeError):
            return None  # unknown during preview, or hand-written differently: rules degrade

    @classmethod
    def from_environment(cls, env: Environment) -> EnvFacts:
        return cls(
            blueprint=env.blueprint,
            environment=env.name,
            cloud=env.cloud,
            region=env.region,
            zones=env.zones,
            pools={
                p.name: PoolFacts(
                    name=p.name,
                    gpu=p.gpu.id,
                    gpus_per_node=p.gpus_per_node,
                    gpu_resource=p.gpu_resource,
                    slices_per_gpu=p.slices_per_gpu,
                    sharing=p.sharing,
                    zones=p.zones,
                    nodes_min=p.nodes.min,
                    nodes_max=p.nodes.max,
                )
                for p in env.pools.values()
            },
        )


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


def _node_group(r: Resource) -> NodeGroup:
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
            self.facts = EnvFacts.from_environment(self.env)

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
        for r in self.of_type(CONFIG_MAP):
            if r.k8s_name == naming.ENVIRONMENT_CONFIGMAP:
                return EnvFacts.from_config_map(_dict(r.props.get("data")))
        return None

    @cached_property
    def node_groups(self) -> tuple[NodeGroup, ...]:
        return tuple(_node_group(r) for r in self.of_type(EKS_NODE_GROUP, GKE_NODE_POOL))

    @cached_property
    def serving_workloads(self) -> tuple[Resource, ...]:
        """Long-running workloads that hold GPUs: the model servers."""
        return tuple(r for r in self.of_type(*SERVING_KINDS) if r.requests_gpu)

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
        workloads = tuple(r for t in SERVING_KINDS for r in by_type.get(t, ()) if r.requests_gpu)
        scaled = tuple(by_type.get(SCALED_OBJECT, ()))
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


def scaled_object_target(so: Resource) -> str | None:
    return _dict(so.spec.get("scaleTargetRef")).get("name")


@dataclass(frozen=True)
class ImageRef:
    """A container image reference split into repository, tag and digest."""

    repository: str
    tag: str | None
    digest: str | None

    @classmethod
    def parse(cls, image: str) -> ImageRef:
        rest, _, digest = image.partition("@")
        # A ':' after the last '/' is a tag; one before it belongs to a registry port.
        slash = rest.rfind("/")
        colon = rest.rfind(":")
        if colon > slash:
            return cls(rest[:colon], rest[colon + 1 :], digest or None)
        return cls(rest, None, digest or None)

    @property
    def ngc_release(self) -> str | None:
        """``25.08`` of an NGC tag such as ``25.08-py3``; None for other tags."""
        if not self.tag:
            return None
        head = self.tag.split("-", 1)[0]
        parts = head.split(".")
        if len(parts) == 2 and all(p.isdigit() for p in parts):
            return head
        return None
