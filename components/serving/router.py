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
  ``routerlib/templates/_deployment.yaml``), container sizes that fit the system nodes,
  its scorers (`plugins_config`), the proxy as a
  sidecar with ``failOpen: true`` (Envoy's ext_proc ``failure_mode_allow``: while the
  picker is unreachable requests still flow, unscored), pool ``failureMode: FailOpen``, one
  ``InferenceObjective`` per priority, node affinity to the zone, and metrics without token
  auth (``--metrics-endpoint-auth=false``; the NetworkPolicy admits Prometheus only). The
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
  balancer, to the proxy's listener (8081) on the client port 8000. One per zone because
  the chart labels each release's pods with its own name only (``llm-d-router-gateway:
  <release>-epp``, ``_helpers.tpl``), so no one Service can select the proxies of two
  zones.
- NetworkPolicy ``<release>-epp``: the picker pods' ingress and egress (`router_pods`).

Pod Security and network: the chart renders no ``securityContext`` for the picker, which
the namespace's ``restricted`` level would refuse, so the chart is rendered by Pulumi
(``helm.v4.Chart``, each object a resource of its own) and a transform completes the
picker's Deployment before it is sent; the picker pods get their own NetworkPolicy. Both
are in `router_pods`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pulumi
import pulumi_kubernetes as k8s
import yaml

from inferplane.blueprint import naming, releases
from inferplane.blueprint.model import MinMax, Routing
from inferplane.components.serving import router_lb, router_pods
from inferplane.components.serving.containers import PORTS, Manifest
from inferplane.components.serving.load_balancer import lb_annotations
from inferplane.components.serving.spec import ServedModel, ServingEnvironment

ROUTER_CHART: Final = "llm-d-router-standalone"
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
EPP_RESOURCES: Final = {
    "requests": {"cpu": "1", "memory": "2Gi"},
    "limits": {"memory": "4Gi"},
}
"""The picker's container. The chart's default (8 CPUs and 8 GiB requested, 16 GiB limit,
``routerlib/values.yaml``) does not fit the 4-vCPU, 16-GiB system nodes
(`inferplane.blueprint.system_nodes`) twice per zone; this is a sizing choice, not a
measurement: raise it for heavy traffic."""
PROXY_RESOURCES: Final = {
    "requests": {"cpu": "500m", "memory": "512Mi"},
    "limits": {"memory": "2Gi"},
}
"""The Envoy sidecar's container (the chart asks 4 CPUs and 8 GiB); likewise a choice."""
PLUGINS_FILE: Final = "inferplane-plugins.yaml"
CONFIG_CHECKSUM: Final = "inferplane.dev/config-sha256"
"""The picker pods' annotation (chart value ``router.epp.podAnnotations``, rendered on the
pod template by ``routerlib/templates/_deployment.yaml``) holding `config_checksum`."""
FLOW_CONTROL_GATE: Final = "flowControl"
"""``pkg/epp/flowcontrol/config.go``: ``FeatureGate = "flowControl"``."""


LIBRARY_CHART: Final = "router"
"""The chart's one dependency, ``routerlib`` (its Chart.yaml ``name: router``), which the
standalone chart's Chart.yaml takes from ``file://../routerlib``."""


def local_chart_problem(directory: str) -> str | None:
    """What keeps the local copy `directory` (stack config ``inferplane:routerChart``) from
    being rendered, or None.

    Helm renders a chart only with its dependencies in its ``charts/`` folder. Resolving
    them at deploy time (``dependencyUpdate``) writes that folder, and every zone's router
    renders the same copy at once, so two updates race (seen in the end-to-end run:
    "found in Chart.yaml, but missing in charts/ directory: router"); the copy must
    therefore carry it, as the registry's package does."""
    chart = Path(directory) / ROUTER_CHART
    if not (chart / "Chart.yaml").is_file():
        return (
            f"{directory} has no {ROUTER_CHART}/Chart.yaml; point it at the folder holding "
            f"the pinned chart source ({ROUTER_CHART} beside routerlib)"
        )
    deps = chart / "charts"
    if (deps / LIBRARY_CHART / "Chart.yaml").is_file() or any(deps.glob(f"{LIBRARY_CHART}-*.tgz")):
        return None
    return (
        f"{chart}/charts has no {LIBRARY_CHART!r} dependency; copy it in once: "
        f"cp -r {Path(directory) / 'routerlib'} {deps / LIBRARY_CHART} "
        f"(or run `helm dependency build {chart}`)"
    )


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
    """The Envoy sidecar's configuration, one per release (``<release>-envoy``)."""
    return f"{release_name(model, zone)}-envoy"


def pool_labels(env: ServingEnvironment, model: ServedModel, zone: str) -> dict[str, str]:
    """The pod labels of the zone's Deployment, which its InferencePool selects."""
    return {**naming.model_selector(env.part_of, model.name), naming.ZONE_LABEL: zone}


