"""How a model at zero replicas comes back: its own HTTP traffic, or a schedule.

A model at zero has no pod, hence no series: the Prometheus triggers of its ScaledObject read
nothing and never activate it. Two ways back, both triggers of the model's one ScaledObject:

**A schedule** (``replicas.wake``): a KEDA ``cron`` trigger, metadata ``timezone``, ``start``,
``end`` and ``desiredReplicas`` (https://keda.sh/docs/2.20/scalers/cron/). The HPA takes the
largest demand of all triggers, so the window's one replica is a floor the load signals
build on; after ``end`` and ``cooldownPeriod`` the model returns to zero.

**Windows** (``replicas.schedule``): one ``cron`` trigger per window, named
``schedule-<n>``, whose ``desiredReplicas`` is the window's floor (its ``min`` per zone times
the pool's zones). Unlike the wake window it exists whatever ``replicas.min`` is: it raises
the floor during the window, and ``minReplicaCount`` is the floor outside every window.

**Its own HTTP traffic** (a model that serves only HTTP, at ``replicas.min: 0``): the KEDA HTTP
add-on (https://keda.sh/http-add-on/0.15/). Its interceptor holds requests while the first
replica starts and counts them for the add-on's scaler. Three objects:

- ``HTTPScaledObject`` ``<model>`` (``http.keda.sh/v1alpha1``) names the hosts it routes and
  the model's ClusterIP Service. It carries ``httpscaledobject.keda.sh/skip-scaledobject-
  creation: "true"``: without it the add-on's operator creates a ScaledObject of its own for
  the same Deployment, and two ScaledObjects must not drive one workload. The add-on's
  supported way to combine it with other scalers is that annotation plus an
  ``external-push`` trigger in the model's own ScaledObject, with metadata
  ``httpScaledObject: <name>`` and ``scalerAddress`` (keda-docs
  ``content/http-add-on/0.15/reference/httpscaledobject.md`` § Annotations; kedacore/http-add-on
  ``operator/controllers/http/app.go`` and its test
  ``tests/checks/scaling_phase_deployment_with_skip_so_creation_httpso``).
- The model's load balancer ``<blueprint>-<env>-<model>-lb`` lives in the add-on's namespace
  and selects the interceptor's pods. Traffic must reach the interceptor, not the model,
  or it cannot wake a model at zero (keda-docs ``user-guide/configure-ingress.md``: "external
  requests must be routed to the interceptor proxy service ... instead of directly to your
  application"). A Service selects pods of its own namespace only, and a LoadBalancer
  Service cannot be an ``ExternalName`` (the cloud controllers register pod or node
  targets, not a DNS name), so the LB Service moves to the interceptor's namespace instead
  of pointing at it from the model's. It keeps the model's annotations and client ranges.
- The interceptor routes by the ``Host`` header (port stripped: http-add-on
  ``pkg/routing/key.go`` ``NewKeyFromRequest``/``StripPort``): the HTTPScaledObject lists the
  load balancer's address once the cloud assigns it, and the LB Service's in-cluster names.
  A client that reaches the address through a DNS alias of its own sends that alias as Host:
  the model lists such names in ``replicas.wake.hosts`` (`ServedModel.wake_hosts`), which
  come first in the route.

HTTPScaledObject (``v1alpha1``) is what this project generates and validates against the
0.15.0 CRD. The add-on has begun to deprecate it in favour of ``InterceptorRoute``
(``v1beta1``, a route only, beside a ScaledObject of one's own): kedacore/http-add-on
CHANGELOG, v0.14.0 (#1501, #1595: the operator logs a deprecation warning). The shape used
here (our own ScaledObject with an external-push trigger) is the one that migration keeps.

Only while the model may be at zero: with ``replicas.min >= 1`` the load balancer selects the
model's pods directly, as before, and none of this exists.
"""

from __future__ import annotations

from typing import Any, Final

from inferplane.blueprint import long_requests, naming
from inferplane.blueprint import wake as wake_paths
from inferplane.components.serving.containers import PORTS, Manifest
from inferplane.components.serving.spec import ServedModel, ServingEnvironment

SKIP_SCALED_OBJECT: Final = "httpscaledobject.keda.sh/skip-scaledobject-creation"


def interceptor_selector(env: ServingEnvironment) -> dict[str, str]:
    """The interceptor pods' labels (kedacore/charts ``http-add-on/templates/interceptor/
    deployment.yaml`` and ``_helpers.tpl`` ``keda-http-add-on.matchLabels``: the instance
    label is the Helm release name)."""
    return {
        "app.kubernetes.io/component": "interceptor",
        "app.kubernetes.io/name": "http-add-on",
        "app.kubernetes.io/instance": env.keda_http_release,
    }


INTERCEPTOR_PORT_NAME: Final = "proxy"
CONCURRENCY_TARGET: Final = 100
"""Concurrent requests per replica the add-on's trigger aims at when the model names no
batch limit: the CRD's own default (``scalingMetric.concurrency.targetValue``)."""
CRON_DESIRED_REPLICAS: Final = 1


