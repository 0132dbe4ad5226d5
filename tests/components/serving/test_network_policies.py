"""The NetworkPolicies of the blueprint namespace, exactly, and what they let each pod do:
default-deny both ways, DNS for everyone, the model store (and on GKE the metadata server)
for serving and build pods, ingress to serving ports from the clients' ranges and to the
metrics port only from the monitoring namespace, nothing into build pods."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from pod_security import ints, pods
from serving_fixtures import NETWORK_POLICY, k8s_object, serve

from inferplane.app.offline import RecordedResource, Recording
from inferplane.blueprint import naming
from inferplane.components.serving.network_policies import store_except
from inferplane.components.serving.spec import ServingEnvironment

NAMESPACE = naming.namespace("support-assistant")
DNS_RULE = {
    "to": [
        {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
            "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
        }
    ],
    "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
}
STORE_RULE = {
    "to": [
        {
            "ipBlock": {
                "cidr": "0.0.0.0/0",
                "except": [
                    "10.0.0.0/8",
                    "172.16.0.0/12",
                    "192.168.0.0/16",
                    "100.64.0.0/10",
                    "169.254.0.0/16",
                ],
            }
        }
    ],
    "ports": [{"protocol": "TCP", "port": 443}],
}
GKE_METADATA_RULES = [
    {
        "to": [{"ipBlock": {"cidr": "169.254.169.254/32"}}],
        "ports": [{"protocol": "TCP", "port": 80}],
    },
    {
        "to": [{"ipBlock": {"cidr": "169.254.169.252/32"}}],
        "ports": [{"protocol": "TCP", "port": 988}],
    },
]


def policy(rec: Recording, name: str) -> dict[str, Any]:
    spec: dict[str, Any] = ints(k8s_object(rec, NETWORK_POLICY, name).get("spec"))
    return spec


@pytest.mark.parametrize("env_name", ["staging", "prod"])
def test_namespace_denies_everything_but_dns(reference_recording, env_name):
    rec = reference_recording(env_name)
    assert policy(rec, "default-deny") == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    assert policy(rec, "allow-dns") == {
        "podSelector": {},
        "policyTypes": ["Egress"],
        "egress": [DNS_RULE],
    }
    for name in ("default-deny", "allow-dns"):
        assert k8s_object(rec, NETWORK_POLICY, name).get("metadata", "namespace") == NAMESPACE


def test_models_wait_for_the_namespace_policies(reference_recording):
    rec = reference_recording("staging")
    guard_rails = {k8s_object(rec, NETWORK_POLICY, n).urn for n in ("default-deny", "allow-dns")}
    server = rec.named("support-assistant-staging-chat", "inferplane:serving:ModelServer")
    assert guard_rails <= set(server.depends_on)


def test_engine_build_policy_aws(served):
    rec = served("staging")
    assert policy(rec, "ranker-engine-build") == {
        "podSelector": {
            "matchLabels": {
                "app.kubernetes.io/name": "ranker-engine-build",
                "app.kubernetes.io/part-of": "support-assistant-engines",
                "app.kubernetes.io/managed-by": "inferplane",
                "app.kubernetes.io/component": "engine-build",
                "inferplane.dev/environment": "staging",
                "inferplane.dev/pool": "l4",
            }
        },
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [],
        "egress": [DNS_RULE, STORE_RULE],
    }


def test_engine_build_policy_gcp_adds_the_metadata_server(served):
    spec = policy(served("prod"), "toxicity-engine-build")
    assert spec["policyTypes"] == ["Ingress", "Egress"]
    assert spec["ingress"] == []
    assert spec["egress"] == [DNS_RULE, STORE_RULE, *GKE_METADATA_RULES]


def test_engine_build_job_waits_for_its_policy(served):
    rec = served("staging")
    netpol = k8s_object(rec, NETWORK_POLICY, "ranker-engine-build")
    (job,) = [
        j
        for j in rec.of_type("kubernetes:batch/v1:Job")
        if j.name.startswith("support-assistant-staging-ranker-engine-")
    ]
    assert netpol.urn in job.depends_on


@pytest.mark.parametrize(
    ("env_name", "egress"),
    [
        ("staging", [DNS_RULE, STORE_RULE]),
        ("prod", [DNS_RULE, STORE_RULE, *GKE_METADATA_RULES]),
    ],
)
def test_serving_egress_policy(served, env_name, egress):
    rec = served(env_name)
    assert policy(rec, "chat-egress") == {
        "podSelector": {
            "matchLabels": {
                "app.kubernetes.io/part-of": "support-assistant",
                "inferplane.dev/model": "chat",
            }
        },
        "policyTypes": ["Egress"],
        "egress": egress,
    }
    deployment = k8s_object(rec, "kubernetes:apps/v1:Deployment", "chat")
    assert k8s_object(rec, NETWORK_POLICY, "chat-egress").urn in deployment.depends_on


def test_monitoring_reaches_only_the_metrics_port(served):
    """Prometheus' namespace is admitted to the metrics port and nothing else; Triton's
    serving ports are for the clients' ranges only."""
    spec = policy(served("prod"), "nightly-embed")
    assert spec["policyTypes"] == ["Ingress"]
    from_monitoring = [
        rule
        for rule in spec["ingress"]
        if any("namespaceSelector" in peer for peer in rule["from"])
    ]
    assert from_monitoring == [
        {
            "from": [
                {
                    "namespaceSelector": {
                        "matchLabels": {"kubernetes.io/metadata.name": "monitoring"}
                    }
                }
            ],
            "ports": [{"protocol": "TCP", "port": 8002}],
        }
    ]