def router_ingress(model: ServedModel) -> Manifest:
    """The NetworkPolicy rule that lets each zone's router reach the model's pods: the
    proxy forwards requests and the picker scrapes ``/metrics``, both on port ``http``."""
    names = [epp_name(model, zone) for zone in model.pool.zones]
    return {
        "from": [
            {
                "podSelector": {
                    "matchExpressions": [
                        {"key": "llm-d-router-gateway", "operator": "In", "values": names}
                    ]
                }
            }
        ],
        "ports": [{"protocol": "TCP", "port": PORTS["http"]}],
    }


def zone_model(model: ServedModel, zone: str) -> ServedModel:
    """The model as one zone's Deployment serves it: the pool narrowed to `zone`, the
    replica bounds split evenly (validation requires multiples of the zone count), and
    the schedule's per-zone floors."""
    zones = len(model.pool.zones)
    windows = tuple(dataclasses.replace(w, replicas=w.min_per_zone) for w in model.schedule)
    return dataclasses.replace(
        model,
        pool=dataclasses.replace(model.pool, zones=(zone,)),
        replicas=MinMax(model.replicas.min // zones, model.replicas.max // zones),
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
    return picker_config(routing)


def picker_config(routing: Routing) -> dict[str, Any]:
    """The ``EndpointPickerConfig`` a picker of `routing` runs, in full: for the default
    routing it is the chart's own ``default-plugins.yaml`` (vLLM over HTTP), which
    `plugins_config` then leaves to the chart. ``scripts/measure_routing.py`` runs it
    outside Kubernetes."""
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


def router_values(env: ServingEnvironment, model: ServedModel, zone: str) -> dict[str, Any]:
    """The chart values of the zone's router (every key one of the chart's own)."""
    epp: dict[str, Any] = {
        "replicas": model.routing.pickers,
        "image": dict(EPP_IMAGE),
        "resources": EPP_RESOURCES,
        "affinity": zone_affinity(zone),
    }
    custom = plugins_config(model)
    if custom is not None:
        epp["pluginsConfigFile"] = PLUGINS_FILE
        epp["pluginsCustomConfig"] = {PLUGINS_FILE: yaml.safe_dump(custom, sort_keys=False)}
    proxy = proxy_values(model, zone)
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


def proxy_values(model: ServedModel, zone: str) -> Manifest:
    """The chart's ``router.proxy`` values of the zone's router."""
    return {
        "enabled": True,
        "mode": "sidecar",
        "failOpen": True,
        "resources": PROXY_RESOURCES,
        # The Envoy preset names its ConfigMap `envoy` whatever the release, so a
        # second router in the namespace would collide with the first; these
        # override the preset's name and the volume that mounts it
        # (`llm-d-router.proxy` in routerlib/templates/_helpers.tpl merges the
        # top-level proxy keys over the preset's, mergeOverwrite).
        "configMap": {"name": proxy_config_map(model, zone)},
        "volumes": [
            {
                "name": "config",
                "configMap": {
                    "name": proxy_config_map(model, zone),
                    "items": [{"key": "envoy.yaml", "path": "envoy.yaml"}],
                },
            }
        ],
    }


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
    """Resources the release waits for (the router CRDs, `router_crds`, and the zone's
    Deployment): a component's own ``depends_on`` does not reach its children."""


class ModelRouter(pulumi.ComponentResource):
    """The llm-d router of one model in one zone (see the module docstring).

    Outputs:
        pool_name: the InferencePool (``<model>-<zone>``).
        lb_service_name: the zone's load balancer Service (``<model>-<zone>-lb``).
    """

    pool_name: pulumi.Output[str]
    lb_service_name: pulumi.Output[str]

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
            values=router_values(env, model, zone),
            # Under leader election only the leading picker reports ready (the chart's
            # readiness probe asks the `readiness` gRPC service above one replica), so a
            # wait for every replica would never end; the Deployment's state is watched by
            # the router-down alert instead.
            skip_await=True,
            opts=pulumi.ResourceOptions.merge(
                child,
                pulumi.ResourceOptions(
                    depends_on=list(args.after),
                    transforms=[router_pods.restricted_picker_pod(epp_name(model, zone))],
                ),
            ),
        )
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
                    router_lb.PICKER_GRACE_S,
                ),
            },
            spec=router_lb.lb_spec(env, model, epp_pod_labels(model, zone)),
            opts=after_chart,
        )
        k8s.networking.v1.NetworkPolicy(
            f"{name}-epp-network-policy",
            metadata={"name": epp_name(model, zone), "namespace": ns, "labels": labels},
            spec=router_pods.picker_network_policy_spec(
                env,
                picker_labels=epp_pod_labels(model, zone),
                pool_labels=pool_labels(env, model, zone),
                proxy_port=router_lb.PROXY_PORT,
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
