"""`EksCluster`: an EKS cluster with its network, created, or an existing one attached.

A created cluster gets a VPC with one private and one public subnet per environment zone
and one NAT gateway per zone (a zone that fails takes only its own egress with it), the
EKS control plane on the private subnets with a public and a private endpoint (EKS needs
subnets in two zones: an environment with one zone adds a control-plane-only subnet in a
second zone of the region, see `EksCluster._control_plane_subnet`), an OIDC
provider for IRSA, a small system node group for the add-ons, the VPC CNI with network
policy enforcement (serving NetworkPolicies must be enforced) and the EBS CSI driver
(Prometheus keeps its data on a volume).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

from inferplane.blueprint import defaults, naming, system_nodes
from inferplane.components import iam
from inferplane.components.cloud import Ownership, aws_tags, moved_from_parent, present
from inferplane.components.eks_network import (
    CONTROL_PLANE_MIN_ZONES,
    EKS_UNSUPPORTED_ZONE_IDS,
    INTERNAL_ELB_TAG,
    PUBLIC_ELB_TAG,
    control_plane_cidr,
    one_subnet,
    pick_control_plane_zone,
    subnet_filters,
    subnet_plan,
)

SYSTEM_INSTANCE_TYPE = system_nodes.EKS_INSTANCE_TYPE
"""System nodes run the add-ons (operators, Prometheus, Grafana), never model servers;
validation checks what fits on them (`inferplane.blueprint.system_nodes`)."""
SYSTEM_NODES_MIN = system_nodes.EKS_SYSTEM_NODES_MIN
SYSTEM_NODES_MAX = 4


def system_nodes_count(zones: int, per_zone: int = 1) -> tuple[int, int]:
    """(min = desired, max) of the system node group: at least `per_zone` nodes per zone, so
    the add-ons that must run in every zone (the HTTP add-on's interceptors, which the zone's
    load balancer targets) and each zone's routing pods have nodes there. The group's Auto
    Scaling group keeps "an equal number of instances across enabled Availability Zones" (its
    default balanced best-effort distribution, https://docs.aws.amazon.com/autoscaling/ec2/
    userguide/ec2-auto-scaling-availability-zone-balanced.html)."""
    low = max(SYSTEM_NODES_MIN, zones * per_zone)
    # Room to grow: one node per zone above the minimum (the routing pods fill theirs).
    return low, max(SYSTEM_NODES_MAX, low + zones)


SYSTEM_ROLE_LABEL = "inferplane.dev/role"
GPU_AMI_TYPE = "AL2023_x86_64_NVIDIA"
"""EKS-optimised AL2023 with the NVIDIA driver and container toolkit preinstalled."""
SYSTEM_AMI_TYPE = "AL2023_x86_64_STANDARD"
EBS_CSI_SERVICE_ACCOUNT = "ebs-csi-controller-sa"
CLUSTER_LOG_TYPES = ("api", "audit", "authenticator")

_POLICY = "arn:aws:iam::aws:policy/"
CLUSTER_POLICIES = (f"{_POLICY}AmazonEKSClusterPolicy",)
NODE_POLICIES = (
    f"{_POLICY}AmazonEKSWorkerNodePolicy",
    f"{_POLICY}AmazonEKS_CNI_Policy",
    f"{_POLICY}AmazonEC2ContainerRegistryReadOnly",
)
EBS_CSI_POLICY = f"{_POLICY}service-role/AmazonEBSCSIDriverPolicy"


def _issuer(identities: Sequence[Any]) -> str:
    """The OIDC issuer URL of a cluster's (first) identity."""
    oidcs = identities[0].oidcs if identities else None
    return present(oidcs[0].issuer if oidcs else None, "OIDC issuer")


