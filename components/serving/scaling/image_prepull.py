"""`ImagePrePull`: every node of a GPU pool pulls its serving pods' images when it joins.

A serving image is many gigabytes (Triton, vLLM, TensorRT-LLM); pulled when a replica is
scheduled, it adds minutes to a scale-out. One DaemonSet per pool runs on each of the
pool's nodes from the moment the node is Ready: its init containers are the exact images
(same string, so the same tag or digest) of every container of every serving pod placed on
the pool, each running a no-op, so the kubelet pulls them all; then a pause container
keeps the pod. The kubelet's image garbage collection spares every image a container the
runtime lists uses, exited ones included (kubernetes ``pkg/kubelet/images/
image_gc_manager.go``, ``detectImages``: ``GetPods(ctx, true)``), so the images stay while
the runtime keeps the pod's exited init containers.

The images come from `serving_pod.pod_images`, which reads them off the same pod spec
the Deployment gets. Engine-build images are not pulled here: a build runs once, not on
every scale-out.

- No-op per image: ``/bin/sh -c true``. Every image inferplane runs by default has
  ``/bin/sh``: the cloud-CLI images already run their fetch scripts with it
  (`containers.shell`), and the Triton, TensorRT-LLM and vLLM images are Ubuntu-based
  images built with shell-form ``RUN`` steps (vllm ``docker/Dockerfile``,
  triton-inference-server ``build.py``). A custom ``models.<m>.image`` without ``/bin/sh``
  would stop its pod at that init container (the image is pulled all the same); custom
  images are placed last so that every other image is pulled first.
- No GPU is requested (the pool's GPUs are for replicas and spare-GPU placeholders), no
  ServiceAccount token, no network: the namespace's default-deny NetworkPolicy
  (`inferplane.components.hardening`) covers these pods, and pulls are the kubelet's.
- Lazy pulls (the ``lazy_image_pull`` lever: GKE image streaming, SOCI parallel pull on
  EKS, `inferplane.components.image_pull`) keep the DaemonSet: image streaming serves only
  Artifact Registry and public Docker Hub images
  (https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming, "Requirements"),
  so the pod's other images are pulled whole, and a streamed image is cached on the node's
  disk in the background once a container uses it (same page, "Overview").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint import defaults, naming
from inferplane.components.serving.containers import (
    NO_GPU,
    Manifest,
    container_security_context,
    gpu_placement,
    pod_security_context,
)
from inferplane.components.serving.spec_parts import ServingPool

NO_OP: Final = ["/bin/sh", "-c", "true"]
SKIP_AWAIT: Final = {"pulumi.com/skipAwait": "true"}
"""Pulling tens of gigabytes onto a new node can outlast pulumi-kubernetes' await of a
DaemonSet rollout, and a pool at zero nodes has no pod to wait for; the pods matter to a
scale-out, not to `pulumi up` (``provider/pkg/metadata/annotations.go``,
``AnnotationSkipAwait``)."""
RESOURCES: Final = {
    "requests": {"cpu": "10m", "memory": "16Mi"},
    "limits": {"memory": "64Mi"},
}


@dataclass(frozen=True)
class ImagePrePullArgs:
    """Inputs of `ImagePrePull`."""

    pool: ServingPool
    """The GPU pool whose nodes pull the images."""
    images: tuple[str, ...]
    """The images to pull, in order, without repeats (`serving_pod.pod_images` of every
    model on the pool)."""
    part_of: str
    """The blueprint's name (``app.kubernetes.io/part-of``)."""
    environment: str
    namespace: str
    provider: k8s.Provider


def daemon_set_name(pool: str) -> str:
    return naming.image_prepull_daemon_set(pool)


def labels(args: ImagePrePullArgs) -> dict[str, str]:
    return {
        "app.kubernetes.io/part-of": args.part_of,
        "app.kubernetes.io/managed-by": "inferplane",
        naming.ENVIRONMENT_LABEL: args.environment,
        naming.POOL_LABEL: args.pool.name,
        naming.ROLE_LABEL: naming.IMAGE_PREPULL_ROLE,
    }


def ordered_images(images: Sequence[str]) -> tuple[str, ...]:
    """`images` without repeats, inferplane's pinned images before custom ones (a custom
    image without ``/bin/sh`` then blocks nothing behind it)."""
    unique = list(dict.fromkeys(images))
    known = (
        defaults.TRITON_IMAGE,
        defaults.TRITON_TRTLLM_IMAGE,
        defaults.VLLM_IMAGE,
        defaults.AWS_CLI_IMAGE,
        defaults.GCLOUD_IMAGE,
    )
    prefixes = tuple(k.split("{", 1)[0] for k in known)

    def custom(image: str) -> bool:
        return not image.startswith(prefixes)

    return tuple(sorted(unique, key=custom))


def pull_container(index: int, image: str) -> Manifest:
    return {
        "name": f"pull-{index}",
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "command": list(NO_OP),
        "env": [NO_GPU],
        "resources": RESOURCES,
        "securityContext": container_security_context(),
    }


def pod_spec(args: ImagePrePullArgs) -> Manifest:
    return {
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "terminationGracePeriodSeconds": 0,
        "securityContext": pod_security_context(),
        **gpu_placement(args.pool),
        "initContainers": [
            pull_container(i, image) for i, image in enumerate(ordered_images(args.images))
        ],
        "containers": [
            {
                "name": "pause",
                "image": defaults.PAUSE_IMAGE,
                "imagePullPolicy": "IfNotPresent",
                "resources": RESOURCES,
                "securityContext": container_security_context(),
            }
        ],
    }


def daemon_set_spec(args: ImagePrePullArgs) -> Manifest:
    selector = {naming.ROLE_LABEL: naming.IMAGE_PREPULL_ROLE, naming.POOL_LABEL: args.pool.name}
    return {
        "selector": {"matchLabels": selector},
        # Every node at once: the pods serve nothing, and a new image should be on every
        # node before a replica needs it.
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "100%"}},
        "revisionHistoryLimit": 2,
        "template": {"metadata": {"labels": labels(args)}, "spec": pod_spec(args)},
    }


class ImagePrePull(pulumi.ComponentResource):
    """The pre-pull DaemonSet ``<pool>-image-prepull`` of one pool (module docstring).

    Outputs:
        daemon_set_name: the DaemonSet's name.
    """

    daemon_set_name: pulumi.Output[str]

    def __init__(
        self, name: str, args: ImagePrePullArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("inferplane:serving:ImagePrePull", name, None, opts)
        if not args.images:
            raise ValueError(f"pool {args.pool.name!r}: no images to pre-pull")
        k8s_name = daemon_set_name(args.pool.name)
        ds = k8s.apps.v1.DaemonSet(
            name,
            metadata={
                "name": k8s_name,
                "namespace": args.namespace,
                "labels": labels(args),
                "annotations": SKIP_AWAIT,
            },
            spec=daemon_set_spec(args),
            opts=pulumi.ResourceOptions(parent=self, provider=args.provider),
        )
        self.daemon_set_name = ds.metadata.apply(lambda _: k8s_name)
        self.register_outputs({"daemon_set_name": self.daemon_set_name})
