"""`SpareGpus`: GPUs held free in every zone of a pool, for a surge.

A scale-out that finds no free GPU waits for the node autoscaler to add a node (minutes).
Placeholder pods hold `SpareGpusArgs.spare_gpu_units_per_zone` GPU units in each zone at
a negative priority: a new serving replica preempts one at once and starts on its GPU,
and the evicted placeholder goes Pending, which makes the cluster autoscaler add a node
for it in the background (the overprovisioning pattern, kubernetes/autoscaler
``cluster-autoscaler/FAQ.md``, "How can I configure overprovisioning with Cluster
Autoscaler?").

Children (Pulumi names derive from `name`):

- PriorityClass ``<blueprint>-<env>-<pool>-spare-gpus`` (cluster-wide,
  `naming.spare_gpu_priority_class`): value `PLACEHOLDER_PRIORITY`, ``preemptionPolicy:
  Never`` (a placeholder never evicts anything), ``globalDefault: false``.
- Per zone of the pool, Deployment ``<pool>-spare-gpus-<zone>``: pause pods, each
  requesting `SpareGpusArgs.gpu_units_per_pod` units of the pool's GPU resource, pinned to
  the pool's nodes in that zone.

The pods need no network: they run the pause binary only, and the namespace's default-deny
NetworkPolicy (`inferplane.components.hardening`) selects every pod of the namespace, them
included. Serving pods carry no ``priorityClassName``, so their priority is 0 ("If there is
no PriorityClass with globalDefault set, the priority of Pods with no priorityClassName is
zero", https://kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption/),
above the placeholders'.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Final

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint import defaults, naming
from inferplane.components.serving.containers import (
    Manifest,
    container_security_context,
    gpu_placement,
    pod_security_context,
)
from inferplane.components.serving.spec_parts import ServingPool

PLACEHOLDER_PRIORITY: Final = -10
"""The lowest priority the cluster autoscaler still adds nodes for. Pods below
``--expendable-pods-priority-cutoff`` "are expendable. They can be killed without any
consideration during scale down and they don't cause scale up"; its default is -10
(kubernetes/autoscaler ``cluster-autoscaler/config/flags/flags.go``,
``expendablePodsPriorityCutoff``), and the FAQ's overprovisioning PriorityClass uses -10 as
"the lowest priority that triggers scaling clusters". A lower value would leave an evicted
placeholder Pending forever and the spare GPU never come back; any negative value stays
below serving pods (priority 0)."""
SKIP_AWAIT: Final = {"pulumi.com/skipAwait": "true"}
"""A placeholder may stay Pending for minutes (its node is being added) or for good (the
pool is at nodes.max under load): `pulumi up` must not wait for it to be Available
(pulumi-kubernetes ``provider/pkg/metadata/annotations.go``, ``AnnotationSkipAwait``)."""
PLACEHOLDER_CPU: Final = "10m"
PLACEHOLDER_MEMORY: Final = "16Mi"
"""The pause binary's needs: the GPU is what the pod holds, CPU and memory stay for the
replica that preempts it."""


@dataclass(frozen=True)
class SpareGpusArgs:
    """Inputs of `SpareGpus`."""

    pool: ServingPool
    """The GPU pool: its zones, node selector and GPU resource (``nvidia.com/gpu`` or a MIG
    slice ``nvidia.com/mig-<profile>``)."""
    spare_gpu_units_per_zone: int
    """`ServingPool.gpu_resource` units to hold free in each zone (at least 1)."""
    gpu_units_per_pod: int
    """Units one placeholder holds: the largest replica on the pool, so that one preempted
    placeholder frees room for any replica. Divides `spare_gpu_units_per_zone`."""
    part_of: str
    """The blueprint's name (``app.kubernetes.io/part-of``)."""
    environment: str
    namespace: str
    provider: k8s.Provider


def labels(args: SpareGpusArgs) -> dict[str, str]:
    return {
        "app.kubernetes.io/part-of": args.part_of,
        "app.kubernetes.io/managed-by": "inferplane",
        naming.ENVIRONMENT_LABEL: args.environment,
        naming.POOL_LABEL: args.pool.name,
        naming.ROLE_LABEL: naming.SPARE_GPU_ROLE,
    }


def priority_class_name(args: SpareGpusArgs) -> str:
    return naming.spare_gpu_priority_class(args.part_of, args.environment, args.pool.name)


