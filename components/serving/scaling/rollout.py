"""A model's `rollout`: an Argo Rollouts canary beside each of its Deployments.

Per Deployment (``<model>``, or ``<model>-<zone>`` of an llm-aware model) the stack adds:

- a ``Rollout`` (``argoproj.io/v1alpha1``) of the same name whose ``workloadRef`` names the
  Deployment, with ``scaleDown: onsuccess``: the controller copies the Deployment's pod
  template into its own ReplicaSets and sets the Deployment to zero once the Rollout is
  Healthy; a later change to the Deployment's template starts a canary (argoproj/argo-rollouts
  v1.10.1 ``pkg/apis/rollouts/v1alpha1/types.go`` ``ObjectRef.ScaleDown``, values
  ``never``, ``onsuccess``, ``progressively``; proven against the pinned controller by
  e2e/rehearse_rollout.py, docs/rollouts.md). The Rollout's pods are
  ``<model>-<template hash>-<suffix>`` like the Deployment's, so every pod-name selector
  of the model's queries still matches them. Its ``spec.replicas`` is KEDA's (the
  ScaledObject targets the Rollout's ``/scale``), so Pulumi ignores later changes to it.
- canary ``steps``: per share, ``setWeight`` and, but after the last, ``pause`` with the
  step's duration (``CanaryStep.SetWeight``, ``RolloutPause.Duration``). Without a traffic
  router the weight is a share of the replicas.
- ``strategy.canary.analysis``: a background analysis from the first step on, from the
  ``AnalysisTemplate`` of the same name, given the new and the stable pod-template hashes
  (``valueFrom.podTemplateHashValue: Latest`` / ``Stable``; ``ArgumentValueFrom``,
  ``ValueFromPodTemplateHash``). A failed analysis aborts the rollout: the stable pods come
  back to full size and the canary's go.
- the ``AnalysisTemplate``: one Prometheus metric per bound of the guard, each the query the
  model's alerts and dashboard use (`promql`), restricted to one pod template by its
  ``rollouts_pod_template_hash`` series label (`promql_scope.TEMPLATE_HASH_LABEL`). A
  measurement fails when the new pods are above the bound unless the stable pods are as
  slow or slower (a breach the whole model shares is the alerts' to report, not the
  canary's): the query returns a sample only then, and ``failureCondition`` is
  ``len(result) > 0``. Argo evaluates an empty vector as an empty ``result``
  (metricproviders/prometheus/prometheus.go ``processResponse``), and without a
  ``successCondition`` a measurement that is not a failure is a success
  (utils/evaluate/evaluate.go ``EvaluateResult``): no traffic on the new pods is no breach.

A model of several zones runs one Deployment per zone (`ServedModel.zoned`,
`inferplane.components.serving.zone_deployments`), and its zones roll out one after the
other: every pod template carries its version (`revision`, `REVISION_POD_LABEL`), and each
later zone's canary first waits on a gate (`zone_gate`, `gate_template_spec`) that opens once
the zone before runs the new version alone. docs/rollouts.md has the whole story and the
rehearsal that ran it (e2e/rehearse_rollout_run.py).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Callable, Mapping
from typing import Any, Final

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint import naming
from inferplane.components.serving.observability import promql
from inferplane.components.serving.observability.promql_scope import (
    REVISION_LABEL,
    REVISION_POD_LABEL,
    TEMPLATE_HASH_LABEL,
    Scope,
)
from inferplane.components.serving.spec import ServedModel, ServingEnvironment

API_VERSION: Final = "argoproj.io/v1alpha1"
INSTANCE_ID_LABEL: Final = "argo-rollouts.argoproj.io/controller-instance-id"
"""``LabelKeyControllerInstanceID`` (pkg/apis/rollouts/v1alpha1/types.go, v1.10.1)."""
SCALE_DOWN: Final = "onsuccess"
CANARY_ARG: Final = "canary-hash"
STABLE_ARG: Final = "stable-hash"
INTERVAL_S: Final = 60
"""At most one measurement a minute (`guard_interval_s`)."""
MIN_INTERVAL_S: Final = 10
FAILURE_LIMIT: Final = 1
"""Measurements of one metric that may fail before the analysis fails: a single
measurement over the bound (one slow batch) does not abort; two do (``Metric.FailureLimit``)."""
GUARD_MEASUREMENTS: Final = 4
"""Measurements that must fit in the canary's pauses: the first, taken as the canary
starts, sees no series of it yet; the next may still miss its first scrapes; then
``FAILURE_LIMIT + 1`` failures abort."""
PROMETHEUS_TIMEOUT_S: Final = 30

GATE_INTERVAL_S: Final = 30
GATE_CONSECUTIVE: Final = 2
"""A zone's gate opens after two measurements in a row, a minute apart at most, see the
zone before it wholly on the new version: one scrape that lost an old pod's last series is
not enough (``Metric.ConsecutiveSuccessLimit``, v1.10.1 ``analysis/analysis.go``
``assessMetricStatus``)."""


def scale_target(rollout: bool, name: str) -> dict[str, str]:
    """What a ScaledObject scales: the Rollout of a model with a rollout, else the
    Deployment (both named `name`)."""
    if rollout:
        return {"apiVersion": API_VERSION, "kind": "Rollout", "name": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "name": name}


def rollout_labels(env: ServingEnvironment, labels: dict[str, str]) -> dict[str, str]:
    """`labels`, and the controller's instance id where an existing controller has one."""
    if env.argo_rollouts_instance_id is None:
        return dict(labels)
    return {**labels, INSTANCE_ID_LABEL: env.argo_rollouts_instance_id}


