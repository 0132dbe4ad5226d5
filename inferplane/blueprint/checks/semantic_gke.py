"""Semantic checks of what GKE itself would refuse, or accept and then never run: cluster
names beyond GKE's limit, and MIG pools, which GKE's autoscaler cannot scale.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from inferplane.blueprint import catalog, defaults, naming

if TYPE_CHECKING:
    from inferplane.blueprint.checks.semantic_env import EnvView
    from inferplane.blueprint.errors import YamlPath

GKE_CLUSTER_NAME_MAX = 40
"""GKE cluster names: "up to 40 characters with the following restrictions: Lowercase
letters, numbers, and hyphens only. Must start with a letter. Must end with a number or a
letter." (the ``name`` field of ``Cluster``, GKE API v1:
https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters#Cluster,
and its client library reference,
https://cloud.google.com/python/docs/reference/container/latest/google.cloud.container_v1.types.Cluster)."""
GKE_CLUSTER_NAME_SOURCE = (
    "https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/"
    "projects.locations.clusters#Cluster"
)
GKE_CLUSTER_NAME = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
"""The character rules of the same field."""
GKE_AUTOSCALER_TEMPLATE = (
    "kubernetes/autoscaler cluster-autoscaler/cloudprovider/gce/templates.go "
    "(BuildCapacity, commit 00fcc0d7a1ac1629eaaba570a779a0e479fc6e09)"
)
"""Where GKE's autoscaler builds a scale-up node from the node pool's instance template:
its GPUs become ``nvidia.com/gpu`` (the accelerator count) and nothing else, so a pod asking
for the GPU Operator's ``nvidia.com/mig-<profile>`` fits no node the autoscaler can add."""


def check_cluster_name(env: EnvView) -> None:
    """The GKE cluster a gcp environment creates (named `naming.stack_name`) or attaches to
    fits GKE's name rules; a created one's name is 41 characters at most from the schema's
    own caps, so only the combination of blueprint and environment names can exceed it."""
    if env.spec["cloud"] != "gcp":
        return
    base: YamlPath = ("environments", env.name, "cluster")
    cluster = env.spec.get("cluster") or {}
    if cluster.get("create"):
        name = naming.stack_name(env.data["name"], env.name)
        if len(name) > GKE_CLUSTER_NAME_MAX:
            env.error(
                (*base, "create"),
                f"the cluster this environment creates is named {name!r} (blueprint and "
                f"environment names), {len(name)} characters; GKE cluster names have at most "
                f"{GKE_CLUSTER_NAME_MAX} ({GKE_CLUSTER_NAME_SOURCE}, name)",
                f"shorten the blueprint or environment name by {len(name) - GKE_CLUSTER_NAME_MAX} "
                "or more characters",
            )
        return
    existing = cluster.get("existing")
    if not isinstance(existing, str):
        return
    if len(existing) > GKE_CLUSTER_NAME_MAX or not GKE_CLUSTER_NAME.match(existing):
        env.error(
            (*base, "existing"),
            f"{existing!r} cannot name a GKE cluster: GKE cluster names have at most "
            f"{GKE_CLUSTER_NAME_MAX} characters, lowercase letters, digits and '-', starting "
            f"with a letter and ending with a letter or digit ({GKE_CLUSTER_NAME_SOURCE}, name)",
            "write the name `gcloud container clusters list` shows",
        )


def check_mig(env: EnvView) -> None:
    """MIG on GKE: the GPU Operator's mixed strategy advertises ``nvidia.com/mig-<profile>``,
    which GKE's autoscaler never puts in a node template (`GKE_AUTOSCALER_TEMPLATE`), so a
    pending replica or placeholder never brings a node: the pool stays at ``nodes.min``,
    and at ``min: 0`` never gets one."""
    if env.spec["cloud"] != "gcp":
        return
    for name, pool in (env.data.get("gpu_pools") or {}).items():
        if pool.get("sharing", defaults.POOL_SHARING) != "mig":
            continue
        gpu = catalog.GPUS.get(pool.get("gpu", ""))
        if gpu is None or pool.get("mig_profile") not in gpu.mig_profiles:
            continue  # refused already: the pool's MIG settings are wrong on every cloud
        env.error(
            ("gpu_pools", name, "sharing"),
            f"pool {name!r} partitions its GPUs with MIG on GKE (environment {env.name}), "
            "where it would never scale: GKE's autoscaler builds new nodes from the machine's "
            "accelerators and knows nvidia.com/gpu only, not nvidia.com/mig-"
            f"{pool['mig_profile']} ({GKE_AUTOSCALER_TEMPLATE})",
            "use `sharing: exclusive` for this pool on GKE (MIG may stay in the overrides of "
            "aws environments, whose autoscaler reads the slices from node-group tags)",
        )


__all__ = [
    "GKE_CLUSTER_NAME",
    "GKE_CLUSTER_NAME_MAX",
    "check_cluster_name",
    "check_mig",
]
