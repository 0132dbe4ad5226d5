"""The llm-d router's pods: the chart's picker Deployment completed to pass ``restricted``,
and the picker pods' NetworkPolicy, under Pulumi's mocks and as functions."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import pulumi
import pytest
from pod_security import ints, violations
from serving_fixtures import NETWORK_POLICY, args_of, k8s_object, serve, with_model

from inferplane.blueprint.model import Autoscaling, Environment, Routing
from inferplane.components.serving.routing import router_pods

ROOT = Path(__file__).resolve().parents[3]

ZONES = ("us-central1-a", "us-central1-b")


def chart_deployment(name: str = "chat-us-central1-a-epp") -> dict[str, Any]:
    """The picker Deployment as ``routerlib/templates/_deployment.yaml`` (v0.10.0) renders it
    with the proxy as a sidecar: no securityContext anywhere (trimmed to what matters)."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "support-assistant"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"llm-d-router-gateway": name}},
            "template": {
                "metadata": {"labels": {"llm-d-router-gateway": name}},
                "spec": {
                    "serviceAccountName": name,
                    "terminationGracePeriodSeconds": 130,
                    "containers": [
                        {
                            "name": "envoy",
                            "image": "docker.io/envoyproxy/envoy:distroless-v1.33.2",
                            "command": ["envoy"],
                            "ports": [{"containerPort": 8081, "name": "http"}],
                        },
                        {
                            "name": "epp",
                            "image": "ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.10.0",
                            "ports": [
                                {"name": "grpc", "containerPort": 9002},
                                {"name": "grpc-health", "containerPort": 9003},
                                {"name": "metrics", "containerPort": 9090},
                            ],
                        },
                    ],
                    "volumes": [{"name": "plugins-config-volume", "configMap": {"name": name}}],
                },
            },
        },
    }


def pod_spec(deployment: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = deployment["spec"]["template"]["spec"]
    return spec


def test_the_charts_picker_pod_is_refused_by_restricted_as_rendered() -> None:
    problems = violations(pod_spec(chart_deployment()))
    assert any("allowPrivilegeEscalation" in p for p in problems)
    assert any("runAsNonRoot" in p for p in problems)
    assert any("seccomp" in p for p in problems)


def test_restrict_makes_it_pass_restricted_and_leaves_the_rest_as_rendered() -> None:
    rendered = chart_deployment()
    restricted = router_pods.restrict(rendered)
    assert violations(pod_spec(restricted)) == []
    assert rendered == chart_deployment()  # the input is not modified
    without = copy.deepcopy(restricted)
    del without["spec"]["template"]["spec"]["securityContext"]
    for container in pod_spec(without)["containers"]:
        del container["securityContext"]
    assert without == rendered
    assert pod_spec(restricted)["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 65532,
        "runAsGroup": 65532,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def test_restrict_overrides_a_looser_value_the_chart_might_set() -> None:
    rendered = chart_deployment()
    envoy = pod_spec(rendered)["containers"][0]
    envoy["securityContext"] = {
        "allowPrivilegeEscalation": True,
        "runAsUser": 0,
        "readOnlyRootFilesystem": True,
    }
    restricted = pod_spec(router_pods.restrict(rendered))
    assert restricted["containers"][0]["securityContext"] == {
        "readOnlyRootFilesystem": True,  # kept: stricter, not the transform's to remove
        **router_pods.container_security_context(),
    }
    assert violations(restricted) == []


def transform_args(type_: str, props: dict[str, Any]) -> pulumi.ResourceTransformArgs:
    return pulumi.ResourceTransformArgs(
        custom=True, type_=type_, name="x", props=props, opts=pulumi.ResourceOptions()
    )


def test_the_transform_touches_only_the_pickers_deployment() -> None:
    transform = router_pods.restricted_picker_pod("chat-us-central1-a-epp")
    result = transform(transform_args(router_pods.DEPLOYMENT_TYPE, chart_deployment()))
    assert result is not None
    assert violations(pod_spec(dict(result.props))) == []
    other = chart_deployment("chat-us-central1-b-epp")
    assert transform(transform_args(router_pods.DEPLOYMENT_TYPE, other)) is None
    service = {"metadata": {"name": "chat-us-central1-a-epp"}, "spec": {}}
    assert transform(transform_args("kubernetes:core/v1:Service", service)) is None


# --- the NetworkPolicy, under mocks ---------------------------------------------------------


@pytest.fixture(scope="session")
def recording(prod: Environment) -> Any:
    routed = with_model(
        prod,
        "chat",
        routing=Routing(mode="llm_aware"),
        autoscaling=Autoscaling.single("ttft_p95_ms", 800.0, 600),
    )
    return serve(routed, ["chat"])


def test_each_zones_pickers_have_a_network_policy_of_their_own(
    recording: Any, prod: Environment
) -> None:
    for zone in ZONES:
        policy = k8s_object(recording, NETWORK_POLICY, f"chat-{zone}-epp")
        spec = policy.get("spec")
        picker = {"llm-d-router-gateway": f"chat-{zone}-epp"}
        assert spec["podSelector"] == {"matchLabels": picker}
        assert spec["policyTypes"] == ["Ingress", "Egress"]
        proxies, metrics = spec["ingress"]
        # Only the zone's proxies ask the picker; clients reach the proxies.
        assert proxies == {
            "from": [
                {"podSelector": {"matchLabels": {"llm-d-router-proxy": f"chat-{zone}-proxy"}}}
            ],
            "ports": [{"protocol": "TCP", "port": 9002}],
        }
        proxy = k8s_object(recording, NETWORK_POLICY, f"chat-{zone}-proxy").get("spec")
        (clients,) = proxy["ingress"]
        assert clients["ports"] == [{"protocol": "TCP", "port": 8081}]
        # The ranges that may reach the model through its load balancer, as for the model.
        model_policy = k8s_object(recording, NETWORK_POLICY, "chat")
        assert clients["from"] == model_policy.get("spec", "ingress")[0]["from"]
        assert clients["from"] == [{"ipBlock": {"cidr": "10.0.0.0/8"}}]
        assert proxy["egress"] == [
            {
                "to": [{"podSelector": {"matchLabels": picker}}],
                "ports": [{"protocol": "TCP", "port": 9002}],
            },
            {
                "to": [
                    {
                        "podSelector": {
                            "matchLabels": {
                                "app.kubernetes.io/part-of": "support-assistant",
                                "inferplane.dev/model": "chat",
                            }
                        }
                    }
                ],
                "ports": [{"protocol": "TCP", "port": 8000}],
            },
        ]
        assert metrics == {
            "from": [
                {
                    "namespaceSelector": {
                        "matchLabels": {"kubernetes.io/metadata.name": "monitoring"}
                    }
                }
            ],
            "ports": [{"protocol": "TCP", "port": 9090}],
        }
        pods, api = spec["egress"]
        selector = pods["to"][0]["podSelector"]["matchLabels"]
        assert selector["inferplane.dev/zone"] == zone  # its own zone's pods only
        assert pods["ports"] == [{"protocol": "TCP", "port": 8000}]
        assert api == {  # an attached cluster here: its network is not known
            "to": [{"ipBlock": {"cidr": c}} for c in router_pods.PRIVATE_IPV4],
            "ports": [{"protocol": "TCP", "port": 443}, {"protocol": "TCP", "port": 6443}],
        }


def test_the_api_server_is_reached_in_the_clusters_network(prod: Environment) -> None:
    env, _ = args_of(prod, "chat")
    created = dataclasses.replace(env, vpc_cidr="10.20.0.0/16")
    assert env.cloud == "gcp"  # Dataplane V2 sees the endpoint, in the cluster's network
    assert router_pods.api_server_blocks(created) == ["10.20.0.0/16"]
    # EKS's agent sees the kubernetes Service's ClusterIP, in either default service range.
    eks = dataclasses.replace(created, cloud="aws")
    assert router_pods.api_server_blocks(eks) == ["10.100.0.1/32", "172.20.0.1/32"]
    env = dataclasses.replace(env, vpc_cidr=None)
    assert router_pods.api_server_blocks(env) == [
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "100.64.0.0/10",
    ]


# --- Cilium: in-cluster callers by namespace, the API server by entity -----------------------


@pytest.fixture(scope="session")
def cilium_recording() -> Any:
    """llm-routing's kubernetes environment on a Cilium cluster, called from one namespace."""
    from inferplane.app.offline import run_program
    from inferplane.blueprint.resolution.resolve import load_blueprint, resolve

    doc, _ = load_blueprint(ROOT / "blueprints" / "llm-routing.yaml")
    env = resolve(doc, "local")
    env = dataclasses.replace(
        env,
        cluster=dataclasses.replace(env.cluster, dataplane="cilium"),
        load_balancer=dataclasses.replace(env.load_balancer, client_namespaces=("chat-web",)),
    )
    return run_program(env)


CHAT_WEB = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "chat-web"}}}