def cron_trigger(model: ServedModel) -> dict[str, Any] | None:
    """The ``cron`` trigger of `ServedModel.wake`, for a model that may be at zero; None
    otherwise (above zero a one-replica window adds nothing)."""
    if model.wake is None or model.replicas.min > 0:
        return None
    window = wake_paths.cron_window(model.wake.schedule, model.wake.duration_s, model.wake.timezone)
    return {
        "type": "cron",
        "name": "wake-schedule",
        # Explicit: KEDA's admission webhook accepts fallback only with AverageValue triggers
        # (kedacore/keda apis/keda/v1alpha1 CheckFallbackValid); it is the cron default.
        "metricType": "AverageValue",
        "metadata": {
            "timezone": window.timezone,
            "start": window.start,
            "end": window.end,
            "desiredReplicas": str(CRON_DESIRED_REPLICAS),
        },
    }


def schedule_triggers(model: ServedModel) -> list[dict[str, Any]]:
    """One ``cron`` trigger per window of `ServedModel.schedule`, in blueprint order:
    ``desiredReplicas`` is the "Number of replicas to which the resource has to be scaled
    between the start and end of the cron schedule" (https://keda.sh/docs/2.20/scalers/cron/,
    which also defines ``timezone``, ``start`` and ``end``)."""
    found = []
    for i, w in enumerate(model.schedule):
        window = wake_paths.cron_window(w.schedule, w.duration_s, w.timezone)
        found.append(
            {
                "type": "cron",
                "name": f"{wake_paths.SCHEDULE_TRIGGER_PREFIX}{i}",
                "metricType": "AverageValue",  # as for the wake window: fallback needs it
                "metadata": {
                    "timezone": window.timezone,
                    "start": window.start,
                    "end": window.end,
                    "desiredReplicas": str(w.replicas),
                },
            }
        )
    return found


def http_trigger(env: ServingEnvironment, model: ServedModel) -> dict[str, Any] | None:
    """The ``external-push`` trigger that reads the add-on's scaler for this model's
    HTTPScaledObject; None unless the model wakes on its own traffic."""
    if not model.wakes_on_traffic:
        return None
    return {
        "type": "external-push",
        "name": "http-requests",
        "metricType": "AverageValue",
        "metadata": {
            "scalerAddress": naming.keda_http_external_scaler(env.keda_http_namespace),
            "httpScaledObject": model.name,
        },
    }


def concurrency_target(model: ServedModel) -> int:
    """Concurrent requests per replica: vLLM's sequence limit when set (more waits in its
    queue), else the add-on's default."""
    if model.vllm is not None and model.vllm.max_num_seqs:
        return model.vllm.max_num_seqs
    return CONCURRENCY_TARGET


def lb_in_cluster_hosts(env: ServingEnvironment, model: ServedModel) -> list[str]:
    """The load balancer Service's own DNS names, for clients inside the cluster."""
    return naming.wake_lb_hosts(env.part_of, env.environment, model.name, env.keda_http_namespace)


def http_scaled_object_spec(
    model: ServedModel, deployment_name: str, service_name: str, hosts: list[str]
) -> Manifest:
    """The HTTPScaledObject's ``spec`` (CRD camelCase): route `hosts` to the model's ClusterIP
    Service on ``http``; hold a request at most as long as a replica may take to start, and
    wait for its response headers as long as its longest request may take."""
    return {
        "hosts": hosts,
        "scaleTargetRef": {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": deployment_name,
            "service": service_name,
            "port": PORTS["http"],
        },
        "replicas": {"min": model.replicas.min, "max": model.replicas.max},
        "scalingMetric": {"concurrency": {"targetValue": concurrency_target(model)}},
        # The interceptor's 300 s default would answer 504 to a longer request that is not
        # streamed (`long_requests`).
        "timeouts": {
            "conditionWait": f"{model.startup_timeout_s}s",
            "responseHeader": f"{long_requests.response_header_timeout_s(model.max_request_s)}s",
        },
    }


def interceptor_lb_spec(env: ServingEnvironment, base: Manifest) -> Manifest:
    """The model's load balancer spec (`load_balancer.lb_service_spec`) pointed at the
    interceptor: its pods, its ``proxy`` port behind the model's ``http`` port."""
    spec = dict(base)
    spec["selector"] = interceptor_selector(env)
    spec["ports"] = [
        {
            "name": "http",
            "port": PORTS["http"],
            "targetPort": INTERCEPTOR_PORT_NAME,
            "protocol": "TCP",
        }
    ]
    return spec


def interceptor_ingress(env: ServingEnvironment) -> Manifest:
    """NetworkPolicy ingress for the interceptor's pods on the model's ``http`` port. The
    interceptor of chart 0.15.0 (app v0.15.0) dials the model's Service by name,
    ``<service>.<namespace>:<port>`` (kedacore/http-add-on v0.15.0
    ``interceptor/middleware/routing.go``, `resolveUpstreamURL`); the Service address is
    translated to a pod's on the way, not the source, so the model's policy sees the
    interceptor pod as the client and must admit it like any other. (The chart value
    ``interceptor.directPodRouting``, passed as ``KEDA_HTTP_DIRECT_POD_ROUTING``, came
    after the 0.15.0 release, kedacore/charts 0d3e19e, under an unchanged chart version;
    the release commit c4b92e9 has neither, nor does the interceptor v0.15.0 read it.)"""
    return {
        "from": [
            {
                "namespaceSelector": {
                    "matchLabels": {"kubernetes.io/metadata.name": env.keda_http_namespace}
                },
                "podSelector": {"matchLabels": interceptor_selector(env)},
            }
        ],
        "ports": [{"protocol": "TCP", "port": PORTS["http"]}],
    }
