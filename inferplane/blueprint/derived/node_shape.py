"""What the GPU nodes of an environment must look like: per pool and zone, the labels and
taint the serving pods select and tolerate, the GPU resource they request, and how many
nodes there are.

On aws and gcp `inferplane.components.node_pool.GpuNodePool` creates nodes of this shape.
A `cloud: kubernetes` environment creates none: its nodes exist already, and whoever runs
the cluster labels and taints them as `required_node_shape` says (`inferplane plan` prints
it and writes it to plan.json). An end-to-end harness builds simulated nodes from it, so
it is plain data, importable without Pulumi.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from inferplane.blueprint import naming
from inferplane.blueprint.model import Environment, GpuPool

TOPOLOGY_REGION_LABEL = "topology.kubernetes.io/region"
"""Well-known node label (https://kubernetes.io/docs/reference/labels-annotations-taints/
#topologykubernetesioregion); a kubernetes environment's `region` is its value."""


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str


@dataclass(frozen=True)
class NodeShape:
    """The nodes of one pool in one zone."""

    pool: str
    zone: str
    labels: Mapping[str, str]
    """Every label the nodes carry (and the serving pods select or spread on)."""
    taints: tuple[Taint, ...]
    gpu_resource: str
    """The extended resource the pods request: ``nvidia.com/gpu`` or
    ``nvidia.com/mig-<profile>`` (the GPU Operator's ``mixed`` MIG strategy)."""
    gpus_per_node: int
    """Physical GPUs in each node."""
    gpu_units_per_node: int
    """What each node advertises in `gpu_resource` units (MIG slices, time slices, GPUs)."""
    nodes_min: int
    """Nodes in the zone: on a kubernetes environment the nodes that exist (min == max)."""
    nodes_max: int

    def to_json(self) -> dict[str, Any]:
        return {
            "pool": self.pool,
            "zone": self.zone,
            "labels": dict(self.labels),
            "taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in self.taints],
            "gpu_resource": self.gpu_resource,
            "gpus_per_node": self.gpus_per_node,
            "gpu_units_per_node": self.gpu_units_per_node,
            "nodes_min": self.nodes_min,
            "nodes_max": self.nodes_max,
        }


def gpu_taint() -> Taint:
    """The taint on every GPU node; the serving pods, placeholders and builds tolerate it."""
    return Taint(naming.GPU_TAINT_KEY, naming.GPU_TAINT_VALUE, naming.GPU_TAINT_EFFECT)


def gpu_node_labels(
    *, pool: str, blueprint: str, gpu: str, zone: str, mig_config: str | None, time_slicing: bool
) -> dict[str, str]:
    """The labels of every GPU node of one pool in one zone, on every cloud: the pool and
    blueprint (what pods select), the GPU and zone (what policies read), and the GPU
    Operator's MIG or time-slicing configuration label where the pool shares its GPUs.
    `inferplane.components.node_pool` puts them on the node groups it creates."""
    labels = {
        naming.POOL_LABEL: pool,
        naming.BLUEPRINT_LABEL: blueprint,
        naming.GPU_LABEL: gpu,
        naming.ZONE_LABEL: zone,
    }
    if mig_config:
        labels[naming.MIG_CONFIG_LABEL] = mig_config
    if time_slicing:
        labels[naming.DEVICE_PLUGIN_CONFIG_LABEL] = pool
    return labels


def pool_labels(blueprint: str, pool: GpuPool, zone: str) -> dict[str, str]:
    """`gpu_node_labels` of `pool` in `zone`: what inferplane's own node groups carry, and
    what a kubernetes environment's nodes must carry."""
    return gpu_node_labels(
        pool=pool.name,
        blueprint=blueprint,
        gpu=pool.gpu.id,
        zone=zone,
        mig_config=pool.mig_config,
        time_slicing=pool.sharing == "time_slicing",
    )


def required_node_shape(env: Environment) -> tuple[NodeShape, ...]:
    """Per pool and zone of `env` (pools in blueprint order, zones in pool order), the
    shape of its GPU nodes. The well-known topology labels are included: the cloud sets them
    on aws and gcp, the cluster's owner on a kubernetes environment."""
    out: list[NodeShape] = []
    for pool in env.pools.values():
        for zone in pool.zones:
            labels = pool_labels(env.blueprint, pool, zone)
            labels[naming.TOPOLOGY_ZONE_LABEL] = zone
            labels[TOPOLOGY_REGION_LABEL] = env.region
            out.append(
                NodeShape(
                    pool=pool.name,
                    zone=zone,
                    labels=MappingProxyType(labels),
                    taints=(gpu_taint(),),
                    gpu_resource=pool.gpu_resource,
                    gpus_per_node=pool.gpus_per_node,
                    gpu_units_per_node=pool.gpu_units_per_node,
                    nodes_min=pool.nodes.min,
                    nodes_max=pool.nodes.max,
                )
            )
    return tuple(out)


__all__ = [
    "TOPOLOGY_REGION_LABEL",
    "NodeShape",
    "Taint",
    "gpu_node_labels",
    "gpu_taint",
    "pool_labels",
    "required_node_shape",
]
