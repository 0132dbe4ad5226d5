"""The llm-d routers of a stack, as the routing rules see them: one `RouterRelease` per
router, with its chart values (``router.*``), whether the program handed the chart's inputs
to the policy engine or only the objects the chart rendered."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from inferplane.blueprint import naming
from inferplane.policies.resources import (
    CONFIG_MAP,
    DEPLOYMENT,
    HELM_KINDS,
    INFERENCE_POOL,
    Resource,
    _dict,
    _list,
)
from inferplane.policies.stack import Stack

ROUTER_CHART = "llm-d-router-standalone"
"""The llm-d router's chart (`inferplane.components.serving.routing.router`), whatever
repository."""


@dataclass(frozen=True)
class RouterRelease:
    """One Helm release of the llm-d router: the pool it creates and the model it serves."""

    release: Resource
    name: str
    """The release, and so the InferencePool's, name."""
    values: Mapping[str, Any]
    """``values.router``."""

    @property
    def pool_labels(self) -> Mapping[str, str]:
        servers = _dict(self.values.get("modelServers"))
        return {str(k): str(v) for k, v in _dict(servers.get("matchLabels")).items()}

    @property
    def model(self) -> str | None:
        return self.pool_labels.get(naming.MODEL_LABEL)

    @property
    def picker_name(self) -> str:
        """The endpoint picker's Deployment: ``<release, 40 characters>-epp``."""
        return f"{self.name[:40]}-epp"


def router_releases(stack: Stack) -> tuple[RouterRelease, ...]:
    """Every llm-d router of the stack: by its chart's name and values, installed as a Helm
    release or rendered by Pulumi; and, where a rendered chart's own inputs are not shown
    (`pulumi preview` gives the policy pack a component's children, not its inputs), by
    the objects it rendered (`rendered_routers`)."""
    found = []
    for r in stack.of_type(*HELM_KINDS):
        chart = str(r.props.get("chart") or "")
        if chart.rstrip("/").rsplit("/", 1)[-1] != ROUTER_CHART:
            continue
        name = str(r.props.get("name") or r.name)
        found.append(RouterRelease(r, name, _dict(_dict(r.props.get("values")).get("router"))))
    named = {router.name for router in found}
    return (*found, *(r for r in rendered_routers(stack) if r.name not in named))


FAILURE_MODE_ALLOW = re.compile(r"failure_mode_allow:\s*(true|false)\b")
"""Envoy's ext_proc setting in the proxy's ``envoy.yaml`` (the chart's preset writes
``failure_mode_allow: {{ include "llm-d-router.proxy.failOpen" . }}``)."""


def rendered_routers(stack: Stack) -> tuple[RouterRelease, ...]:
    """Routers as their chart renders them (llm-d-router v0.10.0 ``config/charts/routerlib/
    templates``): an ``InferencePool`` named after the release, whose
    ``endpointPickerRef`` names the picker's Service and Deployment; the picker's
    ``--config-file`` in the ConfigMap it mounts; the proxy's ``envoy.yaml`` in another.
    Their values are written as the chart's (``router.*``), so the rules read one shape."""
    deployments = {r.k8s_name: r for r in stack.of_type(DEPLOYMENT)}
    config_maps = {r.k8s_name: r for r in stack.of_type(CONFIG_MAP)}
    found = []
    for pool in stack.of_type(INFERENCE_POOL):
        ref = _dict(pool.spec.get("endpointPickerRef"))
        values: dict[str, Any] = {
            "modelServers": {
                "matchLabels": _dict(_dict(pool.spec.get("selector")).get("matchLabels"))
            },
            # The CRD's default (inference.networking.k8s.io_inferencepools.yaml v1.6.0).
            "inferencePool": {"failureMode": ref.get("failureMode", "FailClose")},
        }
        picker = deployments.get(str(ref.get("name") or ""))
        if picker is not None:
            values["epp"] = {"replicas": picker.spec.get("replicas", 1)}
            mounted = [
                config_maps[name]
                for v in _list(picker.pod_spec.get("volumes"))
                if (name := str(_dict(_dict(v).get("configMap")).get("name") or "")) in config_maps
            ]
            for container in picker.containers:
                files = container.flag("--config-file")
                if container.name == "epp" and files:
                    chosen = files[-1].rsplit("/", 1)[-1]
                    texts = {}
                    for c in mounted:
                        data = _dict(c.props.get("data"))
                        if chosen in data:
                            texts[chosen] = str(data[chosen])
                    values["epp"] |= {"pluginsConfigFile": chosen, "pluginsCustomConfig": texts}
            for c in mounted:
                envoy = FAILURE_MODE_ALLOW.search(str(_dict(c.props.get("data")).get("envoy.yaml")))
                if envoy:
                    values["proxy"] = {"failOpen": envoy.group(1) == "true"}
        found.append(RouterRelease(pool, pool.k8s_name, values))
    return tuple(found)
