"""EKS: create a cluster with its network, or attach to an existing one.

A created cluster gets a VPC with one private and one public subnet per environment zone
and one NAT gateway per zone (a zone that fails takes only its own egress with it), the
EKS control plane on the private subnets with a public and a private endpoint, an OIDC
provider for IRSA, a small system node group for the add-ons, the VPC CNI with network
policy enforcement (serving NetworkPolicies must be enforced) and the EBS CSI driver
(Prometheus keeps its data on a volume).
"""

from __future__ import annotations

import functools
import ipaddress
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws

from inferplane.blueprint import naming
from inferplane.blueprint.model import Environment
from inferplane.components import iam
from inferplane.components.cloud import aws_tags, cluster_name, present

SYSTEM_INSTANCE_TYPE = "m6i.xlarge"
"""System nodes run the add-ons (operators, Prometheus, Grafana), never model servers."""
SYSTEM_NODES_MIN = 2
SYSTEM_NODES_MAX = 4
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

INTERNAL_ELB_TAG = "kubernetes.io/role/internal-elb"
PUBLIC_ELB_TAG = "kubernetes.io/role/elb"


@dataclass
class EksFacts:
    """What the rest of the stack needs from an EKS cluster, created or attached."""

    name: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    ca_data: pulumi.Output[str]
    oidc_provider_arn: pulumi.Output[str]
    oidc_issuer: pulumi.Output[str]
    """Issuer host and path, without ``https://``."""
    vpc_id: pulumi.Output[str]
    private_subnet_ids: dict[str, pulumi.Output[str]]
    """One private subnet per environment zone, by zone."""
    node_role_arn: pulumi.Output[str]
    ready: list[pulumi.Resource] = field(default_factory=list)
    """What must exist before anything is installed into the cluster."""


