"""Cloud facts every component of one environment shares: the explicit cloud provider,
resource tags and labels, and the cloud's own naming limits.

The provider is created from explicit values (region, project), never from ambient stack
configuration, so an environment cannot land in another region by accident.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import pulumi
import pulumi_aws as aws
import pulumi_gcp as gcp

from inferplane.blueprint import naming

MANAGED_BY = "inferplane"

_GCP_LABEL_INVALID = re.compile(r"[^a-z0-9_-]")

Cloud = Literal["aws", "gcp", "kubernetes"]
"""``kubernetes``: a cluster by kubeconfig context, where no cloud API is called."""


@dataclass(frozen=True)
class Ownership:
    """Who a set of cloud resources belongs to: written as tags (AWS) or labels (GCP) on every
    resource that takes them, and the prefix of the cloud names the components choose."""

    blueprint: str
    """The application (a blueprint's name): tag ``inferplane.dev/blueprint``."""
    environment: str
    """The environment (``staging``, ``prod``...): tag ``inferplane.dev/environment``."""
    owner: str | None = None
    """Team or e-mail in the ``owner`` tag; None writes no ``owner`` tag."""

    @property
    def stack(self) -> str:
        """``<blueprint>-<environment>``: the prefix of cloud resource names."""
        return naming.stack_name(self.blueprint, self.environment)


def aws_tags(owner: Ownership, **extra: str) -> dict[str, str]:
    """Tags on every AWS resource that takes them (AWS allows `@` and `.` in values)."""
    tags = {
        "inferplane.dev/blueprint": owner.blueprint,
        "inferplane.dev/environment": owner.environment,
        "managed-by": MANAGED_BY,
    }
    if owner.owner:
        tags["owner"] = owner.owner
    tags.update(extra)
    return tags


def gcp_label_value(value: str) -> str:
    """A GCP label value: lowercase letters, digits, `_` and `-`, at most 63 characters.

    ``ml-platform@example.com`` -> ``ml-platform_example_com``."""
    return _GCP_LABEL_INVALID.sub("_", value.lower())[:63]


def gcp_labels(owner: Ownership, **extra: str) -> dict[str, str]:
    """Labels on every GCP resource that takes them (keys and values sanitised)."""
    labels = {
        "inferplane-blueprint": gcp_label_value(owner.blueprint),
        "inferplane-environment": gcp_label_value(owner.environment),
        "managed-by": MANAGED_BY,
    }
    if owner.owner:
        labels["owner"] = gcp_label_value(owner.owner)
    labels.update({k: gcp_label_value(v) for k, v in extra.items()})
    return labels


def cloud_provider(
    name: str,
    cloud: Cloud,
    region: str,
    project: str | None,
    owner: Ownership,
    parent: pulumi.Resource,
) -> aws.Provider | gcp.Provider:
    """An AWS or GCP provider pinned to `region` (and on GCP `project`), tagging everything
    it creates with `owner`. A kubernetes environment has none (ValueError)."""
    if cloud == "kubernetes":
        raise ValueError("a kubernetes environment calls no cloud API: it has no cloud provider")
    opts = pulumi.ResourceOptions(parent=parent)
    if cloud == "aws":
        return aws.Provider(
            f"{name}-aws",
            region=region,
            default_tags=aws.ProviderDefaultTagsArgs(tags=aws_tags(owner)),
            opts=opts,
        )
    return gcp.Provider(
        f"{name}-gcp",
        project=project,
        region=region,
        default_labels=gcp_labels(owner),
        opts=opts,
    )


def moved_from_parent(
    opts: pulumi.ResourceOptions | None,
) -> list[pulumi.Input[str | pulumi.Alias]]:
    """Aliases for the children of a cluster component: before `EksCluster`/`GkeCluster`
    existed they were children of its parent (`Cluster`), so their URNs move with an
    ``Alias(parent=…)`` instead of being replaced."""
    parent = opts.parent if opts is not None else None
    return [pulumi.Alias(parent=parent)] if parent is not None else []


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
