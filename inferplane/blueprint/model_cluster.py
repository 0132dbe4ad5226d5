"""What an environment runs on, and its environment-wide settings: the cluster and its GPU
pools, the load balancer, observability and its alert receivers, the pinned versions, policy
waivers, a `kubernetes` environment's store credentials, and secrets by reference.

Part of the resolved blueprint; import these from `inferplane.blueprint.model`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from inferplane.blueprint.addons import Addons
from inferplane.blueprint.catalog import GpuType
from inferplane.blueprint.errors import YamlPath

Cloud = Literal["aws", "gcp", "kubernetes"]
Sharing = Literal["exclusive", "mig", "time_slicing"]
Capacity = Literal["on_demand", "spot"]
SourceKind = Literal["reservation", "capacity_block", "flex_start", "on_demand", "spot"]
Scheme = Literal["internal", "external"]
ServiceType = Literal["cluster_ip", "load_balancer"]


@dataclass(frozen=True)
class MinMax:
    """An inclusive range: replicas or nodes."""

    min: int
    max: int


def zone_share(replicas: float, zones: int) -> int:
    """The replicas of `replicas` that one zone of a pool of `zones` zones holds: the count
    split evenly, rounded up. A model that runs one Deployment per zone (llm-aware, or
    rolling out zone by zone) gives each zone exactly this (`zone_split_problems` refuses a
    count that does not split); one Deployment spread over the zones puts at most this in a
    zone (topology spread, skew 1). The one split of a model's replicas over its zones."""
    return math.ceil(replicas / max(1, zones))


def zone_replicas(replicas: MinMax, zones: int) -> MinMax:
    """One zone's replica bounds of a model that runs one Deployment per zone of its pool's
    `zones` zones (`zone_share` of each). Validation and the serving spec refuse bounds that
    do not split (`zone_split_problems`); such bounds here are a bug."""
    problems = zone_split_problems(replicas, zones)
    if problems:
        raise ValueError(f"replicas {replicas} do not split over {zones} zones: {problems}")
    return MinMax(zone_share(replicas.min, zones), zone_share(replicas.max, zones))


def zone_split_problems(replicas: MinMax, zones: int) -> tuple[tuple[str, str], ...]:
    """Why `replicas` cannot be split into one Deployment per zone of `zones` zones, as
    (bound, problem) pairs: ``("min" or "max", "uneven")`` for a bound that is not a
    multiple of `zones`, ``("max", "short")`` when the max leaves a zone without a replica;
    empty when it splits. Validation and the serving spec both ask this and word it."""
    found: list[tuple[str, str]] = [
        (key, "uneven")
        for key, value in (("min", replicas.min), ("max", replicas.max))
        if value % zones
    ]
    if replicas.max < zones:
        found.append(("max", "short"))
    return tuple(found)


@dataclass(frozen=True)
class ClusterSpec:
    """Create a cluster, attach to an existing one by name, or (a `kubernetes` environment)
    use the one a kubeconfig context names."""

    create: bool
    existing: str | None
    kubernetes_version: str
    location: str
    """GKE: the cluster's location (region or zone). AWS: the region."""
    vpc_cidr: str
    """The VPC's address range when the cluster is created."""
    addons: Addons = field(default_factory=Addons)
    """Which add-ons the stack installs and where the ones it uses run."""
    context: str | None = None
    """A `kubernetes` environment's kubeconfig context; None on aws and gcp."""
    load_balancer: ServiceType = "cluster_ip"
    """A `kubernetes` environment's Service type for the models' endpoints."""
    dataplane: str = "other"
    """What enforces NetworkPolicies: ``cilium`` (a `kubernetes` environment that says so)
    or ``other``."""


def pool_slices_per_gpu(
    gpu: GpuType, sharing: str, mig_profile: str | None, time_slices: int
) -> int:
    """Schedulable GPU units per physical GPU of a pool: MIG slices, time slices, or 1."""
    if sharing == "mig" and mig_profile:
        return gpu.mig_profiles[mig_profile]
    if sharing == "time_slicing":
        return time_slices
    return 1


