"""The NetworkPolicies of the blueprint namespace, exactly, and what they let each pod do:
default-deny both ways, DNS for everyone, the model store (and on GKE the metadata server)
for serving and build pods, ingress to serving ports from the clients' ranges and to the
metrics port only from the monitoring namespace, nothing into build pods."""

from __future__ import annotations

import dataclasses
import ipaddress
from typing import Any

import pytest
from pod_security import ints, pods
from serving_fixtures import NETWORK_POLICY, k8s_object, serve, with_model

from inferplane.app.offline import RecordedResource, Recording
from inferplane.blueprint import naming
from inferplane.blueprint.model import ModelSource
from inferplane.components.serving.network_policies import public_ipv4_blocks, store_except
from inferplane.components.serving.spec import ServingEnvironment
from inferplane.components.serving.store.weights import HubSource

NAMESPACE = naming.namespace("support-assistant")
KUBE_DNS_PEER = {
    "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
    "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
}
DNS_PORTS = [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]
DNS_RULES = {
    "staging": {
        "to": [KUBE_DNS_PEER, {"ipBlock": {"cidr": "169.254.20.10/32"}}],
        "ports": DNS_PORTS,
    },
    "prod": {
        "to": [
            KUBE_DNS_PEER,
            {"ipBlock": {"cidr": "169.254.20.10/32"}},
            {"ipBlock": {"cidr": "169.254.169.254/32"}},  # GKE Cloud DNS
        ],
        "ports": DNS_PORTS,
    },
}
# IPv4 minus 10/8, 172.16/12, 192.168/16, 100.64/10 and 169.254/16, as 47 CIDRs
PUBLIC_IPV4 = [
    "0.0.0.0/5", "8.0.0.0/7", "11.0.0.0/8", "12.0.0.0/6", "16.0.0.0/4", "32.0.0.0/3",
    "64.0.0.0/3", "96.0.0.0/6", "100.0.0.0/10", "100.128.0.0/9", "101.0.0.0/8",
    "102.0.0.0/7", "104.0.0.0/5", "112.0.0.0/4", "128.0.0.0/3", "160.0.0.0/5",
    "168.0.0.0/8", "169.0.0.0/9", "169.128.0.0/10", "169.192.0.0/11", "169.224.0.0/12",
    "169.240.0.0/13", "169.248.0.0/14", "169.252.0.0/15", "169.255.0.0/16", "170.0.0.0/7",
    "172.0.0.0/12", "172.32.0.0/11", "172.64.0.0/10", "172.128.0.0/9", "173.0.0.0/8",
    "174.0.0.0/7", "176.0.0.0/4", "192.0.0.0/9", "192.128.0.0/11", "192.160.0.0/13",
    "192.169.0.0/16", "192.170.0.0/15", "192.172.0.0/14", "192.176.0.0/12",
    "192.192.0.0/10", "193.0.0.0/8", "194.0.0.0/7", "196.0.0.0/6", "200.0.0.0/5",
    "208.0.0.0/4", "224.0.0.0/3",
]  # fmt: skip
STORE_RULE = {
    "to": [{"ipBlock": {"cidr": cidr}} for cidr in PUBLIC_IPV4],
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
        "egress": [DNS_RULES[env_name]],
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
        "egress": [DNS_RULES["staging"], STORE_RULE],
    }


def test_engine_build_policy_gcp_adds_the_metadata_server(served):
    spec = policy(served("prod"), "toxicity-engine-build")
    assert spec["policyTypes"] == ["Ingress", "Egress"]
    assert spec["ingress"] == []
    assert spec["egress"] == [DNS_RULES["prod"], STORE_RULE, *GKE_METADATA_RULES]


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
        ("staging", [DNS_RULES["staging"], STORE_RULE]),
        ("prod", [DNS_RULES["prod"], STORE_RULE, *GKE_METADATA_RULES]),
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


POD_KINDS = ("Deployment", "Job", "DaemonSet")
POOL_ROLES = (naming.SPARE_GPU_ROLE, naming.IMAGE_PREPULL_ROLE)


@pytest.mark.parametrize("env_name", ["staging", "prod"])
def test_each_pod_gets_exactly_its_policies(reference_recording, env_name):
    rec = reference_recording(env_name)
    assert pods(rec, NAMESPACE)
    for r in rec:
        kind = r.type.rsplit(":", 1)[-1]
        if kind not in POD_KINDS or r.get("metadata", "namespace") != NAMESPACE:
            continue
        selected = _policies_of(rec, _pod_labels(r))
        if r.get("metadata", "labels", naming.ROLE_LABEL) in POOL_ROLES:
            # Spare-GPU placeholders and pre-pull daemons run pause and no-ops: the
            # namespace's default-deny holds them, with no policy of their own.
            assert set(selected) == {"default-deny", "allow-dns"}, r.name
            assert [rule for spec in selected.values() for rule in spec.get("ingress") or []] == []
            continue
        model = r.get("metadata", "labels")["inferplane.dev/model"]
        if kind == "Job":
            build = "vllm-compile" if "-compile-" in r.get("metadata", "name") else "engine-build"
            assert set(selected) == {"default-deny", "allow-dns", f"{model}-{build}"}
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


