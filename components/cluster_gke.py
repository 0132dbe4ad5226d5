"""GKE: create a VPC-native regional cluster, or attach to an existing one.

A created cluster has private nodes behind Cloud NAT, Workload Identity, Dataplane V2
(serving NetworkPolicies are enforced), GKE subsetting for internal load balancers (zonal
traffic distribution needs it), its default node pool removed, and a small system node
pool across the environment's zones for the add-ons. GPU node pools are added separately,
one per pool and zone.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

from inferplane.blueprint import naming
from inferplane.blueprint.model import Environment
from inferplane.components.cloud import cluster_name, gcp_account_id, gcp_labels, present

SYSTEM_MACHINE_TYPE = "e2-standard-4"
"""System nodes run the add-ons (operators, Prometheus, Grafana), never model servers."""
SYSTEM_NODES_PER_ZONE_MIN = 1
SYSTEM_NODES_PER_ZONE_MAX = 3
SYSTEM_ROLE_LABEL = "inferplane.dev/role"
NODE_IMAGE = "COS_CONTAINERD"
RELEASE_CHANNEL = "REGULAR"
NODE_OAUTH_SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
NODE_ROLES = ("roles/container.defaultNodeServiceAccount", "roles/artifactregistry.reader")
"""What a node's own identity needs: logs, metrics, image pulls. Workloads use their own
identities through Workload Identity."""
PODS_RANGE = "pods"
SERVICES_RANGE = "services"


@dataclass
class GkeFacts:
    """What the rest of the stack needs from a GKE cluster, created or attached."""

    name: pulumi.Output[str]
    location: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    ca_data: pulumi.Output[str]
    workload_pool: pulumi.Output[str]
    node_service_account: pulumi.Output[str]
    """Email of the GPU nodes' service account."""
    ready: list[pulumi.Resource] = field(default_factory=list)


def ip_plan(vpc_cidr: str) -> tuple[str, str, str]:
    """(nodes, services, pods) ranges carved from `vpc_cidr`: the first sixteenth for
    nodes, the second for services, the upper half for pods (one /24 per node)."""
    net = ipaddress.IPv4Network(vpc_cidr)
    if net.prefixlen > 20:
        raise ValueError(f"vpc_cidr {vpc_cidr} is too small for a GKE cluster; use a /20 or larger")
    sixteenths = list(net.subnets(prefixlen_diff=4))
    halves = list(net.subnets(prefixlen_diff=1))
    return str(sixteenths[0]), str(sixteenths[1]), str(halves[1])


def node_service_account(
    name: str, env: Environment, parent: pulumi.Resource
) -> pulumi.Output[str]:
    """A least-privilege service account for nodes (instead of the Compute default)."""
    opts = pulumi.ResourceOptions(parent=parent)
    stack = naming.stack_name(env.blueprint, env.name)
    account = gcp.serviceaccount.Account(
        f"{name}-nodes",
        account_id=gcp_account_id(stack, "nodes"),
        display_name=f"GKE nodes of {stack}",
        project=env.project,
        opts=opts,
    )
    grants = [
        gcp.projects.IAMMember(
            f"{name}-nodes-{role.rsplit('/', 1)[-1]}",
            project=str(env.project),
            role=role,
            member=account.email.apply(lambda email: f"serviceAccount:{email}"),
            opts=opts,
        )
        for role in NODE_ROLES
    ]
    return pulumi.Output.all(account.email, *[g.id for g in grants]).apply(lambda a: str(a[0]))


