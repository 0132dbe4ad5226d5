"""The Envoy proxy in front of one zone's endpoint pickers: its chart values, its own
configuration, and what its pods need beyond the chart.

Layout. The chart's default runs Envoy as a sidecar of each picker pod
(``router.proxy.mode: sidecar``). Under leader election only the leading picker is Ready
(``routerlib/templates/_deployment.yaml``: above one replica the readiness probe asks the
``readiness`` gRPC service), so the zone's load balancer, which selects Ready pods, had one
target, and the pickers' ``Recreate`` strategy (same template) took it away on every
picker change. The chart's other layout, ``mode: service`` (``llm-d-router-standalone``
``values.yaml``: "proxy runs as its own horizontally scalable Deployment and Service,
reaching EPP over the EPP Service"), is used instead: Deployment ``<release>-proxy`` of
`PROXY_REPLICAS` Envoys (``routerlib/templates/_proxy-deployment.yaml``, default rolling
update), which reach the picker through its Service (``llm-d-router.proxy.extProcHost``:
the Service FQDN, a ``STRICT_DNS`` cluster), where only the Ready leader answers. The load
balancer selects the proxies (`proxy_pod_labels`).

Configuration (``<release>-envoy``, ``router.proxy.configMap.data["envoy.yaml"]``, which
``llm-d-router.proxy`` merges over the preset's, mergeOverwrite, and renders through
``tpl``): inferplane's own, `router_envoy.envoy_config`, which strips a client's destination
header and fails open to the model's Service.

Shutdown. Envoy exits on SIGTERM without draining: graceful draining starts only from the
admin endpoint ``/drain_listeners?graceful`` or a hot restart (Envoy
``docs/root/intro/arch_overview/operations/draining.rst``; the chart's ``--drain-time-s``
applies to those), and the admin listener is on loopback in an image with no shell
(``envoy:distroless``), so no hook can call it. The proxy pod instead keeps serving while
it leaves the load balancer: a ``preStop`` ``sleep`` action (no binary needed; Kubernetes
``PodLifecycleSleepAction``, on by default since 1.30) for the endpoint's removal plus the
longest request, and a grace period beyond it (`proxy_grace_s`). A client that keeps a
connection open past that sleep is cut when Envoy exits.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, Final

import pulumi
import yaml

from inferplane.blueprint import system_nodes
from inferplane.components.serving.containers import DRAIN_MARGIN_S, PRESTOP_SLEEP_S, Manifest
from inferplane.components.serving.routing import router_envoy, router_pods
from inferplane.components.serving.spec import ServedModel

PROXY_REPLICAS: Final = system_nodes.PROXY_REPLICAS
"""Envoys per zone (the chart's own ``router.proxy.replicas`` default): one may go while
the other serves. Counted where the system nodes are sized (`system_nodes.nodes_per_zone`)."""
PROXY_CONTAINER: Final = "envoy-proxy"
"""The Envoy preset's container name (``values.yaml``, ``presets.envoy.name``)."""
SKIP_AWAIT: Final = "pulumi.com/skipAwait"
CONFIG_CHECKSUM: Final = "inferplane.dev/config-sha256"
"""The pod annotation holding the router's configuration checksum (`router.config_checksum`):
on the pickers through the chart value ``router.epp.podAnnotations``
(``routerlib/templates/_deployment.yaml``), on the proxies by `complete_proxy`."""


def proxy_name(release: str) -> str:
    """``llm-d-router.proxyName``: the release cut to 40 characters, ``-proxy``."""
    return f"{release[:40]}-proxy"


def proxy_pod_labels(release: str) -> dict[str, str]:
    """``llm-d-router.proxySelectorLabels`` (``routerlib/templates/_helpers.tpl``)."""
    return {"llm-d-router-proxy": proxy_name(release)}


def proxy_grace_s(model: ServedModel) -> int:
    """The proxy pod's ``terminationGracePeriodSeconds``: its ``preStop`` sleep (the
    endpoint's removal and the longest request) and the margin the model's pods get."""
    return prestop_s(model) + DRAIN_MARGIN_S


def prestop_s(model: ServedModel) -> int:
    return PRESTOP_SLEEP_S + model.max_request_s


def proxy_values(model: ServedModel, release: str, namespace: str, config_map: str) -> Manifest:
    """The chart's ``router.proxy`` values: the service layout, failing open, and
    `envoy_config` in the release's own ConfigMap (the preset names it ``envoy`` whatever
    the release, so a second router in the namespace would collide with the first)."""
    text = yaml.safe_dump(router_envoy.envoy_config(model, release, namespace), sort_keys=False)
    return {
        "enabled": True,
        "mode": "service",
        "replicas": PROXY_REPLICAS,
        "failOpen": True,
        "resources": proxy_resources(model),
        "configMap": {"name": config_map, "data": {"envoy.yaml": text}},
        "volumes": [
            {
                "name": "config",
                "configMap": {
                    "name": config_map,
                    "items": [{"key": "envoy.yaml", "path": "envoy.yaml"}],
                },
            }
        ],
    }


PROXY_MEMORY_LIMIT_MIB: Final = 2048
"""The Envoy container's memory limit, or its request where that is larger."""


def proxy_resources(model: ServedModel) -> Manifest:
    """The Envoy container (the chart asks 4 CPUs and 8 GiB): its requests sized from the
    model's traffic by the llm-d router's sizing guide (`system_nodes.routing_sizes`, which
    also counts the system nodes of a created cluster for them), never below 0.5 CPU and
    512 MiB."""
    proxy = model.router_pods[1]
    limit = max(PROXY_MEMORY_LIMIT_MIB, proxy.memory_mib)
    return {
        "requests": proxy.requests(),
        "limits": {"memory": system_nodes.memory_quantity(limit)},
    }


def spread_by_host(labels: dict[str, str]) -> Manifest:
    """Preferred anti-affinity of the pods with `labels` by node: a zone may have a
    single system node (`inferplane.blueprint.system_nodes`), where a required rule would
    leave the second pod pending."""
    return {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 100,
                    "podAffinityTerm": {
                        "labelSelector": {"matchLabels": dict(labels)},
                        "topologyKey": "kubernetes.io/hostname",
                    },
                }
            ]
        }
    }


