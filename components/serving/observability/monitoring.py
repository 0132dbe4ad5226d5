"""Monitoring of one model: scrape config, recording rules and alerts, Grafana dashboard.

- ServiceMonitor ``<model>``: scrapes the model's ClusterIP Service on the port *named*
  ``metrics`` (Triton, 8002) or ``http`` (vLLM serves ``/metrics`` on its API port) every
  15 s. The model's LoadBalancer Service carries the same labels, so a relabeling keeps only
  the ClusterIP Service: scraping both would duplicate every series.
- PrometheusRule ``<model>``: `inferplane.components.serving.observability.rules` (recording
  rules always, alerts when ``observability.alerts.enabled``).
- ConfigMap ``<model>-dashboard`` labelled for Grafana's sidecar when
  ``observability.grafana.enabled``; the sidecar loads it from any namespace.

ServiceMonitor and PrometheusRule carry the labels the cluster's Prometheus Operator selects
them by (`ServingEnvironment.prometheus_labels`: ``release: kube-prometheus-stack`` for the
installed chart), the dashboard the labels its Grafana sidecar loads
(`ServingEnvironment.dashboard_labels`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint import naming
from inferplane.blueprint.derived import timing
from inferplane.components.serving.observability import dashboards, rules
from inferplane.components.serving.observability.promql_scope import (
    REVISION_POD_LABEL,
    TEMPLATE_HASH_POD_LABEL,
)
from inferplane.components.serving.spec import ServedModel, ServingEnvironment

SCRAPE_INTERVAL: Final = f"{timing.SCRAPE_INTERVAL_S}s"
SCRAPE_TIMEOUT: Final = SCRAPE_INTERVAL
"""No longer than the interval: the Prometheus operator refuses (skips, with an
``InvalidConfiguration`` event) a ServiceMonitor whose endpoint's ``scrapeTimeout`` exceeds
its ``interval`` (prometheus-operator v0.85.0 pkg/prometheus/resource_selector.go
`validateScrapeIntervalAndTimeout` -> promcfg.go `CompareScrapeTimeoutToScrapeInterval`:
"scrapeTimeout ... greater than scrapeInterval"), and the model is then never scraped."""
METRICS_PORT: Final = {"triton": "metrics", "vllm": "http"}
"""Name of the Service port that serves /metrics, by server."""


@dataclass(frozen=True)
class ModelMonitoringArgs:
    """Inputs of `ModelMonitoring`."""

    model: ServedModel
    """The model to monitor: server (which series), SLO, latency class."""
    env: ServingEnvironment
    """The environment: labels, and whether alerts and a dashboard are written."""
    namespace: str
    """Namespace of the model's Deployment and Services; the objects live beside them."""
    provider: k8s.Provider
    """The cluster's provider; every resource passes it explicitly."""
    service_name: str
    """The model's ClusterIP Service (``<model>`` by contract), the one to scrape."""
    deployment_name: str | None = None
    """The model's Deployment; the model's name (the contract) when omitted."""


def release_labels(env: ServingEnvironment, model: ServedModel) -> dict[str, str]:
    return {
        **naming.model_labels(env.part_of, env.environment, model.name),
        **env.prometheus_labels,
    }


def service_monitor_spec(
    env: ServingEnvironment, model: ServedModel, namespace: str, service_name: str
) -> dict[str, Any]:
    """The ServiceMonitor's ``spec`` (camelCase, as the CRD spells it). A model with a
    rollout: every series also carries its pod's template hash (`TEMPLATE_HASH_LABEL`)."""
    spec: dict[str, Any] = {
        "selector": {"matchLabels": naming.model_selector(env.part_of, model.name)},
        "namespaceSelector": {"matchNames": [namespace]},
        "endpoints": [
            {
                "port": METRICS_PORT[model.server],
                "path": "/metrics",
                "scheme": "http",
                "interval": SCRAPE_INTERVAL,
                "scrapeTimeout": SCRAPE_TIMEOUT,
                "relabelings": [
                    {
                        "action": "keep",
                        "sourceLabels": ["__meta_kubernetes_service_name"],
                        # A Service name is a DNS label: no regex metacharacters.
                        "regex": service_name,
                    }
                ],
            }
        ],
    }
    if model.rollout is not None:
        spec["podTargetLabels"] = [TEMPLATE_HASH_POD_LABEL, REVISION_POD_LABEL]
    return spec