def priority_class(args: SpareGpusArgs) -> Manifest:
    """The PriorityClass's fields below ``metadata``."""
    return {
        "value": PLACEHOLDER_PRIORITY,
        "globalDefault": False,
        "preemptionPolicy": "Never",
        "description": (
            f"Placeholders holding spare GPUs of pool {args.pool.name}; serving pods preempt them."
        ),
    }


def deployment_name(pool: str, zone: str) -> str:
    return naming.spare_gpus_deployment(pool, zone)


def replicas_per_zone(args: SpareGpusArgs) -> int:
    return args.spare_gpu_units_per_zone // args.gpu_units_per_pod


def zone_placement(pool: ServingPool, zone: str) -> Manifest:
    """Pinned to `pool`'s nodes in `zone`: the serving pods' placement, narrowed to `zone`."""
    return gpu_placement(dataclasses.replace(pool, zones=(zone,)))


def placeholder_pod_spec(args: SpareGpusArgs, zone: str) -> Manifest:
    units = str(args.gpu_units_per_pod)
    resource = args.pool.gpu_resource
    return {
        "priorityClassName": priority_class_name(args),
        # Evicted at once: nothing runs in it, and the replica waits for its GPU.
        "terminationGracePeriodSeconds": 0,
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "securityContext": pod_security_context(),
        **zone_placement(args.pool, zone),
        "containers": [
            {
                "name": "pause",
                "image": defaults.PAUSE_IMAGE,
                "imagePullPolicy": "IfNotPresent",
                "resources": {
                    "requests": {
                        resource: units,
                        "cpu": PLACEHOLDER_CPU,
                        "memory": PLACEHOLDER_MEMORY,
                    },
                    "limits": {resource: units, "memory": PLACEHOLDER_MEMORY},
                },
                "securityContext": container_security_context(),
            }
        ],
    }


def deployment_spec(args: SpareGpusArgs, zone: str) -> Manifest:
    selector = {
        naming.ROLE_LABEL: naming.SPARE_GPU_ROLE,
        naming.POOL_LABEL: args.pool.name,
        naming.ZONE_LABEL: zone,
    }
    return {
        "replicas": replicas_per_zone(args),
        "selector": {"matchLabels": selector},
        # Replaced in place: a surged placeholder would only ask for one more GPU.
        "strategy": {"type": "Recreate"},
        "revisionHistoryLimit": 2,
        "template": {
            "metadata": {"labels": {**labels(args), **selector}},
            "spec": placeholder_pod_spec(args, zone),
        },
    }


class SpareGpus(pulumi.ComponentResource):
    """Spare GPUs of one pool (see the module docstring).

    Outputs:
        priority_class_name: the placeholders' PriorityClass.
        deployment_names: zone -> the zone's placeholder Deployment.
    """

    priority_class_name: pulumi.Output[str]
    deployment_names: dict[str, str]

    def __init__(
        self, name: str, args: SpareGpusArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("inferplane:serving:SpareGpus", name, None, opts)
        if args.spare_gpu_units_per_zone < 1 or args.gpu_units_per_pod < 1:
            raise ValueError(f"pool {args.pool.name!r}: spare GPUs and units per pod must be >= 1")
        if args.spare_gpu_units_per_zone % args.gpu_units_per_pod:
            raise ValueError(
                f"pool {args.pool.name!r}: {args.spare_gpu_units_per_zone} spare GPU units "
                f"are not a whole number of {args.gpu_units_per_pod}-unit placeholders"
            )
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        common = labels(args)
        fields = priority_class(args)
        pc = k8s.scheduling.v1.PriorityClass(
            f"{name}-priority",
            metadata={"name": priority_class_name(args), "labels": common},
            value=fields["value"],
            global_default=fields["globalDefault"],
            preemption_policy=fields["preemptionPolicy"],
            description=fields["description"],
            opts=child,
        )
        after_class = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[pc]))
        self.deployment_names = {}
        for zone in args.pool.zones:
            k8s_name = deployment_name(args.pool.name, zone)
            k8s.apps.v1.Deployment(
                f"{name}-{zone}",
                metadata={
                    "name": k8s_name,
                    "namespace": args.namespace,
                    "labels": {**common, naming.ZONE_LABEL: zone},
                    "annotations": SKIP_AWAIT,
                },
                spec=deployment_spec(args, zone),
                opts=after_class,
            )
            self.deployment_names[zone] = k8s_name
        self.priority_class_name = pc.metadata.apply(lambda _: priority_class_name(args))
        self.register_outputs(
            {
                "priority_class_name": self.priority_class_name,
                "deployment_names": self.deployment_names,
            }
        )
