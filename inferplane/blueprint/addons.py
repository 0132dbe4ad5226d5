"""Which cluster add-ons an environment installs, and where the ones it uses run.

``environments.<env>.cluster.addons`` says, per add-on, ``mode: install`` (the default: the
pinned chart, at the fixed release name and namespace of `naming`) or ``mode: existing``
with the coordinates the stack needs to use one the cluster already runs. `Addons` holds
the result with the defaults filled in, so components read one set of coordinates whether
the add-on is installed or not. Argo Rollouts is the exception (`OPT_IN`): used only where
the environment names it.

Installed once per cluster: a second blueprint on the same cluster sets the add-ons the
first one installs to ``existing``. Everything else a blueprint creates is in its own
namespace or carries its name (`naming.cluster_scoped_name`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from inferplane.blueprint import long_requests, naming

INSTALL: Final = "install"
EXISTING: Final = "existing"
ADDON_KEYS: Final = (
    "gpu_operator",
    "keda",
    "keda_http_add_on",
    "prometheus",
    "aws_load_balancer_controller",
    "cluster_autoscaler",
    "karpenter",
    "argo_rollouts",
)
AWS_ONLY: Final = ("aws_load_balancer_controller", "cluster_autoscaler", "karpenter")
NEVER_INSTALLED: Final = ("karpenter",)
"""Add-ons a blueprint only ever uses as `existing`: inferplane does not install Karpenter
(its controller needs an interruption queue, IAM and a node role set up with the cluster)."""
OPT_IN: Final = ("argo_rollouts",)
"""Add-ons an environment uses only where its ``cluster.addons`` names them (every other one is
installed unless marked `existing`): only a model's ``rollout`` needs Argo Rollouts."""
PROMETHEUS_SELECTOR: Final = MappingProxyType({"release": naming.PROMETHEUS_RELEASE})
"""kube-prometheus-stack's Prometheus selects ServiceMonitors and PrometheusRules by
``release: <release name>`` (chart values ``prometheus.prometheusSpec.
serviceMonitorSelectorNilUsesHelmValues``/``ruleSelectorNilUsesHelmValues``, default true)."""
DASHBOARD_LABEL: Final = MappingProxyType({"grafana_dashboard": "1"})
"""The Grafana chart's dashboard sidecar default: ``sidecar.dashboards.label:
grafana_dashboard``, ``labelValue: "1"`` (grafana/helm-charts ``charts/grafana/values.yaml``)."""


@dataclass(frozen=True)
class Addon:
    """One add-on without coordinates (`existing`: the cluster runs it already)."""

    existing: bool = False


@dataclass(frozen=True)
class NamespacedAddon:
    """One add-on and the namespace it runs in (given, or the fixed one it installs into)."""

    namespace: str
    existing: bool = False


@dataclass(frozen=True)
class KedaHttpAddon:
    """The KEDA HTTP add-on: its namespace (interceptor, scaler, the models' wake load
    balancers) and Helm release name (its interceptor pods' ``app.kubernetes.io/instance``)."""

    namespace: str
    release: str = naming.KEDA_HTTP_RELEASE
    existing: bool = False
    drain_s: int | None = None
    """An existing add-on's ``interceptor.drainTimeout`` (default the chart's 30 s,
    `long_requests.CHART_DRAIN_S`); None for one the blueprint installs, whose drain it
    derives (`long_requests.interceptor_drain_s`)."""


@dataclass(frozen=True)
class KarpenterAddon:
    """The cluster's Karpenter (v1: ``karpenter.sh/v1`` NodePools, ``karpenter.k8s.aws/v1``
    EC2NodeClasses), which launches the blueprint's GPU nodes instead of managed node groups
    and the Cluster Autoscaler. Not `existing`: the environment does not use Karpenter."""

    node_role: str = ""
    """The IAM role of the nodes it launches (the EC2NodeClass's ``role``): one the cluster
    lets join and Karpenter's controller may pass."""
    ami_alias: str = ""
    """The pinned EKS-optimised AMI, ``al2023@v<release>`` (the NVIDIA variant on GPU
    instances)."""
    security_group_terms: tuple[Mapping[str, Any], ...] = ()
    """The nodes' security groups, as the EC2NodeClass's ``securityGroupSelectorTerms``
    (each term one of ``tags``, ``id`` or ``name``; a group any term selects is attached).
    Default for an existing Karpenter: `discovery_terms` of the cluster, the tag that
    Karpenter's getting-started guide puts on the groups its nodes use (empty where
    `resolve_addons` was not told the cluster: the stack then applies that default)."""
    existing: bool = False


