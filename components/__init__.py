"""Pulumi components of inferplane, one concern per module.

- `stack.InferenceStack`: one blueprint environment, everything below wired together.
- `cluster.Cluster`: an EKS or GKE cluster (created or attached) and its Kubernetes provider.
- `node_pool.GpuNodePool`: one zone-pinned GPU node group per pool and zone.
- `addons.ClusterAddons`: GPU Operator, KEDA, kube-prometheus-stack (+ on EKS the AWS Load
  Balancer Controller and Cluster Autoscaler).
- `identity.ModelStoreAccess`: model-store identities bound to Kubernetes ServiceAccounts.
- `serving.ModelServer`: one served model (Triton or vLLM) and everything around it.

The classes are importable from here (``from components import InferenceStack``); modules
load on first use, so importing one component does not import the others.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "InferenceStack": "components.stack",
    "InferenceStackArgs": "components.stack",
    "Cluster": "components.cluster",
    "ClusterArgs": "components.cluster",
    "GpuNodePool": "components.node_pool",
    "GpuNodePoolArgs": "components.node_pool",
    "ClusterAddons": "components.addons",
    "ClusterAddonsArgs": "components.addons",
    "ModelStoreAccess": "components.identity",
    "ModelStoreAccessArgs": "components.identity",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'components' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