def subnet_plan(vpc_cidr: str, zones: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    """zone -> (private CIDR, public CIDR).

    The VPC splits into eight blocks: one large private block per zone (pod IPs come from
    it with the VPC CNI) and the last block cut into eight small public ones (NAT gateways
    and public load balancers only)."""
    net = ipaddress.IPv4Network(vpc_cidr)
    if net.prefixlen > 22:
        raise ValueError(
            f"vpc_cidr {vpc_cidr} is too small for per-zone subnets; use a /22 or larger"
        )
    blocks = list(net.subnets(prefixlen_diff=3))
    if len(zones) > len(blocks) - 1:
        raise ValueError(f"at most {len(blocks) - 1} zones fit one VPC, got {len(zones)}")
    public = list(blocks[-1].subnets(prefixlen_diff=3))
    return {zone: (str(blocks[i]), str(public[i])) for i, zone in enumerate(zones)}


def node_role(name: str, env: Environment, parent: pulumi.Resource) -> pulumi.Output[str]:
    """The IAM role of GPU (and system) nodes; its ARN resolves after the policies attach."""
    opts = pulumi.ResourceOptions(parent=parent)
    role = aws.iam.Role(
        f"{name}-node",
        description=f"EKS nodes of {cluster_name(env)}",
        assume_role_policy=iam.service_trust("ec2.amazonaws.com"),
        tags=aws_tags(env),
        opts=opts,
    )
    attachments = [
        aws.iam.RolePolicyAttachment(
            f"{name}-node-{arn.rsplit('/', 1)[-1]}", role=role.name, policy_arn=arn, opts=opts
        )
        for arn in NODE_POLICIES
    ]
    return iam.after(role.arn, *attachments)


def create(name: str, env: Environment, parent: pulumi.Resource) -> EksFacts:
    opts = pulumi.ResourceOptions(parent=parent)
    cluster = cluster_name(env)
    shared = {f"kubernetes.io/cluster/{cluster}": "shared"}
    vpc = aws.ec2.Vpc(
        f"{name}-vpc",
        cidr_block=env.cluster.vpc_cidr,
        enable_dns_hostnames=True,
        enable_dns_support=True,
        tags=aws_tags(env, Name=cluster),
        opts=opts,
    )
    igw = aws.ec2.InternetGateway(
        f"{name}-igw", vpc_id=vpc.id, tags=aws_tags(env, Name=cluster), opts=opts
    )
    public_routes = aws.ec2.RouteTable(
        f"{name}-public",
        vpc_id=vpc.id,
        routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", gateway_id=igw.id)],
        tags=aws_tags(env, Name=f"{cluster}-public"),
        opts=opts,
    )
    private: dict[str, pulumi.Output[str]] = {}
    for zone, (private_cidr, public_cidr) in subnet_plan(
        env.cluster.vpc_cidr, env.node_zones
    ).items():
        s = naming.zone_suffix(zone)
        public_subnet = aws.ec2.Subnet(
            f"{name}-public-{s}",
            vpc_id=vpc.id,
            cidr_block=public_cidr,
            availability_zone=zone,
            map_public_ip_on_launch=False,
            tags=aws_tags(env, Name=f"{cluster}-public-{s}", **{PUBLIC_ELB_TAG: "1"}, **shared),
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
            tags=aws_tags(env, Name=f"{cluster}-nat-{s}"),
            opts=opts,
        )
        nat = aws.ec2.NatGateway(
            f"{name}-nat-{s}",
            allocation_id=eip.allocation_id,
            subnet_id=public_subnet.id,
            tags=aws_tags(env, Name=f"{cluster}-nat-{s}"),
            opts=pulumi.ResourceOptions(parent=parent, depends_on=[igw]),
        )
        subnet = aws.ec2.Subnet(
            f"{name}-private-{s}",
            vpc_id=vpc.id,
            cidr_block=private_cidr,
            availability_zone=zone,
            tags=aws_tags(env, Name=f"{cluster}-private-{s}", **{INTERNAL_ELB_TAG: "1"}, **shared),
            opts=opts,
        )
        routes = aws.ec2.RouteTable(
            f"{name}-private-{s}",
            vpc_id=vpc.id,
            routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", nat_gateway_id=nat.id)],
            tags=aws_tags(env, Name=f"{cluster}-private-{s}"),
            opts=opts,
        )
        aws.ec2.RouteTableAssociation(
            f"{name}-private-{s}", subnet_id=subnet.id, route_table_id=routes.id, opts=opts
        )
        private[zone] = subnet.id

    control_role = aws.iam.Role(
        f"{name}-cluster",
        description=f"EKS control plane of {cluster}",
        assume_role_policy=iam.service_trust("eks.amazonaws.com"),
        tags=aws_tags(env),
        opts=opts,
    )
    control_attachments = [
        aws.iam.RolePolicyAttachment(
            f"{name}-cluster-{arn.rsplit('/', 1)[-1]}",
            role=control_role.name,
            policy_arn=arn,
            opts=opts,
        )
        for arn in CLUSTER_POLICIES
    ]
    eks = aws.eks.Cluster(
        name,
        name=cluster,
        version=env.cluster.kubernetes_version,
        role_arn=control_role.arn,
        vpc_config=aws.eks.ClusterVpcConfigArgs(
            subnet_ids=list(private.values()),
            endpoint_private_access=True,
            endpoint_public_access=True,
        ),
        access_config=aws.eks.ClusterAccessConfigArgs(
            authentication_mode="API",
            bootstrap_cluster_creator_admin_permissions=True,
        ),
        enabled_cluster_log_types=list(CLUSTER_LOG_TYPES),
        tags=aws_tags(env),
        opts=pulumi.ResourceOptions(parent=parent, depends_on=control_attachments),
    )
    issuer_url = eks.identities.apply(_issuer)
    # No thumbprint: IAM verifies EKS issuers against its own trusted CAs and computes the
    # thumbprint from the issuer's certificate itself when none is given.
    oidc = aws.iam.OpenIdConnectProvider(
        f"{name}-oidc",
        url=issuer_url,
        client_id_lists=[iam.STS_AUDIENCE],
        tags=aws_tags(env),
        opts=opts,
    )
    issuer = issuer_url.apply(lambda url: url.removeprefix("https://"))
    nodes = node_role(name, env, parent)
    system = aws.eks.NodeGroup(
        f"{name}-system",
        cluster_name=eks.name,
        node_group_name=f"{cluster}-system",
        node_role_arn=nodes,
        subnet_ids=list(private.values()),
        instance_types=[SYSTEM_INSTANCE_TYPE],
        ami_type=SYSTEM_AMI_TYPE,
        capacity_type="ON_DEMAND",
        scaling_config=aws.eks.NodeGroupScalingConfigArgs(
            desired_size=SYSTEM_NODES_MIN, min_size=SYSTEM_NODES_MIN, max_size=SYSTEM_NODES_MAX
        ),
        labels={SYSTEM_ROLE_LABEL: "system"},
        tags=aws_tags(env),
        opts=opts,
    )
    cni = aws.eks.Addon(
        f"{name}-vpc-cni",
        cluster_name=eks.name,
        addon_name="vpc-cni",
        configuration_values=json.dumps({"enableNetworkPolicy": "true"}),
        resolve_conflicts_on_create="OVERWRITE",
        resolve_conflicts_on_update="OVERWRITE",
        tags=aws_tags(env),
        opts=opts,
    )
    _, ebs_role_arn = iam.irsa_role(
        f"{name}-ebs-csi",
        oidc_provider_arn=oidc.arn,
        oidc_issuer=issuer,
        namespace=naming.KUBE_SYSTEM_NAMESPACE,
        service_account=EBS_CSI_SERVICE_ACCOUNT,
        policy=None,
        managed_policy_arns=(EBS_CSI_POLICY,),
        tags=aws_tags(env),
        parent=parent,
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
        tags=aws_tags(env),
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[system]),
    )
    return EksFacts(
        name=eks.name,
        endpoint=eks.endpoint,
        ca_data=eks.certificate_authority.apply(lambda ca: present(ca.data, "cluster CA")),
        oidc_provider_arn=oidc.arn,
        oidc_issuer=issuer,
        vpc_id=vpc.id,
        private_subnet_ids=private,
        node_role_arn=nodes,
        ready=[eks, system, cni, ebs],
    )


