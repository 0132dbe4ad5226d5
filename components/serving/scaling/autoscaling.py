"""KEDA autoscaling of one model's Deployment on the model's signals (`ServedModel.autoscaling`).

One ScaledObject (``keda.sh/v1alpha1``) with one Prometheus trigger per signal, and for a
model that may be at zero its ways back (`wake`: a cron trigger, the HTTP add-on's
``external-push`` trigger). What it guarantees:

- ``minReplicaCount``/``maxReplicaCount`` are always written: KEDA's default minimum is 0,
  i.e. scale to zero, which a GPU model pays for with a cold start of minutes.
- Realtime models never get ``idleReplicaCount``; batch models (and any model whose minimum
  is 0) scale N→0 after ``cooldownPeriod`` once the signal stays at or below
  ``activationThreshold``. The signals come from the server itself, so at zero replicas
  they read nothing: a model at zero comes back through `wake` (its HTTP traffic, or a
  schedule), which `validate` requires of every model at zero.
- The query returns one element (an aggregate over the model's replicas); ``metricType``
  matches the signal: ``AverageValue`` for queue depth (the HPA divides by replicas),
  ``Value`` for latency and percentages.
- Scale-up is immediate; scale-down waits ``scale_down_stabilization_s`` and then removes at
  most one pod per minute, because a GPU replica takes minutes to come back.
- ``ignoreNullValues`` is false while replicas should exist: an empty answer means the
  series are lost (scrape broken, Prometheus down), and scaling a realtime model down to its
  minimum on no data would hide it; KEDA reports the error and, after three polls, holds the
  fallback count. The price: while the first replicas load (minutes, before the server
  exposes any series) the model may briefly run at the fallback count. At a minimum of 0
  an empty answer is normal (no replica, nothing to measure), so it reads as 0.
- ``fallback`` keeps the replicas the model has when Prometheus cannot answer:
  ``behavior: currentReplicasIfHigher`` with ``replicas`` = the minimum holds the current
  count (never below the minimum), so an outage of the signal neither scales a busy model
  down nor scales an idle one up (KEDA >= 2.17; keda-docs 2.20 scaledobject-spec.md
  "fallback.behavior", CRD keda.sh_scaledobjects.yaml). An older KEDA has only the static
  count: half-way between min and max for realtime models, one replica for batch.
  KEDA supports fallback for
  ``Value`` triggers only from 2.18 (kedacore/keda#6655); from 2.14 to 2.17 its admission
  webhook *rejects* a ScaledObject that combines fallback with a ``Value`` trigger, so for an
  older pinned KEDA such a trigger goes without fallback.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint import naming
from inferplane.blueprint.derived import router_wake, timing
from inferplane.blueprint.model import Signal
from inferplane.blueprint.wake import wakes_in_router_queue as _in_router_queue
from inferplane.components.serving.observability import promql
from inferplane.components.serving.observability.promql_scope import Scope
from inferplane.components.serving.scaling import wake
from inferplane.components.serving.scaling.rollout import scale_target
from inferplane.components.serving.spec import ServedModel, ServingEnvironment

FALLBACK_FAILURE_THRESHOLD: Final = 3
"""Failed polls (15 s apart) before KEDA switches to the fallback replica count."""
POLLING_INTERVAL_S: Final = timing.POLLING_INTERVAL_S
SCALE_DOWN_PERIOD_S: Final = 60
"""At most one replica leaves per this many seconds, after the stabilisation window."""
KEDA_VALUE_FALLBACK_SINCE: Final = (2, 18)
KEDA_FALLBACK_BEHAVIOR_SINCE: Final = (2, 17)
FALLBACK_BEHAVIOR: Final = "currentReplicasIfHigher"
"""max(current replicas, ``fallback.replicas``): keep what the model has, never below it."""

WAKE_QUEUE_TARGET: Final = 1.0
"""The router-queue trigger an llm-aware model at zero gets when its signals lack one:
a replica per held request, until the blueprint's own signals take over."""

