"""One zone's entry point to an llm-aware model: the load balancer Service to its router's
proxy, and the ServiceMonitor of its endpoint pickers (`router` creates both).

Load balancer ``<release>-lb``: the model's own load balancer settings
(`load_balancer.lb_service_spec`, `load_balancer.lb_annotations`), to the proxy's listener,
with what differs because its targets are one zone's proxy pods (``<release>-proxy``,
`router_proxy`):

- AWS: the NLB lives in its zone's subnet only (``aws-load-balancer-subnets``, "subnet IDs
  or Name tags, one per AZ", AWS Load Balancer Controller ``docs/guide/service/
  annotations.md``). Every zone's subnets would give it an address in each zone whose
  targets are all in one: cross-zone load balancing is off, so the other zones' addresses
  would have no healthy target. `zone_subnets` picks it from ``lb_subnet_ids``, which
  lists the environment's zones' subnets in their order.
- GKE: no subnet to narrow. A VPC subnet is regional (https://cloud.google.com/vpc/docs/
  subnets, "Subnets are regional resources"), and with ``externalTrafficPolicy: Local``
  the internal load balancer sends only to nodes that hold a selected pod, i.e. the
  zone's pickers.
- Targets drain for as long as a proxy pod does (`router_proxy.proxy_grace_s`, the
  deregistration delay), not for the model's grace period.

ServiceMonitor ``<release>-epp``: the picker Service's metrics port (``http-metrics``,
``routerlib/templates/_service.yaml``), scraped as often as the model's own
(`timing.SCRAPE_INTERVAL_S`): the router's queue drives the model's scale-out, and a
slower scrape would add to every scale-out's delay.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import pulumi

from inferplane.blueprint.derived import timing
from inferplane.components.serving.containers import PORTS, Manifest
from inferplane.components.serving.routing import router_pods
from inferplane.components.serving.routing.load_balancer import lb_service_spec
from inferplane.components.serving.spec import ServedModel, ServingEnvironment

PROXY_PORT: Final = router_pods.PROXY_PORT
METRICS_PORT_NAME: Final = "http-metrics"
"""The picker Service's metrics port (9090), ``routerlib/templates/_service.yaml``."""
SCRAPE_INTERVAL: Final = f"{timing.SCRAPE_INTERVAL_S}s"


def zone_subnets(
    env: ServingEnvironment, zone: str, lb_subnet_ids: pulumi.Input[Sequence[str]] | None
) -> pulumi.Input[Sequence[str]] | None:
    """`zone`'s own subnet out of `lb_subnet_ids` (the environment's zones' subnets, in
    `ServingEnvironment.zones` order); None when there are none to pick from.
    `ValueError` for a zone that has no load balancer subnet."""
    if lb_subnet_ids is None:
        return None
    if zone not in env.zones:
        raise ValueError(
            f"zone {zone} has no load balancer subnet (the environment's zones are "
            f"{', '.join(env.zones) or 'not known'}); serve llm-aware models in the "
            "environment's zones"
        )
    index = env.zones.index(zone)
    return pulumi.Output.from_input(lb_subnet_ids).apply(lambda ids: [ids[index]])


def lb_spec(env: ServingEnvironment, model: ServedModel, selector: dict[str, str]) -> Manifest:
    """The zone's load balancer spec: the model's (`lb_service_spec`) to the pods of
    `selector` on the proxy's listener."""
    spec = lb_service_spec(env, model)
    spec["selector"] = dict(selector)
    spec["ports"] = [
        {"name": "http", "port": PORTS["http"], "targetPort": PROXY_PORT, "protocol": "TCP"}
    ]
    return spec


def service_monitor_spec(service_name: str) -> Manifest:
    """The pickers' ServiceMonitor spec (the picker Service is ``app.kubernetes.io/name:
    <service_name>``); a timeout above the interval makes the Prometheus Operator reject
    the monitor (prometheus-operator ``pkg/prometheus/promcfg.go``,
    `validateScrapeIntervalAndTimeout`), so it is the interval."""
    return {
        "selector": {"matchLabels": {"app.kubernetes.io/name": service_name}},
        "endpoints": [
            {
                "port": METRICS_PORT_NAME,
                "path": "/metrics",
                "interval": SCRAPE_INTERVAL,
                "scrapeTimeout": SCRAPE_INTERVAL,
            }
        ],
    }
