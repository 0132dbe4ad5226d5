"""Attached clusters that already run add-ons, and two blueprints on one cluster.

`blueprints/shared-eks-chat.yaml` installs the add-ons on the EKS cluster ``shared-eks``;
`blueprints/shared-eks-search.yaml` uses all of them as ``existing``. Planned offline, the
two never claim the same Kubernetes object, Helm release or cloud resource name, and the
second uses the first's coordinates everywhere. Other coordinates (any namespace, URL and
labels) reach every object that needs them.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from inferplane.app.offline import RecordedResource, Recording, run_program
from inferplane.blueprint import naming
from inferplane.blueprint.addons import resolve_addons
from inferplane.blueprint.model import Environment
from inferplane.blueprint.resolution.resolve import resolve_file

ROOT = Path(__file__).resolve().parents[2]
FIRST = ROOT / "blueprints" / "shared-eks-chat.yaml"
SECOND = ROOT / "blueprints" / "shared-eks-search.yaml"
RELEASE = "kubernetes:helm.sh/v3:Release"
CLOUD_NAMES = {
    "aws:eks/nodeGroup:NodeGroup": "nodeGroupName",
    "gcp:container/nodePool:NodePool": "name",
    "gcp:serviceaccount/account:Account": "accountId",
}
"""Cloud resources whose names are unique per account or cluster, and the input naming them."""
AUTO_NAMED = ("aws:iam/role:Role",)
"""Named by Pulumi from their logical name (plus a random suffix) unless named explicitly:
the logical name, which carries the stack name, is what must differ."""


def identity(r: RecordedResource) -> tuple[str, ...] | None:
    """What a resource claims on the cluster or in the cloud: (apiVersion/kind, namespace,
    name) for a Kubernetes object, (release, namespace, name) for a Helm release, (type,
    name) for a named cloud resource; None for components, providers and lookups."""
    if not r.custom or r.read or r.type.startswith("pulumi:providers:"):
        return None
    if r.type == RELEASE:
        return ("helm release", r.inputs.get("namespace") or "default", r.inputs["name"])
    if r.type.startswith("kubernetes:"):
        meta = r.inputs.get("metadata") or {}
        api_version, kind = r.type.removeprefix("kubernetes:").rsplit(":", 1)
        api_version = api_version.removeprefix("core/")
        return (f"{api_version} {kind}", meta.get("namespace") or "", meta["name"])
    if r.type in AUTO_NAMED:
        return (r.type, r.inputs.get("name") or r.name)
    key = CLOUD_NAMES.get(r.type)
    if key and r.inputs.get(key):
        return (r.type, r.inputs[key])
    return None


def identities(rec: Recording) -> Counter[tuple[str, ...]]:
    return Counter(i for i in map(identity, rec.resources) if i is not None)


@pytest.fixture(scope="session")
def first(offline_plan: Callable[[Path, str], Recording]) -> Recording:
    return offline_plan(FIRST, "prod")


@pytest.fixture(scope="session")
def second_env() -> Environment:
    return resolve_file(SECOND, "prod")


@pytest.fixture(scope="session")
def second(offline_plan: Callable[[Path, str], Recording]) -> Recording:
    return offline_plan(SECOND, "prod")


def k8s(rec: Recording, kind: str) -> list[RecordedResource]:
    """The objects of `kind` the program creates (not those it reads)."""
    return [
        r
        for r in rec.resources
        if r.type.startswith("kubernetes:") and r.type.endswith(f":{kind}") and not r.read
    ]


def test_the_second_reads_the_prometheus_query_service_before_it_deploys(
    second: Recording,
) -> None:
    """The existing Prometheus' query Service is read from the cluster and its type is part
    of what the deploy registers (`components/prometheus_query.py`), so an ExternalName
    alias stops the deploy."""
    [read] = [r for r in second.resources if r.read and r.type == "kubernetes:core/v1:Service"]
    assert read.name.endswith("-prometheus-query")
    [env_cm] = [
        r
        for r in k8s(second, "ConfigMap")
        if r.inputs["metadata"]["name"] == naming.ENVIRONMENT_CONFIGMAP
    ]
    # Everything that queries that Prometheus waits for the check: each ScaledObject (and
    # each serving Deployment) has the ConfigMap among its transitive dependencies.
    by_urn = {r.urn: r for r in second.resources}

    def waits_for(r: RecordedResource, urn: str, seen: set[str]) -> bool:
        for dep in r.depends_on:
            if dep == urn or (
                dep not in seen and dep in by_urn and waits_for(by_urn[dep], urn, seen | {dep})
            ):
                return True
        return False

    queriers = k8s(second, "ScaledObject") + k8s(second, "Deployment")
    assert queriers and all(waits_for(r, env_cm.urn, set()) for r in queriers)
    assert env_cm.inputs["metadata"]["annotations"] == {
        "inferplane.dev/prometheus-query-service": "monitoring/kube-prometheus-stack-prometheus "
        "(ClusterIP)"
    }


def test_both_blueprints_attach_to_the_same_cluster(second_env: Environment) -> None:
    assert resolve_file(FIRST, "prod").cluster.existing == second_env.cluster.existing


def test_two_blueprints_on_one_cluster_claim_nothing_twice(
    first: Recording, second: Recording
) -> None:
    a, b = identities(first), identities(second)
    assert [i for i, n in (a + b).items() if n > 1] == []
    # The comparison covers what could collide: both sides hold objects of every sort.
    assert any(i[0] == "helm release" for i in a)
    assert any(i[0] == "aws:iam/role:Role" for i in b)
    assert any(i[0] == "aws:eks/nodeGroup:NodeGroup" for i in b)
    assert any(i[0] == "v1 Service" and i[1] == naming.KEDA_NAMESPACE for i in b)


def test_the_first_installs_every_add_on_once(first: Recording) -> None:
    releases = sorted((r.inputs["namespace"], r.inputs["name"]) for r in first.of_type(RELEASE))
    assert releases == [
        ("gpu-operator", "gpu-operator"),
        ("keda", "keda"),
        ("keda", "keda-add-ons-http"),
        ("kube-system", "aws-load-balancer-controller"),
        ("kube-system", "cluster-autoscaler"),
        ("monitoring", "kube-prometheus-stack"),
    ]


def test_the_second_installs_no_add_on(second: Recording) -> None:
    assert second.of_type(RELEASE) == []
    namespaces = [r.inputs["metadata"]["name"] for r in k8s(second, "Namespace")]
    assert namespaces == ["shared-search"]
    roles = [r.name for r in second.of_type("aws:iam/role:Role")]
    assert roles and not [n for n in roles if "autoscaler" in n or "load-balancer" in n]
    assert not [r for r in second.resources if r.type.endswith(":StorageClass")]


def test_the_second_uses_the_first_ones_coordinates(first: Recording, second: Recording) -> None:
    """What the second blueprint's objects point at is what the first one installs."""
    (http,) = [r for r in first.of_type(RELEASE) if r.inputs["name"] == naming.KEDA_HTTP_RELEASE]
    (scaled,) = k8s(second, "ScaledObject")
    triggers = {t["type"]: t["metadata"] for t in scaled.inputs["spec"]["triggers"]}
    assert triggers["prometheus"]["serverAddress"] == naming.PROMETHEUS_URL
    assert triggers["external-push"]["scalerAddress"] == (
        f"keda-add-ons-http-external-scaler.{http.inputs['namespace']}.svc.cluster.local:9090"
    )
    (lb,) = [r for r in k8s(second, "Service") if r.inputs["spec"].get("type") == "LoadBalancer"]
    assert lb.inputs["metadata"]["namespace"] == http.inputs["namespace"]
    assert lb.inputs["spec"]["selector"]["app.kubernetes.io/instance"] == http.inputs["name"]
    for kind in ("ServiceMonitor", "PrometheusRule"):
        (obj,) = k8s(second, kind)
        assert obj.inputs["metadata"]["labels"]["release"] == naming.PROMETHEUS_RELEASE


