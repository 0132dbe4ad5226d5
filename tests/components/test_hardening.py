"""The blueprint namespace enforces, warns and audits Pod Security `restricted`, at the
cluster's version when the blueprint creates the cluster."""

from __future__ import annotations

import pytest

from inferplane.components.hardening import pod_security_labels, pod_security_version

NAMESPACE = "kubernetes:core/v1:Namespace"


def _labels(rec, name: str) -> dict[str, str]:
    (namespace,) = [r for r in rec.of_type(NAMESPACE) if r.get("metadata", "name") == name]
    labels: dict[str, str] = namespace.get("metadata", "labels")
    return labels


def test_created_cluster_pins_the_profile_version(reference_recording):
    # staging creates an EKS 1.33 cluster
    assert _labels(reference_recording("staging"), "support-assistant") == {
        "app.kubernetes.io/part-of": "support-assistant",
        "app.kubernetes.io/managed-by": "inferplane",
        "inferplane.dev/environment": "staging",
        "elbv2.k8s.aws/pod-readiness-gate-inject": "enabled",
        "pod-security.kubernetes.io/enforce": "restricted",
        "pod-security.kubernetes.io/enforce-version": "v1.33",
        "pod-security.kubernetes.io/warn": "restricted",
        "pod-security.kubernetes.io/warn-version": "v1.33",
        "pod-security.kubernetes.io/audit": "restricted",
        "pod-security.kubernetes.io/audit-version": "v1.33",
    }


def test_attached_cluster_uses_the_latest_profile(reference_recording):
    # prod attaches an existing GKE cluster, whose version the blueprint does not set
    assert _labels(reference_recording("prod"), "support-assistant") == {
        "app.kubernetes.io/part-of": "support-assistant",
        "app.kubernetes.io/managed-by": "inferplane",
        "inferplane.dev/environment": "prod",
        "pod-security.kubernetes.io/enforce": "restricted",
        "pod-security.kubernetes.io/enforce-version": "latest",
        "pod-security.kubernetes.io/warn": "restricted",
        "pod-security.kubernetes.io/warn-version": "latest",
        "pod-security.kubernetes.io/audit": "restricted",
        "pod-security.kubernetes.io/audit-version": "latest",
    }


@pytest.mark.parametrize(
    ("version", "label"),
    [("1.33", "v1.33"), ("v1.34", "v1.34"), ("1.32.5", "v1.32"), (None, "latest"), ("", "latest")],
)
def test_profile_version(version, label):
    assert pod_security_version(version) == label
    assert set(pod_security_labels(version).values()) == {"restricted", label}
