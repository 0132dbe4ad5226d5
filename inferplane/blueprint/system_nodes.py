"""The system nodes of a cluster inferplane creates, and what the blueprint places on them.

System nodes run the add-ons (operators, Prometheus, Grafana) and the Valkey servers of
Redis response caches, never model servers. Their machine types live here, not in the
cluster components, because validation checks what fits on them: the components import
them (`inferplane.components.cluster_eks`, `inferplane.components.cluster_gke`), and the
Valkey memory formula (`valkey_memory_mib`) is the one the response-cache component sets
as the container's request and limit (`inferplane.components.serving.response_cache`).
"""

from __future__ import annotations

from typing import Final

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
`inferplane.components.serving.response_cache`)."""


def valkey_memory_mib(size_mb: int) -> int:
    """The memory request and limit of the Valkey container of a cache of `size_mb`."""
    return int(size_mb * VALKEY_OVERHEAD_FACTOR) + VALKEY_BASE_MIB


__all__ = [
    "ALLOCATABLE_MIB",
    "CACHE_SHARE_OF_NODE",
    "EKS_INSTANCE_TYPE",
    "GKE_MACHINE_TYPE",
    "SYSTEM_DESCRIPTION",
    "VALKEY_BASE_MIB",
    "VALKEY_OVERHEAD_FACTOR",
    "valkey_memory_mib",
]
