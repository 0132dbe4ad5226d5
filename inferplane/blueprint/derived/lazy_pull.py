"""Lazy image pulls: where a new GPU node can start a serving image before it has pulled
all of it, and what stops it.

A new node pulls the many-GB serving image while the replica waits (the budget's
``image_pull`` part, `scale_out`). Two mechanisms shorten that wait, one per cloud:

- **GKE image streaming** (the node pool's ``gcfs_config.enabled``, pulumi-gcp 10.2.0
  ``container.NodePoolNodeConfigGcfsConfigArgs``): containerd mounts the image from a
  remote filesystem and the container starts while GKE streams the rest. Requirements
  (https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming, "Requirements",
  read in its English and zh-CN versions): the Container File System API enabled in the
  project; the Container-Optimized OS with containerd node image (every GPU pool here is
  ``COS_CONTAINERD``, `inferplane.components.cluster_gke.NODE_IMAGE`, so no blueprint can
  break it); images "stored in standard or remote repositories in Artifact Registry, or in
  public registries on Docker Hub"; Private Google Access on the subnet of private nodes
  (a created cluster's subnet has it); and, for nodes that do not use the default service
  account (these do not), ``roles/serviceusage.serviceUsageConsumer`` for the nodes'
  account in the project that hosts the images. NGC images (``nvcr.io``: every Triton and
  TensorRT-LLM image by default) are none of these, so a Triton model streams only through
  an Artifact Registry remote repository in front of ``nvcr.io`` that the platform creates
  (Artifact Registry's remote repositories take "user-defined sources" besides the preset
  ones: https://cloud.google.com/artifact-registry/docs/repositories/remote-repo;
  ``gcloud artifacts repositories create REPO --repository-format=docker
  --mode=remote-repository --remote-docker-repo=https://nvcr.io --remote-username='$oauthtoken'
  --remote-password-secret-version=<the NGC key's secret version>``), and the model names
  its image through it (``image: <region>-docker.pkg.dev/<project>/<repo>/nvidia/
  tritonserver:<release>-py3`` with ``base_release``). GKE's secondary boot disks, which
  hold an image on a disk made beforehand (pulumi-gcp 10.2.0
  ``NodePoolNodeConfigSecondaryBootDiskArgs(disk_image, mode)``: "`gcfs_config` must be
  `enabled=true` for this feature to work", GKE 1.28.3-gke.106700 or later), are not built:
  the disk image is made per serving release with ``gke-disk-image-builder`` outside any
  stack, and neither the blueprint nor the platform's configuration names one yet.
- **SOCI parallel pull on EKS**: nodeadm's ``FastImagePull`` feature gate in the node's
  ``NodeConfig`` switches containerd to the SOCI snapshotter's ``parallel_pull_unpack`` mode
  (awslabs/amazon-eks-ami ``nodeadm/internal/containerd/config.go``, ``UseSOCISnapshotter``:
  only on instances with at least 4 vCPUs and 7 GiB, which every GPU instance type has;
  ``nodeadm/doc/examples.md``, "Enabling fast image pull (experimental)", recommends a root
  volume of at least 600 MiB/s). The EKS-optimised AL2023 AMIs install ``soci-snapshotter``
  in every variant, the NVIDIA one included (``templates/al2023/provisioners/
  install-worker.sh``); the gate has this name since release v20250821 (awslabs/amazon-eks-ami
  PR #2381, renamed from ``AggressiveImagePull`` of v20250813, PR #2352). Every GPU node here
  runs that AMI: managed node groups with ``AL2023_x86_64_NVIDIA`` and no pinned release (EKS
  takes the newest when it creates the group), or the release a cluster's Karpenter names
  in ``ami_alias``, which must then be v20250821 or later (`AL2023_FAST_IMAGE_PULL_SINCE`).
  Bottlerocket also has the mode (``settings.container-runtime-plugins.soci-snapshotter``,
  since v1.44.0) but no GPU node here runs Bottlerocket.

`lever_problem` says why a model cannot have the lever (the check of a listed lever and the
choice of ``levers: auto`` ask it through `inferplane.blueprint.derived.lever_options`),
`lazy_pull_support` whether a pool's nodes can, `enabled` whether the stack builds them so;
`inferplane.blueprint.derived.scale_out.Constants.lazy_pull_s` what a new node's pull then
costs. On EKS the nodes pull with SOCI parallel pull (`inferplane.components.image_pull`): the
whole image still arrives before the container starts, only faster, so the budget counts
the image at `Constants.soci_parallel_pull_mb_per_s` there (about 67 s for vLLM's 12 GB),
and GKE image streaming's `Constants.lazy_image_pull_s` on GKE (`Constants.lazy_pull_s`).
"""

