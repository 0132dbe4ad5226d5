"""LLM-aware routing of one model in one zone: the llm-d router (v0.10.0) in front of the
zone's own Deployment.

Why per zone: an ``InferencePool`` (``inference.networking.k8s.io/v1``) selects pods by pod
labels only (gateway-api-inference-extension v1.6.0
``config/crd/bases/inference.networking.k8s.io_inferencepools.yaml``, ``spec.selector``), and
a pod's zone is its node's; so an llm-aware model runs one Deployment per zone whose pods
carry ``inferplane.dev/zone`` (`zone_model`, `pool_labels`), and each zone gets its own pool,
endpoint picker and proxy. A request that enters a zone stays there.

Per zone (release ``<model>-<zone>``, in the model's namespace):

- the chart ``llm-d-router-standalone`` (``oci://ghcr.io/llm-d/charts``, version
  `ROUTER_VERSION`; upstream's chart source at that tag is
  ``config/charts/llm-d-router-standalone`` with its ``routerlib`` dependency). Its values
  (`router_values`) set only keys of the chart's own values.yaml (tests hold them to it):
  the pool's labels and target port, the endpoint picker's pinned image,
  `routing.pickers` replicas (two by default; above one the chart adds
  ``--ha-enable-leader-election``: one active, the other not ready,
  ``routerlib/templates/_deployment.yaml``), spread over the zone's nodes, container sizes
  from the llm-d router's sizing guide for the model's traffic (`epp_resources`,
  `system_nodes.routing_sizes`), its scorers (`plugins_config`; for a model at zero, flow
  control's queue TTL from its scale-out budget, `inferplane.blueprint.derived.router_wake`), the
  proxy as a Deployment of its own with an Envoy configuration of inferplane's
  (`router_proxy`: it fails open to the model's Service, and a client cannot choose the
  replica), pool ``failureMode: FailOpen``, one ``InferenceObjective`` per priority, node
  affinity to the zone, and metrics without token auth (``--metrics-endpoint-auth=false``;
  the NetworkPolicy admits Prometheus only). Each zone's release waits for the previous
  zone's (`ModelRouterArgs.after`), so an update rolls one zone's router at a time. The
  chart renders the ``InferencePool`` named after the release, the picker Deployment
  ``<release>-epp`` and its Service, which the offline check does not see (they exist
  once the chart is rendered at deploy time), so what a policy must see is here
  explicitly:
- no PodDisruptionBudget for the pickers: under leader election only the leader is
  Ready, and a budget counts Ready pods only (kubernetes ``pkg/controller/disruption/
  disruption.go``, `countHealthyPods`), so ``minAvailable: 1`` (or ``maxUnavailable: 1``
  of two) leaves ``disruptionsAllowed`` at 0 and the leader could never be evicted: every
  node drain, node group update and autoscaler move would stall on it. Leader election
  hands over to the standby instead (`router-high-availability` refuses a budget that
  blocks the leader, `picker_evictions`);
- ServiceMonitor ``<release>-epp`` and LoadBalancer Service ``<release>-lb`` (`router_lb`):
  the picker's metrics, and the zone's entry point, internal like every model's load
  balancer, to the proxies' listener (8081) on the client port 8000. One per zone because
  the chart labels each release's proxies with its own name only (``llm-d-router-proxy:
  <release>-proxy``, ``_helpers.tpl``), so no one Service can select the proxies of two
  zones.
- NetworkPolicies ``<release>-epp`` and ``<release>-proxy``: the picker and proxy pods'
  ingress and egress (`router_pods`).

Pod Security and network: the chart renders no ``securityContext`` for the picker, which
the namespace's ``restricted`` level would refuse, so the chart is rendered by Pulumi
(``helm.v4.Chart``, each object a resource of its own) and a transform completes the
picker's and the proxy's Deployments before they are sent (`router_proxy.router_transform`);
the picker pods get their own NetworkPolicy (`router_pods`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import pulumi
import pulumi_kubernetes as k8s
import yaml

from inferplane.blueprint import naming, releases, system_nodes
from inferplane.blueprint.model import Routing, zone_replicas
from inferplane.components.serving.containers import PORTS, Manifest
from inferplane.components.serving.routing import router_envoy, router_lb, router_pods, router_proxy
from inferplane.components.serving.routing.load_balancer import lb_annotations
from inferplane.components.serving.routing.router_chart import ROUTER_CHART
from inferplane.components.serving.routing.router_chart import (
    local_chart_problem as local_chart_problem,
)
from inferplane.components.serving.spec import ServedModel, ServingEnvironment

ROUTER_CHART_REPO: Final = "oci://ghcr.io/llm-d/charts"
ROUTER_VERSION: Final = releases.bundled("llm_d_router")
"""The llm-d router release (`releases.json`, ``bundled.llm_d_router``): chart version and
image tag (upstream publishes both under the release tag,
``.github/ISSUE_TEMPLATE/new-release.md`` at v0.10.0). The chart values, plugin names and
metric names here are that release's: an upgrade re-reads them."""
EPP_IMAGE: Final = {
    "registry": "ghcr.io/llm-d",
    "repository": "llm-d-router-endpoint-picker",
    "tag": ROUTER_VERSION,
    "pullPolicy": "IfNotPresent",
}
EPP_MEMORY_LIMIT_MIB: Final = 4096
"""The picker container's memory limit, or its request where that is larger."""


