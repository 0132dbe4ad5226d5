"""GPU nodes that the cluster's Karpenter launches: one ``EC2NodeClass`` per pool and one
``NodePool`` per pool and zone, in place of EKS managed node groups.

Karpenter never resizes a managed node group: it launches instances of its own for pods
that are pending (Karpenter v1.14 docs, ``concepts/_index.md``: "Karpenter manages each
instance directly, without use of additional orchestration mechanisms like node groups").
So the pools' nodes are described to it the way a node group describes them: the zone,
instance type and capacity type as requirements, and the labels and taint the serving pods,
placeholders and pre-pull DaemonSets select and tolerate. The objects follow the v1 CRDs of
aws/karpenter-provider-aws v1.14.1 (``pkg/apis/crds/karpenter.sh_nodepools.yaml``,
``karpenter.k8s.aws_ec2nodeclasses.yaml``), written in their own camelCase.

Headroom: Karpenter keeps no idle node, so a pool's spare GPUs are the spare-GPU
placeholders (`inferplane.components.serving.scaling.spare_gpus`) as on any cluster: they are
pending pods until Karpenter launches their nodes, and a new replica preempts one, whose
placeholder then brings the next node. Karpenter provisions for any pod the scheduler
marked unschedulable that is not itself preempting, whatever its priority: it has no
cut-off like the Cluster Autoscaler's expendable-pods priority (kubernetes-sigs/karpenter
``pkg/utils/pod/scheduling.go``, ``IsProvisionable``). A node holding a placeholder is not
empty, so ``WhenEmpty`` consolidation leaves it.

e2e/rehearse_karpenter.py gives a planned NodePool to the real Karpenter (core v1.14.1, its
KWOK cloud provider): it launches a node with the pool's labels, taint and GPU for a serving
pod, and no node past the GPU limit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inferplane.blueprint import naming
from inferplane.components import image_pull

API_GROUP = "karpenter.sh"
NODE_POOL_API = f"{API_GROUP}/v1"
NODE_CLASS_GROUP = "karpenter.k8s.aws"
NODE_CLASS_API = f"{NODE_CLASS_GROUP}/v1"
NODE_CLASS_KIND = "EC2NodeClass"
ZONE_KEY = naming.TOPOLOGY_ZONE_LABEL
INSTANCE_TYPE_KEY = "node.kubernetes.io/instance-type"
CAPACITY_TYPE_KEY = "karpenter.sh/capacity-type"
"""Values ``on-demand``, ``spot`` and ``reserved`` (Karpenter v1.14 docs,
``concepts/nodepools.md``; ``reserved`` for capacity reservations: Karpenter docs
``tasks/odcrs.md``, native since v1.3, Capacity Blocks since v1.6)."""
GPU_COUNT_KEY = "karpenter.k8s.aws/instance-gpu-count"
"""One of the ``karpenter.k8s.aws`` labels a NodePool may require (the CRD's requirement
key validation lists it); it also tells a reader of the NodePool how many GPUs a node has,
which turns its GPU limit back into nodes."""
CAPACITY_TYPES = {"on_demand": "on-demand", "spot": "spot"}
ROOT_DEVICE = "/dev/xvda"
"""The root volume of AL2023 AMIs (Karpenter v1.14 docs, ``concepts/nodeclasses.md``,
default ``blockDeviceMappings`` of AL2023)."""
CONSOLIDATE_AFTER = "10m"
"""How long a node stays empty before Karpenter removes it: the Cluster Autoscaler's
``scale-down-unneeded-time`` default, 10 minutes (kubernetes/autoscaler
``cluster-autoscaler/FAQ.md``, "What are the parameters to CA?"), so empty GPU nodes
linger alike under either autoscaler."""
DISRUPTION_BUDGET_NODES = "1"
"""At most one node of a NodePool is disrupted at a time (drift after an AMI change, or
emptiness), so a zone never loses two serving nodes to Karpenter at once."""


def requirement(key: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": "In", "values": list(values)}


def node_pool_spec(
    *,
    node_class: str,
    zone: str,
    instance_type: str,
    capacity: str,
    gpus_per_node: int,
    nodes_max: int,
    labels: Mapping[str, str],
    taint: tuple[str, str, str],
    capacity_type: str | None = None,
    weight: int | None = None,
) -> dict[str, Any]:
    """The ``spec`` of one pool's NodePool in `zone`.

    `capacity_type`, a ``karpenter.sh/capacity-type`` value (``reserved``, ``on-demand``,
    ``spot``), replaces `capacity` where a pool lists several capacity sources: one
    NodePool per market, each with a `weight` (``spec.weight``, 1 to 100, "a higher
    numerical weight indicates that this nodepool will be ordered ahead of other nodepools
    with lower weights": kubernetes-sigs/karpenter v1.14.1 ``pkg/apis/v1/nodepool.go``), so
    Karpenter tries them in the pool's order (`inferplane.components.capacity_sources`).

    ``limits`` is a total over the NodePool's nodes, not per node: the zone's `nodes_max`
    nodes of `gpus_per_node` GPUs each. ``consolidationPolicy: WhenEmpty``: Karpenter never
    moves a running replica to pack nodes tighter (the default, ``WhenEmptyOrUnderutilized``,
    would evict warm replicas into cold starts). ``expireAfter: Never``: a GPU node is not
    replaced on a timer (default 720h) while it serves; nodes change when the pinned AMI
    does (drift), one at a time (`DISRUPTION_BUDGET_NODES`)."""
    key, value, effect = taint
    spec: dict[str, Any] = {
        "template": {
            "metadata": {"labels": dict(labels)},
            "spec": {
                "nodeClassRef": {
                    "group": NODE_CLASS_GROUP,
                    "kind": NODE_CLASS_KIND,
                    "name": node_class,
                },
                "requirements": [
                    requirement(ZONE_KEY, zone),
                    requirement(INSTANCE_TYPE_KEY, instance_type),
                    requirement(CAPACITY_TYPE_KEY, capacity_type or CAPACITY_TYPES[capacity]),
                    requirement(GPU_COUNT_KEY, str(gpus_per_node)),
                ],
                "taints": [{"key": key, "value": value, "effect": effect}],
                "expireAfter": "Never",
            },
        },
        "limits": {"nvidia.com/gpu": str(nodes_max * gpus_per_node)},
        "disruption": {
            "consolidationPolicy": "WhenEmpty",
            "consolidateAfter": CONSOLIDATE_AFTER,
            "budgets": [{"nodes": DISRUPTION_BUDGET_NODES}],
        },
    }
    if weight is not None:
        spec["weight"] = weight
    return spec


def node_class_spec(
    *,
    node_role: str,
    ami_alias: str,
    subnet_ids: Sequence[Any],
    security_groups: Sequence[Mapping[str, Any]],
    disk_gib: int,
    tags: Mapping[str, str],
    capacity_reservations: Sequence[Mapping[str, Any]] = (),
    fast_image_pull: bool = False,
) -> dict[str, Any]:
    """The ``spec`` of one pool's EC2NodeClass: the pinned AMI alias, the node role, the
    environment's own subnets by id (never a tag another cluster may share), the security
    groups `security_groups` selects (terms of ``tags``, ``id`` or ``name``, ORed:
    ``securityGroupSelectorTerms`` of the v1.14.1 EC2NodeClass CRD), an encrypted gp3 root
    volume of the pool's disk size, and IMDSv2 only (one hop: pods cannot reach the node's
    credentials). `capacity_reservations`, when given, become
    ``capacityReservationSelectorTerms``: the reservations and Capacity Blocks its nodes may
    launch into (v1.14.1 EC2NodeClass CRD; Karpenter uses no reservation it does not select,
    "Karpenter does **not** support open matching for ODCRs", Karpenter docs ``tasks/odcrs.md``).
    `fast_image_pull` adds nodeadm's ``FastImagePull`` ``NodeConfig`` as ``userData``, which
    Karpenter merges before its own NodeConfig for AL2023 (Karpenter v1.14 docs,
    ``concepts/nodeclasses.md``, "AL2023"), and the faster root volume
    (`inferplane.components.image_pull`)."""
    spec: dict[str, Any] = {
        "role": node_role,
        "amiSelectorTerms": [{"alias": ami_alias}],
        "subnetSelectorTerms": [{"id": subnet} for subnet in subnet_ids],
        "securityGroupSelectorTerms": [_plain(term) for term in security_groups],
        "blockDeviceMappings": [
            {
                "deviceName": ROOT_DEVICE,
                "ebs": {
                    "volumeSize": f"{disk_gib}Gi",
                    "volumeType": "gp3",
                    "encrypted": True,
                    "deleteOnTermination": True,
                    **(
                        {
                            "throughput": image_pull.FAST_PULL_THROUGHPUT_MIBPS,
                            "iops": image_pull.FAST_PULL_IOPS,
                        }
                        if fast_image_pull
                        else {}
                    ),
                },
            }
        ],
        "metadataOptions": {
            "httpEndpoint": "enabled",
            "httpTokens": "required",
            "httpPutResponseHopLimit": 1,
        },
        "tags": dict(tags),
    }
    if capacity_reservations:
        spec["capacityReservationSelectorTerms"] = [dict(t) for t in capacity_reservations]
    if fast_image_pull:
        spec["userData"] = image_pull.FAST_IMAGE_PULL_NODE_CONFIG
    return spec


def _plain(term: Mapping[str, Any]) -> dict[str, Any]:
    return {k: dict(v) if isinstance(v, Mapping) else v for k, v in term.items()}


def node_class_name(blueprint: str, env: str, pool: str) -> str:
    """EC2NodeClasses are cluster-scoped: blueprint, environment and pool in the name."""
    return naming.cluster_scoped_name(blueprint, f"{env}-{pool}")


__all__ = [
    "NODE_CLASS_API",
    "NODE_CLASS_KIND",
    "NODE_POOL_API",
    "node_class_name",
    "node_class_spec",
    "node_pool_spec",
]