# --- coordinates other than the installed add-ons' -----------------------------------------
CUSTOM = {
    "gpu_operator": {"mode": "existing", "namespace": "nvidia"},
    "keda": {"mode": "existing", "namespace": "autoscaling"},
    "keda_http_add_on": {"mode": "existing", "namespace": "http-proxy", "release": "http-add-on"},
    "prometheus": {
        "mode": "existing",
        "namespace": "observability",
        "query_url": "https://prom.observability.svc:9443/prometheus",
        "selector_labels": {"prometheus": "platform", "example.com/team": "ml"},
        "dashboard_label": {"example.com/dashboard": "yes"},
    },
    "aws_load_balancer_controller": {"mode": "existing"},
    "cluster_autoscaler": {"mode": "existing"},
}


@pytest.fixture(scope="session")
def custom(second_env: Environment) -> Recording:
    cluster = dataclasses.replace(second_env.cluster, addons=resolve_addons(CUSTOM))
    return run_program(dataclasses.replace(second_env, cluster=cluster))


def test_existing_coordinates_reach_every_object(custom: Recording) -> None:
    assert custom.of_type(RELEASE) == []
    (scaled,) = k8s(custom, "ScaledObject")
    triggers = {t["type"]: t["metadata"] for t in scaled.inputs["spec"]["triggers"]}
    assert triggers["prometheus"]["serverAddress"] == (
        "https://prom.observability.svc:9443/prometheus"
    )
    assert triggers["external-push"]["scalerAddress"] == (
        "keda-add-ons-http-external-scaler.http-proxy.svc.cluster.local:9090"
    )
    selector = CUSTOM["prometheus"]["selector_labels"]
    for kind in ("ServiceMonitor", "PrometheusRule"):
        (obj,) = k8s(custom, kind)
        labels = obj.inputs["metadata"]["labels"]
        assert selector.items() <= labels.items() and "release" not in labels
    (dashboard,) = [
        r for r in k8s(custom, "ConfigMap") if r.inputs["metadata"]["name"].endswith("-dashboard")
    ]
    labels = dashboard.inputs["metadata"]["labels"]
    assert labels["example.com/dashboard"] == "yes" and "grafana_dashboard" not in labels