@dataclass(frozen=True)
class ArgoRolloutsAddon:
    """The Argo Rollouts controller (an `OPT_IN` add-on)."""

    enabled: bool = False
    """The environment names it: installed (the pinned chart) or `existing`."""
    namespace: str = naming.ARGO_ROLLOUTS_NAMESPACE
    """Where the controller runs (given for an existing one, else the fixed namespace)."""
    instance_id: str | None = None
    """An existing controller's ``--instance-id``: it reconciles only Rollouts whose
    ``argo-rollouts.argoproj.io/controller-instance-id`` label has this value, and only those
    without the label when started without it (argoproj/argo-rollouts v1.10.1
    ``utils/controller/controller.go`` `InstanceIDRequirement`, label key
    `LabelKeyControllerInstanceID` of ``pkg/apis/rollouts/v1alpha1/types.go``)."""
    existing: bool = False


@dataclass(frozen=True)
class PrometheusAddon:
    """The Prometheus the models report to."""

    namespace: str = naming.MONITORING_NAMESPACE
    """Where its pods run: the models' NetworkPolicies admit scrapes from there."""
    query_url: str = naming.PROMETHEUS_URL
    """KEDA's Prometheus triggers query it (``serverAddress``)."""
    selector_labels: Mapping[str, str] = field(default_factory=lambda: PROMETHEUS_SELECTOR)
    """On every ServiceMonitor and PrometheusRule: what its operator selects them by."""
    dashboard_label: Mapping[str, str] = field(default_factory=lambda: DASHBOARD_LABEL)
    """On every dashboard ConfigMap: what Grafana's sidecar loads them by."""
    existing: bool = False


@dataclass(frozen=True)
class Addons:
    """Every add-on of one environment. Default: all installed."""

    gpu_operator: NamespacedAddon = field(
        default_factory=lambda: NamespacedAddon(naming.GPU_OPERATOR_NAMESPACE)
    )
    keda: NamespacedAddon = field(default_factory=lambda: NamespacedAddon(naming.KEDA_NAMESPACE))
    keda_http_add_on: KedaHttpAddon = field(
        default_factory=lambda: KedaHttpAddon(naming.KEDA_NAMESPACE)
    )
    prometheus: PrometheusAddon = field(default_factory=PrometheusAddon)
    aws_load_balancer_controller: Addon = field(default_factory=Addon)
    cluster_autoscaler: Addon = field(default_factory=Addon)
    karpenter: KarpenterAddon = field(default_factory=KarpenterAddon)
    argo_rollouts: ArgoRolloutsAddon = field(default_factory=ArgoRolloutsAddon)

    def existing_namespaces(self) -> dict[str, str]:
        """Add-on key -> namespace, for every `existing` add-on that names one."""
        found: dict[str, str] = {}
        for key in ("gpu_operator", "keda", "keda_http_add_on", "prometheus"):
            addon = getattr(self, key)
            if addon.existing:
                found[key] = addon.namespace
        return found


DISCOVERY_TAG: Final = "karpenter.sh/discovery"
"""The tag by which Karpenter's getting-started guide selects the nodes' subnets and
security groups, valued with the cluster's name (aws/karpenter-provider-aws v1.14.1
``website/content/en/docs/getting-started/getting-started-with-karpenter/scripts/
step12-add-nodepool.sh``, ``securityGroupSelectorTerms``); terraform-aws-eks's Karpenter
example puts it on the module's node security group (terraform-aws-modules/terraform-aws-eks
v21.19.0 ``examples/karpenter/main.tf``, ``node_security_group_tags``)."""