def revision(template: Mapping[str, Any], zone: str | None = None) -> str:
    """The version a pod template runs, the same in every zone: the first 10 hex digits of
    the SHA-256 of its canonical JSON, with `zone`'s name replaced wherever it appears (the
    zone label, node selectors and affinity of one zone's Deployment). A field set to None
    counts as absent and a whole float as its integer, as the template reads once applied."""

    def scrub(value: Any) -> Any:
        if isinstance(value, str):
            return value.replace(zone, "<zone>") if zone else value
        if isinstance(value, Mapping):
            return {scrub(str(k)): scrub(v) for k, v in value.items() if v is not None}
        if isinstance(value, list | tuple):
            return [scrub(v) for v in value]
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, bool | int | float) or value is None:
            return value
        raise TypeError(f"a pod template holds {type(value).__name__}, not plain data")

    text = json.dumps(scrub(template), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def with_revision(spec: dict[str, Any], version: pulumi.Input[str]) -> dict[str, Any]:
    """A Deployment's `spec` whose pod template carries `REVISION_POD_LABEL`."""
    template = dict(spec["template"])
    metadata = dict(template.get("metadata") or {})
    metadata["labels"] = {**(metadata.get("labels") or {}), REVISION_POD_LABEL: version}
    return {**spec, "template": {**template, "metadata": metadata}}


def zone_order(model: ServedModel) -> tuple[str, ...]:
    """The order a zoned model's rollout takes its zones in: the pool's. Each zone holds an
    even share of the replicas (validation requires the split), so no zone carries less
    load than another for the first canary; the first zone the blueprint names goes first."""
    return model.pool.zones


def zone_wait_s(model: ServedModel, position: int) -> int:
    """The longest the zone at `position` (0: the first) waits for the zones before it:
    each takes its pauses and, per step, a new pod's start (`startup_timeout_s`), doubled."""
    if model.rollout is None or position == 0:
        return 0
    steps = len(model.rollout.steps)
    one_zone = (steps - 1) * model.rollout.step_s + steps * model.startup_timeout_s
    return 2 * position * one_zone


def gate_name(deployment_name: str) -> str:
    return f"{deployment_name}-after-zone"


def gate_query(namespace: str, previous: str, version: str) -> str:
    """A sample while the Deployment `previous` runs `version` alone: one of its pods or
    more on it answer scrapes, and none of them runs another version. "Another version"
    is any other value of the version label, or none: a pod of a Rollout made before the
    label existed is an old version too. Only the model's own scrape targets count (those
    that carry the Rollout's template hash, `TEMPLATE_HASH_LABEL`, which the model's
    ServiceMonitor alone copies), so another scrape of the same pods cannot hold the gate."""
    pods = (
        f'namespace="{namespace}", pod=~"{previous}-[a-z0-9]+-[a-z0-9]+", {TEMPLATE_HASH_LABEL}!=""'
    )
    on = f'up{{{pods}, {REVISION_LABEL}="{version}"}} == 1'
    other = f'up{{{pods}, {REVISION_LABEL}!="{version}"}}'
    return f"count({on}) unless on() count({other})"


def gate_template_spec(
    env: ServingEnvironment,
    model: ServedModel,
    namespace: str,
    previous: str,
    version: str,
    position: int,
) -> dict[str, Any]:
    """The AnalysisTemplate a zone's canary waits on before its first step: the zone
    before it (its Deployment `previous`) wholly on `version`. A measurement succeeds when
    the query returns a sample (``successCondition``, no ``failureCondition``: an empty
    result fails it); ``failureLimit: -1`` lets it fail as often as it must while the zone
    before rolls out; `GATE_CONSECUTIVE` successes in a row pass the gate; after
    `zone_wait_s` worth of measurements without them the analysis fails and this zone's
    rollout aborts untouched (``assessMetricStatus``: the count reached, the successes
    not, and no failure limit in effect, is Failed)."""
    count = max(GATE_CONSECUTIVE, math.ceil(zone_wait_s(model, position) / GATE_INTERVAL_S))
    return {
        "metrics": [
            {
                "name": "zone-before",
                "interval": f"{GATE_INTERVAL_S}s",
                "count": count,
                "failureLimit": -1,
                "consecutiveSuccessLimit": GATE_CONSECUTIVE,
                # Prometheus away for a minute (a restart) must not abort the zone: the
                # default of 4 errors in a row (``DefaultConsecutiveErrorLimit``,
                # utils/defaults/defaults.go) would.
                "consecutiveErrorLimit": count,
                "successCondition": "len(result) > 0",
                "provider": {
                    "prometheus": {
                        "address": env.prometheus_url,
                        "query": gate_query(namespace, previous, version),
                        "timeout": PROMETHEUS_TIMEOUT_S,
                    }
                },
            }
        ]
    }


def rollout_spec(
    model: ServedModel, deployment_name: str, gate: str | None = None
) -> dict[str, Any]:
    """The Rollout's ``spec`` for the Deployment `deployment_name` of `model` (one zone's
    `model` for a zoned one: its replica range is the zone's). `gate`: the AnalysisTemplate
    the canary waits on before its first step (a later zone's, `gate_template_spec`); the
    guard's background analysis then starts with the first share."""
    if model.rollout is None:
        raise ValueError(f"model {model.name!r} has no rollout")
    steps: list[dict[str, Any]] = []
    if gate is not None:
        steps.append({"analysis": {"templates": [{"templateName": gate}]}})
    last = len(model.rollout.steps) - 1
    for i, share in enumerate(model.rollout.steps):
        steps.append({"setWeight": share})
        if i < last:
            steps.append({"pause": {"duration": f"{model.rollout.step_s}s"}})
    return {
        "replicas": model.replicas.min,
        "workloadRef": {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": deployment_name,
            "scaleDown": SCALE_DOWN,
        },
        "strategy": {
            "canary": {
                "steps": steps,
                "analysis": {
                    **({"startingStep": 1} if gate is not None else {}),
                    "templates": [{"templateName": deployment_name}],
                    "args": [
                        {
                            "name": CANARY_ARG,
                            "valueFrom": {"podTemplateHashValue": "Latest"},
                        },
                        {
                            "name": STABLE_ARG,
                            "valueFrom": {"podTemplateHashValue": "Stable"},
                        },
                    ],
                },
            }
        },
    }


def guard_queries(scope: Scope, model: ServedModel) -> list[tuple[str, str]]:
    """(metric name, PromQL) per bound of the guard: a sample only while the new pods
    breach it and the stable pods do not (module docstring)."""
    if model.rollout is None:
        return []
    guard = model.rollout.guard
    canary = dataclasses.replace(scope, template_hash=f"{{{{args.{CANARY_ARG}}}}}")
    stable = dataclasses.replace(scope, template_hash=f"{{{{args.{STABLE_ARG}}}}}")
    measures: list[tuple[str, Callable[[Scope], str], float]] = []
    if guard.p95_ms is not None:
        measures.append(("p95-ms", _p95_ms, guard.p95_ms))
    if guard.ttft_p95_ms is not None:
        measures.append(("ttft-p95-ms", promql.ttft_p95_ms, guard.ttft_p95_ms))
    if guard.itl_p95_ms is not None:
        measures.append(("itl-p95-ms", promql.itl_p95_ms, guard.itl_p95_ms))
    if guard.error_ratio is not None:
        measures.append(("error-ratio", promql.error_ratio, guard.error_ratio))
    out = []
    for name, query, bound in measures:
        new, old = query(canary), query(stable)
        out.append((name, f"({new}) > {promql.threshold(bound)} unless ({new}) <= ({old})"))
    return out


def _p95_ms(scope: Scope) -> str:
    return promql.latency_quantile_ms(scope, 0.95)


def guard_interval_s(model: ServedModel) -> int:
    """Seconds between two measurements of the guard: `GUARD_MEASUREMENTS` of them fit in
    the canary's pauses (``(len(steps) - 1) * step_s``), at most one a minute, at least
    one per `MIN_INTERVAL_S`. The controller cancels the background analysis once the
    last step is reached (v1.10.1 rollout/analysis.go ``reconcileAnalysisRuns``:
    ``IsFullyPromoted``), so a guard that cannot fail twice within the pauses lets a bad
    version through: with one measurement a minute, the one pause of ``steps: [50, 100]``
    ends before the second failure when ``step_s`` is under about 150 s."""
    if model.rollout is None:
        raise ValueError(f"model {model.name!r} has no rollout")
    pauses = (len(model.rollout.steps) - 1) * model.rollout.step_s
    return max(MIN_INTERVAL_S, min(INTERVAL_S, pauses // GUARD_MEASUREMENTS))


def analysis_template_spec(
    env: ServingEnvironment,
    model: ServedModel,
    namespace: str,
    deployment_name: str,
    zone: str | None = None,
) -> dict[str, Any]:
    """The AnalysisTemplate's ``spec``: the two hash arguments and one metric per bound."""
    scope = Scope.of(env, model, namespace, deployment_name, zone)
    return {
        "args": [{"name": CANARY_ARG}, {"name": STABLE_ARG}],
        "metrics": [
            {
                "name": name,
                "interval": f"{guard_interval_s(model)}s",
                "failureLimit": FAILURE_LIMIT,
                "failureCondition": "len(result) > 0",
                "provider": {
                    "prometheus": {
                        "address": env.prometheus_url,
                        "query": query,
                        "timeout": PROMETHEUS_TIMEOUT_S,
                    }
                },
            }
            for name, query in guard_queries(scope, model)
        ],
    }


def zone_gate(
    name: str,
    env: ServingEnvironment,
    model: ServedModel,
    namespace: str,
    deployment_name: str,
    previous: str,
    version: pulumi.Input[str],
    position: int,
    labels: dict[str, str],
    opts: pulumi.ResourceOptions,
) -> k8s.apiextensions.CustomResource:
    """The AnalysisTemplate of the zone at `position` of a zoned model's rollout
    (`gate_template_spec`), named after that zone's Deployment. The Deployment must
    wait for it: the controller copies the template into the analysis when the new pod
    template reaches it, so the gate must name the new version by then."""
    return k8s.apiextensions.CustomResource(
        f"{name}-gate",
        api_version=API_VERSION,
        kind="AnalysisTemplate",
        metadata={
            "name": gate_name(deployment_name),
            "namespace": namespace,
            "labels": labels,
            "annotations": {naming.AFTER_ANNOTATION: previous},
        },
        spec=pulumi.Output.from_input(version).apply(
            lambda v: gate_template_spec(env, model, namespace, previous, v, position)
        ),
        opts=opts,
    )


def model_rollout(
    name: str,
    env: ServingEnvironment,
    model: ServedModel,
    namespace: str,
    deployment_name: str,
    labels: dict[str, str],
    opts: pulumi.ResourceOptions,
    zone: str | None = None,
    gate: str | None = None,
) -> k8s.apiextensions.CustomResource:
    """The AnalysisTemplate and the Rollout of one Deployment (`opts`: its parent, provider
    and what they wait for: the Deployment). `gate`: the name of the zone gate its canary
    waits on first (`zone_gate`). Returns the Rollout."""
    template = k8s.apiextensions.CustomResource(
        f"{name}-analysis",
        api_version=API_VERSION,
        kind="AnalysisTemplate",
        metadata={"name": deployment_name, "namespace": namespace, "labels": labels},
        spec=analysis_template_spec(env, model, namespace, deployment_name, zone),
        opts=opts,
    )
    return k8s.apiextensions.CustomResource(
        f"{name}-rollout",
        api_version=API_VERSION,
        kind="Rollout",
        metadata={
            "name": deployment_name,
            "namespace": namespace,
            "labels": rollout_labels(env, labels),
        },
        spec=rollout_spec(model, deployment_name, gate),
        # KEDA owns the replicas once the Rollout exists, as it owns the Deployment's.
        opts=pulumi.ResourceOptions.merge(
            opts, pulumi.ResourceOptions(ignore_changes=["spec.replicas"], depends_on=[template])
        ),
    )
