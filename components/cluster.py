"""The Kubernetes cluster an environment runs on (EKS or GKE, created or attached; or any
conformant cluster named by a kubeconfig context), and the Kubernetes provider every
in-cluster resource uses explicitly."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint import defaults
from inferplane.components.cloud import Cloud, Ownership, eks_exec, gke_exec, kubeconfig
from inferplane.components.cluster_eks import EksCluster, EksClusterArgs
from inferplane.components.cluster_gke import GkeCluster, GkeClusterArgs


@dataclass(frozen=True)
class ClusterArgs:
    """Arguments of `Cluster`."""

    cloud: Cloud
    """``aws`` (EKS), ``gcp`` (GKE) or ``kubernetes`` (the cluster of `context`)."""
    cluster_name: str
    """The cluster's name: the name a created cluster gets, or the existing one's."""
    owner: Ownership
    """Tags (AWS) or labels (GCP) of everything created, and the prefix of its cloud names."""
    region: str
    """The cloud region (the exec credential plugin's on AWS, the network's on GCP)."""
    zones: tuple[str, ...]
    """The environment's zones, in order: on AWS each gets a private subnet and
    `lb_subnet_ids` lists them in this order; on GCP a created cluster's nodes run in them."""
    create: bool = True
    """True creates the cluster (and its VPC or network). False attaches to the existing
    cluster `cluster_name` (on GCP at `gke_location`)."""
    extra_node_zones: tuple[str, ...] = ()
    """AWS: zones outside `zones` where GPU nodes run too; each also gets a private subnet.
    Default: none."""
    project: str | None = None
    """GCP: the project (required on GCP; unused on AWS)."""
    gke_location: str | None = None
    """GCP: the cluster's location, a region or a zone (required on GCP; unused on AWS)."""
    kubernetes_version: str = defaults.KUBERNETES_VERSION
    """Kubernetes minor of a created cluster. Default: the tested minor of
    `inferplane.blueprint.defaults`. Unused when attaching."""
    vpc_cidr: str = defaults.VPC_CIDR
    """Address range of a created VPC or network. Default: the range of
    `inferplane.blueprint.defaults`. Unused when attaching."""
    internal_load_balancers: bool = True
    """GCP: models are served through internal load balancers, so an attached cluster is
    checked for zonal affinity (`GkeClusterArgs.internal_load_balancers`). Default: internal."""
    system_nodes_per_zone: int = 1
    """System nodes a created cluster starts with in each zone
    (`inferplane.blueprint.system_nodes.nodes_per_zone`). Default: one, for the add-ons.
    Unused when attaching."""
    image_streaming: bool = False
    """GCP: some GPU pool streams images (`GkeClusterArgs.image_streaming`). Default: none."""
    context: str | None = None
    """Kubernetes: the kubeconfig context of the cluster (required there; unused on AWS
    and GCP). The kubeconfig is the one the provider finds itself: ``KUBECONFIG``, else
    ``~/.kube/config``."""


