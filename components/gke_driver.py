"""Google's COS driver installer for GKE GPU nodes that opt out of GKE's own device plugin
(the GPU Operator runs theirs), installed beside the GPU Operator inferplane installs."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint import naming
from inferplane.components import addon_values

GKE_DRIVER_INSTALLER = "inferplane-nvidia-driver-installer"
GKE_INSTALLER_IMAGE = "cos-nvidia-installer:fixed"
"""Preloaded on GKE COS nodes (hence never pulled)."""
GKE_INSTALLER_COMMAND = ("/cos-gpu-installer", "install")
"""No ``--version``: the installer then installs the *default* driver of the node's COS
release, which GKE ships per node version, so the driver changes only when the node pool's
GKE version does. ``--version=latest`` would take whatever newest driver COS publishes
when a node boots, so two nodes of one pool could run different drivers, and a new driver
could arrive with no change to the cluster at all (cos_gpu_installer
``internal/commands/install.go``: "It will install the default GPU driver if the flag is
not set explicitly. Set the flag to 'latest' to install the latest GPU driver version";
Google's own ``nvidia-driver-installer/cos/daemonset-preloaded.yaml`` in
GoogleCloudPlatform/container-engine-accelerators runs it without the flag; the GKE
equivalent of the node pool setting is ``gpu_driver_version = "DEFAULT"``: "install the
default driver version for your GKE node version",
https://cloud.google.com/kubernetes-engine/docs/how-to/gpus)."""


def driver_installer(name: str, opts: pulumi.ResourceOptions) -> k8s.apps.v1.DaemonSet:
    """The DaemonSet `GKE_DRIVER_INSTALLER` in kube-system (Pulumi name `name`); `opts`
    carries the parent and provider."""
    dir_ = addon_values.GKE_NVIDIA_DIR
    labels = {"k8s-app": GKE_DRIVER_INSTALLER}
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
    # Only GPU nodes that opted out of GKE's device plugin (ours): nodes of other pools
    # keep GKE's managed driver installation.
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "cloud.google.com/gke-accelerator", "operator": "Exists"},
                            {
                                "key": "gke-no-default-nvidia-gpu-device-plugin",
                                "operator": "In",
                                "values": ["true"],
                            },
                        ]
                    }
                ]
            }
        }
    }
    return k8s.apps.v1.DaemonSet(
        name,
        metadata={
            "name": GKE_DRIVER_INSTALLER,
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
                            "command": list(GKE_INSTALLER_COMMAND),
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