def epp_resources(model: ServedModel) -> Manifest:
    """The picker's container: its requests sized from the model's traffic by the llm-d
    router's sizing guide (`system_nodes.routing_sizes`, which also counts the system nodes
    of a created cluster for them), never below 1 CPU and 2 GiB. The chart's default (8
    CPUs and 8 GiB requested, 16 GiB limit, ``routerlib/values.yaml``) does not fit the
    4-vCPU, 16-GiB system nodes (`inferplane.blueprint.system_nodes`) twice per zone."""
    picker = model.router_pods[0]
    limit = max(EPP_MEMORY_LIMIT_MIB, picker.memory_mib)
    return {
        "requests": picker.requests(),
        "limits": {"memory": system_nodes.memory_quantity(limit)},
    }


PLUGINS_FILE: Final = "inferplane-plugins.yaml"
CONFIG_CHECKSUM: Final = router_proxy.CONFIG_CHECKSUM
FLOW_CONTROL_GATE: Final = "flowControl"
"""``pkg/epp/flowcontrol/config.go``: ``FeatureGate = "flowControl"``."""


def release_name(model: ServedModel, zone: str) -> str:
    """``<model>-<zone>``: the Helm release, the InferencePool and the zone's Deployment."""
    return naming.zone_deployment(model.name, zone)


def epp_name(model: ServedModel, zone: str) -> str:
    """The picker's Deployment and Service (`naming.router_epp`)."""
    return naming.router_epp(model.name, zone)


def epp_pod_labels(model: ServedModel, zone: str) -> dict[str, str]:
    """What the chart puts on the picker pods with an InferencePool
    (``llm-d-router.selectorLabels`` when ``inferencePool.create`` is not false)."""
    return {"llm-d-router-gateway": epp_name(model, zone)}


def objective_name(objective: str, zone: str) -> str:
    """An ``InferenceObjective`` names one pool (``spec.poolRef``) and is looked up by name
    (header ``x-llm-d-inference-objective``, ``pkg/epp/metadata/consts.go``;
    ``pkg/epp/controller/inferenceobjective_reconciler.go`` keeps only its own pool's), so
    each zone's pool has its own: ``<objective>-<zone>``."""
    return f"{objective}-{zone}"


def proxy_config_map(model: ServedModel, zone: str) -> str:
    """The Envoy proxies' configuration, one per release (``<release>-envoy``)."""
    return f"{release_name(model, zone)}-envoy"


def pool_labels(env: ServingEnvironment, model: ServedModel, zone: str) -> dict[str, str]:
    """The pod labels of the zone's Deployment, which its InferencePool selects."""
    return {**naming.model_selector(env.part_of, model.name), naming.ZONE_LABEL: zone}


