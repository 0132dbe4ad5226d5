"""The Kubernetes cluster an environment runs on (EKS or GKE), created or attached, and
the Kubernetes provider every in-cluster resource uses explicitly."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint.model import Environment
from inferplane.components import cluster_eks, cluster_gke
from inferplane.components.cloud import cluster_name, eks_exec, gke_exec, kubeconfig


@dataclass(frozen=True)
class ClusterArgs:
    """Arguments of `Cluster`."""

    env: Environment
    """The resolved environment. `env.cluster.create` creates a cluster (and on AWS its VPC)
    named after the stack; otherwise `env.cluster.existing` is looked up by name (on GCP
    at `env.cluster.location` in `env.project`)."""


class Cluster(pulumi.ComponentResource):
    """An EKS or GKE cluster and a `pulumi_kubernetes.Provider` for it.

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
        env = args.env
        self.oidc_provider_arn = self.oidc_issuer = self.vpc_id = None
        self.lb_subnet_ids = self.node_role_arn = None
        self.location = self.workload_pool = self.node_service_account = None
        self.subnet_ids_by_zone = {}
        ready: list[pulumi.Resource]
        if env.cloud == "aws":
            eks = (cluster_eks.create if env.cluster.create else cluster_eks.attach)(
                name, env, self
            )
            self.name, self.endpoint = eks.name, eks.endpoint
            self.oidc_provider_arn, self.oidc_issuer = eks.oidc_provider_arn, eks.oidc_issuer
            self.vpc_id = eks.vpc_id
            self.subnet_ids_by_zone = dict(eks.private_subnet_ids)
            self.lb_subnet_ids = pulumi.Output.all(
                *[eks.private_subnet_ids[zone] for zone in env.zones]
            ).apply(lambda ids: [str(i) for i in ids])
            self.node_role_arn = eks.node_role_arn
            ca_data, exec_ = eks.ca_data, eks_exec(cluster_name(env), env.region)
            ready = eks.ready
        else:
            gke = (cluster_gke.create if env.cluster.create else cluster_gke.attach)(
                name, env, self
            )
            self.name, self.endpoint = gke.name, gke.endpoint.apply(_https)
            self.location, self.workload_pool = gke.location, gke.workload_pool
            self.node_service_account = gke.node_service_account
            ca_data, exec_ = gke.ca_data, gke_exec()
            ready = gke.ready
        self.kubeconfig = kubeconfig(cluster_name(env), self.endpoint, ca_data, exec_)
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            opts=pulumi.ResourceOptions(parent=self, depends_on=ready),
        )
        self.register_outputs(
            {
                "name": self.name,
                "endpoint": self.endpoint,
                "oidc_provider_arn": self.oidc_provider_arn,
                "lb_subnet_ids": self.lb_subnet_ids,
                "workload_pool": self.workload_pool,
            }
        )


def _https(endpoint: str) -> str:
    """GKE reports the endpoint as a bare IP; EKS as a URL."""
    return endpoint if endpoint.startswith("https://") else f"https://{endpoint}"
