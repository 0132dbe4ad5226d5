"""Semantic checks of ``cluster.addons.karpenter``: what the cluster's Karpenter cannot do
for the blueprint's pools.

Karpenter launches a node for pending pods it can place on one of its instance types, whose
resources it computes itself: a GPU instance offers ``nvidia.com/gpu`` = its NVIDIA GPU
count and nothing else (aws/karpenter-provider-aws v1.14.1
``pkg/providers/instancetype/types.go``, ``computeCapacity`` and ``nvidiaGPUs``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from inferplane.blueprint import defaults
from inferplane.blueprint.addons import is_existing

if TYPE_CHECKING:
    from inferplane.blueprint.checks.semantic_env import EnvView

KARPENTER_INSTANCE_TYPES = (
    "aws/karpenter-provider-aws v1.14.1 pkg/providers/instancetype/types.go (computeCapacity)"
)


def _addons(env: EnvView) -> Mapping[str, Any]:
    return (env.spec.get("cluster") or {}).get("addons") or {}


def check_karpenter(env: EnvView) -> None:
    addons = _addons(env)
    if env.spec["cloud"] != "aws" or not is_existing(addons.get("karpenter")):
        return
    base = ("environments", env.name, "cluster", "addons")
    if "cluster_autoscaler" in addons:
        env.error(
            (*base, "cluster_autoscaler"),
            "the cluster's Karpenter launches the blueprint's GPU nodes, so there are no "
            "node groups for a Cluster Autoscaler to scale",
            "remove `cluster_autoscaler` (with `karpenter`, none is installed or needed)",
        )
    for name, pool in (env.data.get("gpu_pools") or {}).items():
        if pool.get("sharing", defaults.POOL_SHARING) != "mig":
            continue
        env.error(
            ("gpu_pools", name, "sharing"),
            f"pool {name!r} partitions its GPUs with MIG, but Karpenter (environment "
            f"{env.name}) launches nodes only for resources its instance types offer: whole "
            f"nvidia.com/gpu, never nvidia.com/mig-{pool.get('mig_profile') or '<profile>'} "
            f"({KARPENTER_INSTANCE_TYPES}), so no replica would ever get a node",
            "use `sharing: exclusive` for this pool in this environment, or scale it with "
            "the Cluster Autoscaler (remove `karpenter`)",
        )


__all__ = ["KARPENTER_INSTANCE_TYPES", "check_karpenter"]