def test_on_cilium_the_pickers_reach_the_api_server_by_entity(cilium_recording: Any) -> None:
    for zone in ("zone-a", "zone-b"):
        picker = {"llm-d-router-gateway": f"chat-{zone}-epp"}
        spec = ints(k8s_object(cilium_recording, NETWORK_POLICY, f"chat-{zone}-epp").get("spec"))
        proxy = ints(k8s_object(cilium_recording, NETWORK_POLICY, f"chat-{zone}-proxy").get("spec"))
        assert proxy["ingress"] == [
            {
                "from": [{"ipBlock": {"cidr": "10.0.0.0/8"}}, CHAT_WEB],
                "ports": [{"protocol": "TCP", "port": 8081}],
            }
        ]
        (pods,) = spec["egress"]  # no ipBlock for the API server: Cilium never matches it
        assert pods["to"][0]["podSelector"]["matchLabels"]["inferplane.dev/zone"] == zone
        cnp = k8s_object(
            cilium_recording,
            "kubernetes:cilium.io/v2:CiliumNetworkPolicy",
            f"chat-{zone}-epp-api-server",
        )
        assert cnp.get("metadata", "namespace") == "llm-routing"
        assert cnp.get("spec") == {
            "endpointSelector": {"matchLabels": picker},
            "egress": [
                {
                    "toEntities": ["kube-apiserver"],
                    "toPorts": [
                        {
                            "ports": [
                                {"port": "443", "protocol": "TCP"},
                                {"port": "6443", "protocol": "TCP"},
                            ]
                        }
                    ],
                }
            ],
        }


def test_in_cluster_callers_reach_the_model_by_namespace(cilium_recording: Any) -> None:
    spec = ints(k8s_object(cilium_recording, NETWORK_POLICY, "chat").get("spec"))
    assert spec["ingress"][0] == {
        "from": [{"ipBlock": {"cidr": "10.0.0.0/8"}}, CHAT_WEB],
        "ports": [{"protocol": "TCP", "port": 8000}],
    }


def test_other_dataplanes_get_no_cilium_policy(recording: Any) -> None:
    assert not recording.of_type("kubernetes:cilium.io/v2:CiliumNetworkPolicy")