@dataclass(frozen=True)
class EksClusterArgs:
    """Arguments of `EksCluster`."""

    cluster_name: str
    """The EKS cluster's name: the name a created cluster gets, or the existing one's."""
    owner: Ownership
    """Tags of everything created, and the prefix of its cloud names."""
    zones: tuple[str, ...]
    """Zones that get one private subnet each (in this order): the zones of every node."""
    create: bool = True
    """True creates the cluster and its VPC. False looks up the existing cluster
    `cluster_name` and, in each of `zones`, a private subnet of its VPC tagged
    ``kubernetes.io/role/internal-elb=1``; only the node role is created."""
    kubernetes_version: str = defaults.KUBERNETES_VERSION
    """Kubernetes minor of a created cluster. Default: the tested minor of
    `inferplane.blueprint.defaults`. Unused when attaching."""
    vpc_cidr: str = defaults.VPC_CIDR
    """Address range of a created VPC (a /22 or larger). Default: the range of
    `inferplane.blueprint.defaults`. Unused when attaching."""
    system_nodes_per_zone: int = 1
    """System nodes per zone a created cluster starts with (`system_nodes_count`): one for
    the add-ons, more where llm-aware routing runs (`system_nodes.nodes_per_zone`)."""


class EksCluster(pulumi.ComponentResource):
    """An EKS cluster, created with its network or attached, and the IAM role of its nodes.

    Children keep the names (and through aliases, the URNs) they had when `Cluster` created
    them directly: a cluster created before this component existed is not replaced.

    Outputs:
      name: the cluster name.  endpoint: the API server URL.
      ca_data: the cluster CA certificate (base64 PEM).
      oidc_provider_arn: the IAM OIDC provider, for IRSA.
      oidc_issuer: the OIDC issuer, host and path without ``https://``.
      vpc_id: the cluster's VPC.
      subnet_ids_by_zone: zone -> the private subnet of that zone.
      control_plane_subnet_ids: the subnets of a created cluster's control plane: the
        private subnets of `zones` and, when they are fewer than two zones, one private
        subnet in another zone of the region (`pick_control_plane_zone`) that holds only
        the control plane's network interfaces: no nodes, no load balancers (no ELB role
        tag), no route out. Empty when attaching (the cluster exists).
      node_role_arn: IAM role for node groups (resolves once its policies are attached).
      ready: the resources that must exist before anything is installed into the cluster
        (empty when attaching).
    """

    name: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    ca_data: pulumi.Output[str]
    oidc_provider_arn: pulumi.Output[str]
    oidc_issuer: pulumi.Output[str]
    vpc_id: pulumi.Output[str]
    subnet_ids_by_zone: dict[str, pulumi.Output[str]]
    control_plane_subnet_ids: list[pulumi.Output[str]]
    node_role_arn: pulumi.Output[str]
    ready: list[pulumi.Resource]

    def __init__(
        self, name: str, args: EksClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("inferplane:cluster:EksCluster", name, None, opts)
        self._name, self._args = name, args
        self._moved_from = moved_from_parent(opts)
        self.ready = []
        self.control_plane_subnet_ids = []
        if args.create:
            self._create()
        else:
            self._attach()
        self.register_outputs(
            {
                "name": self.name,
                "endpoint": self.endpoint,
                "ca_data": self.ca_data,
                "oidc_provider_arn": self.oidc_provider_arn,
                "oidc_issuer": self.oidc_issuer,
                "vpc_id": self.vpc_id,
                "subnet_ids_by_zone": self.subnet_ids_by_zone,
                "control_plane_subnet_ids": self.control_plane_subnet_ids,
                "node_role_arn": self.node_role_arn,
                "ready": self.ready,
            }
        )

    def _opts(self, depends_on: list[pulumi.Resource] | None = None) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self, aliases=self._moved_from, depends_on=depends_on)

    def _tags(self, **extra: str) -> dict[str, str]:
        return aws_tags(self._args.owner, **extra)

    def _node_role(self) -> pulumi.Output[str]:
        """The IAM role of GPU (and system) nodes; its ARN resolves after the policies attach."""
        name, opts = self._name, self._opts()
        role = aws.iam.Role(
            f"{name}-node",
            description=f"EKS nodes of {self._args.cluster_name}",
            assume_role_policy=iam.service_trust("ec2.amazonaws.com"),
            tags=self._tags(),
            opts=opts,
        )
        attachments = [
            aws.iam.RolePolicyAttachment(
                f"{name}-node-{arn.rsplit('/', 1)[-1]}", role=role.name, policy_arn=arn, opts=opts
            )
            for arn in NODE_POLICIES
        ]
        return iam.after(role.arn, *attachments)

    def _network(self) -> None:
        """The VPC: per zone a public subnet with its NAT gateway and a private subnet."""
        name, args, opts = self._name, self._args, self._opts()
        cluster = args.cluster_name
        shared = {f"kubernetes.io/cluster/{cluster}": "shared"}
        vpc = aws.ec2.Vpc(
            f"{name}-vpc",
            cidr_block=args.vpc_cidr,
            enable_dns_hostnames=True,
            enable_dns_support=True,
            tags=self._tags(Name=cluster),
            opts=opts,
        )
        igw = aws.ec2.InternetGateway(
            f"{name}-igw", vpc_id=vpc.id, tags=self._tags(Name=cluster), opts=opts
        )
        public_routes = aws.ec2.RouteTable(
            f"{name}-public",
            vpc_id=vpc.id,
            routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", gateway_id=igw.id)],
            tags=self._tags(Name=f"{cluster}-public"),
            opts=opts,
        )
        self.vpc_id = vpc.id
        self.subnet_ids_by_zone = {}
        for zone, (private_cidr, public_cidr) in subnet_plan(args.vpc_cidr, args.zones).items():
            s = naming.zone_suffix(zone)
            public_subnet = aws.ec2.Subnet(
                f"{name}-public-{s}",
                vpc_id=vpc.id,
                cidr_block=public_cidr,
                availability_zone=zone,
                map_public_ip_on_launch=False,
                tags=self._tags(Name=f"{cluster}-public-{s}", **{PUBLIC_ELB_TAG: "1"}, **shared),
                opts=opts,
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-public-{s}",
                subnet_id=public_subnet.id,
                route_table_id=public_routes.id,
                opts=opts,
            )
            eip = aws.ec2.Eip(
                f"{name}-nat-{s}",
                domain="vpc",
                tags=self._tags(Name=f"{cluster}-nat-{s}"),
                opts=opts,
            )
            nat = aws.ec2.NatGateway(
                f"{name}-nat-{s}",
                allocation_id=eip.allocation_id,
                subnet_id=public_subnet.id,
                tags=self._tags(Name=f"{cluster}-nat-{s}"),
                opts=self._opts(depends_on=[igw]),
            )
            subnet = aws.ec2.Subnet(
                f"{name}-private-{s}",
                vpc_id=vpc.id,
                cidr_block=private_cidr,
                availability_zone=zone,
                tags=self._tags(Name=f"{cluster}-private-{s}", **{INTERNAL_ELB_TAG: "1"}, **shared),
                opts=opts,
            )
            routes = aws.ec2.RouteTable(
                f"{name}-private-{s}",
                vpc_id=vpc.id,
                routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", nat_gateway_id=nat.id)],
                tags=self._tags(Name=f"{cluster}-private-{s}"),
                opts=opts,
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-private-{s}", subnet_id=subnet.id, route_table_id=routes.id, opts=opts
            )
            self.subnet_ids_by_zone[zone] = subnet.id
        self.control_plane_subnet_ids = list(self.subnet_ids_by_zone.values())
        if len(args.zones) < CONTROL_PLANE_MIN_ZONES:
            self.control_plane_subnet_ids.append(self._control_plane_subnet(vpc))

    def _control_plane_subnet(self, vpc: aws.ec2.Vpc) -> pulumi.Output[str]:
        """A private subnet in a second zone, for the control plane only (EKS refuses one
        zone). GPU and system nodes, serving pods and load balancer targets stay in the
        environment's zones: node groups and NLBs are given those subnets explicitly, and
        this one has no ELB role tag, so the load balancer controller never discovers it
        for a load balancer (it prefers role-tagged subnets: aws-load-balancer-controller
        docs/deploy/subnet_discovery.md). It keeps the VPC's main route table (local
        routes only): control-plane interfaces need no route out.

        The zone is chosen once: later answers of the zone lookup never move the subnet
        (``ignore_changes``), since EKS keeps a cluster's control-plane zones for life ("All
        subnets that you add must be in the same set of AZs as originally provided",
        network-reqs.html). For the same reason, an environment that later grows to two
        zones keeps this control plane only if its second zone is this subnet's zone."""
        name, args, opts = self._name, self._args, self._opts()
        region_zones = aws.get_availability_zones_output(
            state="available",
            exclude_zone_ids=list(EKS_UNSUPPORTED_ZONE_IDS),
            # Regular zones that need no opt-in: no Local or Wavelength Zones.
            filters=[
                aws.GetAvailabilityZonesFilterArgs(
                    name="opt-in-status", values=["opt-in-not-required"]
                ),
                aws.GetAvailabilityZonesFilterArgs(name="zone-type", values=["availability-zone"]),
            ],
            opts=pulumi.InvokeOutputOptions(parent=self),
        )
        zone = region_zones.names.apply(
            functools.partial(pick_control_plane_zone, zones=args.zones)
        )
        cluster = args.cluster_name
        subnet = aws.ec2.Subnet(
            f"{name}-control-plane",
            vpc_id=vpc.id,
            cidr_block=control_plane_cidr(args.vpc_cidr),
            availability_zone=zone,
            tags=self._tags(Name=f"{cluster}-control-plane"),
            opts=pulumi.ResourceOptions.merge(
                opts, pulumi.ResourceOptions(ignore_changes=["availabilityZone"])
            ),
        )
        return subnet.id

    def _control_plane(self) -> aws.eks.Cluster:
        name, args, opts = self._name, self._args, self._opts()
        control_role = aws.iam.Role(
            f"{name}-cluster",
            description=f"EKS control plane of {args.cluster_name}",
            assume_role_policy=iam.service_trust("eks.amazonaws.com"),
            tags=self._tags(),
            opts=opts,
        )
        control_attachments: list[pulumi.Resource] = [
            aws.iam.RolePolicyAttachment(
                f"{name}-cluster-{arn.rsplit('/', 1)[-1]}",
                role=control_role.name,
                policy_arn=arn,
                opts=opts,
            )
            for arn in CLUSTER_POLICIES
        ]
        return aws.eks.Cluster(
            name,
            name=args.cluster_name,
            version=args.kubernetes_version,
            role_arn=control_role.arn,
            vpc_config=aws.eks.ClusterVpcConfigArgs(
                subnet_ids=self.control_plane_subnet_ids,
                endpoint_private_access=True,
                endpoint_public_access=True,
            ),
            access_config=aws.eks.ClusterAccessConfigArgs(
                authentication_mode="API",
                bootstrap_cluster_creator_admin_permissions=True,
            ),
            enabled_cluster_log_types=list(CLUSTER_LOG_TYPES),
            tags=self._tags(),
            opts=self._opts(depends_on=control_attachments),
        )

    def _create(self) -> None:
        name, cluster, opts = self._name, self._args.cluster_name, self._opts()
        self._network()
        eks = self._control_plane()
        issuer_url = eks.identities.apply(_issuer)
        # No thumbprint: IAM verifies EKS issuers against its own trusted CAs and computes the
        # thumbprint from the issuer's certificate itself when none is given.
        oidc = aws.iam.OpenIdConnectProvider(
            f"{name}-oidc",
            url=issuer_url,
            client_id_lists=[iam.STS_AUDIENCE],
            tags=self._tags(),
            opts=opts,
        )
        issuer = issuer_url.apply(lambda url: url.removeprefix("https://"))
        self.node_role_arn = nodes = self._node_role()
        system_min, system_max = system_nodes_count(
            len(self.subnet_ids_by_zone), self._args.system_nodes_per_zone
        )
        system = aws.eks.NodeGroup(
            f"{name}-system",
            cluster_name=eks.name,
            node_group_name=f"{cluster}-system",
            node_role_arn=nodes,
            subnet_ids=list(self.subnet_ids_by_zone.values()),
            instance_types=[SYSTEM_INSTANCE_TYPE],
            ami_type=SYSTEM_AMI_TYPE,
            capacity_type="ON_DEMAND",
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                desired_size=system_min, min_size=system_min, max_size=system_max
            ),
            labels={SYSTEM_ROLE_LABEL: "system"},
            tags=self._tags(),
            opts=opts,
        )
        self.name, self.endpoint = eks.name, eks.endpoint
        self.ca_data = eks.certificate_authority.apply(lambda ca: present(ca.data, "cluster CA"))
        self.oidc_provider_arn, self.oidc_issuer = oidc.arn, issuer
        self.ready = [eks, system, *self._eks_addons(eks, system)]

    def _eks_addons(self, eks: aws.eks.Cluster, system: aws.eks.NodeGroup) -> list[aws.eks.Addon]:
        """The VPC CNI enforcing NetworkPolicies, and the EBS CSI driver with its IRSA role."""
        name, cluster, opts = self._name, self._args.cluster_name, self._opts()
        cni = aws.eks.Addon(
            f"{name}-vpc-cni",
            cluster_name=eks.name,
            addon_name="vpc-cni",
            configuration_values=json.dumps({"enableNetworkPolicy": "true"}),
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            tags=self._tags(),
            opts=opts,
        )
        _, ebs_role_arn = iam.irsa_role(
            f"{name}-ebs-csi",
            oidc_provider_arn=self.oidc_provider_arn,
            oidc_issuer=self.oidc_issuer,
            namespace=naming.KUBE_SYSTEM_NAMESPACE,
            service_account=EBS_CSI_SERVICE_ACCOUNT,
            policy=None,
            managed_policy_arns=(EBS_CSI_POLICY,),
            tags=self._tags(),
            parent=self,
            aliases=self._moved_from,
            description=f"EBS CSI controller of {cluster}",
        )
        # The driver's controller needs nodes to run on; EKS reports the add-on degraded
        # (and Pulumi waits) until it does.
        ebs = aws.eks.Addon(
            f"{name}-ebs-csi",
            cluster_name=eks.name,
            addon_name="aws-ebs-csi-driver",
            service_account_role_arn=ebs_role_arn,
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            tags=self._tags(),
            opts=self._opts(depends_on=[system]),
        )
        return [cni, ebs]

    def _attach(self) -> None:
        """Look up the existing cluster, its OIDC provider and one private subnet per zone."""
        cluster = self._args.cluster_name
        invoke = pulumi.InvokeOutputOptions(parent=self)
        info = aws.eks.get_cluster_output(name=cluster, opts=invoke)
        issuer_url = info.identities.apply(_issuer)
        oidc = aws.iam.get_open_id_connect_provider_output(url=issuer_url, opts=invoke)
        self.vpc_id = info.vpc_config.apply(lambda vpc: vpc.vpc_id)
        self.subnet_ids_by_zone = {}
        for zone in self._args.zones:
            found = aws.ec2.get_subnets_output(
                filters=self.vpc_id.apply(functools.partial(subnet_filters, zone=zone)),
                opts=invoke,
            )
            self.subnet_ids_by_zone[zone] = found.ids.apply(one_subnet(zone, cluster))
        self.name, self.endpoint = info.name, info.endpoint
        self.ca_data = info.certificate_authorities.apply(
            lambda cas: present(cas[0].data, "cluster CA")
        )
        self.oidc_provider_arn = oidc.arn
        self.oidc_issuer = issuer_url.apply(lambda url: url.removeprefix("https://"))
        self.node_role_arn = self._node_role()
