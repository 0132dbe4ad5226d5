"""The Deployments of a model that runs one per zone (`ServedModel.zoned`): an llm-aware
model (a router and an InferencePool per zone), and a model of several zones with a
rollout, whose zones roll out one after the other (`inferplane.components.serving.scaling.rollout`).
Each zone's Deployment ``<model>-<zone>`` holds the zone's share of the replicas
(`router.zone_model`), with its disruption budget, ScaledObject and, with a rollout, its
Rollout and the gate it waits on."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint import naming
from inferplane.components.serving.routing.router import release_name, zone_model
from inferplane.components.serving.scaling.autoscaling import ModelAutoscaler, ModelAutoscalerArgs
from inferplane.components.serving.scaling.rollout import (
    gate_name,
    model_rollout,
    revision,
    with_revision,
    zone_gate,
    zone_order,
)
from inferplane.components.serving.serving_pod import (
    deployment_spec,
    pdb_spec,
    precision_annotation,
)
from inferplane.components.serving.spec import ServedModel, ServingEnvironment
from inferplane.components.serving.triton.response_cache import with_password_revision


def zone_deployments(
    parent: pulumi.Resource,
    name: str,
    env: ServingEnvironment,
    model: ServedModel,
    ns: str,
    provider: k8s.Provider,
    labels: dict[str, str],
    before_pods: list[pulumi.Resource],
    model_uri: str,
    config_text: str | None,
    timeouts: pulumi.CustomTimeouts,
    cache_revision: pulumi.Output[str] | None = None,
) -> list[k8s.apps.v1.Deployment]:
    """A model that runs one Deployment per zone (`ServedModel.zoned`): per zone a
    Deployment ``<model>-<zone>`` of that zone's replicas, its disruption budget and its
    ScaledObject (`router.zone_model`). `cache_revision`: a Redis response cache's password
    revision, which rolls the pods when the password changes (and is part of the version a
    rollout's zones wait on, so a new password also goes zone by zone)."""
    child = pulumi.ResourceOptions(parent=parent, provider=provider)
    zones = zone_order(model)
    specs = {
        zone: deployment_spec(
            env, zone_model(model, zone), model_uri, bool(model.secrets), config_text, zone=zone
        )
        for zone in zones
    }
    # One version for every zone: the first zone's template without its zone's name.
    first = specs[zones[0]]["template"]
    version: pulumi.Input[str] = (
        revision(first, zones[0])
        if cache_revision is None
        else cache_revision.apply(lambda r: revision({"template": first, "cache": r}, zones[0]))
    )
    out: list[k8s.apps.v1.Deployment] = []
    for position, zone in enumerate(zones):
        zoned = zone_model(model, zone)
        deployment_name = release_name(model, zone)
        zone_labels = {**labels, naming.ZONE_LABEL: zone}
        spec = specs[zone]
        gates: list[pulumi.Resource] = []
        if model.rollout is not None:
            spec = with_revision(spec, version)
        if cache_revision is not None:
            spec = with_password_revision(spec, cache_revision)
        if model.rollout is not None and position > 0:
            # The zone's canary waits for the zone before it (`rollout.zone_gate`).
            gates.append(
                zone_gate(
                    f"{name}-{zone}",
                    env,
                    zoned,
                    ns,
                    deployment_name,
                    release_name(model, zones[position - 1]),
                    version,
                    position,
                    zone_labels,
                    child,
                )
            )
        deployment = k8s.apps.v1.Deployment(
            f"{name}-{zone}",
            metadata={
                "name": deployment_name,
                "namespace": ns,
                "labels": zone_labels,
                "annotations": precision_annotation(model),
            },
            spec=spec,
            opts=pulumi.ResourceOptions.merge(
                child,
                pulumi.ResourceOptions(
                    depends_on=[*before_pods, *gates],
                    ignore_changes=["spec.replicas"],
                    custom_timeouts=timeouts,
                ),
            ),
        )
        k8s.policy.v1.PodDisruptionBudget(
            f"{name}-{zone}",
            metadata={"name": deployment_name, "namespace": ns, "labels": zone_labels},
            spec=pdb_spec(env, zoned, zone),
            opts=child,
        )
        rollouts = (
            [
                model_rollout(
                    f"{name}-{zone}",
                    env,
                    zoned,
                    ns,
                    deployment_name,
                    zone_labels,
                    pulumi.ResourceOptions.merge(
                        child, pulumi.ResourceOptions(depends_on=[deployment])
                    ),
                    zone=zone,
                    gate=gate_name(deployment_name) if gates else None,
                )
            ]
            if model.rollout is not None
            else []
        )
        ModelAutoscaler(
            f"{name}-{zone}-autoscaling",
            ModelAutoscalerArgs(
                zoned,
                env,
                ns,
                provider,
                deployment_name=deployment_name,
                object_name=deployment_name,
                zone=zone,
            ),
            opts=pulumi.ResourceOptions(parent=parent, depends_on=[deployment, *rollouts]),
        )
        out.append(deployment)
    return out
