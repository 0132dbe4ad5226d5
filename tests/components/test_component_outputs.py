"""Every output a cloud component documents is registered (`register_outputs`), read
back from the offline run; and the clusters' children keep their names and, through
aliases, the URNs they had before `EksCluster` / `GkeCluster` existed."""

from __future__ import annotations

import inspect
import re

import pytest
from cloud_fixtures import attached, cloud_recording, created

from inferplane.app.offline import RecordedResource, Recording
from inferplane.blueprint.model import Environment
from inferplane.components.addons import ClusterAddons
from inferplane.components.cluster import Cluster
from inferplane.components.cluster_eks import EksCluster
from inferplane.components.cluster_gke import GkeCluster
from inferplane.components.identity import ModelStoreAccess
from inferplane.components.node_pool import GpuNodePool

COMPONENTS: dict[str, type] = {
    "inferplane:cluster:Cluster": Cluster,
    "inferplane:cluster:EksCluster": EksCluster,
    "inferplane:cluster:GkeCluster": GkeCluster,
    "inferplane:node_pool:GpuNodePool": GpuNodePool,
    "inferplane:addons:ClusterAddons": ClusterAddons,
    "inferplane:identity:ModelStoreAccess": ModelStoreAccess,
}

# Outputs that are None on one cloud (as documented), which the SDK does not send.
NONE_ON_AWS = {"location", "workload_pool", "node_service_account"}
NONE_ON_GCP = {"oidc_provider_arn", "oidc_issuer", "vpc_id", "lb_subnet_ids", "node_role_arn"}


def documented_outputs(cls: type) -> set[str]:
    """Names in the docstring's ``Outputs:`` section: each entry is ``name: text`` (or
    ``a, b: text`` / ``a / b: text``), several per line separated by two spaces."""
    section = (inspect.getdoc(cls) or "").split("Outputs:", 1)[1]
    names: set[str] = set()
    for line in section.splitlines():
        for chunk in re.split(r"\.\s{2,}", line.strip()):
            found = re.match(r"([a-z_]+(?:\s*[,/]\s*[a-z_]+)*):\s", chunk)
            if found:
                names |= set(re.split(r"\s*[,/]\s*", found.group(1)))
    return names


def test_the_docstring_reader_finds_every_entry() -> None:
    assert documented_outputs(Cluster) == {
        "provider",
        "name",
        "endpoint",
        "kubeconfig",
        "oidc_provider_arn",
        "oidc_issuer",
        "vpc_id",
        "subnet_ids_by_zone",
        "lb_subnet_ids",
        "node_role_arn",
        "location",
        "workload_pool",
        "node_service_account",
    }
    assert documented_outputs(ModelStoreAccess) == {
        "reader_identity",
        "builder_identity",
        "stager_identity",
        "compiler_identity",
        "service_accounts",
    }


def registered(rec: Recording) -> dict[str, set[str]]:
    """Component type -> the union of output names its instances registered."""
    found: dict[str, set[str]] = {}
    for resource in rec:
        if resource.type in COMPONENTS:
            keys = set(rec.registered_outputs.get(resource.urn, {}))
            found.setdefault(resource.type, set()).update(keys)
    return found


@pytest.mark.parametrize("variant", [lambda e: e, lambda e: attached(e, "shared-eks")])
def test_every_documented_output_is_registered_on_aws(
    staging: Environment, variant: object
) -> None:
    env = variant(staging)  # type: ignore[operator]
    found = registered(cloud_recording(env))
    assert set(found) == set(COMPONENTS) - {"inferplane:cluster:GkeCluster"}
    for type_, keys in found.items():
        expected = documented_outputs(COMPONENTS[type_]) - NONE_ON_AWS
        if type_ == "inferplane:addons:ClusterAddons" and not env.cluster.create:
            expected -= {"storage_class"}  # None: the cluster's default class
        assert keys == expected, type_


@pytest.mark.parametrize("variant", [lambda e: e, created])
def test_every_documented_output_is_registered_on_gcp(prod: Environment, variant: object) -> None:
    found = registered(cloud_recording(variant(prod)))  # type: ignore[operator]
    assert set(found) == set(COMPONENTS) - {"inferplane:cluster:EksCluster"}
    for type_, keys in found.items():
        expected = documented_outputs(COMPONENTS[type_]) - NONE_ON_GCP
        if type_ == "inferplane:addons:ClusterAddons":
            expected -= {"storage_class"}  # None on GCP: the cluster's default class
        assert keys == expected, type_


def test_registered_cluster_outputs_carry_the_facts(staging: Environment) -> None:
    rec = cloud_recording(staging)
    (cluster,) = rec.of_type("inferplane:cluster:Cluster")
    (eks,) = rec.of_type("inferplane:cluster:EksCluster")
    outputs, eks_outputs = rec.registered_outputs[cluster.urn], rec.registered_outputs[eks.urn]
    assert outputs["name"] == "support-assistant-staging"
    assert outputs["kubeconfig"] == "[secret]"
    assert outputs["provider"] == rec.of_type("pulumi:providers:kubernetes")[0].urn
    assert outputs["subnet_ids_by_zone"] == eks_outputs["subnet_ids_by_zone"]
    assert list(outputs["subnet_ids_by_zone"]) == ["us-east-1a"]
    assert outputs["lb_subnet_ids"] == [eks_outputs["subnet_ids_by_zone"]["us-east-1a"]]
    assert sorted(eks_outputs["ready"]) == sorted(
        rec.named(n, t).urn
        for n, t in [
            ("support-assistant-staging", "aws:eks/cluster:Cluster"),
            ("support-assistant-staging-system", "aws:eks/nodeGroup:NodeGroup"),
            ("support-assistant-staging-vpc-cni", "aws:eks/addon:Addon"),
            ("support-assistant-staging-ebs-csi", "aws:eks/addon:Addon"),
        ]
    )