def _issuer(identities: Sequence[Any]) -> str:
    """The OIDC issuer URL of a cluster's (first) identity."""
    oidcs = identities[0].oidcs if identities else None
    return present(oidcs[0].issuer if oidcs else None, "OIDC issuer")


def _one_subnet(zone: str, cluster: str) -> Callable[[Sequence[str] | None], str]:
    def pick(ids: Sequence[str] | None) -> str:
        if not ids:
            raise ValueError(
                f"cluster {cluster}: no subnet in {zone} is tagged {INTERNAL_ELB_TAG}=1 in the "
                f"cluster's VPC; tag one private subnet per zone of the environment with it"
            )
        return sorted(ids)[0]

    return pick


def _subnet_filters(vpc_id: str, zone: str) -> list[aws.ec2.GetSubnetsFilterArgs]:
    return [
        aws.ec2.GetSubnetsFilterArgs(name="vpc-id", values=[vpc_id]),
        aws.ec2.GetSubnetsFilterArgs(name="availability-zone", values=[zone]),
        aws.ec2.GetSubnetsFilterArgs(name=f"tag:{INTERNAL_ELB_TAG}", values=["1"]),
    ]


def attach(name: str, env: Environment, parent: pulumi.Resource) -> EksFacts:
    """Look up an existing EKS cluster; only the node role is created."""
    cluster = cluster_name(env)
    invoke = pulumi.InvokeOutputOptions(parent=parent)
    info = aws.eks.get_cluster_output(name=cluster, opts=invoke)
    issuer_url = info.identities.apply(_issuer)
    oidc = aws.iam.get_open_id_connect_provider_output(url=issuer_url, opts=invoke)
    vpc_id = info.vpc_config.apply(lambda vpc: vpc.vpc_id)
    private: dict[str, pulumi.Output[str]] = {}
    for zone in env.node_zones:
        found = aws.ec2.get_subnets_output(
            filters=vpc_id.apply(functools.partial(_subnet_filters, zone=zone)), opts=invoke
        )
        private[zone] = found.ids.apply(_one_subnet(zone, cluster))
    return EksFacts(
        name=info.name,
        endpoint=info.endpoint,
        ca_data=info.certificate_authorities.apply(lambda cas: present(cas[0].data, "cluster CA")),
        oidc_provider_arn=oidc.arn,
        oidc_issuer=issuer_url.apply(lambda url: url.removeprefix("https://")),
        vpc_id=vpc_id,
        private_subnet_ids=private,
        node_role_arn=node_role(name, env, parent),
    )
