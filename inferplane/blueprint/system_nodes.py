"""The system nodes of a cluster inferplane creates, and what the blueprint places on them.

System nodes run the add-ons (operators, Prometheus, Grafana) and the Valkey servers of
Redis response caches, never model servers. Their machine types live here, not in the
cluster components, because validation checks what fits on them: the components import
them (`inferplane.components.cluster_eks`, `inferplane.components.cluster_gke`), and the
Valkey memory formula (`valkey_memory_mib`) is the one the response-cache component sets
as the container's request and limit (`inferplane.components.serving.triton.response_cache`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from inferplane.blueprint.model import Environment

EKS_INSTANCE_TYPE: Final = "m6i.xlarge"
"""4 vCPU, 16 GiB (https://aws.amazon.com/ec2/instance-types/m6i/)."""
GKE_MACHINE_TYPE: Final = "e2-standard-4"
"""4 vCPU, 16 GB (https://cloud.google.com/compute/docs/general-purpose-machines#e2_machine_types)."""

NODE_MEMORY_MIB: Final = 16 * 1024
"""Both system machine types have 16 GiB."""
EVICTION_HARD_MIB: Final = 100
"""``evictionHard: memory.available<100Mi`` on both clouds (amazon-eks-ami ``nodeadm``
``internal/kubelet/config.go``; GKE "an eviction threshold of 100 MiB",
https://cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes#memory_and_cpu_reservations)."""
EKS_MAX_PODS: Final = 58
"""m6i.xlarge with the VPC CNI: 4 ENIs x (15 - 1) addresses + 2 (amazon-eks-ami
``templates/shared/runtime/eni-max-pods.txt``)."""
EKS_KUBE_RESERVED_MIB: Final = 11 * EKS_MAX_PODS + 255
"""The EKS AL2023 AMI reserves ``11 * maxPods + 255`` MiB for the kubelet (amazon-eks-ami
``nodeadm/internal/kubelet/config.go`` `getMemoryMebibytesToReserve`): 893 MiB."""
GKE_RESERVED_MIB: Final = int(0.25 * 4096 + 0.20 * 4096 + 0.10 * 8192)
"""GKE reserves 25% of the first 4 GiB, 20% of the next 4 GiB and 10% of the next 8 GiB
(the memory reservation table of "Memory and CPU reservations",
https://cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes#memory_and_cpu_reservations):
2662 MiB of 16 GiB."""

ALLOCATABLE_MIB: Final = {
    "aws": NODE_MEMORY_MIB - EKS_KUBE_RESERVED_MIB - EVICTION_HARD_MIB,
    "gcp": NODE_MEMORY_MIB - GKE_RESERVED_MIB - EVICTION_HARD_MIB,
}
"""At most what pods may request on one system node, by cloud (15391 MiB on EKS, 13622
MiB on GKE). An upper bound: the node's kernel keeps some of the nominal memory, and the
DaemonSets (CNI, kube-proxy, CSI) request some of the rest."""
SYSTEM_DESCRIPTION: Final = {
    "aws": f"{EKS_INSTANCE_TYPE} EKS system node",
    "gcp": f"{GKE_MACHINE_TYPE} GKE system node",
}

CACHE_SHARE_OF_NODE: Final = 0.5
"""The Redis caches of one zone may request at most half of one system node: the add-ons
(Prometheus, Grafana, KEDA, the GPU Operator, CoreDNS) and the DaemonSets need the rest, and
a zone may have a single system node (both clouds run one per zone at least: GKE's system
pool per zone, EKS's system group `cluster_eks.system_nodes_count`)."""

VALKEY_OVERHEAD_FACTOR: Final = 1.5
VALKEY_BASE_MIB: Final = 64
"""The server itself, client buffers and the allocator's metadata (the reasoning is in
`inferplane.components.serving.triton.response_cache`)."""


def valkey_memory_mib(size_mb: int) -> int:
    """The memory request and limit of the Valkey container of a cache of `size_mb`."""
    return int(size_mb * VALKEY_OVERHEAD_FACTOR) + VALKEY_BASE_MIB


NODE_CPU_MILLIS: Final = 4000
"""Both system machine types have 4 vCPUs."""
KUBE_RESERVED_CPU_MILLIS: Final = 60 + 10 + 5 + 5
"""Both clouds reserve 6% of the first core, 1% of the second and 0.5% of the third and
fourth (0.25% of each above): the AL2023 system nodes' nodeadm (amazon-eks-ami
``nodeadm/internal/kubelet/config.go`` `getCPUMillicoresToReserve`, ranges 0/1000/2000/4000m
at 600/100/50/25 per mille, taken from GKE) and GKE's CPU reservation table
(https://cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes#memory_and_cpu_reservations):
80m of 4 vCPUs, so 3920m allocatable."""
ALLOCATABLE_CPU_MILLIS: Final = NODE_CPU_MILLIS - KUBE_RESERVED_CPU_MILLIS
DAEMONSET_RESERVE_CPU_MILLIS: Final = 400
DAEMONSET_RESERVE_MIB: Final = 1024
"""Room kept on each system node for the node DaemonSets (CNI, kube-proxy, CSI node
plugin, node exporter) before the routing pods are packed: a sizing choice, not a
measurement."""


@dataclass(frozen=True)
class SystemPod:
    """A pod on the system nodes, by its requests."""

    name: str
    cpu_millis: int
    memory_mib: int

    def requests(self) -> dict[str, str]:
        """Its container's requests as Kubernetes quantities (``1``, ``500m``, ``2Gi``)."""
        cpu = f"{self.cpu_millis // 1000}" if self.cpu_millis % 1000 == 0 else f"{self.cpu_millis}m"
        memory = (
            f"{self.memory_mib // 1024}Gi"
            if self.memory_mib % 1024 == 0
            else f"{self.memory_mib}Mi"
        )
        return {"cpu": cpu, "memory": memory}


PICKER: Final = SystemPod("endpoint picker", 1000, 2048)
"""One endpoint picker of an llm-aware model's zone (`inferplane.components.serving.routing.router`:
the chart's own 8 CPUs and 8 GiB do not fit a 4-vCPU system node)."""
PROXY: Final = SystemPod("router proxy", 500, 512)
"""One Envoy in front of a zone's pickers (`inferplane.components.serving.routing.router_proxy`)."""
PROXY_REPLICAS: Final = 2
"""Envoys per zone of an llm-aware model (the chart's own ``router.proxy.replicas``)."""


def routing_pods(env: Environment) -> dict[str, list[SystemPod]]:
    """Per zone, the pickers and proxies the llm-aware models of `env` run there: each such
    model routes in every zone of its pool (`inferplane.components.serving.routing.router`)."""
    pods: dict[str, list[SystemPod]] = {}
    for model in env.models.values():
        if not model.routing.llm_aware:
            continue
        for zone in env.pool_of(model).zones:
            pods.setdefault(zone, []).extend(
                [PICKER] * model.routing.pickers + [PROXY] * PROXY_REPLICAS
            )
    return pods


def nodes_for(pods: list[SystemPod], cloud: str) -> int:
    """How many system nodes hold `pods` beside the DaemonSets: first fit, largest first, by
    CPU and memory together (the scheduler places each pod on one node, so the sum of the
    requests is not enough)."""
    cpu = ALLOCATABLE_CPU_MILLIS - DAEMONSET_RESERVE_CPU_MILLIS
    memory = ALLOCATABLE_MIB[cloud] - DAEMONSET_RESERVE_MIB
    free: list[list[int]] = []
    for pod in sorted(pods, key=lambda p: (p.cpu_millis, p.memory_mib), reverse=True):
        for node in free:
            if node[0] >= pod.cpu_millis and node[1] >= pod.memory_mib:
                node[0] -= pod.cpu_millis
                node[1] -= pod.memory_mib
                break
        else:
            free.append([cpu - pod.cpu_millis, memory - pod.memory_mib])
    return len(free)


EKS_SYSTEM_NODES_MIN: Final = 2
"""The EKS system node group keeps at least two nodes, whatever the zones
(`inferplane.components.cluster_eks.system_nodes_count`)."""


def system_nodes(env: Environment) -> int:
    """System nodes a created cluster keeps at its minimum: `nodes_per_zone` in each zone
    (GKE's system pool per node location; EKS's system group, at least
    `EKS_SYSTEM_NODES_MIN`)."""
    total = nodes_per_zone(env) * max(1, len(env.zones))
    return max(EKS_SYSTEM_NODES_MIN, total) if env.cloud == "aws" else total


def nodes_per_zone(env: Environment) -> int:
    """System nodes each zone of a created cluster starts with: one for the add-ons and the
    Redis caches (`CACHE_SHARE_OF_NODE`), plus the nodes that hold the zone's routing pods
    (the busiest zone decides: both clouds keep the same count in every zone)."""
    if env.cloud not in ALLOCATABLE_MIB:
        return 1
    zones = routing_pods(env)
    return 1 + max((nodes_for(pods, env.cloud) for pods in zones.values()), default=0)


__all__ = [
    "ALLOCATABLE_CPU_MILLIS",
    "ALLOCATABLE_MIB",
    "CACHE_SHARE_OF_NODE",
    "EKS_INSTANCE_TYPE",
    "EKS_SYSTEM_NODES_MIN",
    "GKE_MACHINE_TYPE",
    "PICKER",
    "PROXY",
    "PROXY_REPLICAS",
    "SYSTEM_DESCRIPTION",
    "VALKEY_BASE_MIB",
    "VALKEY_OVERHEAD_FACTOR",
    "SystemPod",
    "nodes_for",
    "nodes_per_zone",
    "routing_pods",
    "system_nodes",
    "valkey_memory_mib",
]
