"""`GkeCluster`: a VPC-native GKE cluster, created, or an existing one attached.

A created cluster has private nodes behind Cloud NAT, Workload Identity, Dataplane V2
(serving NetworkPolicies are enforced), GKE subsetting for internal load balancers and a
version floor (zonal affinity needs both: `ZONAL_AFFINITY_MIN_VERSION`; an attached
cluster is checked for them at preview time), its default node pool removed, and a small
system node pool across the environment's zones for the add-ons. GPU node pools are added
separately, one per pool and zone.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp

from inferplane.blueprint import defaults, system_nodes
from inferplane.components import image_pull
from inferplane.components.cloud import (
    Ownership,
    gcp_account_id,
    gcp_labels,
    moved_from_parent,
    present,
)

SYSTEM_MACHINE_TYPE = system_nodes.GKE_MACHINE_TYPE
"""System nodes run the add-ons (operators, Prometheus, Grafana), never model servers;
validation checks what fits on them (`inferplane.blueprint.system_nodes`)."""
SYSTEM_NODE_POOL = "system"
"""The system node pool's GKE name. Node pool names are unique per cluster and this cluster
is the environment's own, so the name needs no prefix; a GPU pool's is
``<blueprint>-<env>-<pool>-<zone>`` and never equals it. Before it was explicit the pool
had Pulumi's auto-name (logical name plus a random suffix): such a pool keeps its name
(``ignore_changes``), because a new name replaces the pool and every add-on on it."""
SYSTEM_NODES_PER_ZONE_MIN = 1
SYSTEM_NODES_PER_ZONE_MAX = 3
SYSTEM_ROLE_LABEL = "inferplane.dev/role"
NODE_IMAGE = "COS_CONTAINERD"
RELEASE_CHANNEL = "REGULAR"
NODE_OAUTH_SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
NODE_ROLES = ("roles/container.defaultNodeServiceAccount", "roles/artifactregistry.reader")
"""What a node's own identity needs: logs, metrics, image pulls. Workloads use their own
identities through Workload Identity."""


def node_roles(image_streaming: bool) -> tuple[str, ...]:
    """The nodes' service account's roles: `NODE_ROLES`, and `image_pull.GKE_NODE_ROLE` where
    a pool streams images."""
    return (*NODE_ROLES, image_pull.GKE_NODE_ROLE) if image_streaming else NODE_ROLES


PODS_RANGE = "pods"
SERVICES_RANGE = "services"
ZONAL_AFFINITY_MIN_VERSION = "1.33.3-gke.1392000"
"""The first GKE version whose internal passthrough load balancers honour
``spec.trafficDistribution`` (zonal affinity: a client's connections go to backends in its
own zone while that zone has healthy ones). It also needs GKE subsetting (GCE_VM_IP NEG
backends, ``enable_l4_ilb_subsetting``). Source:
https://cloud.google.com/kubernetes-engine/docs/how-to/internal-load-balancing, "Using
zonal affinity" ("To enable zonal affinity in a GKE cluster, you must have GKE subsetting
enabled"), and https://docs.cloud.google.com/kubernetes-engine/docs/concepts/
service-load-balancer-parameters (reference NOTES.md §7). Without either, the Service is
still created and simply spreads connections over every zone, so nothing would fail: it
has to be checked."""


def gke_version(text: str) -> tuple[int, ...]:
    """``1.33.3-gke.1392000`` -> (1, 33, 3, 1392000); ``1.34`` -> (1, 34)."""
    return tuple(int(n) for n in re.findall(r"\d+", text))


def min_master_version(kubernetes_version: str) -> str:
    """A created cluster's ``min_master_version``: the requested minor, raised to the
    zonal-affinity patch when the minor is the one it arrived in (a later minor has it
    from its first release; an earlier one is refused when the blueprint is validated)."""
    if gke_version(kubernetes_version)[:2] == gke_version(ZONAL_AFFINITY_MIN_VERSION)[:2]:
        return ZONAL_AFFINITY_MIN_VERSION
    return kubernetes_version


def zonal_affinity_problems(version: str | None, subsetting: bool | None) -> list[str]:
    """What an existing cluster lacks for zonal affinity of internal load balancers."""
    problems = []
    if not version or gke_version(version) < gke_version(ZONAL_AFFINITY_MIN_VERSION):
        problems.append(
            f"it runs GKE {version or 'of an unknown version'}, older than "
            f"{ZONAL_AFFINITY_MIN_VERSION} (upgrade the control plane)"
        )
    if not subsetting:
        problems.append(
            "GKE subsetting is off (gcloud container clusters update CLUSTER "
            "--enable-l4-ilb-subsetting; it cannot be turned off again)"
        )
    return problems


def _check_zonal_affinity(cluster: str) -> Callable[[Sequence[Any]], bool]:
    def check(found: Sequence[Any]) -> bool:
        version, subsetting = found
        problems = zonal_affinity_problems(version, subsetting)
        if problems:
            raise ValueError(
                f"cluster {cluster}: internal load balancers cannot keep clients in their "
                f"zone (zonal affinity): {'; and '.join(problems)}"
            )
        return True

    return check


def ip_plan(vpc_cidr: str) -> tuple[str, str, str]:
    """(nodes, services, pods) ranges carved from `vpc_cidr`: the first sixteenth for
    nodes, the second for services, the upper half for pods (one /24 per node)."""
    net = ipaddress.IPv4Network(vpc_cidr)
    if net.prefixlen > 20:
        raise ValueError(f"vpc_cidr {vpc_cidr} is too small for a GKE cluster; use a /20 or larger")
    sixteenths = list(net.subnets(prefixlen_diff=4))
    halves = list(net.subnets(prefixlen_diff=1))
    return str(sixteenths[0]), str(sixteenths[1]), str(halves[1])


def _workload_pool(
    cluster: str,
) -> Callable[[Sequence[gcp.container.outputs.GetClusterWorkloadIdentityConfigResult]], str]:
    def pick(
        configs: Sequence[gcp.container.outputs.GetClusterWorkloadIdentityConfigResult],
    ) -> str:
        pools = [c.workload_pool for c in configs or [] if c.workload_pool]
        if not pools:
            raise ValueError(
                f"cluster {cluster} has no Workload Identity pool; enable Workload Identity "
                f"(gcloud container clusters update {cluster} --workload-pool=PROJECT.svc.id.goog)"
            )
        return pools[0]

    return pick


@dataclass(frozen=True)
class GkeClusterArgs:
    """Arguments of `GkeCluster`."""

    cluster_name: str
    """The GKE cluster's name: the name a created cluster gets, or the existing one's."""
    owner: Ownership
    """Labels of everything created, and the prefix of its cloud names."""
    project: str
    """The GCP project of the cluster and of everything created."""
    region: str
    """The region of a created network (subnet, router, Cloud NAT)."""
    location: str
    """The cluster's location: a region (regional cluster) or a zone."""
    zones: tuple[str, ...]
    """Node locations of a created cluster and its system node pool. Unused when attaching."""
    create: bool = True
    """True creates the cluster and its network. False looks up the existing cluster
    `cluster_name` at `location` (it must have Workload Identity enabled); only the nodes'
    service account is created."""
    kubernetes_version: str = defaults.KUBERNETES_VERSION
    """Minimum Kubernetes minor of a created cluster's control plane. Default: the tested
    minor of `inferplane.blueprint.defaults`. Unused when attaching."""
    vpc_cidr: str = defaults.VPC_CIDR
    """Address range of a created network (a /20 or larger; see `ip_plan`). Default: the
    range of `inferplane.blueprint.defaults`. Unused when attaching."""
    internal_load_balancers: bool = True
    """Models are served through internal load balancers, which must keep clients in their
    zone: an attached cluster is then checked (at preview) for GKE subsetting and a version
    with zonal affinity (`ZONAL_AFFINITY_MIN_VERSION`); a created one has both. Default:
    internal."""
    system_nodes_per_zone: int = 1
    """System nodes per zone a created cluster starts with and keeps at least: one for the
    add-ons, more where llm-aware routing runs (`system_nodes.nodes_per_zone`)."""
    image_streaming: bool = False
    """Some GPU node pool streams images (`inferplane.components.image_pull`): the nodes'
    service account also gets `image_pull.GKE_NODE_ROLE`, which image streaming needs for
    nodes that do not run as the Compute default account. Default: no pool streams."""


