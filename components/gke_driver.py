"""Google's COS driver installer for GKE GPU nodes that opt out of GKE's own device plugin
(the GPU Operator runs theirs).

Two forms, so that every such node runs exactly one: beside a GPU Operator inferplane
installs, one installer for the cluster's opted-out GPU nodes (`GKE_DRIVER_INSTALLER`);
and for a blueprint on a cluster whose GPU Operator is `existing`, one installer for that
blueprint's nodes only, which carry `naming.DRIVER_INSTALLER_LABEL` and which the first
form skips. The blueprint's GKE GPU nodes boot with GKE's driver installation off
(`inferplane.components.node_pool.GKE_DRIVER_VERSION`), and a GPU Operator on GKE runs with
its own driver disabled and Google's installer beside it
(https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-operator), so an existing
Operator brings these nodes no driver: without the second form a new node of the
blueprint would never get one. Running the installer where one ran already is harmless:
it finds its cached build and only loads it (cos_gpu_installer
``internal/commands/install.go``, ``cacher.IsCached``)."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint import naming
from inferplane.blueprint.upstream.gke_drivers import InstallerVersion
from inferplane.components import addon_values

GKE_DRIVER_INSTALLER = "inferplane-nvidia-driver-installer"
GKE_INSTALLER_IMAGE = "cos-nvidia-installer:fixed"
"""Preloaded on GKE COS nodes (hence never pulled)."""
GKE_INSTALLER_COMMAND = ("/cos-gpu-installer", "install")
"""The installer with no ``--version`` installs the *default* driver of the node's COS build;
``--version=latest`` (`LATEST_FLAG`) the build's latest. Both are read per COS build (the
``default``/``latest`` artifact under the build number), so the driver changes only when
the node pool's GKE version does, whichever is chosen (cos.googlesource.com/cos/tools
``src/cmd/cos_gpu_installer/internal/commands/install.go``: "It will install the default GPU
driver if the flag is not set explicitly. Set the flag to 'latest' to install the latest
GPU driver version"; ``getDriverVersion``). Google's own
``nvidia-driver-installer/cos/daemonset-preloaded.yaml`` and ``daemonset-preloaded-latest.yaml``
in GoogleCloudPlatform/container-engine-accelerators run it without and with the flag. Which
one a blueprint's nodes get is `inferplane.blueprint.upstream.gke_drivers.installer_version`: the
default while it runs every model's serving release, else the latest (CUDA 13 builds need
R580, above the default that GKE nodes were seen to get)."""
LATEST_FLAG = "--version=latest"


def installer_command(version: InstallerVersion) -> list[str]:
    """The installer's command for `version` (``default``: no flag)."""
    return [*GKE_INSTALLER_COMMAND, *([LATEST_FLAG] if version == "latest" else [])]


def installer_name(blueprint: str | None) -> str:
    """The installer DaemonSet's name: `GKE_DRIVER_INSTALLER` for the cluster's, the
    blueprint's own (`naming.cluster_scoped_name`) for one blueprint's nodes."""
    if blueprint is None:
        return GKE_DRIVER_INSTALLER
    return naming.cluster_scoped_name(blueprint, "nvidia-driver-installer")


def node_selector(blueprint: str | None) -> list[dict[str, object]]:
    """The nodes an installer runs on: GPU nodes that opted out of GKE's device plugin
    (other pools keep GKE's managed driver installation); the cluster's installer skips
    those whose blueprint runs its own, a blueprint's selects exactly those."""
    own: dict[str, object] = (
        {"key": naming.DRIVER_INSTALLER_LABEL, "operator": "DoesNotExist"}
        if blueprint is None
        else {"key": naming.DRIVER_INSTALLER_LABEL, "operator": "In", "values": [blueprint]}
    )
    return [
        {"key": "cloud.google.com/gke-accelerator", "operator": "Exists"},
        {"key": "gke-no-default-nvidia-gpu-device-plugin", "operator": "In", "values": ["true"]},
        own,
    ]


def driver_installer(
    name: str,
    opts: pulumi.ResourceOptions,
    blueprint: str | None = None,
    version: InstallerVersion = "default",
) -> k8s.apps.v1.DaemonSet:
    """The installer DaemonSet `installer_name(blueprint)` in kube-system (Pulumi name
    `name`): the cluster's (`blueprint` None) or one blueprint's, installing the `version`
    driver of the node's COS build (`installer_command`). `opts` carries the parent and
    provider."""
    dir_ = addon_values.GKE_NVIDIA_DIR
    labels = {"k8s-app": installer_name(blueprint)}
    host = {
        "dev": "/dev",
        "vulkan-icd-mount": f"{dir_}/vulkan/icd.d",
        "nvidia-install-dir-host": dir_,
        "root-mount": "/",
        "cos-tools": "/var/lib/cos-tools",
    }
    mounts = {
        "nvidia-install-dir-host": "/usr/local/nvidia",
        "vulkan-icd-mount": "/etc/vulkan/icd.d",
        "dev": "/dev",
        "root-mount": "/root",
        "cos-tools": "/build/cos-tools",
    }
    env = {
        "NVIDIA_INSTALL_DIR_HOST": dir_,
        "NVIDIA_INSTALL_DIR_CONTAINER": "/usr/local/nvidia",
        "VULKAN_ICD_DIR_HOST": f"{dir_}/vulkan/icd.d",
        "VULKAN_ICD_DIR_CONTAINER": "/etc/vulkan/icd.d",
        "ROOT_MOUNT_DIR": "/root",
        "COS_TOOLS_DIR_HOST": "/var/lib/cos-tools",
        "COS_TOOLS_DIR_CONTAINER": "/build/cos-tools",
    }
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": node_selector(blueprint)}]
            }
        }
    }
    return k8s.apps.v1.DaemonSet(
        name,
        metadata={
            "name": installer_name(blueprint),
            "namespace": naming.KUBE_SYSTEM_NAMESPACE,
            "labels": labels,
        },
        spec={
            "selector": {"matchLabels": labels},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "priorityClassName": "system-node-critical",
                    "affinity": affinity,
                    "tolerations": [{"operator": "Exists"}],
                    "hostNetwork": True,
                    "hostPID": True,
                    "volumes": [{"name": n, "hostPath": {"path": p}} for n, p in host.items()],
                    "initContainers": [
                        {
                            "name": "nvidia-driver-installer",
                            "image": GKE_INSTALLER_IMAGE,
                            "imagePullPolicy": "Never",
                            "command": installer_command(version),
                            "env": [{"name": k, "value": v} for k, v in env.items()],
                            "resources": {"requests": {"cpu": "150m"}},
                            "securityContext": {"privileged": True},
                            "volumeMounts": [
                                {"name": n, "mountPath": p} for n, p in mounts.items()
                            ],
                        }
                    ],
                    "containers": [
                        {
                            "name": "pause",
                            "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": "1m", "memory": "8Mi"}},
                        }
                    ],
                },
            },
        },
        opts=opts,
    )