def router_ingress(model: ServedModel) -> Manifest:
    """The NetworkPolicy rule that lets each zone's router reach the model's pods: the
    proxies forward requests and the pickers scrape ``/metrics``, both on port ``http``."""
    names = [epp_name(model, zone) for zone in model.pool.zones]
    proxies = [router_proxy.proxy_name(release_name(model, zone)) for zone in model.pool.zones]
    return {
        "from": [
            {
                "podSelector": {
                    "matchExpressions": [
                        {"key": "llm-d-router-gateway", "operator": "In", "values": names}
                    ]
                }
            },
            {
                "podSelector": {
                    "matchExpressions": [
                        {"key": "llm-d-router-proxy", "operator": "In", "values": proxies}
                    ]
                }
            },
        ],
        "ports": [{"protocol": "TCP", "port": PORTS["http"]}],
    }


def zone_model(model: ServedModel, zone: str) -> ServedModel:
    """The model as one zone's Deployment serves it: the pool narrowed to `zone`, the
    replica bounds split evenly (`zone_replicas`; validation requires multiples of the zone
    count), and the schedule's per-zone floors."""
    zones = len(model.pool.zones)
    windows = tuple(dataclasses.replace(w, replicas=w.min_per_zone) for w in model.schedule)
    return dataclasses.replace(
        model,
        pool=dataclasses.replace(model.pool, zones=(zone,)),
        replicas=zone_replicas(model.replicas, zones),
        schedule=windows,
    )


def plugins_config(model: ServedModel) -> dict[str, Any] | None:
    """The picker's ``EndpointPickerConfig`` when it is not the chart's default, else None.

    The chart's default (``routerlib/templates/_config.yaml``, ``default-plugins.yaml``)
    scores by queue (weight 2), KV-cache use (2) and approximate prefix cache (3); the
    same, without the prefix scorer for ``prefix_cache: off``, and with the
    ``flowControl`` feature gate for ``flow_control``.
    """
    routing = model.routing
    if routing.prefix_cache == "approximate" and not routing.flow_control:
        return None
    return picker_config(routing, router_envoy.queue_ttl_s(model))


def picker_config(routing: Routing, queue_ttl_s: int | None = None) -> dict[str, Any]:
    """The ``EndpointPickerConfig`` a picker of `routing` runs, in full: for the default
    routing it is the chart's own ``default-plugins.yaml`` (vLLM over HTTP), which
    `plugins_config` then leaves to the chart. ``scripts/measure/measure_routing.py`` runs it
    outside Kubernetes. `queue_ttl_s`: flow control's ``defaultRequestTTL`` when the
    release's 60 s does not suit (a model woken through the queue,
    `router_proxy.queue_ttl_s`)."""
    plugins: list[dict[str, Any]] = [
        {"type": "queue-scorer"},
        {"type": "kv-cache-utilization-scorer"},
    ]
    weights = [
        {"pluginRef": "queue-scorer", "weight": 2},
        {"pluginRef": "kv-cache-utilization-scorer", "weight": 2},
    ]
    if routing.prefix_cache != "off":
        plugins.append({"type": "prefix-cache-scorer"})
        weights.append({"pluginRef": "prefix-cache-scorer", "weight": 3})
    plugins += [
        {
            "type": "metrics-data-source",
            "parameters": {"scheme": "http", "path": "/metrics", "insecureSkipVerify": True},
        },
        {"type": "core-metrics-extractor"},
    ]
    config: dict[str, Any] = {
        "apiVersion": "llm-d.ai/v1alpha1",
        "kind": "EndpointPickerConfig",
    }
    if routing.flow_control:
        config["featureGates"] = [FLOW_CONTROL_GATE]
    config["plugins"] = plugins
    config["schedulingProfiles"] = [{"name": "default", "plugins": weights}]
    if routing.flow_control and queue_ttl_s is not None:
        # apix/config/v1alpha1 FlowControlConfig.DefaultRequestTTL, a metav1.Duration.
        config["flowControl"] = {"defaultRequestTTL": f"{queue_ttl_s}s"}
    return config