class Cluster(pulumi.ComponentResource):
    """An EKS or GKE cluster (an `EksCluster` or `GkeCluster` child) and a
    `pulumi_kubernetes.Provider` for it; on ``kubernetes`` only the provider, for the
    kubeconfig context (`name` is the context, `endpoint` names it, `kubeconfig` is empty:
    the provider reads the kubeconfig from ``KUBECONFIG`` itself).

    Outputs:
      provider: the Kubernetes provider (kubeconfig with an exec credential plugin:
        ``aws eks get-token`` / ``gke-gcloud-auth-plugin``; no token is ever stored).
      name: the cluster name.  endpoint: the API server URL.
      kubeconfig: the provider's kubeconfig (secret).
      oidc_provider_arn, oidc_issuer: IRSA facts (AWS; None on GCP). The issuer is host
        and path without ``https://``.
      vpc_id: the cluster's VPC (AWS; None on GCP).
      subnet_ids_by_zone: one private subnet per environment zone (AWS; empty on GCP).
      lb_subnet_ids: the same subnets in zone order, for internal NLBs (AWS; None on GCP).
      node_role_arn: IAM role for GPU node groups (AWS; None on GCP).
      location: the cluster's location (GCP; None on AWS).
      workload_pool: the Workload Identity pool ``<project>.svc.id.goog`` (GCP; None on AWS).
      node_service_account: email of the GPU nodes' service account (GCP; None on AWS).
    """

    provider: k8s.Provider
    name: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    oidc_provider_arn: pulumi.Output[str] | None
    oidc_issuer: pulumi.Output[str] | None
    vpc_id: pulumi.Output[str] | None
    subnet_ids_by_zone: dict[str, pulumi.Output[str]]
    lb_subnet_ids: pulumi.Output[list[str]] | None
    node_role_arn: pulumi.Output[str] | None
    location: pulumi.Output[str] | None
    workload_pool: pulumi.Output[str] | None
    node_service_account: pulumi.Output[str] | None

    def __init__(
        self, name: str, args: ClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("inferplane:cluster:Cluster", name, None, opts)
        self.oidc_provider_arn = self.oidc_issuer = self.vpc_id = None
        self.lb_subnet_ids = self.node_role_arn = None
        self.location = self.workload_pool = self.node_service_account = None
        self.subnet_ids_by_zone = {}
        if args.cloud == "kubernetes":
            self.provider = self._context(name, args)
        else:
            ready = self._eks(name, args) if args.cloud == "aws" else self._gke(name, args)
            self.provider = k8s.Provider(
                f"{name}-k8s",
                kubeconfig=self.kubeconfig,
                opts=pulumi.ResourceOptions(parent=self, depends_on=ready),
            )
        self.register_outputs(
            {
                "provider": self.provider,
                "name": self.name,
                "endpoint": self.endpoint,
                "kubeconfig": self.kubeconfig,
                "oidc_provider_arn": self.oidc_provider_arn,
                "oidc_issuer": self.oidc_issuer,
                "vpc_id": self.vpc_id,
                "subnet_ids_by_zone": self.subnet_ids_by_zone,
                "lb_subnet_ids": self.lb_subnet_ids,
                "node_role_arn": self.node_role_arn,
                "location": self.location,
                "workload_pool": self.workload_pool,
                "node_service_account": self.node_service_account,
            }
        )

    def _context(self, name: str, args: ClusterArgs) -> k8s.Provider:
        """A provider for the kubeconfig context `args.context`; nothing else is created.

        With no ``kubeconfig`` argument the provider reads ``$KUBECONFIG`` and `context`
        picks the cluster in it (the provider's inputs, documented in pulumi-kubernetes
        ``sdk/go/kubernetes/config/config.go``: ``kubeconfig`` "will be used instead of
        $KUBECONFIG"; ``context``: "the name of the kubeconfig context to use"). The
        kubeconfig and its credentials therefore never enter Pulumi state."""
        if not args.context:
            raise ValueError("Cluster on kubernetes needs a kubeconfig context")
        self.name = pulumi.Output.from_input(args.context)
        self.endpoint = pulumi.Output.from_input(f"kubeconfig context {args.context}")
        self.kubeconfig = pulumi.Output.secret("")
        return k8s.Provider(
            f"{name}-k8s", context=args.context, opts=pulumi.ResourceOptions(parent=self)
        )

    def _eks(self, name: str, args: ClusterArgs) -> list[pulumi.Resource]:
        eks = EksCluster(
            name,
            EksClusterArgs(
                cluster_name=args.cluster_name,
                owner=args.owner,
                zones=args.zones + tuple(z for z in args.extra_node_zones if z not in args.zones),
                create=args.create,
                kubernetes_version=args.kubernetes_version,
                vpc_cidr=args.vpc_cidr,
                system_nodes_per_zone=args.system_nodes_per_zone,
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.name, self.endpoint = eks.name, eks.endpoint
        self.oidc_provider_arn, self.oidc_issuer = eks.oidc_provider_arn, eks.oidc_issuer
        self.vpc_id = eks.vpc_id
        self.subnet_ids_by_zone = dict(eks.subnet_ids_by_zone)
        self.lb_subnet_ids = pulumi.Output.all(
            *[eks.subnet_ids_by_zone[zone] for zone in args.zones]
        ).apply(lambda ids: [str(i) for i in ids])
        self.node_role_arn = eks.node_role_arn
        self.kubeconfig = kubeconfig(
            args.cluster_name, self.endpoint, eks.ca_data, eks_exec(args.cluster_name, args.region)
        )
        return eks.ready

    def _gke(self, name: str, args: ClusterArgs) -> list[pulumi.Resource]:
        if args.project is None or args.gke_location is None:
            raise ValueError("Cluster on GCP needs project and gke_location")
        gke = GkeCluster(
            name,
            GkeClusterArgs(
                cluster_name=args.cluster_name,
                owner=args.owner,
                project=args.project,
                region=args.region,
                location=args.gke_location,
                zones=args.zones,
                create=args.create,
                kubernetes_version=args.kubernetes_version,
                vpc_cidr=args.vpc_cidr,
                internal_load_balancers=args.internal_load_balancers,
                system_nodes_per_zone=args.system_nodes_per_zone,
                image_streaming=args.image_streaming,
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.name, self.endpoint = gke.name, gke.endpoint.apply(_https)
        self.location, self.workload_pool = gke.location, gke.workload_pool
        self.node_service_account = gke.node_service_account
        self.kubeconfig = kubeconfig(args.cluster_name, self.endpoint, gke.ca_data, gke_exec())
        return gke.ready


def _https(endpoint: str) -> str:
    """GKE reports the endpoint as a bare IP; EKS as a URL."""
    return endpoint if endpoint.startswith("https://") else f"https://{endpoint}"
