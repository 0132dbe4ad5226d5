"""KWOK nodes shaped like a `cloud: kubernetes` environment's pools, per pool and zone.

Each GPU node carries what the blueprint requires of the nodes of its pool (labels, the GPU
taint, `nvidia.com/gpu` or MIG capacity: `inferplane.blueprint.derived.node_shape`,
the same function `inferplane plan` lists them with), and the
well-known labels a kubelet sets (`kubernetes.io/hostname`, `kubernetes.io/os`, the
topology labels). Two untainted system nodes per zone run everything that selects no pool.
KWOK manages the nodes with the `kwok.x-k8s.io/node: fake` annotation.
"""

from __future__ import annotations

from typing import Any

from inferplane.blueprint import naming
from inferplane.blueprint.derived.node_shape import required_node_shape
from inferplane.blueprint.model import Environment

KWOK_ANNOTATION = {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"}
SYSTEM_NODES_PER_ZONE = 2


def _node(name: str, labels: dict[str, str], taints: list[dict], extra: dict[str, str]) -> dict:
    capacity = {"cpu": "64", "memory": "512Gi", "pods": "110", "ephemeral-storage": "500Gi"}
    capacity.update(extra)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": dict(KWOK_ANNOTATION),
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "type": "kwok",
                **labels,
            },
        },
        "spec": {"taints": taints},
        "status": {
            "capacity": dict(capacity),
            "allocatable": dict(capacity),
            "nodeInfo": {"architecture": "amd64", "operatingSystem": "linux"},
        },
    }


def nodes_for(env: Environment) -> list[dict[str, Any]]:
    out = []
    for shape in required_node_shape(env):
        for i in range(shape.nodes_min):
            name = naming.label_value(f"{shape.pool}-{shape.zone}-{i}")
            taints = [{"key": t.key, "value": t.value, "effect": t.effect} for t in shape.taints]
            gpus = {shape.gpu_resource: str(shape.gpu_units_per_node)}
            out.append(_node(name, dict(shape.labels), taints, gpus))
    for zone in env.node_zones:
        for i in range(SYSTEM_NODES_PER_ZONE):
            labels = {naming.TOPOLOGY_ZONE_LABEL: zone}
            if env.region:
                labels["topology.kubernetes.io/region"] = env.region
            out.append(_node(naming.label_value(f"system-{zone}-{i}"), labels, [], {}))
    return out
