"""Pulumi components of inferplane, one concern per module.

- `stack.InferenceStack`: one blueprint environment, everything below wired together.
- `cluster.Cluster`: an EKS or GKE cluster (created or attached) and its Kubernetes provider;
  `cluster_eks.EksCluster` / `cluster_gke.GkeCluster` are the cloud's cluster under it.
- `cloud.Ownership`: whose resources they are (tags, labels, name prefix); every component's
  args take one.
- `node_pool.GpuNodePool`: one zone-pinned GPU node group per pool and zone.
- `addons.ClusterAddons`: GPU Operator, KEDA, kube-prometheus-stack (+ on EKS the AWS Load
  Balancer Controller and Cluster Autoscaler).
- `identity.ModelStoreAccess`: model-store identities bound to Kubernetes ServiceAccounts.
- `serving.ModelServer`: one served model (Triton or vLLM) and everything around it.

The classes are importable from here (``from inferplane.components import InferenceStack``); modules
load on first use, so importing one component does not import the others.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names, typed, for checkers and editors
    from inferplane.components.addons import ClusterAddons, ClusterAddonsArgs
    from inferplane.components.cloud import Ownership
    from inferplane.components.cluster import Cluster, ClusterArgs
    from inferplane.components.cluster_eks import EksCluster, EksClusterArgs
    from inferplane.components.cluster_gke import GkeCluster, GkeClusterArgs
    from inferplane.components.identity import ModelStoreAccess, ModelStoreAccessArgs
    from inferplane.components.node_pool import GpuNodePool, GpuNodePoolArgs
    from inferplane.components.stack import InferenceStack, InferenceStackArgs

_EXPORTS = {
    "InferenceStack": "inferplane.components.stack",
    "InferenceStackArgs": "inferplane.components.stack",
    "Cluster": "inferplane.components.cluster",
    "ClusterArgs": "inferplane.components.cluster",
    "EksCluster": "inferplane.components.cluster_eks",
    "EksClusterArgs": "inferplane.components.cluster_eks",
    "GkeCluster": "inferplane.components.cluster_gke",
    "GkeClusterArgs": "inferplane.components.cluster_gke",
    "Ownership": "inferplane.components.cloud",
    "GpuNodePool": "inferplane.components.node_pool",
    "GpuNodePoolArgs": "inferplane.components.node_pool",
    "ClusterAddons": "inferplane.components.addons",
    "ClusterAddonsArgs": "inferplane.components.addons",
    "ModelStoreAccess": "inferplane.components.identity",
    "ModelStoreAccessArgs": "inferplane.components.identity",
}

__all__ = [
    "Cluster",
    "ClusterAddons",
    "ClusterAddonsArgs",
    "ClusterArgs",
    "EksCluster",
    "EksClusterArgs",
    "GkeCluster",
    "GkeClusterArgs",
    "GpuNodePool",
    "GpuNodePoolArgs",
    "InferenceStack",
    "InferenceStackArgs",
    "ModelStoreAccess",
    "ModelStoreAccessArgs",
    "Ownership",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'inferplane.components' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
