"""Helm values of the cluster add-ons, as pure functions of a few plain values.

`inferplane plan` prints them and the tests walk them against each chart's own
values.yaml, so every key set here is a key the chart reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

import pulumi
import yaml

from inferplane.blueprint import long_requests, naming

GKE_NVIDIA_DIR = "/home/kubernetes/bin/nvidia"
"""Where Google's driver installer puts the driver on GKE nodes, and where the GPU
Operator's container toolkit installs itself there."""
DEVICE_PLUGIN_CONFIGMAP = "device-plugin-config"
DEVICE_PLUGIN_DEFAULT = "default"
"""The device-plugin config of nodes without `nvidia.com/device-plugin.config`: no sharing."""
LBC_SERVICE_ACCOUNT = "aws-load-balancer-controller"
CA_SERVICE_ACCOUNT = "cluster-autoscaler"
CA_IMAGE_TAGS = {"1.32": "v1.32.5", "1.33": "v1.33.5", "1.34": "v1.34.4", "1.35": "v1.35.1"}
"""Cluster Autoscaler releases track Kubernetes minors; newest known patch per minor."""


def mig_strategy(mig_enabled: bool) -> str:
    """``mixed`` whenever a pool uses MIG: MIG pools then advertise
    ``nvidia.com/mig-<profile>`` and all other pools keep ``nvidia.com/gpu``."""
    return "mixed" if mig_enabled else "none"


def _time_slicing(time_slices: int, strategy: str) -> dict[str, Any]:
    # failRequestsGreaterThanOne: a pod asking for 2 slices would otherwise get 2 slices
    # of one GPU, not 2 GPUs, and its tensor parallelism would silently share one device.
    return {
        "version": "v1",
        "flags": {"migStrategy": strategy},
        "sharing": {
            "timeSlicing": {
                "renameByDefault": False,
                "failRequestsGreaterThanOne": True,
                "resources": [{"name": "nvidia.com/gpu", "replicas": time_slices}],
            }
        },
    }


def device_plugin_config(
    time_slices_by_pool: Mapping[str, int], mig_enabled: bool
) -> dict[str, str] | None:
    """The device plugin's config map data (k8s-device-plugin config v1): one key per
    time-slicing pool (pool name -> pods per GPU; selected by the pool's
    `nvidia.com/device-plugin.config` label) and a non-sharing `default`; None when no pool
    time-slices. `mig_enabled`: some pool uses MIG."""
    if not time_slices_by_pool:
        return None
    strategy = mig_strategy(mig_enabled)
    data = {DEVICE_PLUGIN_DEFAULT: {"version": "v1", "flags": {"migStrategy": strategy}}}
    data.update({name: _time_slicing(n, strategy) for name, n in time_slices_by_pool.items()})
    return {k: yaml.safe_dump(v, sort_keys=False) for k, v in data.items()}


def _gpu_toleration() -> dict[str, str]:
    return {"key": naming.GPU_TAINT_KEY, "operator": "Exists", "effect": naming.GPU_TAINT_EFFECT}


def monitor_labels(labels: Mapping[str, str] | None) -> dict[str, str]:
    """Labels of the add-ons' own ServiceMonitors: what the cluster's Prometheus selects
    (`labels`), by default the installed kube-prometheus-stack's ``release`` label."""
    return dict(labels) if labels else {"release": naming.PROMETHEUS_RELEASE}