from __future__ import annotations

import re
from typing import Final

from inferplane.blueprint import defaults
from inferplane.blueprint.model import Environment, GpuPool, Model

LEVER: Final = "lazy_image_pull"
"""The lever's name in ``scale_out.levers``."""
AL2023_FAST_IMAGE_PULL_SINCE: Final = "v20250821"
"""The first EKS-optimised AL2023 release whose nodeadm knows ``FastImagePull``
(awslabs/amazon-eks-ami CHANGELOG, "AMI Release v20250821": "chore(nodeadm): rename feature
flag", PR #2381)."""
ARTIFACT_REGISTRY: Final = re.compile(r"^[a-z0-9-]+-docker\.pkg\.dev/[^/]+/[^/]+/.+")
"""An Artifact Registry Docker image: ``<location>-docker.pkg.dev/<project>/<repo>/<image>``
(https://cloud.google.com/artifact-registry/docs/docker/names)."""
DOCKER_HUB_HOSTS: Final = ("docker.io", "index.docker.io", "registry-1.docker.io")
_ALIAS: Final = re.compile(r"^al2023@(v[0-9]{8})$")
FAST_PULL_THROUGHPUT_MIBPS: Final = 1000
"""gp3 throughput of a lazily pulling EKS node's root volume, MiB/s: gp3's maximum (pulumi-aws
7.51.1 ``ec2.LaunchTemplateBlockDeviceMappingEbsArgs.throughput``: "with a maximum of 1,000
MiB/s"). It costs beyond gp3's 125 MiB/s baseline, per node
(`inferplane.blueprint.derived.lever_options.lazy_pull_usd_month`); the stack sets it
(`inferplane.components.image_pull`)."""
FAST_PULL_IOPS: Final = 16000
"""gp3 IOPS of that volume (the volume of aws-samples/karpenter-blueprints'
``soci-snapshotter`` EC2NodeClass, on which the published pull time was measured)."""


def image_host(image: str) -> str:
    """The registry of an image reference: its first component when that names a host (a dot
    or a port in it, or ``localhost``), else Docker Hub's ``docker.io``."""
    first, sep, _ = image.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        return first
    return "docker.io"


def streaming_problem(image: str) -> str | None:
    """Why GKE cannot stream `image`; None when it is an Artifact Registry or Docker Hub
    image (a private Docker Hub repository would still be pulled whole: GKE streams public
    Docker Hub images only, which nothing here can tell)."""
    if ARTIFACT_REGISTRY.match(image) or image_host(image) in DOCKER_HUB_HOSTS:
        return None
    host = image_host(image)
    if host == "nvcr.io":
        return (
            f"{image} is on NGC (nvcr.io), which GKE image streaming does not serve: the "
            "platform creates an Artifact Registry remote repository whose upstream is "
            "https://nvcr.io (with the NGC API key in Secret Manager) and the model names its "
            "image through it (image: <region>-docker.pkg.dev/<project>/<repo>/<path>, with "
            "base_release for Triton)"
        )
    return (
        f"{image} is on {host}, and GKE image streaming serves only images in Artifact "
        "Registry (standard or remote repositories) or public Docker Hub images: mirror it "
        "through an Artifact Registry remote repository and name it there"
    )