# --- the cluster components' children keep their identity --------------------------------
def below(rec: Recording, component: RecordedResource) -> list[RecordedResource]:
    return [r for r in rec if r.parent == component.urn]


EKS_CREATED_CHILDREN = {
    ("aws:ec2/vpc:Vpc", "support-assistant-staging-vpc"),
    ("aws:ec2/internetGateway:InternetGateway", "support-assistant-staging-igw"),
    ("aws:ec2/routeTable:RouteTable", "support-assistant-staging-public"),
    ("aws:ec2/subnet:Subnet", "support-assistant-staging-public-a"),
    ("aws:ec2/routeTableAssociation:RouteTableAssociation", "support-assistant-staging-public-a"),
    ("aws:ec2/eip:Eip", "support-assistant-staging-nat-a"),
    ("aws:ec2/natGateway:NatGateway", "support-assistant-staging-nat-a"),
    ("aws:ec2/subnet:Subnet", "support-assistant-staging-private-a"),
    ("aws:ec2/routeTable:RouteTable", "support-assistant-staging-private-a"),
    ("aws:ec2/routeTableAssociation:RouteTableAssociation", "support-assistant-staging-private-a"),
    # One environment zone: EKS needs a second zone for the control plane.
    ("aws:ec2/subnet:Subnet", "support-assistant-staging-control-plane"),
    ("aws:iam/role:Role", "support-assistant-staging-cluster"),
    (
        "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
        "support-assistant-staging-cluster-AmazonEKSClusterPolicy",
    ),
    ("aws:eks/cluster:Cluster", "support-assistant-staging"),
    ("aws:iam/openIdConnectProvider:OpenIdConnectProvider", "support-assistant-staging-oidc"),
    ("aws:iam/role:Role", "support-assistant-staging-node"),
    (
        "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
        "support-assistant-staging-node-AmazonEKSWorkerNodePolicy",
    ),
    (
        "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
        "support-assistant-staging-node-AmazonEKS_CNI_Policy",
    ),
    (
        "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
        "support-assistant-staging-node-AmazonEC2ContainerRegistryReadOnly",
    ),
    ("aws:eks/nodeGroup:NodeGroup", "support-assistant-staging-system"),
    ("aws:eks/addon:Addon", "support-assistant-staging-vpc-cni"),
    ("aws:iam/role:Role", "support-assistant-staging-ebs-csi"),
    (
        "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
        "support-assistant-staging-ebs-csi-AmazonEBSCSIDriverPolicy",
    ),
    ("aws:eks/addon:Addon", "support-assistant-staging-ebs-csi"),
}
EKS_ATTACHED_CHILDREN = {c for c in EKS_CREATED_CHILDREN if "-node" in c[1]}
GKE_CREATED_CHILDREN = {
    ("gcp:compute/network:Network", "support-assistant-prod-net"),
    ("gcp:compute/subnetwork:Subnetwork", "support-assistant-prod-nodes"),
    ("gcp:compute/router:Router", "support-assistant-prod-router"),
    ("gcp:compute/routerNat:RouterNat", "support-assistant-prod-nat"),
    ("gcp:container/cluster:Cluster", "support-assistant-prod"),
    ("gcp:serviceaccount/account:Account", "support-assistant-prod-nodes"),
    (
        "gcp:projects/iAMMember:IAMMember",
        "support-assistant-prod-nodes-container.defaultNodeServiceAccount",
    ),
    ("gcp:projects/iAMMember:IAMMember", "support-assistant-prod-nodes-artifactregistry.reader"),
    ("gcp:container/nodePool:NodePool", "support-assistant-prod-system"),
}
GKE_ATTACHED_CHILDREN = {c for c in GKE_CREATED_CHILDREN if "-nodes-" in c[1] or "Account" in c[0]}


@pytest.mark.parametrize(
    ("env_name", "variant", "component", "children"),
    [
        ("staging", lambda e: e, "inferplane:cluster:EksCluster", EKS_CREATED_CHILDREN),
        ("staging", lambda e: attached(e, "shared-eks"), "inferplane:cluster:EksCluster", None),
        ("prod", created, "inferplane:cluster:GkeCluster", GKE_CREATED_CHILDREN),
        ("prod", lambda e: e, "inferplane:cluster:GkeCluster", GKE_ATTACHED_CHILDREN),
    ],
)
def test_cluster_children_keep_their_names_and_urns(
    request: pytest.FixtureRequest,
    env_name: str,
    variant: object,
    component: str,
    children: set[tuple[str, str]] | None,
) -> None:
    env = variant(request.getfixturevalue(env_name))  # type: ignore[operator]
    rec = cloud_recording(env)
    (cloud_cluster,) = rec.of_type(component)
    (cluster,) = rec.of_type("inferplane:cluster:Cluster")
    assert cloud_cluster.parent == cluster.urn
    assert cloud_cluster.name == cluster.name
    found = below(rec, cloud_cluster)
    if children is None:  # attached EKS: only the node role, named as before
        children = {
            (t, n.replace("support-assistant-staging", cluster.name))
            for t, n in EKS_ATTACHED_CHILDREN
        }
    assert {(r.type, r.name) for r in found} == children
    for resource in found:
        specs = [a["spec"] for a in resource.aliases if "spec" in a]
        # Exactly the old parent: name, type, project and stack stay, so the alias is the
        # URN the resource had as `Cluster`'s child and the engine moves it, not replaces it.
        assert {"parentUrn": cluster.urn} in specs, resource.name
