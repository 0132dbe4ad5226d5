"""Cloud facts every component of one environment shares: the explicit cloud provider,
resource tags and labels, and the cloud's own naming limits.

The provider is created from the blueprint (region, project), never from ambient stack
configuration, so an environment cannot land in another region by accident.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_gcp as gcp

from inferplane.blueprint import naming
from inferplane.blueprint.model import Environment

MANAGED_BY = "inferplane"

_GCP_LABEL_INVALID = re.compile(r"[^a-z0-9_-]")


def cluster_name(env: Environment) -> str:
    """The EKS/GKE cluster's name: the existing cluster's, or the stack name for a new one.

    Known before anything is created, so autoscaler tags and IAM conditions can use it."""
    if env.cluster.existing:
        return env.cluster.existing
    return naming.stack_name(env.blueprint, env.name)


def aws_tags(env: Environment, **extra: str) -> dict[str, str]:
    """Tags on every AWS resource that takes them (AWS allows `@` and `.` in values)."""
    tags = {
        "inferplane.dev/blueprint": env.blueprint,
        "inferplane.dev/environment": env.name,
        "managed-by": MANAGED_BY,
    }
    if env.owner:
        tags["owner"] = env.owner
    tags.update(extra)
    return tags


def gcp_label_value(value: str) -> str:
    """A GCP label value: lowercase letters, digits, `_` and `-`, at most 63 characters.

    ``ml-platform@example.com`` -> ``ml-platform_example_com``."""
    return _GCP_LABEL_INVALID.sub("_", value.lower())[:63]


def gcp_labels(env: Environment, **extra: str) -> dict[str, str]:
    """Labels on every GCP resource that takes them (keys and values sanitised)."""
    labels = {
        "inferplane-blueprint": gcp_label_value(env.blueprint),
        "inferplane-environment": gcp_label_value(env.name),
        "managed-by": MANAGED_BY,
    }
    if env.owner:
        labels["owner"] = gcp_label_value(env.owner)
    labels.update({k: gcp_label_value(v) for k, v in extra.items()})
    return labels


def cloud_provider(
    name: str, env: Environment, parent: pulumi.Resource
) -> aws.Provider | gcp.Provider:
    """The environment's AWS or GCP provider, pinned to its region (and project)."""
    opts = pulumi.ResourceOptions(parent=parent)
    if env.cloud == "aws":
        return aws.Provider(
            f"{name}-aws",
            region=env.region,
            default_tags=aws.ProviderDefaultTagsArgs(tags=aws_tags(env)),
            opts=opts,
        )
    return gcp.Provider(
        f"{name}-gcp",
        project=env.project,
        region=env.region,
        default_labels=gcp_labels(env),
        opts=opts,
    )


def present(value: str | None, what: str) -> str:
    """`value`, which the cloud always reports once the resource exists."""
    if not value:
        raise ValueError(f"the cloud reported no {what}")
    return value


def gcp_account_id(stack: str, role: str) -> str:
    """A GCP service-account id (6-30 characters, `[a-z][a-z0-9-]*[a-z0-9]`) for `role`
    of one stack; long stack names are shortened with a stable hash so ids stay unique."""
    account = f"{stack}-{role}"
    if len(account) <= 30:
        return account
    digest = naming.short_hash(stack, length=6)
    keep = 30 - len(role) - len(digest) - 2
    return f"{stack[:keep].rstrip('-')}-{digest}-{role}"


def kubeconfig(
    cluster: str, endpoint: pulumi.Input[str], ca_data: pulumi.Input[str], exec_: Mapping[str, Any]
) -> pulumi.Output[str]:
    """A kubeconfig for one cluster whose credentials come from an exec plugin, as a secret.

    Tokens are never stored: the plugin fetches a short-lived one at each connection."""

    def render(args: list[str]) -> str:
        server, ca = args
        if not server.startswith("https://"):
            server = f"https://{server}"
        doc = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {"name": cluster, "cluster": {"server": server, "certificate-authority-data": ca}}
            ],
            "contexts": [{"name": cluster, "context": {"cluster": cluster, "user": cluster}}],
            "current-context": cluster,
            "users": [{"name": cluster, "user": {"exec": dict(exec_)}}],
        }
        return json.dumps(doc, indent=2)

    return pulumi.Output.secret(pulumi.Output.all(endpoint, ca_data).apply(render))


def eks_exec(cluster: str, region: str) -> dict[str, Any]:
    """`aws eks get-token` as a client-go exec credential plugin."""
    return {
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "command": "aws",
        "args": [
            "eks",
            "get-token",
            "--cluster-name",
            cluster,
            "--region",
            region,
            "--output",
            "json",
        ],
        "interactiveMode": "Never",
    }


def gke_exec() -> dict[str, Any]:
    """`gke-gcloud-auth-plugin` as a client-go exec credential plugin."""
    return {
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "command": "gke-gcloud-auth-plugin",
        "installHint": "Install gke-gcloud-auth-plugin: "
        "https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl",
        "provideClusterInfo": True,
        "interactiveMode": "Never",
    }