def zone_affinity(zone: str) -> Manifest:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": naming.TOPOLOGY_ZONE_LABEL, "operator": "In", "values": [zone]}
                        ]
                    }
                ]
            }
        }
    }


def router_values(
    env: ServingEnvironment, model: ServedModel, zone: str, namespace: str | None = None
) -> dict[str, Any]:
    """The chart values of the zone's router (every key one of the chart's own), in
    `namespace` (default: the blueprint's, `naming.namespace`)."""
    ns = namespace or naming.namespace(env.part_of)
    epp: dict[str, Any] = {
        "replicas": model.routing.pickers,
        "image": dict(EPP_IMAGE),
        "resources": epp_resources(model),
        # The zone, and the pickers spread over its nodes (`router_proxy.spread_by_host`).
        "affinity": {
            **zone_affinity(zone),
            **router_proxy.spread_by_host(epp_pod_labels(model, zone)),
        },
    }
    custom = plugins_config(model)
    if custom is not None:
        epp["pluginsConfigFile"] = PLUGINS_FILE
        epp["pluginsCustomConfig"] = {PLUGINS_FILE: yaml.safe_dump(custom, sort_keys=False)}
    release = release_name(model, zone)
    proxy = router_proxy.proxy_values(model, release, ns, proxy_config_map(model, zone))
    epp["podAnnotations"] = {CONFIG_CHECKSUM: config_checksum(epp, proxy)}
    return {
        "router": {
            "modelServers": {
                "type": "vllm",
                "protocol": "http",
                "targetPorts": [{"number": PORTS["http"]}],
                "matchLabels": pool_labels(env, model, zone),
            },
            "epp": epp,
            "proxy": proxy,
            "inferencePool": {"create": True, "failureMode": "FailOpen"},
            "inferenceObjectives": [
                {"name": objective_name(name, zone), "priority": priority}
                for name, priority in model.routing.priorities
            ],
            "monitoring": {"prometheus": {"enabled": False, "auth": {"enabled": False}}},
        }
    }


