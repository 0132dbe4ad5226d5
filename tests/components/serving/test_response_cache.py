"""`response_cache.backend: redis`: the per-zone Valkey servers of a Triton model, their
Service, Secret and NetworkPolicies, and Triton's cache flags — on AWS (staging) and GCP
(prod), under mocks."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import kubernetes_validate
import pytest
from pod_security import ints, pods, violations
from serving_fixtures import (
    DEPLOYMENT,
    NETWORK_POLICY,
    SECRET,
    SERVICE,
    container,
    k8s_object,
    pod_spec,
    serve,
    with_model,
)
from test_k8s_validate import KUBERNETES_VERSION, core_objects, manifest

from inferplane.app.offline import SECRET as MASKED
from inferplane.app.offline import Recording
from inferplane.app.offline_mocks import GENERATED_PASSWORD, _password
from inferplane.app.offline_values import stable_hex
from inferplane.blueprint import defaults, naming
from inferplane.blueprint.model import Environment, ResponseCache
from inferplane.components.serving.triton import response_cache

NS = naming.namespace("support-assistant")
MODEL_SELECTOR = {"app.kubernetes.io/part-of": "support-assistant", naming.MODEL_LABEL: "ranker"}
CACHE_SELECTOR = {
    "app.kubernetes.io/part-of": "support-assistant",
    "inferplane.dev/response-cache-for": "ranker",
}


def redis_ranker(env: Environment, size_mb: int = 512) -> Environment:
    return with_model(
        env, "ranker", response_cache=ResponseCache(enabled=True, size_mb=size_mb, backend="redis")
    )


@pytest.fixture(scope="session")
def cached(staging: Environment, prod: Environment) -> Callable[[str], Recording]:
    envs = {"staging": redis_ranker(staging), "prod": redis_ranker(prod)}
    runs: dict[str, Recording] = {}

    def get(env_name: str) -> Recording:
        if env_name not in runs:
            runs[env_name] = serve(envs[env_name], ["ranker"])
        return runs[env_name]

    return get


def zones(env: Environment) -> tuple[str, ...]:
    ranker = env.models["ranker"]
    return env.pools[ranker.pool].zones


def caches(rec: Recording) -> list[Any]:
    return [
        r
        for r in rec.of_type(DEPLOYMENT)
        if str(r.get("metadata", "name")).startswith("ranker-cache-")
    ]


@pytest.mark.parametrize("env_name", ["staging", "prod"])
def test_one_valkey_per_zone_of_the_pool_preferring_its_zone(
    cached, staging, prod, env_name
) -> None:
    env = {"staging": staging, "prod": prod}[env_name]
    found = {r.get("metadata", "name"): r for r in caches(cached(env_name))}
    expected = {f"ranker-cache-{naming.zone_suffix(z)}": z for z in zones(env)}
    assert set(found) == set(expected)
    for name, zone in expected.items():
        deployment = found[name]
        assert deployment.get("spec", "replicas") == 1
        spec = pod_spec(deployment)
        (preferred,) = spec["affinity"]["nodeAffinity"][
            "preferredDuringSchedulingIgnoredDuringExecution"
        ]
        assert preferred["weight"] == 100
        assert preferred["preference"]["matchExpressions"] == [
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}
        ]
        labels = deployment.get("spec", "template", "metadata", "labels")
        assert deployment.get("spec", "selector", "matchLabels") == {
            **CACHE_SELECTOR,
            "inferplane.dev/zone": zone,
        }
        # Never selected by the model's own Service, PDB or rules.
        assert naming.MODEL_LABEL not in labels
        assert "tolerations" not in spec  # the system nodes, never a GPU node


def test_the_service_prefers_the_clients_zone_over_every_zones_server(cached) -> None:
    service = k8s_object(cached("prod"), SERVICE, "ranker-cache")
    assert service.get("spec") == {
        "type": "ClusterIP",
        "selector": CACHE_SELECTOR,
        "ports": [{"name": "valkey", "port": 6379, "targetPort": "valkey", "protocol": "TCP"}],
        "trafficDistribution": "PreferClose",
    }
    for deployment in caches(cached("prod")):
        labels = deployment.get("spec", "template", "metadata", "labels")
        assert CACHE_SELECTOR.items() <= labels.items()


def test_only_the_models_pods_reach_valkey(cached) -> None:
    rec = cached("staging")
    ingress = k8s_object(rec, NETWORK_POLICY, "ranker-cache").get("spec")
    assert ingress == {
        "podSelector": {"matchLabels": CACHE_SELECTOR},
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [
            {
                "from": [{"podSelector": {"matchLabels": MODEL_SELECTOR}}],
                "ports": [{"protocol": "TCP", "port": 6379}],
            }
        ],
        "egress": [],
    }
    egress = k8s_object(rec, NETWORK_POLICY, "ranker-cache-egress").get("spec")
    assert egress == {
        "podSelector": {"matchLabels": MODEL_SELECTOR},
        "policyTypes": ["Egress"],
        "egress": [
            {
                "to": [{"podSelector": {"matchLabels": CACHE_SELECTOR}}],
                "ports": [{"protocol": "TCP", "port": 6379}],
            }
        ],
    }
    # The egress peer is exactly the Service's selector (EKS allows its ClusterIP then).
    service = k8s_object(rec, SERVICE, "ranker-cache")
    assert egress["egress"][0]["to"][0]["podSelector"]["matchLabels"] == service.get(
        "spec", "selector"
    )


@pytest.mark.parametrize("env_name", ["staging", "prod"])
def test_the_generated_password_is_a_secret_and_never_recorded(cached, env_name) -> None:
    rec = cached(env_name)
    (generated,) = rec.of_type(GENERATED_PASSWORD)
    assert generated.inputs["length"] == response_cache.PASSWORD_LENGTH == 40
    secret = k8s_object(rec, SECRET, "ranker-response-cache")
    assert secret.get("stringData") == {"password": MASKED, "valkey.conf": MASKED}
    mocked = _password(generated.name, 40)
    everything = json.dumps([r.inputs for r in rec], default=str)
    assert mocked not in everything and "requirepass" not in everything


def test_valkey_reads_the_password_from_the_secret_file_only(cached) -> None:
    (deployment, *_) = caches(cached("prod"))
    valkey = container(deployment, "valkey")
    assert valkey["image"] == defaults.VALKEY_IMAGE == "docker.io/valkey/valkey:9.0.8-alpine"
    assert valkey["command"] == ["valkey-server"]
    assert valkey["args"] == [
        "/etc/valkey/valkey.conf",
        "--port", "6379",
        "--maxmemory", "512mb",
        "--maxmemory-policy", "allkeys-lru",
        "--save", "",
        "--appendonly", "no",
        "--dir", "/data",
    ]  # fmt: skip
    assert "env" not in valkey
    volumes = {v["name"]: v for v in pod_spec(deployment)["volumes"]}
    assert volumes["config"]["secret"] == {
        "secretName": "ranker-response-cache",
        "items": [{"key": "valkey.conf", "path": "valkey.conf"}],
        "defaultMode": 0o440,
    }
    assert volumes["data"] == {"name": "data", "emptyDir": {"sizeLimit": "64Mi"}}
    assert valkey["readinessProbe"]["tcpSocket"] == {"port": "valkey"}
    assert valkey["livenessProbe"]["tcpSocket"] == {"port": "valkey"}


@pytest.mark.parametrize(("size_mb", "memory"), [(512, "832Mi"), (256, "448Mi"), (1, "65Mi")])
def test_memory_is_maxmemory_with_headroom(staging, size_mb, memory) -> None:
    rec = serve(redis_ranker(staging, size_mb), ["ranker"])
    for deployment in caches(rec):
        valkey = container(deployment, "valkey")
        assert valkey["args"][valkey["args"].index("--maxmemory") + 1] == f"{size_mb}mb"
        assert valkey["resources"] == {
            "requests": {"cpu": "250m", "memory": memory},
            "limits": {"memory": memory},
        }


def test_every_pod_is_restricted_with_a_high_uid(cached) -> None:
    for env_name in ("staging", "prod"):
        found = [p for p in pods(cached(env_name), NS) if "-ranker-response-cache-" in p[0]]
        assert found
        for _, spec, notes in found:
            assert violations(ints(spec), notes) == []
            assert spec["securityContext"]["runAsUser"] > 10000
            (valkey,) = spec["containers"]
            assert valkey["securityContext"]["readOnlyRootFilesystem"] is True
            assert spec["automountServiceAccountToken"] is False


@pytest.mark.parametrize("env_name", ["staging", "prod"])
def test_objects_are_valid_kubernetes(cached, env_name) -> None:
    problems = []
    for r in core_objects(cached(env_name)):
        try:
            kubernetes_validate.validate(manifest(r), KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as err:
            problems.append(f"{r.type} {r.name}: {err.message}")
    assert problems == []


def test_triton_connects_to_the_service_with_the_password_from_the_environment(cached) -> None:
    rec = cached("prod")
    triton = container(k8s_object(rec, DEPLOYMENT, "ranker"), "triton")
    flags = [a for a in triton["args"] if a.startswith("--cache-config")]
    assert flags == [
        "--cache-config=redis,host=ranker-cache",
        "--cache-config=redis,port=6379",
        "--cache-config=redis,connect_timeout=1000",
        "--cache-config=redis,socket_timeout=100",
        "--cache-config=redis,wait_timeout=50",
        "--cache-config=redis,pool_size=8",
    ]
    assert {
        "name": "TRITONCACHE_REDIS_PASSWORD",
        "valueFrom": {"secretKeyRef": {"name": "ranker-response-cache", "key": "password"}},
    } in triton["env"]
    assert not any("password" in a for a in triton["args"])
    # config.pbtxt keeps the per-model opt-in
    config = k8s_object(rec, "kubernetes:core/v1:ConfigMap", "ranker-triton-config")
    assert "response_cache {\n  enable: true\n}" in config.get("data", "config.pbtxt")


def test_the_model_waits_for_every_zones_server(cached) -> None:
    rec = cached("staging")
    model = k8s_object(rec, DEPLOYMENT, "ranker")
    servers = {r.urn for r in caches(rec)}
    assert servers and servers <= set(model.depends_on)


def test_the_local_cache_deploys_no_server(served) -> None:
    rec = served("prod")
    assert not rec.of_type(GENERATED_PASSWORD)
    assert not [r for r in rec.of_type(SERVICE) if r.get("metadata", "name") == "ranker-cache"]
    triton = container(k8s_object(rec, DEPLOYMENT, "ranker"), "triton")
    assert [a for a in triton["args"] if a.startswith("--cache-config")] == [
        "--cache-config=local,size=268435456"
    ]
    assert "TRITONCACHE_REDIS_PASSWORD" not in json.dumps(triton["env"])


def test_a_disabled_redis_cache_deploys_nothing(staging) -> None:
    off = ResponseCache(enabled=False, size_mb=512, backend="redis")
    rec = serve(with_model(staging, "ranker", response_cache=off), ["ranker"])
    assert not caches(rec) and not rec.of_type(GENERATED_PASSWORD)
    triton = container(k8s_object(rec, DEPLOYMENT, "ranker"), "triton")
    assert not [a for a in triton["args"] if a.startswith("--cache-config")]


def test_kubernetes_134_prefers_the_same_zone(staging) -> None:
    env = redis_ranker(staging)  # a cluster inferplane creates: its version is known
    cluster = dataclasses.replace(env.cluster, kubernetes_version="1.34")
    rec = serve(dataclasses.replace(env, cluster=cluster), ["ranker"])
    service = k8s_object(rec, SERVICE, "ranker-cache")
    assert service.get("spec", "trafficDistribution") == "PreferSameZone"


def test_a_new_password_rolls_the_servers_and_the_replicas_together(cached) -> None:
    """Valkey and Triton read the password only when they start: both pod templates carry
    the password's revision (its resource id), so a new password restarts both."""
    rec = cached("prod")
    (generated,) = rec.of_type(GENERATED_PASSWORD)
    key = response_cache.PASSWORD_REVISION_ANNOTATION
    revisions = {
        str(d.get("metadata", "name")): d.get("spec", "template", "metadata")["annotations"][key]
        for d in [*caches(rec), k8s_object(rec, DEPLOYMENT, "ranker")]
    }
    # The offline mocks' id of the password (a deploy's is a random uuid's hex).
    assert set(revisions.values()) == {stable_hex(GENERATED_PASSWORD, generated.name, length=32)}
    assert len(revisions) == 1 + len(caches(rec))
