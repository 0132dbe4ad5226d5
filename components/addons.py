"""Cluster add-ons: NVIDIA GPU Operator, KEDA (and its HTTP add-on where a model at zero
wakes on its own HTTP traffic), kube-prometheus-stack, Argo Rollouts where the environment
asks for it, and on EKS the AWS Load Balancer Controller and Cluster Autoscaler (each with
its own IRSA role).

An add-on the environment marks ``existing`` (`inferplane.blueprint.addons`) is skipped
whole: no namespace, release or IAM role; the serving objects use its coordinates instead.
One thing stays with an existing GPU Operator on GKE: Google's driver installer for the
blueprint's own GPU nodes (`gke_driver`), which no existing Operator provides.
Each installed add-on is a pinned Helm release (versions in the args, repositories in
`inferplane.blueprint.defaults`) whose values come from `addon_values`. Namespaces are
explicit resources so their Pod Security labels are part of the plan.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint import defaults, long_requests, naming
from inferplane.blueprint.upstream.gke_drivers import InstallerVersion
from inferplane.components import (
    addon_iam,
    addon_values,
    alerting,
    argo_rollouts,
    gke_driver,
    iam,
)
from inferplane.components.cloud import Cloud, Ownership, aws_tags
from inferplane.components.gke_driver import GKE_DRIVER_INSTALLER

__all__ = ["EBS_STORAGE_CLASS", "GKE_DRIVER_INSTALLER", "ClusterAddons", "ClusterAddonsArgs"]

LBC_RELEASE = "aws-load-balancer-controller"
CA_RELEASE = "cluster-autoscaler"
EBS_STORAGE_CLASS = "inferplane-gp3"
RELEASE_TIMEOUT_S = 1200
PRIVILEGED = {
    "pod-security.kubernetes.io/enforce": "privileged",
    "pod-security.kubernetes.io/warn": "privileged",
}
"""The GPU Operator's operands and Prometheus' node exporter need host access."""


@dataclass(frozen=True)
class ClusterAddonsArgs:
    """Arguments of `ClusterAddons`."""

    cloud: Cloud
    """``aws`` (adds the Load Balancer Controller and Cluster Autoscaler) or ``gcp`` (adds
    Google's COS driver installer for the GPU nodes)."""
    provider: k8s.Provider
    """Every in-cluster resource uses this provider explicitly."""
    cluster_name: str
    """The cluster's name (the AWS controllers' configuration and IAM scope)."""
    owner: Ownership
    """Tags of the AWS controllers' IAM roles."""
    region: str
    """AWS: the region the controllers call."""
    kubernetes_version: str = defaults.KUBERNETES_VERSION
    """The cluster's Kubernetes minor; picks the Cluster Autoscaler image (AWS). Default: the
    tested minor of `inferplane.blueprint.defaults`."""
    mig_enabled: bool = False
    """Some GPU pool uses MIG: the GPU Operator then runs its MIG manager with the ``mixed``
    strategy. Default: no MIG."""
    time_slices_by_pool: Mapping[str, int] = field(default_factory=dict)
    """Pool name -> pods per GPU, for each time-slicing pool (its nodes carry the pool's
    name as device-plugin config label). Default: no pool time-slices."""
    prometheus_retention: str = defaults.PROMETHEUS_RETENTION
    """How long Prometheus keeps samples (Prometheus duration). Default: fifteen days."""
    prometheus_storage_gib: int = defaults.PROMETHEUS_STORAGE_GIB
    """Size of Prometheus' persistent volume. Default: 50 GiB."""
    grafana_enabled: bool = defaults.GRAFANA_ENABLED
    """Install Grafana. Default: installed."""
    alerts_enabled: bool = defaults.ALERTS_ENABLED
    """Install Alertmanager. Default: installed."""
    alert_receivers: tuple[addon_values.AlertReceiverValues, ...] = ()
    """Where Alertmanager sends alerts (with `alerts_enabled`). Default: nowhere (the
    chart's ``null`` receiver)."""
    alert_route_receiver: str | None = None
    """The receiver of every alert (required with `alert_receivers`)."""
    alert_receiver_secrets: Mapping[str, pulumi.Input[str]] = field(default_factory=dict)
    """Key (`alerting.secret_keys`) -> credential of `alert_receivers`; stored only in the
    `addon_values.ALERTMANAGER_SECRET` Secret, as Pulumi secrets."""
    gp3_storage_class: bool = False
    """AWS: the cluster runs the EBS CSI driver (as a created `EksCluster` does); True gives
    Prometheus' volume an encrypted gp3 StorageClass, False the cluster's default class."""
    gpu_operator_version: str = defaults.VERSIONS["gpu_operator"]
    """NVIDIA GPU Operator chart version. Default: the tested pin of
    `inferplane.blueprint.defaults.VERSIONS` (likewise for the versions below)."""
    keda_version: str = defaults.VERSIONS["keda"]
    """KEDA chart version."""
    keda_http_add_on: bool = False
    """Some model at zero wakes on its own HTTP traffic, so the cluster needs the KEDA HTTP
    add-on (installed unless `install_keda_http_add_on` is False). Default: not needed."""
    keda_http_add_on_version: str = defaults.VERSIONS["keda_http_add_on"]
    """KEDA HTTP add-on chart version (``keda-add-ons-http``)."""
    keda_http_drain_s: int = long_requests.INTERCEPTOR_DRAIN_FLOOR_S
    """How long a stopping interceptor lets requests in flight finish: the longest request
    through it (`long_requests.interceptor_drain_s`). Default: 300 s, the shortest it gets."""
    keda_http_zones: int = 1
    """The zones whose load balancers target the interceptor: it runs at least one replica
    per zone. Default: one zone (the chart's three replicas)."""
    kube_prometheus_stack_version: str = defaults.VERSIONS["kube_prometheus_stack"]
    """kube-prometheus-stack chart version."""
    aws_load_balancer_controller_version: str = defaults.VERSIONS["aws_load_balancer_controller"]
    """AWS Load Balancer Controller chart version (AWS)."""
    cluster_autoscaler_version: str = defaults.VERSIONS["cluster_autoscaler"]
    """Cluster Autoscaler chart version (AWS)."""
    install_prometheus: bool = True
    """Install kube-prometheus-stack (with its namespace, Alertmanager receivers and, on a
    created EKS cluster, its StorageClass). False: the cluster runs a Prometheus already.
    Default: installed (likewise for the add-ons below)."""
    prometheus_labels: Mapping[str, str] | None = None
    """The labels the cluster's Prometheus selects ServiceMonitors by, set on the installed
    add-ons' own ServiceMonitors. Default: ``release: kube-prometheus-stack``."""
    install_gpu_operator: bool = True
    """Install the GPU Operator (and on GKE Google's driver installer beside it, for the
    cluster's opted-out GPU nodes). False: the cluster runs one already, configured for the
    blueprint's pools; on GKE the blueprint's nodes (`owner.blueprint`, which label them
    `naming.DRIVER_INSTALLER_LABEL`) then get an installer of their own."""
    gke_driver_version: InstallerVersion = "default"
    """GCP: the driver Google's COS installer gives the GPU nodes, ``default`` or ``latest``
    of the node's COS build (`inferplane.blueprint.upstream.gke_drivers.installer_version` picks it
    from the models' serving releases). Default: the COS build's default driver."""
    install_keda: bool = True
    """Install KEDA. False: the cluster runs it already, in `keda_namespace`."""
    keda_namespace: str = naming.KEDA_NAMESPACE
    """Where KEDA runs (installed or not); an installed HTTP add-on goes beside it."""
    install_keda_http_add_on: bool = True
    """With `keda_http_add_on`: install it. False: the cluster runs it already."""
    install_aws_load_balancer_controller: bool = True
    """AWS: install the Load Balancer Controller and its IRSA role."""
    expander_priorities: Mapping[int, Sequence[str]] | None = None
    """AWS with an installed Cluster Autoscaler: node group id patterns by priority, for a
    pool that lists several capacity sources (`capacity_sources.expander_priorities`).
    Default: none, and least-waste expansion alone."""
    argo_rollouts: bool = False
    """Install Argo Rollouts (`addon_values.argo_rollouts_values`) and its CRDs
    (`argo_rollouts.rollouts_crds`): the environment names the add-on in ``install`` mode.
    Default: not installed."""
    argo_rollouts_version: str = defaults.VERSIONS["argo_rollouts"]
    """Argo Rollouts chart version (``argo-rollouts``)."""
    install_cluster_autoscaler: bool = True
    """AWS: install the Cluster Autoscaler and its IRSA role. False: the cluster runs a
    Cluster Autoscaler of its own that discovers the GPU node groups by their tags
    (Karpenter does not: it never resizes managed node groups)."""
    vpc_id: pulumi.Input[str] | None = None
    """AWS: the cluster's VPC (required on AWS: the load balancer controller needs it)."""
    oidc_provider_arn: pulumi.Input[str] | None = None
    """AWS: the cluster's IAM OIDC provider, for the add-ons' IRSA roles (required on AWS)."""
    oidc_issuer: pulumi.Input[str] | None = None
    """AWS: the OIDC issuer, host and path without ``https://`` (required on AWS)."""


class ClusterAddons(pulumi.ComponentResource):
    """The add-ons every environment needs before models can be served.

    Outputs:
      releases: release name -> `helm.v3.Release`.
      namespaces: namespace name -> `Namespace`.
      storage_class: the StorageClass Prometheus' volume uses (None: the cluster default).
    """

    releases: dict[str, k8s.helm.v3.Release]
    namespaces: dict[str, k8s.core.v1.Namespace]
    storage_class: str | None

    def __init__(
        self, name: str, args: ClusterAddonsArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("inferplane:addons:ClusterAddons", name, None, opts)
        self._name, self._provider = name, args.provider
        self.releases, self.namespaces = {}, {}
        self.storage_class = None
        # An `existing` add-on gets no namespace, release or IAM role here: the cluster runs
        # it already, and the serving objects use its coordinates (`stack_serving`).
        prometheus = self._monitoring(args) if args.install_prometheus else None
        after_prometheus = [prometheus] if prometheus is not None else []
        if args.install_gpu_operator:
            self._gpu_operator(args, after_prometheus)
        elif args.cloud == "gcp":
            gke_driver.driver_installer(
                f"{self._name}-blueprint-nvidia-driver-installer",
                self._opts(),
                blueprint=args.owner.blueprint,
                version=args.gke_driver_version,
            )
        keda: list[pulumi.Resource] = []
        if args.install_keda:
            keda_ns = self._namespace(args.keda_namespace, {})
            keda = [
                keda_ns,
                self._release(
                    naming.KEDA_RELEASE,
                    "keda",
                    args.keda_version,
                    args.keda_namespace,
                    addon_values.keda_values(args.prometheus_labels),
                    [keda_ns, *after_prometheus],
                ),
            ]
        if args.keda_http_add_on and args.install_keda_http_add_on:
            # Beside KEDA, whose ScaledObject CRD its operator and the interceptor's own
            # ScaledObject need; model load balancers select its interceptor pods there.
            self._release(
                naming.KEDA_HTTP_RELEASE,
                "keda-add-ons-http",
                args.keda_http_add_on_version,
                args.keda_namespace,
                addon_values.keda_http_add_on_values(args.keda_http_drain_s, args.keda_http_zones),
                keda,
            )
        if args.argo_rollouts:
            self._argo_rollouts(args, after_prometheus)
        if args.cloud == "aws":
            self._aws_controllers(args)
        self.register_outputs(
            {
                "releases": self.releases,
                "namespaces": self.namespaces,
                "storage_class": self.storage_class,
            }
        )

    def _monitoring(self, args: ClusterAddonsArgs) -> k8s.helm.v3.Release:
        monitoring_ns = self._namespace(naming.MONITORING_NAMESPACE, PRIVILEGED)
        before_monitoring: list[pulumi.Resource] = [monitoring_ns]
        if args.cloud == "aws" and args.gp3_storage_class:
            before_monitoring.append(self._gp3_storage_class())
            self.storage_class = EBS_STORAGE_CLASS
        alertmanager = None
        if args.alerts_enabled and args.alert_receivers and args.alert_route_receiver:
            before_monitoring.append(
                alerting.receivers_secret(
                    f"{self._name}-alertmanager-receivers",
                    args.alert_receivers,
                    args.alert_receiver_secrets,
                    self._opts([monitoring_ns]),
                )
            )
            alertmanager = addon_values.alertmanager_values(
                args.alert_receivers, args.alert_route_receiver
            )
        return self._release(
            naming.PROMETHEUS_RELEASE,
            "kube-prometheus-stack",
            args.kube_prometheus_stack_version,
            naming.MONITORING_NAMESPACE,
            addon_values.kube_prometheus_stack_values(
                retention=args.prometheus_retention,
                storage_gib=args.prometheus_storage_gib,
                grafana_enabled=args.grafana_enabled,
                alerts_enabled=args.alerts_enabled,
                storage_class=self.storage_class,
                alertmanager=alertmanager,
            ),
            before_monitoring,
        )

    def _argo_rollouts(self, args: ClusterAddonsArgs, after: list[pulumi.Resource]) -> None:
        """The controller's namespace (Pod Security ``restricted``), the pinned controller's
        CRDs, then the release (its ServiceMonitor needs kube-prometheus-stack's CRD)."""
        namespace = self._namespace(
            naming.ARGO_ROLLOUTS_NAMESPACE, addon_values.ARGO_ROLLOUTS_RESTRICTED
        )
        crds = argo_rollouts.rollouts_crds(
            f"{self._name}-argo-rollouts", self._provider, pulumi.ResourceOptions(parent=self)
        )
        self._release(
            naming.ARGO_ROLLOUTS_RELEASE,
            "argo-rollouts",
            args.argo_rollouts_version,
            naming.ARGO_ROLLOUTS_NAMESPACE,
            addon_values.argo_rollouts_values(args.prometheus_labels),
            [namespace, *crds, *after],
        )

    def _gpu_operator(self, args: ClusterAddonsArgs, after: list[pulumi.Resource]) -> None:
        gpu_ns = self._namespace(naming.GPU_OPERATOR_NAMESPACE, PRIVILEGED)
        before_gpu: list[pulumi.Resource] = [gpu_ns, *after]
        if args.cloud == "gcp":
            before_gpu += self._gke_gpu_prerequisites(args.gke_driver_version)
        self._release(
            naming.GPU_OPERATOR_RELEASE,
            "gpu-operator",
            args.gpu_operator_version,
            naming.GPU_OPERATOR_NAMESPACE,
            addon_values.gpu_operator_values(
                args.cloud, args.mig_enabled, args.time_slices_by_pool, args.prometheus_labels
            ),
            before_gpu,
        )

    # --- building blocks ---------------------------------------------------------------
    def _opts(self, depends_on: list[pulumi.Resource] | None = None) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self, provider=self._provider, depends_on=depends_on)

    def _namespace(self, namespace: str, labels: Mapping[str, str]) -> k8s.core.v1.Namespace:
        ns = k8s.core.v1.Namespace(
            f"{self._name}-{namespace}",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=namespace,
                labels={"app.kubernetes.io/managed-by": "inferplane", **labels},
            ),
            opts=self._opts(),
        )
        self.namespaces[namespace] = ns
        return ns

    def _release(
        self,
        release: str,
        chart: str,
        version: str,
        namespace: str,
        values: Mapping[str, Any],
        depends_on: list[pulumi.Resource],
    ) -> k8s.helm.v3.Release:
        created = k8s.helm.v3.Release(
            f"{self._name}-{release}",
            name=release,
            chart=chart,
            version=version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=defaults.CHART_REPOSITORIES[chart]),
            namespace=namespace,
            create_namespace=False,
            values=dict(values),
            atomic=True,
            cleanup_on_fail=True,
            timeout=RELEASE_TIMEOUT_S,
            opts=self._opts(depends_on),
        )
        self.releases[release] = created
        return created

    def _gp3_storage_class(self) -> k8s.storage.v1.StorageClass:
        return k8s.storage.v1.StorageClass(
            f"{self._name}-gp3",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=EBS_STORAGE_CLASS),
            provisioner="ebs.csi.aws.com",
            parameters={"type": "gp3", "encrypted": "true"},
            volume_binding_mode="WaitForFirstConsumer",
            allow_volume_expansion=True,
            reclaim_policy="Retain",
            opts=self._opts(),
        )

    def _gke_gpu_prerequisites(self, driver: InstallerVersion) -> list[pulumi.Resource]:
        """GKE admits `system-node-critical` pods outside kube-system only under a quota
        that names the priority class; and GPU nodes that opt out of GKE's device plugin
        get their driver from Google's COS installer."""
        quota = k8s.core.v1.ResourceQuota(
            f"{self._name}-gpu-operator-critical-pods",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name="gpu-operator-critical-pods", namespace=naming.GPU_OPERATOR_NAMESPACE
            ),
            spec=k8s.core.v1.ResourceQuotaSpecArgs(
                hard={"pods": "100"},
                scope_selector=k8s.core.v1.ScopeSelectorArgs(
                    match_expressions=[
                        k8s.core.v1.ScopedResourceSelectorRequirementArgs(
                            scope_name="PriorityClass",
                            operator="In",
                            values=["system-node-critical", "system-cluster-critical"],
                        )
                    ]
                ),
            ),
            opts=self._opts([self.namespaces[naming.GPU_OPERATOR_NAMESPACE]]),
        )
        installer = gke_driver.driver_installer(
            f"{self._name}-nvidia-driver-installer",
            self._opts(),
            version=driver,
        )
        return [quota, installer]

    def _aws_controllers(self, args: ClusterAddonsArgs) -> None:
        if not (args.install_aws_load_balancer_controller or args.install_cluster_autoscaler):
            return
        if args.oidc_provider_arn is None or args.oidc_issuer is None or args.vpc_id is None:
            raise ValueError("ClusterAddons on AWS needs vpc_id, oidc_provider_arn, oidc_issuer")
        cluster = args.cluster_name
        irsa = {
            "oidc_provider_arn": args.oidc_provider_arn,
            "oidc_issuer": args.oidc_issuer,
            "namespace": naming.KUBE_SYSTEM_NAMESPACE,
            "tags": aws_tags(args.owner),
            "parent": self,
        }
        if args.install_aws_load_balancer_controller:
            _, lbc_role_arn = iam.irsa_role(
                f"{self._name}-{LBC_RELEASE}",
                service_account=addon_values.LBC_SERVICE_ACCOUNT,
                policy=addon_iam.aws_load_balancer_controller_policy(cluster),
                description=f"AWS Load Balancer Controller of {cluster}",
                **irsa,  # type: ignore[arg-type]
            )
            self._release(
                LBC_RELEASE,
                "aws-load-balancer-controller",
                args.aws_load_balancer_controller_version,
                naming.KUBE_SYSTEM_NAMESPACE,
                addon_values.aws_load_balancer_controller_values(
                    args.region, cluster, args.vpc_id, lbc_role_arn
                ),
                [],
            )
        if args.install_cluster_autoscaler:
            _, ca_role_arn = iam.irsa_role(
                f"{self._name}-{CA_RELEASE}",
                service_account=addon_values.CA_SERVICE_ACCOUNT,
                policy=addon_iam.cluster_autoscaler_policy(cluster),
                description=f"Cluster Autoscaler of {cluster}",
                **irsa,  # type: ignore[arg-type]
            )
            self._release(
                CA_RELEASE,
                "cluster-autoscaler",
                args.cluster_autoscaler_version,
                naming.KUBE_SYSTEM_NAMESPACE,
                addon_values.cluster_autoscaler_values(
                    args.region,
                    args.kubernetes_version,
                    cluster,
                    ca_role_arn,
                    args.expander_priorities,
                ),
                [],
            )