def prometheus_rule_spec(
    env: ServingEnvironment, model: ServedModel, namespace: str, deployment: str | None = None
) -> dict[str, Any]:
    return {"groups": rules.rule_groups(env, model, namespace, deployment)}


def dashboard_data(
    env: ServingEnvironment, model: ServedModel, namespace: str, deployment: str | None = None
) -> dict[str, str]:
    """The dashboard ConfigMap's ``data``: one JSON file named after namespace and model."""
    key = f"{namespace}-{model.name}.json"
    return {key: dashboards.dashboard_json(env, model, namespace, deployment)}


class ModelMonitoring(pulumi.ComponentResource):
    """ServiceMonitor, PrometheusRule and (optionally) the dashboard of one model.

    Outputs:
        service_monitor_name: ``<model>``.
        prometheus_rule_name: ``<model>``.
        dashboard_configmap_name: ``<model>-dashboard``, or None without Grafana.
    """

    service_monitor_name: pulumi.Output[str]
    prometheus_rule_name: pulumi.Output[str]
    dashboard_configmap_name: pulumi.Output[str | None]

    def __init__(
        self,
        name: str,
        args: ModelMonitoringArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("inferplane:serving:ModelMonitoring", name, None, opts)
        env, model = args.env, args.model
        # Pulumi does not make a component's children wait for the component's own
        # dependencies (kube-prometheus-stack's CRDs, the Service): pass them on.
        child = pulumi.ResourceOptions(
            parent=self, provider=args.provider, depends_on=opts.depends_on if opts else None
        )
        labels = release_labels(env, model)

        service_monitor = k8s.apiextensions.CustomResource(
            f"{name}-servicemonitor",
            api_version="monitoring.coreos.com/v1",
            kind="ServiceMonitor",
            metadata={"name": model.name, "namespace": args.namespace, "labels": labels},
            spec=service_monitor_spec(env, model, args.namespace, args.service_name),
            opts=child,
        )
        rule = k8s.apiextensions.CustomResource(
            f"{name}-rules",
            api_version="monitoring.coreos.com/v1",
            kind="PrometheusRule",
            metadata={"name": model.name, "namespace": args.namespace, "labels": labels},
            spec=prometheus_rule_spec(env, model, args.namespace, args.deployment_name),
            opts=child,
        )
        self.service_monitor_name = service_monitor.id.apply(lambda _: model.name)
        self.prometheus_rule_name = rule.id.apply(lambda _: model.name)

        if env.grafana_dashboard:
            configmap = k8s.core.v1.ConfigMap(
                f"{name}-dashboard",
                metadata=k8s.meta.v1.ObjectMetaArgs(
                    name=f"{model.name}-dashboard",
                    namespace=args.namespace,
                    labels={
                        **naming.model_labels(env.part_of, env.environment, model.name),
                        **env.dashboard_labels,
                    },
                ),
                data=dashboard_data(env, model, args.namespace, args.deployment_name),
                opts=child,
            )
            self.dashboard_configmap_name = configmap.id.apply(lambda _: f"{model.name}-dashboard")
        else:
            self.dashboard_configmap_name = pulumi.Output.from_input(None)

        self.register_outputs(
            {
                "service_monitor_name": self.service_monitor_name,
                "prometheus_rule_name": self.prometheus_rule_name,
                "dashboard_configmap_name": self.dashboard_configmap_name,
            }
        )