def test_existing_namespaces_reach_load_balancer_routes_and_policies(custom: Recording) -> None:
    (lb,) = [r for r in k8s(custom, "Service") if r.inputs["spec"].get("type") == "LoadBalancer"]
    assert lb.inputs["metadata"]["namespace"] == "http-proxy"
    assert lb.inputs["spec"]["selector"]["app.kubernetes.io/instance"] == "http-add-on"
    (route,) = k8s(custom, "HTTPScaledObject")
    hosts = route.inputs["spec"]["hosts"]
    assert all(".http-proxy" in h for h in hosts if h.startswith(lb.inputs["metadata"]["name"]))
    (policy,) = [
        r for r in k8s(custom, "NetworkPolicy") if r.inputs["metadata"]["name"] == "rerank"
    ]
    sources = [
        peer["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"]
        for rule in policy.inputs["spec"]["ingress"]
        for peer in rule["from"]
        if "namespaceSelector" in peer
    ]
    assert sorted(sources) == ["http-proxy", "observability"]


def _values(rec: Recording, release: str) -> dict[str, Any]:
    (found,) = [r for r in rec.of_type(RELEASE) if r.inputs["name"] == release]
    return found.inputs["values"]


def test_installed_add_ons_report_to_an_existing_prometheus(second_env: Environment) -> None:
    """KEDA and the GPU Operator installed, Prometheus existing: their own ServiceMonitors
    carry its selector labels, and nothing of kube-prometheus-stack is created."""
    raw = {k: v for k, v in CUSTOM.items() if k in ("prometheus", "keda_http_add_on")}
    cluster = dataclasses.replace(second_env.cluster, addons=resolve_addons(raw))
    rec = run_program(dataclasses.replace(second_env, cluster=cluster))
    names = sorted(r.inputs["name"] for r in rec.of_type(RELEASE))
    assert names == ["aws-load-balancer-controller", "cluster-autoscaler", "gpu-operator", "keda"]
    selector = CUSTOM["prometheus"]["selector_labels"]
    dcgm = _values(rec, "gpu-operator")["dcgmExporter"]["serviceMonitor"]
    assert dcgm["additionalLabels"] == selector
    keda = _values(rec, "keda")["prometheus"]["operator"]["serviceMonitor"]
    assert keda["additionalLabels"] == selector
    namespaces = sorted(r.inputs["metadata"]["name"] for r in k8s(rec, "Namespace"))
    assert namespaces == ["gpu-operator", "keda", "shared-search"]
    assert not [r for r in k8s(rec, "Secret") if r.inputs["metadata"]["namespace"] == "monitoring"]


def test_pods_select_only_their_own_blueprints_nodes(first: Recording, second: Recording) -> None:
    """Pool names are unique per blueprint only: nodes carry the blueprint too, and serving
    pods and engine builds select both, so a same-named pool of another blueprint on the
    cluster never takes (or grows for) them."""
    for rec, other in ((first, second), (second, first)):
        own_nodes = [r.inputs["labels"] for r in rec.of_type("aws:eks/nodeGroup:NodeGroup")]
        other_nodes = [r.inputs["labels"] for r in other.of_type("aws:eks/nodeGroup:NodeGroup")]
        pods = [
            r.inputs["spec"]["template"]["spec"]
            for r in rec.resources
            if r.type in ("kubernetes:apps/v1:Deployment", "kubernetes:batch/v1:Job")
        ]
        assert pods and own_nodes
        for pod in pods:
            selector = pod["nodeSelector"].items()
            assert dict(selector)[naming.BLUEPRINT_LABEL] == own_nodes[0][naming.BLUEPRINT_LABEL]
            assert any(selector <= labels.items() for labels in own_nodes)
            assert not any(selector <= labels.items() for labels in other_nodes)