def pool_gpu_resource(sharing: str, mig_profile: str | None) -> str:
    """The extended resource a pod requests on a pool (MIG uses the mixed strategy)."""
    if sharing == "mig" and mig_profile:
        return f"nvidia.com/mig-{mig_profile}"
    return "nvidia.com/gpu"


def pool_mig_config(sharing: str, mig_profile: str | None) -> str | None:
    """The `nvidia.com/mig.config` label value the GPU Operator's MIG manager applies."""
    return f"all-{mig_profile}" if sharing == "mig" and mig_profile else None


@dataclass(frozen=True)
class CapacitySource:
    """One entry of a pool's ordered `capacity` list: where its nodes may come from.

    A reservation or Capacity Block holds capacity in one zone (`zone`); the market sources
    (`flex_start`, `on_demand`, `spot`) serve every zone of the pool."""

    kind: SourceKind
    path: YamlPath
    """Where the blueprint (or the environment's overrides) wrote it."""
    reservation: str | None = None
    """A reservation's id (AWS) or name (GCP), or a Capacity Block's id; None for a market
    source and for a Capacity Block looked up by offering."""
    zone: str | None = None
    """The zone a reservation or Capacity Block serves; None: every zone of the pool."""
    ends: str | None = None
    """A Capacity Block's end (``YYYY-MM-DDTHH:MM[:SS]Z``)."""
    offering_hours: int | None = None
    """A Capacity Block with ``offering: auto``: its length in hours."""
    buy: bool = False
    """A Capacity Block with ``offering: auto``: buy the offering found."""

    @property
    def reserved(self) -> bool:
        """Paid for whether used or not: a reservation or a Capacity Block."""
        return self.kind in ("reservation", "capacity_block")

    @property
    def launchable(self) -> bool:
        """Whether nodes can be launched from it as the blueprint stands: a Capacity Block
        looked up by offering and not bought has no reservation to launch into."""
        return not (self.kind == "capacity_block" and self.reservation is None and not self.buy)

    def serves(self, zone: str) -> bool:
        return self.zone is None or self.zone == zone

    def floor(self, index: int, nodes_min: int) -> int:
        """The node floor of its node group, the `index`-th source of a zone: the zone's
        ``nodes.min`` for the first, zero for the others and for every Capacity Block. A
        block launches nothing before it starts or after it ends, so a floor on it would
        hold the node group at a size it cannot reach; the pool's pending pods still
        scale the block's group up first while it is active."""
        return nodes_min if index == 0 and self.kind != "capacity_block" else 0

    @property
    def label(self) -> str:
        """How the plan names it: the kind, with the reservation where there is one."""
        if self.kind == "capacity_block" and self.reservation is None:
            return f"capacity_block(offering auto, {self.offering_hours}h)"
        return f"{self.kind}({self.reservation})" if self.reservation else self.kind