def discovery_terms(cluster: str) -> tuple[Mapping[str, Any], ...]:
    """The default security group terms: the groups tagged `DISCOVERY_TAG` with `cluster`.

    Not the cluster security group by id: a cluster built with terraform-aws-eks's defaults
    puts its nodes in a node security group of their own (``create_node_security_group``,
    default true; managed node groups' ``attach_cluster_primary_security_group``, default
    false), whose rules admit DNS to CoreDNS only from that group (``node_groups.tf``,
    ``ingress_self_coredns_tcp``/``_udp``, ``self = true``): a GPU node in the cluster
    security group alone resolves no names."""
    return (MappingProxyType({"tags": MappingProxyType({DISCOVERY_TAG: cluster})}),)


def is_existing(spec: Mapping[str, Any] | None) -> bool:
    return bool(spec) and (spec or {}).get("mode", INSTALL) == EXISTING


def resolve_addons(raw: Mapping[str, Any] | None, cluster: str | None = None) -> Addons:
    """`Addons` of a validated ``cluster.addons`` mapping (None: all installed); `cluster`
    is the attached cluster's name, which an existing Karpenter's default security group
    terms carry."""
    raw = raw or {}
    gpu, keda, http, prom = (raw.get(k) or {} for k in ADDON_KEYS[:4])
    keda_ns = keda["namespace"] if is_existing(keda) else naming.KEDA_NAMESPACE
    prometheus = PrometheusAddon()
    if is_existing(prom):
        prometheus = PrometheusAddon(
            namespace=prom["namespace"],
            query_url=prom["query_url"],
            selector_labels=MappingProxyType(dict(prom["selector_labels"])),
            dashboard_label=MappingProxyType(dict(prom.get("dashboard_label") or DASHBOARD_LABEL)),
            existing=True,
        )
    return Addons(
        gpu_operator=NamespacedAddon(gpu["namespace"], existing=True)
        if is_existing(gpu)
        else NamespacedAddon(naming.GPU_OPERATOR_NAMESPACE),
        keda=NamespacedAddon(keda_ns, existing=is_existing(keda)),
        # An installed HTTP add-on goes beside KEDA, whose ScaledObject CRD it needs.
        keda_http_add_on=KedaHttpAddon(
            http["namespace"],
            http.get("release", naming.KEDA_HTTP_RELEASE),
            existing=True,
            drain_s=http.get("drain_s", long_requests.CHART_DRAIN_S),
        )
        if is_existing(http)
        else KedaHttpAddon(keda_ns),
        prometheus=prometheus,
        aws_load_balancer_controller=Addon(is_existing(raw.get("aws_load_balancer_controller"))),
        cluster_autoscaler=Addon(is_existing(raw.get("cluster_autoscaler"))),
        karpenter=KarpenterAddon(
            node_role=raw["karpenter"]["node_role"],
            ami_alias=raw["karpenter"]["ami_alias"],
            security_group_terms=_security_group_terms(raw["karpenter"], cluster),
            existing=True,
        )
        if is_existing(raw.get("karpenter"))
        else KarpenterAddon(),
        argo_rollouts=_argo_rollouts(raw.get("argo_rollouts")),
    )


def _argo_rollouts(spec: Mapping[str, Any] | None) -> ArgoRolloutsAddon:
    if spec is None:
        return ArgoRolloutsAddon()
    if is_existing(spec):
        return ArgoRolloutsAddon(
            enabled=True,
            namespace=spec["namespace"],
            instance_id=spec.get("instance_id"),
            existing=True,
        )
    return ArgoRolloutsAddon(enabled=True)


def _security_group_terms(
    karpenter: Mapping[str, Any], cluster: str | None
) -> tuple[Mapping[str, Any], ...]:
    given = karpenter.get("security_group_selector")
    if given is None:
        return discovery_terms(cluster) if cluster else ()
    return tuple(
        MappingProxyType(
            {
                key: MappingProxyType(dict(value)) if isinstance(value, Mapping) else value
                for key, value in term.items()
            }
        )
        for term in given
    )