def node_problem(cloud: str, karpenter_ami_alias: str | None) -> str | None:
    """Why new GPU nodes of `cloud` cannot pull lazily at all; None when they can.
    `karpenter_ami_alias`: the alias of a cluster's Karpenter that launches the nodes (AWS),
    None for managed node groups, which run the newest AL2023 NVIDIA AMI."""
    if cloud == "kubernetes":
        return (
            "a kubernetes environment's nodes exist already: no new node joins on scale-out, "
            "and inferplane configures no node's container runtime there"
        )
    if cloud != "aws" or karpenter_ami_alias is None:
        return None
    match = _ALIAS.match(karpenter_ami_alias)
    if match is None or match.group(1) < AL2023_FAST_IMAGE_PULL_SINCE:
        return (
            f"the cluster's Karpenter launches the GPU nodes from {karpenter_ami_alias}, whose "
            "nodeadm has no FastImagePull feature gate (SOCI parallel pull): pin "
            f"al2023@{AL2023_FAST_IMAGE_PULL_SINCE} or later in "
            "cluster.addons.karpenter.ami_alias"
        )
    return None


def lever_problem(cloud: str, image: str, karpenter_ami_alias: str | None = None) -> str | None:
    """Why a model whose server runs `image` cannot have the lever on `cloud`; None when it
    can."""
    found = node_problem(cloud, karpenter_ami_alias)
    if found is not None:
        return found
    if cloud == "gcp":
        return streaming_problem(image)
    return None


def serving_image(env: Environment, model: Model) -> str:
    """The image of `model`'s server container, as `inferplane.components.serving.
    serving_pod.server_image` sets it: the model's own, else the pinned one of its runtime."""
    if model.image:
        return model.image
    if model.server == "vllm":
        return defaults.VLLM_IMAGE.format(version=env.versions.vllm)
    template = defaults.TRITON_TRTLLM_IMAGE if model.tensorrt_llm else defaults.TRITON_IMAGE
    return template.format(release=env.versions.triton)


def karpenter_alias(env: Environment) -> str | None:
    """The AMI alias of the cluster's Karpenter that launches `env`'s GPU nodes; None when
    managed node groups (or no AWS) do."""
    karpenter = env.cluster.addons.karpenter
    return karpenter.ami_alias if env.cloud == "aws" and karpenter.existing else None


def lazy_pull_support(env: Environment, pool: GpuPool) -> str | None:
    """None when `pool`'s new nodes in `env` can pull serving images lazily (GKE image
    streaming, SOCI parallel pull on EKS); otherwise the reason, in the user's terms. On GKE
    a pool can when one of its models' images can be streamed: the others are pulled whole
    on the same nodes."""
    found = node_problem(env.cloud, karpenter_alias(env))
    if found is not None:
        return found
    if env.cloud != "gcp":
        return None
    models = sorted((m for m in env.models.values() if m.pool == pool.name), key=_name)
    problems = [(m.name, streaming_problem(serving_image(env, m))) for m in models]
    if not problems or any(problem is None for _, problem in problems):
        return None
    name, problem = problems[0]
    return f"model {name}: {problem}"


def _name(model: Model) -> str:
    return model.name


def requested(env: Environment, pool: GpuPool) -> bool:
    """Whether a model on `pool` has the lever in effect (``scale_out.levers``, listed or
    chosen by ``levers: auto``)."""
    return any(LEVER in m.scale_out.levers for m in env.models.values() if m.pool == pool.name)


def enabled(env: Environment, pool: GpuPool) -> bool:
    """The stack builds `pool`'s nodes to pull lazily: a model on it has the lever in effect
    and the pool supports it (validation refuses a listed lever it does not support)."""
    return requested(env, pool) and lazy_pull_support(env, pool) is None


__all__ = [
    "AL2023_FAST_IMAGE_PULL_SINCE",
    "FAST_PULL_IOPS",
    "FAST_PULL_THROUGHPUT_MIBPS",
    "LEVER",
    "enabled",
    "image_host",
    "karpenter_alias",
    "lazy_pull_support",
    "lever_problem",
    "node_problem",
    "requested",
    "serving_image",
    "streaming_problem",
]