@dataclass(frozen=True)
class GpuPool:
    """One GPU node pool; it becomes one node group per zone in `zones`."""

    name: str
    path: YamlPath
    gpu: GpuType
    gpus_per_node: int
    instance_type: str
    nodes: MinMax
    """Nodes per zone."""
    capacity: Capacity
    """The market of the pool's first capacity source: ``spot`` when that is spot, else
    ``on_demand`` (reservations and Capacity Blocks are on-demand instances)."""
    sharing: Sharing
    mig_profile: str | None
    time_slices: int
    """Clients per GPU on a `time_slicing` pool; 1 otherwise."""
    disk_gib: int
    spare_gpus: int
    """GPU units (`gpu_resource` units) held free per zone by placeholder pods."""
    zones: tuple[str, ...]
    capacity_sources: tuple[CapacitySource, ...] = ()
    """The ordered capacity sources, when `capacity` is a list; empty when it is a scalar,
    which `sources_in` reads as one source of that kind."""

    def sources_in(self, zone: str) -> tuple[CapacitySource, ...]:
        """The sources that serve `zone`, in the order to try them; the first one holds
        the zone's `nodes.min`, the others start at zero nodes."""
        sources = self.capacity_sources or (
            CapacitySource(self.capacity, (*self.path, "capacity")),
        )
        return tuple(s for s in sources if s.serves(zone) and s.launchable)

    @property
    def slices_per_gpu(self) -> int:
        """Schedulable GPU units per physical GPU (`pool_slices_per_gpu`)."""
        return pool_slices_per_gpu(self.gpu, self.sharing, self.mig_profile, self.time_slices)

    @property
    def gpu_units_per_node(self) -> int:
        """What one node advertises to the scheduler in `gpu_resource` units."""
        return self.gpus_per_node * self.slices_per_gpu

    @property
    def gpu_resource(self) -> str:
        """The extended resource a pod requests on this pool (`pool_gpu_resource`)."""
        return pool_gpu_resource(self.sharing, self.mig_profile)

    @property
    def mig_config(self) -> str | None:
        """The MIG manager's ``nvidia.com/mig.config`` label value (`pool_mig_config`)."""
        return pool_mig_config(self.sharing, self.mig_profile)


@dataclass(frozen=True)
class SecretRef:
    """A secret the model server needs, by reference; never a literal value."""

    name: str
    path: YamlPath
    from_env: str | None = None
    from_pulumi_config: str | None = None
    from_secret_manager: str | None = None


@dataclass(frozen=True)
class LoadBalancer:
    scheme: Scheme
    allowed_cidrs: tuple[str, ...]
    client_namespaces: tuple[str, ...] = ()
    """In-cluster namespaces whose pods may call the models, admitted by namespace."""


@dataclass(frozen=True)
class AlertReceiver:
    """Where Alertmanager sends alerts (``observability.alerts.receivers[i]``): at least one
    of Slack, PagerDuty or a webhook, each credential a secret reference."""

    name: str
    path: YamlPath
    slack_channel: str | None = None
    slack_api_url: SecretRef | None = None
    pagerduty_routing_key: SecretRef | None = None
    webhook_url: SecretRef | None = None

    @property
    def secrets(self) -> tuple[SecretRef, ...]:
        """Its secret references; each `SecretRef.name` is its key in the receivers' Secret."""
        refs = (self.slack_api_url, self.pagerduty_routing_key, self.webhook_url)
        return tuple(r for r in refs if r is not None)


@dataclass(frozen=True)
class Observability:
    prometheus_retention: str
    prometheus_storage_gib: int
    grafana_enabled: bool
    alerts_enabled: bool
    alert_receivers: tuple[AlertReceiver, ...] = ()
    alert_route_receiver: str | None = None
    """The receiver of every alert; None (no receivers): Alertmanager's own ``null``."""


@dataclass(frozen=True)
class Versions:
    """Pinned versions of everything the stack installs or runs."""

    triton: str
    vllm: str
    gpu_operator: str
    keda: str
    keda_http_add_on: str
    kube_prometheus_stack: str
    aws_load_balancer_controller: str
    cluster_autoscaler: str
    argo_rollouts: str


@dataclass(frozen=True)
class Waiver:
    rule: str
    target: str
    environments: tuple[str, ...] | None
    reason: str
    expires: str
    """ISO date, YYYY-MM-DD."""
    path: YamlPath

    def applies_to(self, environment: str) -> bool:
        """Whether the waiver covers `environment` (no `environments` list: every one)."""
        return self.environments is None or environment in self.environments


@dataclass(frozen=True)
class StoreSecrets:
    """A `kubernetes` environment's model-store credentials: the names of existing
    Kubernetes Secrets (keys `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`), one per role;
    None where the blueprint names none for a writer role."""

    reader: str
    engine_builder: str | None = None
    weights_stager: str | None = None
    vllm_compiler: str | None = None