def gpu_operator_values(
    cloud: str,
    mig_enabled: bool,
    time_slices_by_pool: Mapping[str, int],
    prometheus_labels: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """NVIDIA GPU Operator values: drivers come with the node image (EKS AMI) or Google's
    installer (GKE), the Operator runs the device plugin, GFD, DCGM exporter and, with MIG
    pools (`mig_enabled`), the MIG manager; time-slicing pools get their device-plugin
    config (`device_plugin_config`). `prometheus_labels`: see `monitor_labels`."""
    values: dict[str, Any] = {
        "cdi": {"enabled": True},
        "driver": {"enabled": False},
        "devicePlugin": {"enabled": True},
        "dcgmExporter": {
            "enabled": True,
            # honorLabels keeps the workload's namespace/pod/container labels on DCGM series
            # (instead of exported_pod), which the serving dashboards and rules join on.
            "serviceMonitor": {
                "enabled": True,
                "honorLabels": True,
                "additionalLabels": monitor_labels(prometheus_labels),
            },
        },
        "daemonsets": {"tolerations": [_gpu_toleration()]},
    }
    if cloud == "aws":
        # The AL2023 NVIDIA AMI ships the container toolkit and configures containerd.
        values["toolkit"] = {"enabled": False}
    elif cloud == "kubernetes":
        # Nodes of a kubernetes environment bring the NVIDIA driver (documented in the
        # README); the operator installs the container toolkit where the chart puts it.
        values["toolkit"] = {"enabled": True}
    else:
        values["hostPaths"] = {"driverInstallDir": GKE_NVIDIA_DIR}
        values["toolkit"] = {
            "enabled": True,
            "installDir": GKE_NVIDIA_DIR,
            # GKE (1.33+) does not report its containerd config through the CRI; read the file.
            "env": [{"name": "RUNTIME_CONFIG_SOURCE", "value": "file"}],
        }
    if mig_enabled:
        values["mig"] = {"strategy": "mixed"}
        values["migManager"] = {"enabled": True}
    config = device_plugin_config(time_slices_by_pool, mig_enabled)
    if config is not None:
        values["devicePlugin"]["config"] = {
            "create": True,
            "name": DEVICE_PLUGIN_CONFIGMAP,
            "default": DEVICE_PLUGIN_DEFAULT,
            "data": config,
        }
    return values


def keda_values(prometheus_labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    """KEDA values: its own metrics scraped, so scaler errors (Prometheus unreachable,
    bad query) can alert. `prometheus_labels`: see `monitor_labels`."""
    monitor = {"enabled": True, "additionalLabels": monitor_labels(prometheus_labels)}
    return {
        "prometheus": {
            "operator": {"enabled": True, "serviceMonitor": monitor},
            "metricServer": {"enabled": True, "serviceMonitor": monitor},
        },
    }


INTERCEPTOR_REPLICAS_MIN = 3
"""The chart's ``interceptor.replicas.min``; an environment with more zones gets one per zone."""
INTERCEPTOR_RESOURCES: Final = MappingProxyType(
    {
        "requests": {"cpu": "500m", "memory": "256Mi"},
        "limits": {"cpu": "2", "memory": "1Gi"},
    }
)
"""Sized for streamed LLM responses, not the chart's ``250m``/``20Mi`` requests and
``0.5``/``64Mi`` limits. Each request in flight holds a 32 KiB copy buffer for its response
(http-add-on v0.15.0 ``interceptor/handler/bufferpool.go``), another for its body (full
duplex), the bufio buffers of two connections and three goroutines: about 100 KiB for as
long as the stream lasts, minutes for a long generation. The interceptors scale on requests
in flight, 200 per replica (chart value ``scaler.pendingRequestsInterceptor``): about 20 MiB
of streams in steady state, on top of the process and its caches of routes and endpoints.
The 256 MiB request holds ten times that target; the 1 GiB limit about 10,000 streams, so a
burst that arrives faster than new interceptors start is not answered by an OOM kill, which
would cut every stream on the replica. CPU: the chart's 0.5-core limit throttles a replica
copying many token streams (the CFS quota stops it for the rest of each period, delaying
every token); 2 cores bound a runaway without throttling in normal use."""
ZONE_LABEL: Final = "topology.kubernetes.io/zone"


def interceptor_spread() -> list[dict[str, Any]]:
    """One interceptor in every zone that has nodes it may run on, so each zone's load
    balancer targets reach one in their own zone (https://kubernetes.io/docs/concepts/
    scheduling-eviction/topology-spread-constraints/): at most one more in any zone than
    in another (``maxSkew: 1``), enforced (``DoNotSchedule``); only zones whose nodes it
    tolerates count (``nodeTaintsPolicy: Honor``, so GPU-only zones do not hold it
    Pending); ``matchLabelKeys: [pod-template-hash]`` spreads each rollout's pods on their
    own. The labels are the chart's (``templates/interceptor/deployment.yaml``)."""
    return [
        {
            "maxSkew": 1,
            "topologyKey": ZONE_LABEL,
            "whenUnsatisfiable": "DoNotSchedule",
            "nodeTaintsPolicy": "Honor",
            "matchLabelKeys": ["pod-template-hash"],
            "labelSelector": {
                "matchLabels": {
                    "app.kubernetes.io/component": "interceptor",
                    "app.kubernetes.io/name": "http-add-on",
                    "app.kubernetes.io/instance": naming.KEDA_HTTP_RELEASE,
                }
            },
        }
    ]


def keda_http_add_on_values(
    drain_s: int = long_requests.INTERCEPTOR_DRAIN_FLOOR_S, zones: int = 1
) -> dict[str, Any]:
    """KEDA HTTP add-on values (chart ``keda-add-ons-http``, kedacore/charts
    ``http-add-on/values.yaml``): the interceptor's proxy on its default port 8080, which
    model load balancers target by the container port name ``proxy``; a stopping
    interceptor drains for `drain_s` (`long_requests.interceptor_drain_s`: the longest
    request through it) with a grace period the chart asks to cover ``shutdownDelay`` +
    ``drainTimeout``; at least one interceptor in each of the environment's `zones`
    (`interceptor_spread`), sized for streaming (`INTERCEPTOR_RESOURCES`); images pulled
    once, not on every start (the chart's default ``pullPolicy`` is ``Always``, a registry
    round trip in the path of a scale-out)."""
    return {
        "operator": {"pullPolicy": "IfNotPresent"},
        "scaler": {"pullPolicy": "IfNotPresent"},
        "interceptor": {
            "pullPolicy": "IfNotPresent",
            "proxy": {"port": naming.KEDA_HTTP_INTERCEPTOR_PORT},
            "shutdownDelay": f"{long_requests.INTERCEPTOR_SHUTDOWN_DELAY_S}s",
            "drainTimeout": f"{drain_s}s",
            "terminationGracePeriodSeconds": long_requests.interceptor_grace_s(drain_s),
            "replicas": {"min": max(INTERCEPTOR_REPLICAS_MIN, zones)},
            "topologySpreadConstraints": interceptor_spread(),
            "resources": {k: dict(v) for k, v in INTERCEPTOR_RESOURCES.items()},
        },
    }


ARGO_ROLLOUTS_IMAGE_TAG: Final = "v1.10.1"
"""The controller the chart runs: the release built and rehearsed from its Go module
(``bundled.argo_rollouts_controller`` of releases.json), newer than the chart's own
``appVersion`` (v1.9.0 for chart 2.41.0)."""
ARGO_ROLLOUTS_RESTRICTED: Final = MappingProxyType(
    {f"pod-security.kubernetes.io/{mode}": "restricted" for mode in ("enforce", "warn", "audit")}
)
"""The controller's namespace enforces Pod Security ``restricted``: the chart's pods meet it
as they come (argo-helm argo-rollouts 2.41.0 values.yaml: ``podSecurityContext.runAsNonRoot:
true``; ``containerSecurityContext``: ``allowPrivilegeEscalation: false``, ``capabilities.drop:
[ALL]``, ``readOnlyRootFilesystem: true``, ``seccompProfile.type: RuntimeDefault``;
``templates/controller/deployment.yaml``: emptyDir volumes only)."""


def argo_rollouts_values(prometheus_labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Argo Rollouts values (argo-helm ``charts/argo-rollouts/values.yaml`` at chart 2.41.0):

    - ``controller.image.tag``: `ARGO_ROLLOUTS_IMAGE_TAG` (the chart's default ``""`` means
      its ``appVersion``, ``templates/controller/deployment.yaml``);
    - ``installCRDs: false`` (default true): the chart's CRDs are its appVersion's; the stack
      applies v1.10.1's own (`inferplane.components.argo_rollouts`);
    - ``providerRBAC.enabled: false`` (default true, with every traffic router on): the
      ClusterRole gets no rules for Istio, SMI, Ambassador, the AWS Load Balancer Controller,
      App Mesh, Traefik, APISIX, Contour, Gloo Platform or the Gateway API
      (``templates/_helpers.tpl`` ``argo-rollouts.controller.roleRules``): canaries here are
      shares of replicas, no traffic router is used;
    - two replicas (the chart's default ``controller.replicas: 2``, which turns on
      ``--leader-elect``) kept available through node drains by a PodDisruptionBudget
      (``controller.pdb``, default off) of ``minAvailable: 1``;
    - its metrics scraped (``controller.metrics.enabled``, ``serviceMonitor.enabled``, both
      default false), labelled for the cluster's Prometheus (`monitor_labels`);
    - ``resources.limits.ephemeral-storage: 1Gi``: the limit of the upstream Deployment
      (argoproj/argo-rollouts v1.10.1 ``manifests/base/argo-rollouts-deployment.yaml``); the
      chart sets none (``controller.resources: {}``).

    The dashboard stays off (``dashboard.enabled``, default false)."""
    return {
        "installCRDs": False,
        "controller": {
            "image": {"tag": ARGO_ROLLOUTS_IMAGE_TAG},
            "pdb": {"enabled": True, "minAvailable": 1},
            "metrics": {
                "enabled": True,
                "serviceMonitor": {
                    "enabled": True,
                    "additionalLabels": monitor_labels(prometheus_labels),
                },
            },
            "resources": {"limits": {"ephemeral-storage": "1Gi"}},
        },
        "providerRBAC": {"enabled": False},
        "dashboard": {"enabled": False},
    }


UNEXPOSED_CONTROL_PLANE = ("kubeControllerManager", "kubeScheduler", "kubeEtcd", "kubeProxy")
"""kube-prometheus-stack scrape targets (all ``enabled: true`` in the chart's values.yaml)
that EKS and GKE do not let Prometheus reach, so they would only raise "down" alerts:

- the controller manager, scheduler and etcd run in the provider's managed control plane,
  outside the cluster's network (the chart's own hint: "If your ... is not deployed as a
  pod, specify IPs it can be found on" — there are none to give);
- kube-proxy serves metrics on ``127.0.0.1:10249`` by default (``metricsBindAddress`` in
  https://kubernetes.io/docs/reference/config-api/kube-proxy-config.v1alpha1/). EKS's
  kube-proxy add-on keeps that default and resets edits to it
  (aws/containers-roadmap#657; terraform-aws-modules/terraform-aws-eks#742), and a
  created GKE cluster runs Dataplane V2 (``ADVANCED_DATAPATH``), which has no kube-proxy.
"""
UNEXPOSED_CONTROL_PLANE_RULES = (
    "etcd",
    "kubeControllerManager",
    "kubeSchedulerAlerting",
    "kubeSchedulerRecording",
    "kubeProxy",
)
"""The chart's ``defaultRules.rules`` groups that alert on the targets above (their
``...Down`` alerts fire when a target is absent, so turning off the scrape alone is not
enough)."""


ALERTMANAGER_SECRET = "alertmanager-receivers"
"""The Kubernetes Secret (in the monitoring namespace) holding the receivers' credentials."""
ALERTMANAGER_SECRETS_DIR = "/etc/alertmanager/secrets"
"""Where the operator mounts each Secret of ``alertmanagerSpec.secrets``: "The Secrets are
mounted into /etc/alertmanager/secrets/<secret-name>" (prometheus-operator
``Documentation/api-reference/api.md``, ``AlertmanagerSpec.secrets``; the chart's values.yaml
says the same at ``alertmanager.alertmanagerSpec.secrets``)."""
NULL_RECEIVER = "null"
"""The chart's own receiver: its default route sends the always-firing ``Watchdog`` alert
there, so the receivers list must keep it."""


@dataclass(frozen=True)
class AlertReceiverValues:
    """What the Helm values say about one receiver; its credentials are only named (keys
    of `ALERTMANAGER_SECRET`), never included."""

    name: str
    slack_channel: str | None = None
    slack_api_url_key: str | None = None
    pagerduty_routing_key_key: str | None = None
    webhook_url_key: str | None = None


def _secret_file(key: str) -> str:
    return f"{ALERTMANAGER_SECRETS_DIR}/{ALERTMANAGER_SECRET}/{key}"


def _receiver(receiver: AlertReceiverValues) -> dict[str, Any]:
    """One Alertmanager receiver reading its credentials from files (alertmanager
    ``docs/configuration.md``: ``slack_config.api_url_file``,
    ``pagerduty_config.routing_key_file``, ``webhook_config.url_file``)."""
    out: dict[str, Any] = {"name": receiver.name}
    if receiver.slack_api_url_key:
        out["slack_configs"] = [
            {
                "channel": receiver.slack_channel,
                "api_url_file": _secret_file(receiver.slack_api_url_key),
                # Slack's default is false: say when an alert is over, as PagerDuty does.
                "send_resolved": True,
            }
        ]
    if receiver.pagerduty_routing_key_key:
        out["pagerduty_configs"] = [
            {"routing_key_file": _secret_file(receiver.pagerduty_routing_key_key)}
        ]
    if receiver.webhook_url_key:
        out["webhook_configs"] = [{"url_file": _secret_file(receiver.webhook_url_key)}]
    return out


def alertmanager_values(
    receivers: Sequence[AlertReceiverValues], route_receiver: str
) -> dict[str, Any]:
    """kube-prometheus-stack ``alertmanager`` values sending every alert to `route_receiver`.

    Helm merges maps key by key, so the chart's defaults under ``config`` (``global``,
    ``inhibit_rules``, ``templates``, the rest of ``route`` with its ``Watchdog`` ->
    ``null`` sub-route) stay; lists are replaced, so ``receivers`` keeps ``null``. The
    credentials reach Alertmanager only as files of the mounted `ALERTMANAGER_SECRET`:
    Helm values are stored in plain text (the release's state and Secret)."""
    return {
        "config": {
            "route": {"receiver": route_receiver},
            "receivers": [{"name": NULL_RECEIVER}, *(_receiver(r) for r in receivers)],
        },
        "alertmanagerSpec": {"secrets": [ALERTMANAGER_SECRET]},
    }


def kube_prometheus_stack_values(
    *,
    retention: str,
    storage_gib: int,
    grafana_enabled: bool,
    alerts_enabled: bool,
    storage_class: str | None = None,
    alertmanager: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """kube-prometheus-stack values: `retention` and a persistent volume of `storage_gib`
    (of `storage_class`; None: the cluster's default class), Grafana loading dashboards
    labelled ``grafana_dashboard: "1"`` from every namespace, Alertmanager when alerts are
    enabled. Monitors and rules are selected by the chart's default
    ``release: kube-prometheus-stack`` label, in all namespaces; `alertmanager` adds to the
    Alertmanager values (`alertmanager_values`). The control-plane
    scrapes that managed clusters do not expose are off (`UNEXPOSED_CONTROL_PLANE`)."""
    claim: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": f"{storage_gib}Gi"}},
    }
    if storage_class:
        claim["storageClassName"] = storage_class
    return {
        "prometheus": {
            "prometheusSpec": {
                "retention": retention,
                "storageSpec": {"volumeClaimTemplate": {"spec": claim}},
                "serviceMonitorSelectorNilUsesHelmValues": True,
                "podMonitorSelectorNilUsesHelmValues": True,
                "ruleSelectorNilUsesHelmValues": True,
            }
        },
        "grafana": {
            "enabled": grafana_enabled,
            "sidecar": {
                "dashboards": {
                    "enabled": True,
                    "label": "grafana_dashboard",
                    "labelValue": "1",
                    "searchNamespace": "ALL",
                }
            },
        },
        "alertmanager": {"enabled": alerts_enabled, **(alertmanager or {})},
        **{component: {"enabled": False} for component in UNEXPOSED_CONTROL_PLANE},
        "defaultRules": {"rules": dict.fromkeys(UNEXPOSED_CONTROL_PLANE_RULES, False)},
    }


def aws_load_balancer_controller_values(
    region: str,
    cluster: pulumi.Input[str],
    vpc_id: pulumi.Input[str],
    role_arn: pulumi.Input[str],
) -> dict[str, Any]:
    """AWS Load Balancer Controller values (NLBs for Services; no ALB add-ons in use)."""
    return {
        "clusterName": cluster,
        "region": region,
        "vpcId": vpc_id,
        "replicaCount": 2,
        "serviceAccount": {
            "create": True,
            "name": LBC_SERVICE_ACCOUNT,
            "annotations": {"eks.amazonaws.com/role-arn": role_arn},
        },
        "enableShield": False,
        "enableWaf": False,
        "enableWafv2": False,
    }


def cluster_autoscaler_image_tag(kubernetes_version: str) -> str:
    """The Cluster Autoscaler image tag matching a Kubernetes minor (``1.33`` -> ``v1.33.5``;
    an unknown minor gets its ``.0`` release)."""
    minor = ".".join(kubernetes_version.split(".")[:2])
    return CA_IMAGE_TAGS.get(minor, f"v{minor}.0")


def cluster_autoscaler_values(
    region: str,
    kubernetes_version: str,
    cluster: str,
    role_arn: pulumi.Input[str],
    priorities: Mapping[int, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """Cluster Autoscaler values: node groups auto-discovered by tag, least-waste
    expansion, per-zone groups of one pool balanced (they differ only in the zone label).

    `priorities` (`inferplane.components.capacity_sources.expander_priorities`), where a
    pool lists several capacity sources: the ``priority`` expander first, least-waste among
    the groups it ties ("From 1.23.0 onwards, multiple expanders may be passed, i.e.
    ``--expander=priority,least-waste``", kubernetes/autoscaler
    ``cluster-autoscaler/FAQ.md``), with the chart's ``expanderPriorities`` as its
    ConfigMap."""
    values: dict[str, Any] = {
        "cloudProvider": "aws",
        "awsRegion": region,
        "autoDiscovery": {"clusterName": cluster},
        "image": {"tag": cluster_autoscaler_image_tag(kubernetes_version)},
        "rbac": {
            "serviceAccount": {
                "create": True,
                "name": CA_SERVICE_ACCOUNT,
                "annotations": {"eks.amazonaws.com/role-arn": role_arn},
            }
        },
        "extraArgs": {
            "expander": "least-waste",
            "balance-similar-node-groups": True,
            "balancing-ignore-label": naming.ZONE_LABEL,
            "skip-nodes-with-local-storage": False,
        },
    }
    if priorities:
        values["extraArgs"]["expander"] = "priority,least-waste"
        # String keys (resource inputs are JSON); the chart reads each with ``$k | int``.
        values["expanderPriorities"] = {str(k): list(v) for k, v in sorted(priorities.items())}
    return values