ACTIVATION_THRESHOLD: Final = {
    "queue_depth": 0.0,  # one waiting request keeps (or makes) the model active
    "concurrency": 0.0,  # one request in the server
    "p95_latency_ms": 0.0,  # any served request
    "ttft_p95_ms": 0.0,
    "gpu_utilization": 5.0,  # an idle GPU still reports a few percent
    "router_queue": 0.0,  # one request held by the router wakes the model
    "router_running": 0.0,
    # An empty pool reads 1.0 (llm-d-router v0.10.0 llm_d_router_metrics.go, help of
    # flow_control_pool_saturation): only oversubscription past it activates.
    "pool_saturation": 1.0,
}


@dataclass(frozen=True)
class ModelAutoscalerArgs:
    """Inputs of `ModelAutoscaler`."""

    model: ServedModel
    """The model to scale: replica range, signal and target, latency class."""
    env: ServingEnvironment
    """The environment: KEDA version, Prometheus address, labels."""
    namespace: str
    """Namespace of the Deployment; the ScaledObject lives beside it."""
    provider: k8s.Provider
    """The cluster's provider; every resource passes it explicitly."""
    deployment_name: str
    """The Deployment to scale (``<model>`` by contract); plain text because the queries
    select the Deployment's pods and kube-state-metrics series by it."""
    service_name: str | None = None
    """A model that wakes on its own traffic: the ClusterIP Service (port ``http``) the
    HTTP add-on's interceptor routes to. Default: `deployment_name` (``<model>``)."""
    wake_hosts: pulumi.Input[Sequence[str]] | None = None
    """A model that wakes on its own traffic: ``Host`` values the interceptor routes to it
    besides the model's own `ServedModel.wake_hosts` and `wake.lb_in_cluster_hosts` (the
    load balancer's address). Default: those two only."""
    object_name: str | None = None
    """The ScaledObject's name. Default: the model's (``<model>``); one zone's Deployment of
    an llm-aware model is scaled by a ScaledObject named after that Deployment."""
    zone: str | None = None
    """One zone of an llm-aware model (`model` is then `router.zone_model`'s): the router
    signals read that zone's endpoint picker and the server's series its pods only.
    Default: the whole model."""


def keda_version(env: ServingEnvironment) -> tuple[int, int]:
    """``"2.20.2"`` or ``"v2.17.0"`` -> (2, 20)."""
    major, minor, *_ = env.keda_version.lstrip("v").split(".")
    return int(major), int(minor)


def fallback_replicas(model: ServedModel) -> int:
    """Replicas to hold while the signal is unknown, for a KEDA without ``fallback.behavior``.

    Realtime: half-way between min and max, because without a signal the load may be
    anything and a missing replica costs users latency. Batch: one replica keeps work
    moving at the lowest cost. Never below the minimum.
    """
    low, high = model.replicas.min, model.replicas.max
    wanted = math.ceil((low + high) / 2) if model.realtime else 1
    return min(high, max(low, wanted))


def prometheus_trigger(
    env: ServingEnvironment, model: ServedModel, scope: Scope, signal: Signal
) -> dict[str, Any]:
    """One Prometheus trigger per autoscaling signal."""
    scales_to_zero = model.replicas.min == 0
    metadata: dict[str, str] = {
        "serverAddress": env.prometheus_url,
        "query": promql.autoscaling_query(scope, signal.metric),
        "threshold": promql.threshold(signal.target),
        # With replicas that should exist, an empty answer means Prometheus lost them:
        # report it so the fallback engages instead of scaling down to the minimum. At
        # zero replicas there is legitimately nothing to measure.
        "ignoreNullValues": "true" if scales_to_zero else "false",
    }
    if scales_to_zero:
        metadata["activationThreshold"] = promql.threshold(ACTIVATION_THRESHOLD[signal.metric])
    return {
        "type": "prometheus",
        "name": signal.metric.replace("_", "-"),
        "metricType": promql.AUTOSCALING_METRIC_TYPE[signal.metric],
        "metadata": metadata,
    }