class GkeCluster(pulumi.ComponentResource):
    """A GKE cluster, created with its network or attached, and its nodes' service account.

    Children keep the names (and through aliases, the URNs) they had when `Cluster` created
    them directly: a cluster created before this component existed is not replaced.

    Outputs:
      name: the cluster name.  location: the cluster's location.
      endpoint: the API server address (a bare IP, as GKE reports it).
      ca_data: the cluster CA certificate (base64 PEM).
      workload_pool: the Workload Identity pool ``<project>.svc.id.goog``.
      node_service_account: email of the nodes' service account.
      ready: the resources that must exist before anything is installed into the cluster
        (empty when attaching).
    """

    name: pulumi.Output[str]
    location: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    ca_data: pulumi.Output[str]
    workload_pool: pulumi.Output[str]
    node_service_account: pulumi.Output[str]
    ready: list[pulumi.Resource]

    def __init__(
        self, name: str, args: GkeClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("inferplane:cluster:GkeCluster", name, None, opts)
        self._name, self._args = name, args
        self._moved_from = moved_from_parent(opts)
        self.ready = []
        if args.create:
            self._create()
        else:
            self._attach()
        self.register_outputs(
            {
                "name": self.name,
                "location": self.location,
                "endpoint": self.endpoint,
                "ca_data": self.ca_data,
                "workload_pool": self.workload_pool,
                "node_service_account": self.node_service_account,
                "ready": self.ready,
            }
        )

    def _opts(self) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self, aliases=self._moved_from)

    def _node_service_account(self) -> pulumi.Output[str]:
        """A least-privilege service account for nodes (instead of the Compute default)."""
        name, args, opts = self._name, self._args, self._opts()
        stack = args.owner.stack
        account = gcp.serviceaccount.Account(
            f"{name}-nodes",
            account_id=gcp_account_id(stack, "nodes"),
            display_name=f"GKE nodes of {stack}",
            project=args.project,
            opts=opts,
        )
        grants = [
            gcp.projects.IAMMember(
                f"{name}-nodes-{role.rsplit('/', 1)[-1]}",
                project=args.project,
                role=role,
                member=account.email.apply(lambda email: f"serviceAccount:{email}"),
                opts=opts,
            )
            for role in node_roles(args.image_streaming)
        ]
        return pulumi.Output.all(account.email, *[g.id for g in grants]).apply(lambda a: str(a[0]))

    def _network(self) -> tuple[gcp.compute.Network, gcp.compute.Subnetwork]:
        """A regional VPC with one subnet (secondary ranges for pods and services), and
        Cloud NAT: private nodes still pull images from NGC and Docker Hub."""
        name, args, opts = self._name, self._args, self._opts()
        nodes_cidr, services_cidr, pods_cidr = ip_plan(args.vpc_cidr)
        network = gcp.compute.Network(
            f"{name}-net",
            auto_create_subnetworks=False,
            routing_mode="REGIONAL",
            project=args.project,
            opts=opts,
        )
        subnet = gcp.compute.Subnetwork(
            f"{name}-nodes",
            network=network.id,
            region=args.region,
            project=args.project,
            ip_cidr_range=nodes_cidr,
            private_ip_google_access=True,
            secondary_ip_ranges=[
                gcp.compute.SubnetworkSecondaryIpRangeArgs(
                    range_name=PODS_RANGE, ip_cidr_range=pods_cidr
                ),
                gcp.compute.SubnetworkSecondaryIpRangeArgs(
                    range_name=SERVICES_RANGE, ip_cidr_range=services_cidr
                ),
            ],
            opts=opts,
        )
        router = gcp.compute.Router(
            f"{name}-router",
            network=network.id,
            region=args.region,
            project=args.project,
            opts=opts,
        )
        gcp.compute.RouterNat(
            f"{name}-nat",
            router=router.name,
            region=args.region,
            project=args.project,
            nat_ip_allocate_option="AUTO_ONLY",
            source_subnetwork_ip_ranges_to_nat="ALL_SUBNETWORKS_ALL_IP_RANGES",
            log_config=gcp.compute.RouterNatLogConfigArgs(enable=True, filter="ERRORS_ONLY"),
            opts=opts,
        )
        return network, subnet

    def _create(self) -> None:
        name, args, opts = self._name, self._args, self._opts()
        network, subnet = self._network()
        workload_pool = f"{args.project}.svc.id.goog"
        gke = gcp.container.Cluster(
            name,
            name=args.cluster_name,
            project=args.project,
            location=args.location,
            node_locations=list(args.zones),
            network=network.id,
            subnetwork=subnet.id,
            networking_mode="VPC_NATIVE",
            ip_allocation_policy=gcp.container.ClusterIpAllocationPolicyArgs(
                cluster_secondary_range_name=PODS_RANGE,
                services_secondary_range_name=SERVICES_RANGE,
            ),
            remove_default_node_pool=True,
            initial_node_count=1,
            workload_identity_config=gcp.container.ClusterWorkloadIdentityConfigArgs(
                workload_pool=workload_pool
            ),
            release_channel=gcp.container.ClusterReleaseChannelArgs(channel=RELEASE_CHANNEL),
            # Zonal affinity of internal load balancers needs this version and subsetting.
            min_master_version=min_master_version(args.kubernetes_version),
            private_cluster_config=gcp.container.ClusterPrivateClusterConfigArgs(
                enable_private_nodes=True, enable_private_endpoint=False
            ),
            datapath_provider="ADVANCED_DATAPATH",
            enable_l4_ilb_subsetting=True,
            resource_labels=gcp_labels(args.owner),
            deletion_protection=True,
            opts=opts,
        )
        self.node_service_account = self._node_service_account()
        per_zone = max(SYSTEM_NODES_PER_ZONE_MIN, args.system_nodes_per_zone)
        system = gcp.container.NodePool(
            f"{name}-system",
            name=SYSTEM_NODE_POOL,
            cluster=gke.name,
            location=args.location,
            project=args.project,
            node_locations=list(args.zones),
            # The pool's size at creation; a change would recreate the pool and every add-on
            # on it (pulumi-gcp ``NodePool.initial_node_count``: "Changing this will force
            # recreation of the resource"), so a grown count reaches an existing pool
            # through its autoscaling minimum instead (``ignore_changes`` below).
            initial_node_count=per_zone,
            autoscaling=gcp.container.NodePoolAutoscalingArgs(
                min_node_count=per_zone,
                max_node_count=per_zone + SYSTEM_NODES_PER_ZONE_MAX - SYSTEM_NODES_PER_ZONE_MIN,
            ),
            management=gcp.container.NodePoolManagementArgs(auto_repair=True, auto_upgrade=True),
            node_config=gcp.container.NodePoolNodeConfigArgs(
                machine_type=SYSTEM_MACHINE_TYPE,
                image_type=NODE_IMAGE,
                disk_size_gb=100,
                disk_type="pd-balanced",
                service_account=self.node_service_account,
                oauth_scopes=list(NODE_OAUTH_SCOPES),
                workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(
                    mode="GKE_METADATA"
                ),
                labels={SYSTEM_ROLE_LABEL: "system"},
                resource_labels=gcp_labels(args.owner),
            ),
            opts=pulumi.ResourceOptions.merge(
                opts, pulumi.ResourceOptions(ignore_changes=["name", "initialNodeCount"])
            ),
        )
        self.name, self.location, self.endpoint = gke.name, gke.location, gke.endpoint
        self.ca_data = gke.master_auth.apply(
            lambda auth: present(auth.cluster_ca_certificate, "cluster CA certificate")
        )
        self.workload_pool = pulumi.Output.from_input(workload_pool)
        self.ready = [gke, system]

    def _attach(self) -> None:
        args = self._args
        cluster, location = args.cluster_name, args.location
        info = gcp.container.get_cluster_output(
            name=cluster,
            location=location,
            project=args.project,
            opts=pulumi.InvokeOutputOptions(parent=self),
        )
        self.name = info.name.apply(lambda n: n or cluster)
        self.location = info.location.apply(lambda loc: loc or location)
        self.endpoint = info.endpoint
        if args.internal_load_balancers:
            # Everything in the cluster goes through the provider, which needs the endpoint:
            # a cluster without zonal affinity fails the preview here, with the reason.
            checked = pulumi.Output.all(info.master_version, info.enable_l4_ilb_subsetting).apply(
                _check_zonal_affinity(cluster)
            )
            self.endpoint = pulumi.Output.all(info.endpoint, checked).apply(lambda a: str(a[0]))
        self.ca_data = info.master_auths.apply(
            lambda auths: present(auths[0].cluster_ca_certificate, "cluster CA certificate")
        )
        self.workload_pool = info.workload_identity_configs.apply(_workload_pool(cluster))
        self.node_service_account = self._node_service_account()