def create(name: str, env: Environment, parent: pulumi.Resource) -> GkeFacts:
    opts = pulumi.ResourceOptions(parent=parent)
    cluster = cluster_name(env)
    nodes_cidr, services_cidr, pods_cidr = ip_plan(env.cluster.vpc_cidr)
    network = gcp.compute.Network(
        f"{name}-net",
        auto_create_subnetworks=False,
        routing_mode="REGIONAL",
        project=env.project,
        opts=opts,
    )
    subnet = gcp.compute.Subnetwork(
        f"{name}-nodes",
        network=network.id,
        region=env.region,
        project=env.project,
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
    # Private nodes still pull images from NGC and Docker Hub: egress through Cloud NAT.
    router = gcp.compute.Router(
        f"{name}-router", network=network.id, region=env.region, project=env.project, opts=opts
    )
    gcp.compute.RouterNat(
        f"{name}-nat",
        router=router.name,
        region=env.region,
        project=env.project,
        nat_ip_allocate_option="AUTO_ONLY",
        source_subnetwork_ip_ranges_to_nat="ALL_SUBNETWORKS_ALL_IP_RANGES",
        log_config=gcp.compute.RouterNatLogConfigArgs(enable=True, filter="ERRORS_ONLY"),
        opts=opts,
    )
    workload_pool = f"{env.project}.svc.id.goog"
    gke = gcp.container.Cluster(
        name,
        name=cluster,
        project=env.project,
        location=env.cluster.location,
        node_locations=list(env.zones),
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
        min_master_version=env.cluster.kubernetes_version,
        private_cluster_config=gcp.container.ClusterPrivateClusterConfigArgs(
            enable_private_nodes=True, enable_private_endpoint=False
        ),
        datapath_provider="ADVANCED_DATAPATH",
        enable_l4_ilb_subsetting=True,
        resource_labels=gcp_labels(env),
        deletion_protection=True,
        opts=opts,
    )
    nodes_sa = node_service_account(name, env, parent)
    system = gcp.container.NodePool(
        f"{name}-system",
        cluster=gke.name,
        location=env.cluster.location,
        project=env.project,
        node_locations=list(env.zones),
        initial_node_count=SYSTEM_NODES_PER_ZONE_MIN,
        autoscaling=gcp.container.NodePoolAutoscalingArgs(
            min_node_count=SYSTEM_NODES_PER_ZONE_MIN, max_node_count=SYSTEM_NODES_PER_ZONE_MAX
        ),
        management=gcp.container.NodePoolManagementArgs(auto_repair=True, auto_upgrade=True),
        node_config=gcp.container.NodePoolNodeConfigArgs(
            machine_type=SYSTEM_MACHINE_TYPE,
            image_type=NODE_IMAGE,
            disk_size_gb=100,
            disk_type="pd-balanced",
            service_account=nodes_sa,
            oauth_scopes=list(NODE_OAUTH_SCOPES),
            workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(
                mode="GKE_METADATA"
            ),
            labels={SYSTEM_ROLE_LABEL: "system"},
            resource_labels=gcp_labels(env),
        ),
        opts=opts,
    )
    return GkeFacts(
        name=gke.name,
        location=gke.location,
        endpoint=gke.endpoint,
        ca_data=gke.master_auth.apply(
            lambda auth: present(auth.cluster_ca_certificate, "cluster CA certificate")
        ),
        workload_pool=pulumi.Output.from_input(workload_pool),
        node_service_account=nodes_sa,
        ready=[gke, system],
    )


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


def attach(name: str, env: Environment, parent: pulumi.Resource) -> GkeFacts:
    """Look up an existing GKE cluster; only the GPU nodes' service account is created."""
    cluster = cluster_name(env)
    info = gcp.container.get_cluster_output(
        name=cluster,
        location=env.cluster.location,
        project=env.project,
        opts=pulumi.InvokeOutputOptions(parent=parent),
    )
    return GkeFacts(
        name=info.name.apply(lambda n: n or cluster),
        location=info.location.apply(lambda loc: loc or env.cluster.location),
        endpoint=info.endpoint,
        ca_data=info.master_auths.apply(
            lambda auths: present(auths[0].cluster_ca_certificate, "cluster CA certificate")
        ),
        workload_pool=info.workload_identity_configs.apply(_workload_pool(cluster)),
        node_service_account=node_service_account(name, env, parent),
    )