def config_checksum(epp: Manifest, proxy: Manifest) -> str:
    """SHA-256 of what the chart renders the pickers' ConfigMaps from: the plugins file
    (``epp.pluginsConfigFile``, ``epp.pluginsCustomConfig``; the chart's own
    ``default-plugins.yaml`` when unset) and the proxy's values (its ``envoy.yaml``).
    Both are read once, at start (the picker's ``--config-file``, Envoy's ``-c``), and a
    changed ConfigMap changes no pod, so without this annotation a routing change would
    wait for the next restart."""
    rendered = {
        "pluginsConfigFile": epp.get("pluginsConfigFile", "default-plugins.yaml"),
        "pluginsCustomConfig": epp.get("pluginsCustomConfig", {}),
        "proxy": proxy,
    }
    return hashlib.sha256(json.dumps(rendered, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class ModelRouterArgs:
    """Inputs of `ModelRouter`."""

    model: ServedModel
    """The llm-aware model (all its zones; `zone` picks one)."""
    env: ServingEnvironment
    namespace: str
    """The model's namespace: the pool selects pods there."""
    provider: k8s.Provider
    zone: str
    """The zone this router serves."""
    lb_subnet_ids: pulumi.Input[Sequence[str]] | None = None
    """As `ModelServerArgs.lb_subnet_ids`."""
    after: Sequence[pulumi.Resource] = ()
    """Resources the release waits for (the router CRDs, `router_crds`, the zone's
    Deployment, and the previous zone's release, `ModelRouter.chart`, so that an update
    rolls one zone's router at a time): a component's own ``depends_on`` does not reach
    its children."""


class ModelRouter(pulumi.ComponentResource):
    """The llm-d router of one model in one zone (see the module docstring).

    Outputs:
        pool_name: the InferencePool (``<model>-<zone>``).
        lb_service_name: the zone's load balancer Service (``<model>-<zone>-lb``).
    """

    pool_name: pulumi.Output[str]
    lb_service_name: pulumi.Output[str]
    chart: k8s.helm.v4.Chart
    """The zone's release, which the next zone's waits for."""

    def __init__(
        self, name: str, args: ModelRouterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("inferplane:serving:ModelRouter", name, None, opts)
        env, model, zone, ns = args.env, args.model, args.zone, args.namespace
        release = release_name(model, zone)
        labels = {
            **naming.model_labels(env.part_of, env.environment, model.name),
            naming.ZONE_LABEL: zone,
        }
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        local = env.router_chart
        proxy = router_proxy.proxy_name(release)
        values = router_values(env, model, zone, ns)
        affinity = {
            **zone_affinity(zone),
            **router_proxy.spread_by_host(router_proxy.proxy_pod_labels(release)),
        }
        checksum = values["router"]["epp"]["podAnnotations"][CONFIG_CHECKSUM]
        chart = k8s.helm.v4.Chart(
            name,
            name=release,
            # A local copy carries its dependency in charts/ (`local_chart_problem`), as the
            # registry's package does.
            chart=f"{local.rstrip('/')}/{ROUTER_CHART}"
            if local
            else f"{ROUTER_CHART_REPO}/{ROUTER_CHART}",
            version=None if local else ROUTER_VERSION,
            namespace=ns,
            values=values,
            # Awaited, so that the next zone's router (`ModelRouterArgs.after`) waits for
            # this zone's proxies to roll; the pickers are not (`router_proxy.router_transform`).
            opts=pulumi.ResourceOptions.merge(
                child,
                pulumi.ResourceOptions(
                    depends_on=list(args.after),
                    transforms=[
                        router_proxy.router_transform(
                            epp_name(model, zone),
                            proxy,
                            lambda d: router_proxy.complete_proxy(d, model, affinity, checksum),
                        )
                    ],
                ),
            ),
        )
        self.chart = chart
        after_chart = pulumi.ResourceOptions.merge(
            child, pulumi.ResourceOptions(depends_on=[chart])
        )
        k8s.apiextensions.CustomResource(
            f"{name}-epp-monitor",
            api_version="monitoring.coreos.com/v1",
            kind="ServiceMonitor",
            metadata={
                "name": epp_name(model, zone),
                "namespace": ns,
                "labels": {**labels, **env.prometheus_labels},
            },
            spec=router_lb.service_monitor_spec(epp_name(model, zone)),
            opts=after_chart,
        )
        proxy_labels = router_proxy.proxy_pod_labels(release)
        lb = k8s.core.v1.Service(
            f"{name}-lb",
            metadata={
                "name": f"{release}-lb",
                "namespace": ns,
                "labels": labels,
                "annotations": lb_annotations(
                    env,
                    model,
                    router_lb.zone_subnets(env, zone, args.lb_subnet_ids),
                    router_proxy.proxy_grace_s(model),
                ),
            },
            spec=router_lb.lb_spec(env, model, proxy_labels),
            opts=after_chart,
        )
        k8s.networking.v1.NetworkPolicy(
            f"{name}-epp-network-policy",
            metadata={"name": epp_name(model, zone), "namespace": ns, "labels": labels},
            spec=router_pods.picker_network_policy_spec(
                env,
                picker_labels=epp_pod_labels(model, zone),
                pool_labels=pool_labels(env, model, zone),
                proxy_labels=proxy_labels,
            ),
            opts=child,
        )
        k8s.networking.v1.NetworkPolicy(
            f"{name}-proxy-network-policy",
            metadata={"name": proxy, "namespace": ns, "labels": labels},
            spec=router_pods.proxy_network_policy_spec(
                env,
                proxy_labels=proxy_labels,
                picker_labels=epp_pod_labels(model, zone),
                model_labels=naming.model_selector(env.part_of, model.name),
            ),
            opts=child,
        )
        if router_pods.cilium_api_server(env):
            router_pods.api_server_cilium_policy(
                name, epp_name(model, zone), ns, labels, epp_pod_labels(model, zone), child
            )
        self.pool_name = chart.resources.apply(lambda _: release)
        self.lb_service_name = lb.metadata.apply(lambda _: f"{release}-lb")
        self.register_outputs(
            {"pool_name": self.pool_name, "lb_service_name": self.lb_service_name}
        )