def complete_proxy(
    deployment: Manifest, model: ServedModel, affinity: Manifest, checksum: str
) -> Manifest:
    """The chart's proxy Deployment as sent: Pod Security (`router_pods.restrict`), the
    zone and the spread (`affinity`), the drain (module docstring) and the configuration's
    checksum on the pod template (the chart renders no annotation there, so a changed
    ``envoy.yaml`` would wait for the next restart)."""
    out = router_pods.restrict(deployment)
    template = out["spec"]["template"]
    template.setdefault("metadata", {}).setdefault("annotations", {})
    template["metadata"]["annotations"][CONFIG_CHECKSUM] = checksum
    pod = template["spec"]
    pod["affinity"] = copy.deepcopy(affinity)
    pod["terminationGracePeriodSeconds"] = proxy_grace_s(model)
    for container in pod.get("containers") or []:
        if container.get("name") == PROXY_CONTAINER:
            container["lifecycle"] = {"preStop": {"sleep": {"seconds": prestop_s(model)}}}
    return out


def router_transform(
    picker: str, proxy: str, complete: Callable[[Manifest], Manifest]
) -> Callable[[pulumi.ResourceTransformArgs], pulumi.ResourceTransformResult | None]:
    """The transform of one zone's chart: the pickers' Deployment restricted, and it and
    their Service not awaited (only the leader is Ready, so an await of every replica
    would never end); the proxies' Deployment completed by `complete` and awaited, so the
    next zone's router waits for this zone's proxies to be rolled."""

    def transform(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
        props: dict[str, Any] = dict(args.props)
        name = (props.get("metadata") or {}).get("name")
        if args.type_ == router_pods.DEPLOYMENT_TYPE and name == proxy:
            return pulumi.ResourceTransformResult(props=complete(props), opts=args.opts)
        if args.type_ == router_pods.DEPLOYMENT_TYPE and name == picker:
            props = router_pods.restrict(props)
        elif not (args.type_ == SERVICE_TYPE and name == picker):
            return None
        props["metadata"] = {
            **props["metadata"],
            "annotations": {**(props["metadata"].get("annotations") or {}), SKIP_AWAIT: "true"},
        }
        return pulumi.ResourceTransformResult(props=props, opts=args.opts)

    return transform


SERVICE_TYPE: Final = "kubernetes:core/v1:Service"
