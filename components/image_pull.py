"""What a GPU node needs to pull serving images lazily (the ``lazy_image_pull`` lever): GKE
image streaming on the node pool, SOCI parallel pull on EKS nodes.

Which pools may have it, and why not, is the blueprint layer's
(`inferplane.blueprint.derived.lazy_pull`); this module only spells the settings.

- GKE: ``node_config.gcfs_config.enabled`` (pulumi-gcp 10.2.0
  ``container.NodePoolNodeConfigGcfsConfigArgs``, "Whether or not GCFS is enabled"), and
  ``roles/serviceusage.serviceUsageConsumer`` for the nodes' own service account, which
  image streaming needs when nodes do not run as the Compute default account
  (https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming, "Requirements").
  The Container File System API (``containerfilesystem.googleapis.com``) is the project's
  to enable, as the platform enables the project's other APIs.
- EKS (managed node groups and Karpenter alike, both on the EKS-optimised AL2023 NVIDIA
  AMI): a ``NodeConfig`` with the ``FastImagePull`` feature gate in the nodes' user data
  (awslabs/amazon-eks-ami ``nodeadm/doc/examples.md``, "Enabling fast image pull
  (experimental)"), and a root volume fast enough to absorb parallel unpacking: the same
  doc asks for at least 600 MiB/s and says up to 1,000 MiB/s and 16k IOPS may be better;
  `FAST_PULL_THROUGHPUT_MIBPS` and `FAST_PULL_IOPS` (held by
  `inferplane.blueprint.derived.lazy_pull`, where the lever is priced) are the volume the
  published figure was measured on
  (`inferplane.blueprint.derived.scale_out.Constants.soci_parallel_pull_mb_per_s`). A managed
  node group gets it through a launch template: EKS adds its own ``NodeConfig`` to a launch
  template's user data for its own AMI types, and a multi-part MIME document is the form it
  takes (eksctl docs, "Node bootstrapping": "For EKS-managed nodes based on native AMIs, the
  default NodeConfig is being added by EKS MNG under the hood, appended directly to the EC2's
  userdata"). A node group created without a launch template cannot be given one later (EKS
  User Guide, "Customize managed nodes with launch templates"), so turning the lever on
  replaces such a group. Karpenter merges a ``NodeConfig`` given as the EC2NodeClass's
  ``userData`` before its own (Karpenter v1.14 docs, ``concepts/nodeclasses.md``, "AL2023").
"""

from __future__ import annotations

import base64
from typing import Final

from inferplane.blueprint.derived.lazy_pull import FAST_PULL_IOPS, FAST_PULL_THROUGHPUT_MIBPS

GKE_NODE_ROLE: Final = "roles/serviceusage.serviceUsageConsumer"
FAST_IMAGE_PULL_NODE_CONFIG: Final = (
    "apiVersion: node.eks.aws/v1alpha1\n"
    "kind: NodeConfig\n"
    "spec:\n"
    "  featureGates:\n"
    "    FastImagePull: true\n"
)
"""nodeadm's ``NodeConfig`` that turns SOCI parallel pull on (awslabs/amazon-eks-ami
``nodeadm/api/v1alpha1/nodeconfig_types.go``, ``FastImagePull``)."""
MIME_BOUNDARY: Final = "INFERPLANE"


def eks_user_data() -> str:
    """The nodes' user data as a multi-part MIME document with one ``application/node.eks.aws``
    part (the format nodeadm reads: awslabs/amazon-eks-ami ``nodeadm/README.md``)."""
    return (
        "MIME-Version: 1.0\n"
        f'Content-Type: multipart/mixed; boundary="{MIME_BOUNDARY}"\n'
        "\n"
        f"--{MIME_BOUNDARY}\n"
        "Content-Type: application/node.eks.aws\n"
        "\n"
        f"{FAST_IMAGE_PULL_NODE_CONFIG}"
        f"\n--{MIME_BOUNDARY}--\n"
    )


def eks_user_data_base64() -> str:
    """`eks_user_data` base64-encoded, as a launch template's ``user_data`` takes it (pulumi-aws
    7.51.1 ``ec2.LaunchTemplate``: "The base64-encoded user data")."""
    return base64.b64encode(eks_user_data().encode()).decode()


__all__ = [
    "FAST_IMAGE_PULL_NODE_CONFIG",
    "FAST_PULL_IOPS",
    "FAST_PULL_THROUGHPUT_MIBPS",
    "GKE_NODE_ROLE",
    "eks_user_data",
    "eks_user_data_base64",
]
