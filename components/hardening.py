"""The blueprint namespace's own guard rails: Pod Security Admission and default-deny.

- Pod Security Admission enforces the ``restricted`` profile on the namespace, and warns and
  audits at the same level (https://kubernetes.io/docs/concepts/security/pod-security-admission/,
  "Pod Security Admission labels for namespaces"). The profile's version is pinned to the
  cluster's Kubernetes minor version when the blueprint creates the cluster, so an upgrade
  of the API server never tightens the rules under running pods unannounced; an attached
  cluster's version is unknown here, so it gets ``latest``. Every pod inferplane puts in the
  namespace satisfies the profile (tests/components/serving/test_pod_security.py checks
  them all).
- NetworkPolicy ``default-deny`` selects every pod and allows nothing, in either direction;
  ``allow-dns`` lets every pod resolve names. Everything else is allowed per kind of pod
  (`inferplane.components.serving.network_policies`, `...serving.load_balancer`).
  NetworkPolicies are additive: once default-deny isolates a pod, it may do exactly what
  the union of the policies selecting it allows.
"""

from __future__ import annotations

from typing import Final

import pulumi
import pulumi_kubernetes as k8s

from inferplane.components.serving.containers import Manifest
from inferplane.components.serving.network_policies import namespace_dns_policy_spec

PSA_PREFIX: Final = "pod-security.kubernetes.io/"
PSA_LEVEL: Final = "restricted"
PSA_MODES: Final = ("enforce", "warn", "audit")
DEFAULT_DENY: Final = "default-deny"
ALLOW_DNS: Final = "allow-dns"


def pod_security_version(kubernetes_version: str | None) -> str:
    """``v<major>.<minor>`` of a known cluster version (``1.33``), else ``latest``."""
    if not kubernetes_version:
        return "latest"
    major, minor = kubernetes_version.lstrip("v").split(".")[:2]
    return f"v{int(major)}.{int(minor)}"


def pod_security_labels(kubernetes_version: str | None) -> dict[str, str]:
    """The namespace labels that enforce, warn and audit the ``restricted`` profile."""
    version = pod_security_version(kubernetes_version)
    labels = {}
    for mode in PSA_MODES:
        labels[f"{PSA_PREFIX}{mode}"] = PSA_LEVEL
        labels[f"{PSA_PREFIX}{mode}-version"] = version
    return labels


def default_deny_spec() -> Manifest:
    """Every pod of the namespace isolated for ingress and egress, with no rule allowing."""
    return {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}


def namespace_network_policies(
    name: str,
    *,
    cloud: str,
    namespace: pulumi.Input[str],
    labels: dict[str, str],
    opts: pulumi.ResourceOptions,
) -> list[k8s.networking.v1.NetworkPolicy]:
    """NetworkPolicies ``default-deny`` and ``allow-dns`` (Pulumi names ``<name>-…``);
    `opts` carries the parent and provider."""
    return [
        k8s.networking.v1.NetworkPolicy(
            f"{name}-{policy}",
            metadata={"name": policy, "namespace": namespace, "labels": labels},
            spec=spec,
            opts=opts,
        )
        for policy, spec in (
            (DEFAULT_DENY, default_deny_spec()),
            (ALLOW_DNS, namespace_dns_policy_spec(cloud)),
        )
    ]