def triggers(
    env: ServingEnvironment,
    model: ServedModel,
    namespace: str,
    deployment_name: str,
    zone: str | None = None,
) -> list[dict[str, Any]]:
    """Every trigger of the model's ScaledObject: one per signal, one per window of its
    schedule, then its ways back from zero (`wake`). KEDA gives the HPA one metric per
    trigger, and the HPA follows the largest demand: autoscaling/v2
    ``HorizontalPodAutoscalerSpec.metrics`` "contains the specifications for which to use
    to calculate the desired replica count (the maximum replica count across all metrics
    will be used)" (Kubernetes API reference); keda-docs 2.20 ``scalers/cron.md`` says the
    same of a cron trigger beside others."""
    scope = Scope.of(env, model, namespace, deployment_name, zone)
    signals = list(model.autoscaling.signals)
    if (
        model.replicas.min == 0
        and model.routing.llm_aware
        and model.routing.flow_control
        and "router_queue" not in model.autoscaling.metrics
    ):
        # At zero the router's queue holds the requests (`wake.wakes_in_router_queue`): one
        # held request must wake the zone, whatever signals the blueprint chose.
        signals.append(Signal("router_queue", WAKE_QUEUE_TARGET))
    found = [prometheus_trigger(env, model, scope, s) for s in signals]
    found += wake.schedule_triggers(model)
    found += [t for t in (wake.cron_trigger(model), wake.http_trigger(env, model)) if t is not None]
    return found


def wakes_in_router_queue(model: ServedModel) -> bool:
    routing = model.routing
    return _in_router_queue(
        model.replicas.min, llm_aware=routing.llm_aware, flow_control=routing.flow_control
    )


def fallback(env: ServingEnvironment, model: ServedModel) -> dict[str, Any]:
    """The ScaledObject's ``fallback``: keep the current replicas, at least the minimum."""
    if keda_version(env) >= KEDA_FALLBACK_BEHAVIOR_SINCE:
        return {
            "failureThreshold": FALLBACK_FAILURE_THRESHOLD,
            "replicas": model.replicas.min,
            "behavior": FALLBACK_BEHAVIOR,
        }
    return {"failureThreshold": FALLBACK_FAILURE_THRESHOLD, "replicas": fallback_replicas(model)}


def scaled_object_spec(
    env: ServingEnvironment,
    model: ServedModel,
    namespace: str,
    deployment_name: str,
    zone: str | None = None,
) -> dict[str, Any]:
    """The ScaledObject's ``spec``, in the CRD's own camelCase (CustomResource passes keys
    through unchanged)."""
    scope = Scope.of(env, model, namespace, deployment_name, zone)
    scales_to_zero = model.replicas.min == 0
    found = triggers(env, model, namespace, deployment_name, zone)

    spec: dict[str, Any] = {
        "scaleTargetRef": scale_target(model.rollout is not None, deployment_name),
        "pollingInterval": POLLING_INTERVAL_S,
        "minReplicaCount": model.replicas.min,
        "maxReplicaCount": model.replicas.max,
        "advanced": {
            "horizontalPodAutoscalerConfig": {
                "name": scope.hpa,
                "behavior": {
                    "scaleUp": {
                        "stabilizationWindowSeconds": 0,
                        "selectPolicy": "Max",
                        "policies": [
                            {"type": "Percent", "value": 100, "periodSeconds": 15},
                            {"type": "Pods", "value": 4, "periodSeconds": 15},
                        ],
                    },
                    "scaleDown": {
                        "stabilizationWindowSeconds": model.autoscaling.scale_down_stabilization_s,
                        "policies": [
                            {"type": "Pods", "value": 1, "periodSeconds": SCALE_DOWN_PERIOD_S}
                        ],
                    },
                },
            },
        },
        "triggers": found,
    }
    if scales_to_zero:
        # Only the last replica's removal waits on cooldownPeriod; keep it as patient as
        # the HPA's own scale-down, and a zone woken through its router's queue until the
        # woken replica has started and served the request (`router_wake.cooldown_s`).
        stabilization = model.autoscaling.scale_down_stabilization_s
        spec["cooldownPeriod"] = (
            router_wake.cooldown_s(model.wake_bound_s, model.max_request_s, stabilization)
            if wakes_in_router_queue(model)
            else stabilization
        )
    all_average = all(t["metricType"] == "AverageValue" for t in found)
    if all_average or keda_version(env) >= KEDA_VALUE_FALLBACK_SINCE:
        spec["fallback"] = fallback(env, model)
    return spec