# --- what each pod may do ---------------------------------------------------------------
def _selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    assert set(selector) <= {"matchLabels"}, selector  # inferplane writes matchLabels only
    return all(labels.get(k) == v for k, v in (selector.get("matchLabels") or {}).items())


def _policies_of(rec: Recording, labels: dict[str, str]) -> dict[str, dict[str, Any]]:
    out = {}
    for r in rec.of_type(NETWORK_POLICY):
        if r.get("metadata", "namespace") == NAMESPACE and _selects(
            r.get("spec", "podSelector"), labels
        ):
            out[r.get("metadata", "name")] = ints(r.get("spec"))
    return out


def _pod_labels(resource: RecordedResource) -> dict[str, str]:
    labels: dict[str, str] = resource.get("spec", "template", "metadata", "labels")
    return labels


@pytest.mark.parametrize("env_name", ["staging", "prod"])
def test_each_pod_gets_exactly_its_policies(reference_recording, env_name):
    rec = reference_recording(env_name)
    assert pods(rec, NAMESPACE)
    for r in rec:
        kind = r.type.rsplit(":", 1)[-1]
        if kind not in ("Deployment", "Job") or r.get("metadata", "namespace") != NAMESPACE:
            continue
        selected = _policies_of(rec, _pod_labels(r))
        model = r.get("metadata", "labels")["inferplane.dev/model"]
        if kind == "Job":
            assert set(selected) == {"default-deny", "allow-dns", f"{model}-engine-build"}
        else:
            assert set(selected) == {"default-deny", "allow-dns", model, f"{model}-egress"}
        ingress = [rule for spec in selected.values() for rule in spec.get("ingress") or []]
        egress_ports = {
            (p["protocol"], p["port"])
            for spec in selected.values()
            for rule in spec.get("egress") or []
            for p in rule["ports"]
        }
        metadata = {("TCP", 80), ("TCP", 988)} if env_name == "prod" else set()
        assert egress_ports == {("UDP", 53), ("TCP", 53), ("TCP", 443)} | metadata
        if kind == "Job":
            assert ingress == []  # nothing reaches a build pod


def test_store_rule_leaves_out_a_public_vpc(staging):
    from inferplane.components.stack_serving import serving_environment

    env: ServingEnvironment = serving_environment(staging)
    assert "10.64.0.0/16" not in store_except(env)  # inside 10.0.0.0/8 already
    public = dataclasses.replace(env, vpc_cidr="203.0.113.0/24")
    assert store_except(public)[-1] == "203.0.113.0/24"
    assert store_except(dataclasses.replace(env, vpc_cidr=None)) == store_except(env)


def test_variants_have_their_policies(staging):
    """A model without an engine build has only its two serving policies."""
    rec: Recording = serve(staging, ["chat"])
    names = {r.get("metadata", "name") for r in rec.of_type(NETWORK_POLICY)}
    assert names == {"chat", "chat-egress"}