def test_store_rule_reaches_stores_and_nothing_private(staging):
    from inferplane.components.stack_serving import serving_environment

    env: ServingEnvironment = serving_environment(staging)
    blocks = [ipaddress.ip_network(c) for c in public_ipv4_blocks(env)]

    def allowed(address: str) -> bool:
        return any(ipaddress.ip_address(address) in block for block in blocks)

    # S3 us-east-1, GCS, Private Google Access' private.googleapis.com, huggingface.co's CDN
    for public in ("52.216.0.1", "142.250.0.1", "199.36.153.8", "18.164.0.1", "3.5.0.1"):
        assert allowed(public), public
    # pods, Services, nodes, the EKS service range, CGNAT pods, instance metadata, NodeLocal
    for private in ("10.64.1.2", "172.20.0.10", "192.168.1.1", "100.64.0.5",
                    "169.254.169.254", "169.254.170.23", "169.254.20.10"):  # fmt: skip
        assert not allowed(private), private
    assert sum(b.num_addresses for b in blocks) == 2**32 - sum(
        ipaddress.ip_network(c).num_addresses
        for c in (
            "10.0.0.0/8",
            "172.16.0.0/12",
            "192.168.0.0/16",
            "100.64.0.0/10",
            "169.254.0.0/16",
        )
    )


def test_store_rule_leaves_out_a_public_vpc(staging):
    from inferplane.components.stack_serving import serving_environment

    env: ServingEnvironment = serving_environment(staging)
    assert "10.64.0.0/16" not in store_except(env)  # inside 10.0.0.0/8 already
    public = dataclasses.replace(env, vpc_cidr="203.0.113.0/24")
    assert store_except(public)[-1] == "203.0.113.0/24"
    assert not any(
        ipaddress.ip_address("203.0.113.7") in ipaddress.ip_network(c)
        for c in public_ipv4_blocks(public)
    )
    assert store_except(dataclasses.replace(env, vpc_cidr=None)) == store_except(env)


def test_variants_have_their_policies(staging):
    """A model without a build Job has only its two serving policies; a vLLM model's
    compile-cache Job has its own."""
    rec: Recording = serve(staging, ["chat"])
    names = {r.get("metadata", "name") for r in rec.of_type(NETWORK_POLICY)}
    assert names == {"chat", "chat-egress", "chat-vllm-compile"}
    chat = staging.models["chat"]
    assert chat.vllm is not None
    eager = dataclasses.replace(chat.vllm, enforce_eager=True)
    rec = serve(with_model(staging, "chat", vllm=eager), ["chat"])
    names = {r.get("metadata", "name") for r in rec.of_type(NETWORK_POLICY)}
    assert names == {"chat", "chat-egress"}


def test_hf_model_reads_its_staged_copy_and_only_the_staging_job_reaches_out(prod):
    """An hf:// model's pods read the staged copy from the store like any store source
    (the store identity, the store rule); the staging Job ``weights-<key>`` has its own
    policy: no ingress, DNS and TCP 443 beyond the cluster (the hub and the store)."""
    hf = ModelSource(
        uri="hf://Qwen/Qwen2.5-7B-Instruct@abc123",
        scheme="hf",
        bucket=None,
        key=None,
        hf_repo="Qwen/Qwen2.5-7B-Instruct",
        hf_revision="abc123",
    )
    rec = serve(with_model(prod, "chat", source=hf), ["chat"])
    assert policy(rec, "chat-egress")["egress"] == [
        DNS_RULES["prod"],
        STORE_RULE,
        *GKE_METADATA_RULES,
    ]
    spec = k8s_object(rec, "kubernetes:apps/v1:Deployment", "chat").get("spec", "template", "spec")
    assert spec["serviceAccountName"] == "model-reader"
    job = HubSource("Qwen/Qwen2.5-7B-Instruct", "abc123").job_name
    staging = policy(rec, job)
    assert staging["policyTypes"] == ["Ingress", "Egress"]
    assert staging["ingress"] == []
    assert staging["egress"] == [DNS_RULES["prod"], STORE_RULE, *GKE_METADATA_RULES]
    assert staging["podSelector"]["matchLabels"]["app.kubernetes.io/component"] == (
        "weights-staging"
    )
    # The staging Job starts only once its policy allows its egress.
    job_resource = k8s_object(rec, "kubernetes:batch/v1:Job", job)
    assert k8s_object(rec, NETWORK_POLICY, job).urn in job_resource.depends_on


def test_kubernetes_store_clients_reach_the_endpoint_and_downloads_add_https() -> None:
    """On kubernetes the store is its endpoint: a build pod (writer keys) gets DNS and the
    store's pods only; a pod that downloads (hub, package index) also HTTPS outside the
    cluster. Neither gets a rule open to every address."""
    from inferplane.components.serving.network_policies import isolated_store_client_spec

    env = ServingEnvironment(
        part_of="demo",
        environment="local",
        cloud="kubernetes",
        region="local",
        store_endpoint="http://store.inferplane-system.svc:9000",
        store_pod_labels={"app.kubernetes.io/name": "store"},
    )
    dns = {"to": [KUBE_DNS_PEER, {"ipBlock": {"cidr": "169.254.20.10/32"}}], "ports": DNS_PORTS}
    store = {
        "to": [
            {
                "namespaceSelector": {
                    "matchLabels": {"kubernetes.io/metadata.name": "inferplane-system"}
                },
                "podSelector": {"matchLabels": {"app.kubernetes.io/name": "store"}},
            }
        ],
        "ports": [{"protocol": "TCP", "port": 9000}],
    }
    pod = {"job": "x"}
    assert isolated_store_client_spec(pod, env) == {
        "podSelector": {"matchLabels": pod},
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [],
        "egress": [dns, store],
    }
    assert isolated_store_client_spec(pod, env, internet=True)["egress"] == [dns, STORE_RULE, store]
