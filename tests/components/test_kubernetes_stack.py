"""A `cloud: kubernetes` environment under mocks (support-assistant's `local`): no cloud
resource or provider, a Kubernetes provider for the kubeconfig context, the blueprint's
namespace labelled (not created), Services of the chosen type, and the model store reached
through its endpoint with keys from existing Secrets only."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest

from inferplane.app.offline import Recording, run_program
from inferplane.blueprint.model import Environment
from inferplane.components.serving.network_policies import (
    NAMESPACE_NAME_LABEL,
    store_endpoint_egress_rule,
)
from inferplane.components.stack_serving import serving_environment

Get = Callable[[str], Recording]
ENDPOINT = "http://store.inferplane-system.svc:9000"
SECRETS = {"store-reader", "store-engine-builder", "store-vllm-compiler"}


def _containers(rec: Recording) -> list[tuple[str, dict[str, Any]]]:
    """(pod owner name, container) of every Deployment, Job and DaemonSet."""
    out = []
    for r in rec:
        if r.type.split(":")[-1] not in ("Deployment", "Job", "DaemonSet"):
            continue
        pod = r.get("spec", "template", "spec") or {}
        for c in [*(pod.get("initContainers") or []), *(pod.get("containers") or [])]:
            out.append((r.name, c))
    return out


def test_no_cloud_resource_or_provider(reference_recording: Get) -> None:
    rec = reference_recording("local")
    assert [r.type for r in rec if r.type.split(":")[0] in ("aws", "gcp")] == []
    assert [r.type for r in rec if r.type.startswith("pulumi:providers:")] == [
        "pulumi:providers:kubernetes"
    ]
    assert not rec.of_type("inferplane:node_pool:GpuNodePool")


def test_the_provider_names_the_context_and_holds_no_kubeconfig(reference_recording: Get) -> None:
    rec = reference_recording("local")
    (provider,) = rec.of_type("pulumi:providers:kubernetes")
    assert provider.inputs["context"] == "inferplane-local"
    assert "kubeconfig" not in provider.inputs
    for r in rec:
        if r.custom and r.type.startswith("kubernetes:"):
            assert r.provider == provider.urn, r.name
    assert rec.outputs["cluster_name"] == "inferplane-local"


def test_the_namespace_is_labelled_not_created(reference_recording: Get) -> None:
    rec = reference_recording("local")
    namespaces = [r.get("metadata", "name") for r in rec.of_type("kubernetes:core/v1:Namespace")]
    assert "support-assistant" not in namespaces
    (patch,) = rec.of_type("kubernetes:core/v1:NamespacePatch")
    labels = patch.get("metadata", "labels")
    assert patch.get("metadata", "name") == "support-assistant"
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"


def test_no_node_autoscaler_or_aws_controller(reference_recording: Get) -> None:
    rec = reference_recording("local")
    charts = {r.inputs.get("chart") for r in rec.of_type("kubernetes:helm.sh/v3:Release")}
    assert charts == {"gpu-operator", "keda", "kube-prometheus-stack"}


def test_services_are_cluster_ip_by_default(reference_recording: Get) -> None:
    rec = reference_recording("local")
    lbs = [r for r in rec.of_type("kubernetes:core/v1:Service") if r.name.endswith("-lb")]
    assert len(lbs) == 4
    for svc in lbs:
        assert svc.get("spec", "type") == "ClusterIP", svc.name
        assert not svc.get("metadata", "annotations"), svc.name
        assert "loadBalancerSourceRanges" not in svc.inputs["spec"]
    assert rec.outputs["model_endpoints"]["chat"] == ("chat-lb.support-assistant.svc.cluster.local")


def test_load_balancer_services_carry_no_cloud_annotation(
    reference_env: Callable[[str], Environment],
) -> None:
    env = reference_env("local")
    env = dataclasses.replace(
        env, cluster=dataclasses.replace(env.cluster, load_balancer="load_balancer")
    )
    rec = run_program(env)
    lbs = [r for r in rec.of_type("kubernetes:core/v1:Service") if r.name.endswith("-lb")]
    for svc in lbs:
        assert svc.get("spec", "type") == "LoadBalancer"
        assert not svc.get("metadata", "annotations")
        assert svc.get("spec", "externalTrafficPolicy") == "Local"
        assert svc.get("spec", "loadBalancerSourceRanges") == ["10.0.0.0/8"]


def test_store_pods_get_the_endpoint_and_keys_by_reference(reference_recording: Get) -> None:
    rec = reference_recording("local")
    # the storage-CLI containers (the pre-pull DaemonSets only pull the image)
    store = [
        (o, c)
        for o, c in _containers(rec)
        if "image-prepull" not in o and c["image"].startswith("public.ecr.aws/aws-cli")
    ]
    assert store
    used = set()
    for owner, container in store:
        env = {e["name"]: e for e in container["env"]}
        assert env["AWS_ENDPOINT_URL"]["value"] == ENDPOINT, owner
        for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
            ref = env[key]["valueFrom"]["secretKeyRef"]
            assert ref["key"] == key and "value" not in env[key], owner
            used.add(ref["name"])
    assert used == SECRETS
    # each role reads its own Secret: serving pods the reader's, builds the builder's
    by_owner = {
        o: {
            e["valueFrom"]["secretKeyRef"]["name"]
            for e in c["env"]
            if "secretKeyRef" in e.get("valueFrom", {})
        }
        for o, c in store
    }
    assert by_owner["support-assistant-local-chat"] == {"store-reader"}
    assert any(s == {"store-engine-builder"} for o, s in by_owner.items() if "engine" in o)


def test_no_key_value_and_no_cloud_identity_anywhere(reference_recording: Get) -> None:
    rec = reference_recording("local")
    for sa in rec.of_type("kubernetes:core/v1:ServiceAccount"):
        assert not sa.get("metadata", "annotations"), sa.name
    for _, container in _containers(rec):
        for e in container.get("env") or []:
            if e["name"].startswith("AWS_") and e["name"] != "AWS_ENDPOINT_URL":
                assert "value" not in e or e["name"] in ("AWS_REGION", "AWS_DEFAULT_REGION")
    dump = json.dumps([r.inputs for r in rec], default=str)
    assert "eks.amazonaws.com" not in dump and "iam.gke.io" not in dump


def test_store_egress_reaches_the_endpoint_and_nothing_else(
    reference_env: Callable[[str], Environment],
) -> None:
    serving = serving_environment(reference_env("local"))
    ports = [{"protocol": "TCP", "port": 9000}]
    in_namespace = {
        "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: "inferplane-system"}}
    }
    assert store_endpoint_egress_rule(serving) == {"to": [in_namespace], "ports": ports}
    labelled = dataclasses.replace(serving, store_pod_labels={"app": "store"})
    assert store_endpoint_egress_rule(labelled) == {
        "to": [{**in_namespace, "podSelector": {"matchLabels": {"app": "store"}}}],
        "ports": ports,
    }
    outside = dataclasses.replace(serving, store_endpoint="https://192.0.2.10")
    assert store_endpoint_egress_rule(outside) == {
        "to": [{"ipBlock": {"cidr": "192.0.2.10/32"}}],
        "ports": [{"protocol": "TCP", "port": 443}],
    }
    # a host name would need every address: refused (validation reports it, located)
    named = dataclasses.replace(serving, store_endpoint="https://minio.example.com")
    with pytest.raises(ValueError, match=r"'minio\.example\.com' is neither an in-cluster"):
        store_endpoint_egress_rule(named)


def test_store_clients_reach_the_internet_only_to_download(reference_recording: Get) -> None:
    """Serving pods and the jobs that hold writer keys (engine builds, compile caches) reach
    DNS and the store alone; the hub and package-index downloads add HTTPS outside the
    cluster, never a rule open to any address."""
    rec = reference_recording("local")
    store = {
        "to": [{"namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: "inferplane-system"}}}],
        "ports": [{"protocol": "TCP", "port": 9000}],
    }
    seen = set()
    for policy in rec.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy"):
        egress = policy.get("spec", "egress") or []
        if store not in egress:
            continue
        name = policy.get("metadata", "name")
        https = [r for r in egress if r.get("ports") == [{"protocol": "TCP", "port": 443}]]
        downloads = name.startswith("weights-") or ".pip" in name or "-requirements-" in name
        assert len(egress) == (3 if downloads else 2), name
        assert len(https) == (1 if downloads else 0), name
        for rule in egress:
            for peer in rule.get("to") or []:
                assert peer.get("ipBlock", {}).get("cidr") != "0.0.0.0/0", name
        seen.add("download" if downloads else name.rsplit("-", 1)[-1])
    assert {"egress", "build"} <= seen, seen


def test_network_policy_never_picks_a_range(reference_env: Callable[[str], Environment]) -> None:
    from inferplane.components.serving.routing.load_balancer import source_cidrs

    serving = serving_environment(reference_env("local"))
    assert source_cidrs(serving) == ["10.0.0.0/8"]
    with pytest.raises(ValueError, match="lb_allowed_cidrs"):
        source_cidrs(dataclasses.replace(serving, lb_allowed_cidrs=()))
