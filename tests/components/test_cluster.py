"""The cluster: EKS and GKE, created (with their network) or attached by name, and the
Kubernetes provider built from the endpoint and CA with an exec credential plugin."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from cloud_fixtures import (
    attached,
    cloud_layer,
    cloud_recording,
    created,
    parsed,
    run,
    with_cluster,
    with_zones,
)

from inferplane.app.offline import SECRET, Recording
from inferplane.app.offline_mocks import CA_DATA
from inferplane.app.offline_values import stable_hex
from inferplane.blueprint.model import Environment
from inferplane.blueprint.resolution.resolve import resolve_file
from inferplane.components import stack_args
from inferplane.components.cloud import gcp_account_id, gcp_label_value
from inferplane.components.cluster_eks import system_nodes_count
from inferplane.components.cluster_gke import ip_plan
from inferplane.components.eks_network import (
    control_plane_cidr,
    pick_control_plane_zone,
    subnet_plan,
)

TWO_ZONES = ("us-east-1a", "us-east-1b")


ROOT = Path(__file__).resolve().parents[2]
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"


def subnet_id(name: str) -> str:
    """The id the offline mocks give subnet `name` (`inferplane.app.offline_mocks`)."""
    return f"subnet-{stable_hex(f'aws:ec2/subnet:Subnet::{name}')}"


def tags_of(rec: Recording, type_: str) -> dict[str, dict[str, str]]:
    return {r.name: r.inputs.get("tags", {}) for r in rec.of_type(type_)}


# --- EKS, created ----------------------------------------------------------------------------
def test_new_eks_cluster_network_has_private_and_public_subnets_per_zone(
    staging: Environment,
) -> None:
    rec = cloud_recording(with_zones(staging, TWO_ZONES))
    (vpc,) = rec.of_type("aws:ec2/vpc:Vpc")
    assert vpc.inputs["cidrBlock"] == "10.64.0.0/16"
    assert vpc.inputs["enableDnsHostnames"] is True
    subnets = {r.name: r.inputs for r in rec.of_type("aws:ec2/subnet:Subnet")}
    name = "support-assistant-staging"
    assert {n: (s["availabilityZone"], s["cidrBlock"]) for n, s in subnets.items()} == {
        f"{name}-private-a": ("us-east-1a", "10.64.0.0/19"),
        f"{name}-private-b": ("us-east-1b", "10.64.32.0/19"),
        f"{name}-public-a": ("us-east-1a", "10.64.224.0/22"),
        f"{name}-public-b": ("us-east-1b", "10.64.228.0/22"),
    }
    for suffix in "ab":
        private = subnets[f"{name}-private-{suffix}"]["tags"]
        public = subnets[f"{name}-public-{suffix}"]["tags"]
        assert private["kubernetes.io/role/internal-elb"] == "1"
        assert "kubernetes.io/role/elb" not in private
        assert public["kubernetes.io/role/elb"] == "1"
        assert "kubernetes.io/role/internal-elb" not in public
        assert private[f"kubernetes.io/cluster/{name}"] == "shared"
        assert subnets[f"{name}-public-{suffix}"].get("mapPublicIpOnLaunch") is False


def test_each_zone_has_its_own_nat_gateway_and_private_route(staging: Environment) -> None:
    rec = cloud_recording(with_zones(staging, TWO_ZONES))
    name = "support-assistant-staging"
    nats = {r.name: r for r in rec.of_type("aws:ec2/natGateway:NatGateway")}
    assert set(nats) == {f"{name}-nat-a", f"{name}-nat-b"}
    (igw,) = rec.of_type("aws:ec2/internetGateway:InternetGateway")
    for nat in nats.values():
        assert igw.urn in nat.depends_on
    tables = {r.name: r.inputs for r in rec.of_type("aws:ec2/routeTable:RouteTable")}
    assert set(tables) == {f"{name}-public", f"{name}-private-a", f"{name}-private-b"}
    ((route,),) = [tables[f"{name}-public"]["routes"]]
    assert route["cidrBlock"] == "0.0.0.0/0"
    assert route["gatewayId"].startswith("igw-")
    nat_routes = {tables[f"{name}-private-{s}"]["routes"][0]["natGatewayId"] for s in "ab"}
    assert len(nat_routes) == 2
    assert all(r.startswith("nat-") for r in nat_routes)
    associations = rec.of_type("aws:ec2/routeTableAssociation:RouteTableAssociation")
    assert len(associations) == 4


def test_new_eks_cluster(staging: Environment) -> None:
    rec = cloud_recording(staging)
    (eks,) = rec.of_type("aws:eks/cluster:Cluster")
    assert eks.inputs["name"] == "support-assistant-staging"
    assert eks.inputs["version"] == "1.33"
    vpc = eks.inputs["vpcConfig"]
    assert vpc["endpointPrivateAccess"] is True
    assert vpc["endpointPublicAccess"] is True
    # One environment zone: the control plane also gets a subnet in a second zone.
    extra = subnet_id("support-assistant-staging-control-plane")
    assert vpc["subnetIds"] == [rec.outputs["subnets"]["us-east-1a"], extra]
    assert eks.inputs["accessConfig"] == {
        "authenticationMode": "API",
        "bootstrapClusterCreatorAdminPermissions": True,
    }
    assert eks.inputs["tags"]["owner"] == "ml-platform@example.com"
    roles = {r.name: r for r in rec.of_type("aws:iam/role:Role")}
    trust = parsed(roles["support-assistant-staging-cluster"], "assumeRolePolicy")
    assert trust["Statement"][0]["Principal"] == {"Service": "eks.amazonaws.com"}


def test_one_zone_eks_control_plane_gets_a_second_zone_and_nothing_else_does(
    staging: Environment,
) -> None:
    """EKS refuses a cluster whose subnets are not in two zones ("at least two subnets that
    are in different Availability Zones", docs.aws.amazon.com/eks/latest/userguide/
    network-reqs.html; InvalidParameterException "Subnets specified must be in at least two
    different AZs"). The extra subnet carries the control plane only: nodes, pods and load
    balancers stay in the environment's zone."""
    assert staging.zones == ("us-east-1a",)
    rec = cloud_recording(staging)
    name = "support-assistant-staging"
    subnets = {r.name: r for r in rec.of_type("aws:ec2/subnet:Subnet")}
    extra = subnets[f"{name}-control-plane"]
    # The first zone of the region that the environment does not use (the offline region
    # has us-east-1a..d).
    assert extra.inputs["availabilityZone"] == "us-east-1b"
    # Chosen once: a later lookup answer never moves the control plane's zone.
    assert extra.options["ignore_changes"] == ["availabilityZone"]
    assert extra.inputs["cidrBlock"] == "10.64.252.0/22"
    assert extra.inputs["cidrBlock"] not in {
        c for pair in subnet_plan("10.64.0.0/16", tuple("abcdefg")).values() for c in pair
    }
    # No ELB role tag (never a load balancer subnet), no route table of its own (no egress).
    assert not {"kubernetes.io/role/elb", "kubernetes.io/role/internal-elb"} & set(
        extra.inputs["tags"]
    )
    associations = rec.of_type("aws:ec2/routeTableAssociation:RouteTableAssociation")
    assert subnet_id(extra.name) not in {a.inputs["subnetId"] for a in associations}
    (eks,) = rec.of_type("aws:eks/cluster:Cluster")
    zones_of = {subnet_id(s.name): s.inputs["availabilityZone"] for s in subnets.values()}
    cp_zones = {zones_of[i] for i in eks.inputs["vpcConfig"]["subnetIds"]}
    assert cp_zones == {"us-east-1a", "us-east-1b"}
    # Node groups (system and GPU) stay in the environment's zone.
    for group in rec.of_type("aws:eks/nodeGroup:NodeGroup"):
        assert {zones_of[i] for i in group.inputs["subnetIds"]} == {"us-east-1a"}
    assert rec.outputs["subnets"] == {"us-east-1a": subnet_id(f"{name}-private-a")}


def test_two_zone_eks_control_plane_uses_the_environments_subnets(staging: Environment) -> None:
    rec = cloud_recording(with_zones(staging, TWO_ZONES))
    assert not [r for r in rec.of_type("aws:ec2/subnet:Subnet") if "control-plane" in r.name]
    (eks,) = rec.of_type("aws:eks/cluster:Cluster")
    subnets = rec.outputs["subnets"]
    assert eks.inputs["vpcConfig"]["subnetIds"] == [subnets[z] for z in TWO_ZONES]


def test_control_plane_zone_is_chosen_deterministically() -> None:
    region = ("us-east-1d", "us-east-1a", "us-east-1b", "us-east-1f")
    assert pick_control_plane_zone(region, ("us-east-1a",)) == "us-east-1b"
    assert pick_control_plane_zone(region, ("us-east-1b",)) == "us-east-1a"
    assert pick_control_plane_zone(list(reversed(region)), ("us-east-1a",)) == "us-east-1b"
    with pytest.raises(ValueError) as err:
        pick_control_plane_zone(("us-east-1a",), ("us-east-1a",))
    assert str(err.value) == (
        "EKS needs control-plane subnets in 2 zones, but the region offers no zone besides "
        "us-east-1a that EKS supports; add a second zone to the environment"
    )
    assert control_plane_cidr("10.0.0.0/22") == "10.0.3.240/28"


def test_the_offline_region_leaves_out_excluded_zones() -> None:
    from inferplane.app.offline_invokes import answers
    from inferplane.app.offline_values import CloudFacts

    facts = CloudFacts(cloud="aws", region="us-east-1", zones=("us-east-1a",))
    zones = answers(facts)["aws:index/getAvailabilityZones:getAvailabilityZones"]
    found = zones({"excludeZoneIds": ["use1-az3"], "excludeNames": ["us-east-1a"]})
    assert found["names"] == ["us-east-1b", "us-east-1d"]
    assert found["zoneIds"] == ["use1-az2", "use1-az4"]


def test_new_eks_cluster_has_an_oidc_provider_for_irsa(staging: Environment) -> None:
    rec = cloud_recording(staging)
    (oidc,) = rec.of_type("aws:iam/openIdConnectProvider:OpenIdConnectProvider")
    assert oidc.inputs["url"].startswith("https://oidc.eks.us-east-1.amazonaws.com/id/")
    assert oidc.inputs["clientIdLists"] == ["sts.amazonaws.com"]
    assert rec.outputs["oidc_issuer"] == oidc.inputs["url"].removeprefix("https://")
    assert rec.outputs["oidc_provider_arn"].endswith(f"oidc-provider/{rec.outputs['oidc_issuer']}")


def test_node_role_has_the_worker_policies(staging: Environment) -> None:
    rec = cloud_recording(staging)
    roles = {r.name: r for r in rec.of_type("aws:iam/role:Role")}
    node = roles["support-assistant-staging-node"]
    assert parsed(node, "assumeRolePolicy")["Statement"][0]["Principal"] == {
        "Service": "ec2.amazonaws.com"
    }
    attached_policies = {
        r.inputs["policyArn"].rsplit("/", 1)[-1]
        for r in rec.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
        if r.name.startswith("support-assistant-staging-node-")
    }
    assert attached_policies == {
        "AmazonEKSWorkerNodePolicy",
        "AmazonEKS_CNI_Policy",
        "AmazonEC2ContainerRegistryReadOnly",
    }


def test_new_eks_cluster_has_system_nodes_network_policy_and_ebs(staging: Environment) -> None:
    rec = cloud_recording(staging)
    groups = {r.name: r.inputs for r in rec.of_type("aws:eks/nodeGroup:NodeGroup")}
    system = groups["support-assistant-staging-system"]
    assert system["amiType"] == "AL2023_x86_64_STANDARD"
    # staging's two zones: one system node each (the interceptors run in every zone)
    assert system["scalingConfig"] == {"desiredSize": 2, "minSize": 2, "maxSize": 4}
    assert "taints" not in system
    addons = {r.inputs["addonName"]: r for r in rec.of_type("aws:eks/addon:Addon")}
    assert json.loads(addons["vpc-cni"].inputs["configurationValues"]) == {
        "enableNetworkPolicy": "true"
    }
    ebs = addons["aws-ebs-csi-driver"]
    assert ebs.inputs["serviceAccountRoleArn"].startswith("arn:aws:iam::")
    (system_group,) = [
        r for r in rec.of_type("aws:eks/nodeGroup:NodeGroup") if r.name.endswith("-system")
    ]
    assert system_group.urn in ebs.depends_on


def test_system_nodes_cover_every_zone() -> None:
    assert system_nodes_count(1) == (2, 4)
    assert system_nodes_count(2) == (2, 4)
    # Room for one more node per zone above the minimum.
    assert system_nodes_count(3) == (3, 6)
    assert system_nodes_count(5) == (5, 10)
    # Two per zone (the add-ons' node and one for llm-aware routing) in each of two zones.
    assert system_nodes_count(2, 2) == (4, 6)
    assert system_nodes_count(3, 3) == (9, 12)


def test_llm_aware_routing_adds_system_nodes_in_every_zone() -> None:
    # llm-routing's prod: one llm-aware model in two zones, its pickers and proxies (3 CPUs
    # and 5 GiB per zone) on a node of their own in each zone.
    routed = resolve_file(ROOT / "blueprints" / "llm-routing.yaml", "prod")
    groups = {r.name: r.inputs for r in cloud_recording(routed).of_type(NODE_GROUP)}
    assert groups["llm-routing-prod-system"]["scalingConfig"] == {
        "desiredSize": 4,
        "minSize": 4,
        "maxSize": 6,
    }


def test_a_gke_system_pool_starts_and_stays_at_the_count_per_zone(
    prod: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stack_args.system_nodes, "nodes_per_zone", lambda env: 4)
    rec = cloud_recording(created(prod))
    (system,) = [
        r for r in rec.of_type("gcp:container/nodePool:NodePool") if r.name.endswith("-system")
    ]
    assert system.inputs["initialNodeCount"] == 4
    assert system.inputs["autoscaling"] == {"minNodeCount": 4, "maxNodeCount": 6}
    # A grown count must not recreate an existing pool (initialNodeCount forces it).
    assert system.options["ignore_changes"] == ["initialNodeCount", "name"]


def test_kubernetes_provider_uses_a_secret_exec_kubeconfig(staging: Environment) -> None:
    rec = cloud_recording(staging)
    (provider,) = rec.of_type("pulumi:providers:kubernetes")
    assert provider.inputs["kubeconfig"] == SECRET
    (eks,) = rec.of_type("aws:eks/cluster:Cluster")
    assert eks.urn in provider.depends_on
    config = json.loads(rec.outputs["kubeconfig"])
    (cluster,) = config["clusters"]
    assert cluster["cluster"]["server"] == rec.outputs["endpoint"]
    assert cluster["cluster"]["server"].startswith("https://")
    assert cluster["cluster"]["certificate-authority-data"] == CA_DATA
    (user,) = config["users"]
    assert user["user"]["exec"]["command"] == "aws"
    assert user["user"]["exec"]["args"] == [
        "eks",
        "get-token",
        "--cluster-name",
        "support-assistant-staging",
        "--region",
        "us-east-1",
        "--output",
        "json",
    ]
    assert "token" not in json.dumps(user["user"]).replace("get-token", "")


# --- EKS, attached ---------------------------------------------------------------------------
def test_attached_eks_cluster_is_looked_up_not_created(staging: Environment) -> None:
    rec = cloud_recording(attached(staging, "shared-eks"))
    for created_type in (
        "aws:eks/cluster:Cluster",
        "aws:ec2/vpc:Vpc",
        "aws:ec2/subnet:Subnet",
        "aws:iam/openIdConnectProvider:OpenIdConnectProvider",
        "aws:eks/addon:Addon",
    ):
        assert rec.of_type(created_type) == [], created_type
    invokes = {i.token: i.args for i in rec.invokes}
    assert invokes["aws:eks/getCluster:getCluster"] == {"name": "shared-eks"}
    issuer = invokes["aws:iam/getOpenIdConnectProvider:getOpenIdConnectProvider"]["url"]
    assert issuer == f"https://{rec.outputs['oidc_issuer']}"
    assert rec.outputs["cluster_name"] == "shared-eks"
    assert rec.outputs["lb_subnet_ids"] == [rec.outputs["subnets"]["us-east-1a"]]
    assert json.loads(rec.outputs["kubeconfig"])["users"][0]["user"]["exec"]["args"][3] == (
        "shared-eks"
    )
    # GPU nodes still need a role of their own.
    assert "support-assistant-staging-node" in {r.name for r in rec.of_type("aws:iam/role:Role")}


# --- GKE, attached -----------------------------------------------------------------------------
def test_attached_gke_cluster(prod: Environment) -> None:
    rec = cloud_recording(prod)
    assert rec.of_type("gcp:container/cluster:Cluster") == []
    assert rec.of_type("gcp:compute/network:Network") == []
    lookups = [i for i in rec.invokes if i.token == "gcp:container/getCluster:getCluster"]
    assert [i.args for i in lookups] == [
        {"name": "prod-gke", "location": "us-central1", "project": "acme-ml-prod"}
    ]
    assert rec.outputs["workload_pool"] == "acme-ml-prod.svc.id.goog"
    assert rec.outputs["endpoint"].startswith("https://")
    assert rec.outputs["lb_subnet_ids"] is None
    config = json.loads(rec.outputs["kubeconfig"])
    assert config["clusters"][0]["cluster"]["server"] == rec.outputs["endpoint"]
    assert config["users"][0]["user"]["exec"]["command"] == "gke-gcloud-auth-plugin"


def _gke_answers(monkeypatch: pytest.MonkeyPatch, **changes: object) -> None:
    """The offline `gcp.container.get_cluster` answer, with `changes`."""
    from inferplane.app import offline_invokes

    answer = offline_invokes._gke_get_cluster

    def changed(facts: object, args: object) -> dict[str, object]:
        return {**answer(facts, args), **changes}  # type: ignore[arg-type]

    monkeypatch.setattr(offline_invokes, "_gke_get_cluster", changed)


def test_attached_gke_cluster_without_zonal_affinity_fails_the_preview(
    prod: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Internal load balancers keep clients in their zone only on GKE >= 1.33.3-gke.1392000
    with GKE subsetting (GKE "Create an internal load balancer", "Using zonal affinity"); an
    attached cluster is checked through the cluster data source, at preview time."""
    _gke_answers(monkeypatch, masterVersion="1.33.2-gke.1000", enableL4IlbSubsetting=False)
    with pytest.raises(ValueError) as err:
        run(dataclasses.replace(prod), cloud_layer)
    assert (
        "cluster prod-gke: internal load balancers cannot keep clients in their zone (zonal "
        "affinity): it runs GKE 1.33.2-gke.1000, older than 1.33.3-gke.1392000 (upgrade the "
        "control plane); and GKE subsetting is off (gcloud container clusters update CLUSTER "
        "--enable-l4-ilb-subsetting; it cannot be turned off again)"
    ) in str(err.value)


def test_attached_gke_cluster_with_zonal_affinity_or_external_lbs_passes(
    prod: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    _gke_answers(monkeypatch, masterVersion="1.34.1-gke.100", enableL4IlbSubsetting=True)
    assert run(dataclasses.replace(prod), cloud_layer).outputs["endpoint"].startswith("https://")
    _gke_answers(monkeypatch, masterVersion="1.32.1-gke.100", enableL4IlbSubsetting=False)
    external = dataclasses.replace(
        prod, load_balancer=dataclasses.replace(prod.load_balancer, scheme="external")
    )
    assert run(external, cloud_layer).outputs["endpoint"].startswith("https://")


def test_gke_nodes_get_a_least_privilege_service_account(prod: Environment) -> None:
    rec = cloud_recording(prod)
    accounts = {r.name: r.inputs for r in rec.of_type("gcp:serviceaccount/account:Account")}
    assert accounts["support-assistant-prod-nodes"]["accountId"] == "support-assistant-prod-nodes"
    grants = {
        r.inputs["role"]
        for r in rec.of_type("gcp:projects/iAMMember:IAMMember")
        if r.name.startswith("support-assistant-prod-nodes-")
    }
    assert grants == {"roles/container.defaultNodeServiceAccount", "roles/artifactregistry.reader"}


# --- GKE, created --------------------------------------------------------------------------------
def test_new_gke_cluster_is_vpc_native_regional_with_workload_identity(
    prod: Environment,
) -> None:
    rec = cloud_recording(created(prod))
    (subnet,) = rec.of_type("gcp:compute/subnetwork:Subnetwork")
    assert subnet.inputs["ipCidrRange"] == "10.64.0.0/20"
    assert subnet.inputs["privateIpGoogleAccess"] is True
    assert {r["rangeName"]: r["ipCidrRange"] for r in subnet.inputs["secondaryIpRanges"]} == {
        "pods": "10.64.128.0/17",
        "services": "10.64.16.0/20",
    }
    (gke,) = rec.of_type("gcp:container/cluster:Cluster")
    inputs = gke.inputs
    assert inputs["name"] == "support-assistant-prod"
    assert inputs["location"] == "us-central1"
    assert inputs["nodeLocations"] == ["us-central1-a", "us-central1-b"]
    assert inputs["networkingMode"] == "VPC_NATIVE"
    assert inputs["ipAllocationPolicy"] == {
        "clusterSecondaryRangeName": "pods",
        "servicesSecondaryRangeName": "services",
    }
    assert inputs["workloadIdentityConfig"] == {"workloadPool": "acme-ml-prod.svc.id.goog"}
    assert inputs["removeDefaultNodePool"] is True
    assert inputs["initialNodeCount"] == 1
    # Zonal affinity of internal load balancers: GKE >= 1.33.3-gke.1392000 and subsetting
    # (cloud.google.com/kubernetes-engine/docs/how-to/internal-load-balancing).
    assert inputs["minMasterVersion"] == "1.33.3-gke.1392000"
    assert inputs["releaseChannel"] == {"channel": "REGULAR"}
    assert inputs["privateClusterConfig"]["enablePrivateNodes"] is True
    assert inputs["datapathProvider"] == "ADVANCED_DATAPATH"
    assert inputs["enableL4IlbSubsetting"] is True
    assert inputs["resourceLabels"]["owner"] == "ml-platform_example_com"
    (nat,) = rec.of_type("gcp:compute/routerNat:RouterNat")
    assert nat.inputs["sourceSubnetworkIpRangesToNat"] == "ALL_SUBNETWORKS_ALL_IP_RANGES"
    system = next(
        r for r in rec.of_type("gcp:container/nodePool:NodePool") if r.name.endswith("-system")
    )
    # An explicit name, not the logical name plus a random suffix; a pool auto-named
    # before keeps its name rather than being replaced with every add-on on it.
    assert system.inputs["name"] == "system"
    assert system.options["ignore_changes"] == ["initialNodeCount", "name"]
    assert system.inputs["nodeLocations"] == ["us-central1-a", "us-central1-b"]
    assert system.inputs["nodeConfig"]["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
    assert "taints" not in system.inputs["nodeConfig"]
    (provider,) = rec.of_type("pulumi:providers:kubernetes")
    assert {gke.urn, system.urn} <= set(provider.depends_on)


# --- plans and names ---------------------------------------------------------------------
def test_subnet_plan_gives_each_zone_disjoint_ranges() -> None:
    plan = subnet_plan("10.0.0.0/16", ("a", "b", "c"))
    assert plan == {
        "a": ("10.0.0.0/19", "10.0.224.0/22"),
        "b": ("10.0.32.0/19", "10.0.228.0/22"),
        "c": ("10.0.64.0/19", "10.0.232.0/22"),
    }
    with pytest.raises(ValueError, match="too small"):
        subnet_plan("10.0.0.0/24", ("a",))
    with pytest.raises(ValueError, match="at most 7 zones"):
        subnet_plan("10.0.0.0/16", tuple("abcdefgh"))


def test_gke_ip_plan() -> None:
    assert ip_plan("10.10.0.0/16") == ("10.10.0.0/20", "10.10.16.0/20", "10.10.128.0/17")
    with pytest.raises(ValueError, match="too small"):
        ip_plan("10.10.0.0/22")


def test_gcp_names_and_labels_fit_gcp_rules() -> None:
    assert gcp_account_id("support-assistant-prod", "reader") == "support-assistant-prod-reader"
    long_id = gcp_account_id("a-very-long-blueprint-name-production", "builder")
    assert len(long_id) <= 30
    assert long_id.endswith("-builder")
    assert long_id != gcp_account_id("a-very-long-blueprint-name-staging2", "builder")
    assert gcp_label_value("ML-Platform@Example.com") == "ml-platform_example_com"
    assert len(gcp_label_value("x" * 80)) == 63


def test_a_different_vpc_cidr_reaches_the_network(staging: Environment) -> None:
    rec = cloud_recording(with_cluster(staging, vpc_cidr="172.20.0.0/16"))
    (vpc,) = rec.of_type("aws:ec2/vpc:Vpc")
    assert vpc.inputs["cidrBlock"] == "172.20.0.0/16"