class ModelAutoscaler(pulumi.ComponentResource):
    """KEDA ScaledObject ``<model>`` that scales the model's Deployment.

    Outputs:
        scaled_object_name: the ScaledObject's name (``<model>``).
        hpa_name: the HPA KEDA manages for it (``keda-hpa-<model>``).
    """

    scaled_object_name: pulumi.Output[str]
    hpa_name: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        args: ModelAutoscalerArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("inferplane:serving:ModelAutoscaler", name, None, opts)
        env, model = args.env, args.model
        labels = {
            **naming.model_labels(env.part_of, env.environment, model.name),
            naming.LATENCY_CLASS_LABEL: model.latency_class,
        }
        outer = _depends_on(opts)
        depends_on = list(outer)
        if model.wakes_on_traffic:
            # Before the ScaledObject: KEDA asks the add-on's scaler for the metric of the
            # named route when it reconciles the external-push trigger, and an unknown route
            # leaves the HPA on a default CPU metric (keda-docs http-add-on 0.15
            # user-guide/autoscale-an-app.md: create the ScaledObject after the route).
            depends_on.append(self._http_scaled_object(name, args, labels, outer))
        object_name = args.object_name or model.name
        scope = Scope.of(env, model, args.namespace, args.deployment_name, args.zone)
        scaled_object = k8s.apiextensions.CustomResource(
            f"{name}-scaledobject",
            api_version="keda.sh/v1alpha1",
            kind="ScaledObject",
            metadata={"name": object_name, "namespace": args.namespace, "labels": labels},
            spec=scaled_object_spec(env, model, args.namespace, args.deployment_name, args.zone),
            # Pulumi does not make a component's children wait for the component's own
            # dependencies (the KEDA release that installs the CRD, the Deployment): pass them on.
            opts=pulumi.ResourceOptions(
                parent=self, provider=args.provider, depends_on=depends_on or None
            ),
        )
        # Derived from the resource's id so that readers wait until it exists.
        self.scaled_object_name = scaled_object.id.apply(lambda _: object_name)
        self.hpa_name = scaled_object.id.apply(lambda _: scope.hpa)
        self.register_outputs(
            {"scaled_object_name": self.scaled_object_name, "hpa_name": self.hpa_name}
        )

    def _http_scaled_object(
        self,
        name: str,
        args: ModelAutoscalerArgs,
        labels: dict[str, str],
        depends_on: list[pulumi.Resource],
    ) -> k8s.apiextensions.CustomResource:
        """The HTTP add-on's route to the model (`wake`): hosts -> its ClusterIP Service."""
        env, model = args.env, args.model
        in_cluster = wake.lb_in_cluster_hosts(env, model)
        hosts = pulumi.Output.from_input(args.wake_hosts or []).apply(
            lambda extra: list(dict.fromkeys([*model.wake_hosts, *extra, *in_cluster]))
        )
        service = args.service_name or args.deployment_name
        return k8s.apiextensions.CustomResource(
            f"{name}-httpscaledobject",
            api_version="http.keda.sh/v1alpha1",
            kind="HTTPScaledObject",
            metadata={
                "name": model.name,
                "namespace": args.namespace,
                "labels": labels,
                "annotations": {wake.SKIP_SCALED_OBJECT: "true"},
            },
            spec=hosts.apply(
                lambda h: wake.http_scaled_object_spec(model, args.deployment_name, service, h)
            ),
            opts=pulumi.ResourceOptions(
                parent=self, provider=args.provider, depends_on=depends_on or None
            ),
        )


def _depends_on(opts: pulumi.ResourceOptions | None) -> list[pulumi.Resource]:
    """The component's own dependencies (the KEDA releases that install the CRDs, the
    Deployment): Pulumi does not make a component's children wait for them."""
    found = opts.depends_on if opts else None
    if found is None:
        return []
    if isinstance(found, pulumi.Resource):
        return [found]
    return [r for r in found if isinstance(r, pulumi.Resource)]  # type: ignore[union-attr]
