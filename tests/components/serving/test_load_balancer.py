"""The model's load balancer Service per cloud and scheme, traffic distribution, and the
CIDRs of the serving path."""

from __future__ import annotations

import dataclasses

import pytest
from serving_fixtures import SERVICE, SUBNETS, args_of, k8s_object, serve, with_model

from inferplane.blueprint.model import Environment
from inferplane.blueprint.resolution.resolve import resolve_file
from inferplane.components.serving.routing.load_balancer import (
    aws_annotations,
    exposed_ports,
    source_cidrs,
    traffic_distribution,
)
from inferplane.components.stack_serving import serving_environment

AWS = "service.beta.kubernetes.io/aws-load-balancer-"
SELECTOR = {"app.kubernetes.io/part-of": "support-assistant", "inferplane.dev/model": "ranker"}


def _lb(env: Environment, scheme: str | None = None, cidrs: tuple[str, ...] | None = None):
    lb = env.load_balancer
    if scheme is not None:
        lb = dataclasses.replace(lb, scheme=scheme)
    if cidrs is not None:
        lb = dataclasses.replace(lb, allowed_cidrs=cidrs)
    return dataclasses.replace(env, load_balancer=lb)


def _cluster(env: Environment, **changes: object) -> Environment:
    return dataclasses.replace(env, cluster=dataclasses.replace(env.cluster, **changes))


def test_aws_internal_nlb(served):
    svc = k8s_object(served("staging"), SERVICE, "ranker-lb")
    assert svc.get("metadata", "annotations") == {
        f"{AWS}type": "external",
        f"{AWS}nlb-target-type": "ip",
        f"{AWS}scheme": "internal",
        f"{AWS}subnets": ",".join(SUBNETS),
        # Cross-zone off alone still lets DNS hand out every zone's address: with
        # availability_zone_affinity a client resolves its own zone's address
        # (aws-load-balancer-controller docs/guide/service/annotations.md,
        # "load-balancer-attributes"; pkg/shared_constants/attributes.go).
        f"{AWS}attributes": "load_balancing.cross_zone.enabled=false,"
        "dns_record.client_routing_policy=availability_zone_affinity",
        f"{AWS}target-group-attributes": "deregistration_delay.timeout_seconds=90,"
        "deregistration_delay.connection_termination.enabled=true",
        # Explicit even at the NLB's 350 s default: max_request_s 60 + 30 s is shorter.
        f"{AWS}listener-attributes.TCP-8001": "tcp.idle_timeout.seconds=350",
    }
    assert svc.get("spec") == {
        "type": "LoadBalancer",
        "selector": SELECTOR,
        "ports": [{"name": "grpc", "port": 8001, "targetPort": "grpc", "protocol": "TCP"}],
        "trafficDistribution": "PreferClose",  # staging creates Kubernetes 1.33
        "loadBalancerSourceRanges": ["10.0.0.0/8"],
        "allocateLoadBalancerNodePorts": False,  # IP targets: no node ports needed
    }


def test_nlb_listeners_keep_a_long_silent_request_open(staging):
    """An NLB resets a flow idle for tcp.idle_timeout.seconds, 350 s unless set (60-6000 s,
    https://docs.aws.amazon.com/elasticloadbalancing/latest/network/update-idle-timeout.html);
    a response that is not streamed is silent for the whole request, and a request to a
    model at zero also while the interceptor holds it for the first replica."""
    both = with_model(staging, "ranker", max_request_s=3600, expose="both")
    annotations = k8s_object(serve(both, ["ranker"]), SERVICE, "ranker-lb").get(
        "metadata", "annotations"
    )
    assert {k: v for k, v in annotations.items() if "listener-attributes" in k} == {
        f"{AWS}listener-attributes.TCP-8000": "tcp.idle_timeout.seconds=3630",
        f"{AWS}listener-attributes.TCP-8001": "tcp.idle_timeout.seconds=3630",
    }
    chat = staging.models["chat"]
    cold = with_model(
        staging,
        "chat",
        replicas=dataclasses.replace(chat.replicas, min=0),
        max_request_s=600,
        startup_timeout_s=1800,
    )
    lb = k8s_object(serve(cold, ["chat"]), SERVICE, "support-assistant-staging-chat-lb")
    assert lb.get("metadata", "namespace") == "keda"  # beside the interceptor
    # held up to startup_timeout_s 1800 + max_request_s 600 + 30 s
    assert lb.get("metadata", "annotations")[f"{AWS}listener-attributes.TCP-8000"] == (
        "tcp.idle_timeout.seconds=2430"
    )


def test_a_silence_longer_than_the_nlb_keeps_is_refused(staging):
    chat = staging.models["chat"]
    cold = with_model(
        staging, "chat", replicas=dataclasses.replace(chat.replicas, min=0), startup_timeout_s=6000
    )
    env, model = args_of(cold, "chat")
    with pytest.raises(ValueError) as e:
        aws_annotations(env, model)
    assert str(e.value) == (
        "model 'chat': a request to this model at zero replicas may be silent for "
        "startup_timeout_s (6000 s, held while the first replica starts) plus max_request_s "
        "(60 s), 6060 s, and an AWS NLB closes a connection idle for more than 6000 s (its "
        "tcp.idle_timeout.seconds maximum); keep startup_timeout_s + max_request_s at most "
        "5970 s, or keep replicas.min at 1 or more so that no request waits for a replica to "
        "start"
    )


def test_gke_internal_lb(served):
    svc = k8s_object(served("prod"), SERVICE, "ranker-lb")
    assert svc.get("metadata", "annotations") == {
        "networking.gke.io/load-balancer-type": "Internal"
    }
    assert svc.get("spec") == {
        "type": "LoadBalancer",
        "selector": SELECTOR,
        "ports": [{"name": "grpc", "port": 8001, "targetPort": "grpc", "protocol": "TCP"}],
        "trafficDistribution": "PreferClose",  # attached cluster: version unknown
        "loadBalancerSourceRanges": ["10.0.0.0/8"],
        "externalTrafficPolicy": "Local",
    }


def test_external_scheme(staging, prod):
    aws = serve(_lb(staging, "external", ("203.0.113.0/24",)), ["ranker"])
    annotations = k8s_object(aws, SERVICE, "ranker-lb").get("metadata", "annotations")
    assert annotations[f"{AWS}scheme"] == "internet-facing"
    assert f"{AWS}subnets" not in annotations  # the private subnets cannot face the internet
    gke = serve(_lb(prod, "external", ("203.0.113.0/24",)), ["ranker"])
    svc = k8s_object(gke, SERVICE, "ranker-lb")
    assert "annotations" not in svc.get("metadata") or not svc.get("metadata", "annotations")
    assert svc.get("spec", "loadBalancerSourceRanges") == ["203.0.113.0/24"]


def test_aws_without_subnets_lets_the_controller_choose(staging):
    rec = serve(staging, ["ranker"], lb_subnet_ids=None)
    annotations = k8s_object(rec, SERVICE, "ranker-lb").get("metadata", "annotations")
    assert f"{AWS}subnets" not in annotations
    assert annotations[f"{AWS}scheme"] == "internal"


@pytest.mark.parametrize(
    ("create", "version", "expected"),
    [
        (True, "1.31", "PreferClose"),
        (True, "1.33", "PreferClose"),
        (True, "1.34", "PreferSameZone"),
        (True, "1.35", "PreferSameZone"),
        (False, "1.35", "PreferClose"),  # attached: the written version is not the cluster's
    ],
)
def test_traffic_distribution(staging, create, version, expected):
    env = _cluster(staging, create=create, kubernetes_version=version)
    assert traffic_distribution(serving_environment(env)) == expected


def test_traffic_distribution_on_both_services(staging):
    env = _cluster(staging, kubernetes_version="1.34")
    rec = serve(env, ["chat"])
    assert k8s_object(rec, SERVICE, "chat").get("spec", "trafficDistribution") == "PreferSameZone"
    assert k8s_object(rec, SERVICE, "chat-lb").get("spec", "trafficDistribution") == (
        "PreferSameZone"
    )
    # At zero, its load balancer stands beside the HTTP add-on's interceptor (test_wake)
    # and keeps the same zone preference.
    cold = with_model(env, "chat", replicas=dataclasses.replace(env.models["chat"].replicas, min=0))
    lb = k8s_object(serve(cold, ["chat"]), SERVICE, "support-assistant-staging-chat-lb")
    assert lb.get("spec", "trafficDistribution") == "PreferSameZone"


@pytest.mark.parametrize(
    ("model", "expose", "ports"),
    [
        ("ranker", "http", ["http"]),
        ("ranker", "grpc", ["grpc"]),
        ("ranker", "both", ["http", "grpc"]),
        ("chat", "http", ["http"]),
    ],
)
def test_exposed_ports(staging, model, expose, ports):
    env = with_model(staging, model, expose=expose)
    assert exposed_ports(args_of(env, model)[1]) == ports


def test_lb_ports_for_both(served):
    svc = k8s_object(served("prod"), SERVICE, "nightly-embed-lb")  # expose: both
    assert [(p["name"], p["port"]) for p in svc.get("spec", "ports")] == [
        ("http", 8000),
        ("grpc", 8001),
    ]


@pytest.mark.parametrize(
    ("env_name", "create", "cidrs", "expected"),
    [
        # AWS: the NLB's own addresses (the VPC) are always admitted, merged when covered
        ("staging", True, ("10.0.0.0/8",), ["10.0.0.0/8"]),
        ("staging", True, ("192.168.0.0/16",), ["10.64.0.0/16", "192.168.0.0/16"]),
        ("staging", False, ("192.168.0.0/16",), ["10.0.0.0/8", "192.168.0.0/16"]),
        ("staging", True, (), ["10.64.0.0/16"]),
        # GCP: client addresses are preserved; the allowed CIDRs alone
        ("prod", False, ("192.168.0.0/16",), ["192.168.0.0/16"]),
        ("prod", True, ("10.1.0.0/16", "10.1.2.0/24", "fd00::/8"), ["10.1.0.0/16", "fd00::/8"]),
    ],
)
def test_source_cidrs(request, env_name, create, cidrs, expected):
    env = request.getfixturevalue(env_name)
    env = _lb(_cluster(env, create=create), cidrs=cidrs)
    assert source_cidrs(serving_environment(env)) == expected


@pytest.mark.parametrize("env_name", ["staging", "prod"])
def test_an_attached_cluster_without_client_ranges_gets_no_guessed_range(request, env_name):
    """An attached cluster's VPC range is unknown: a component user who gives no client
    ranges gets an error, not a NetworkPolicy that admits 10.0.0.0/8 (validation refuses
    the blueprint form of it first)."""
    env = _lb(_cluster(request.getfixturevalue(env_name), create=False), cidrs=())
    with pytest.raises(ValueError, match="the clients' ranges must be given: lb_allowed_cidrs"):
        source_cidrs(serving_environment(env))


def test_gke_never_external_by_default(tmp_path, reference_blueprint):
    """GKE gives a LoadBalancer Service an external (internet-facing) passthrough load
    balancer unless the Service asks for an internal one with the annotation
    ``networking.gke.io/load-balancer-type: "Internal"``
    (https://cloud.google.com/kubernetes-engine/docs/how-to/internal-load-balancing,
    https://cloud.google.com/kubernetes-engine/docs/concepts/service-load-balancer-parameters;
    NOTES.md section 7). A blueprint that says nothing about the scheme must carry it."""
    text = reference_blueprint.read_text()
    assert "  scheme: internal " in text
    path = tmp_path / "no-scheme.yaml"
    path.write_text("\n".join(ln for ln in text.splitlines() if "  scheme: internal " not in ln))
    env = resolve_file(path, "prod")
    assert env.cloud == "gcp" and env.load_balancer.scheme == "internal"
    svc = k8s_object(serve(env, ["ranker"]), SERVICE, "ranker-lb")
    assert svc.get("metadata", "annotations") == {
        "networking.gke.io/load-balancer-type": "Internal"
    }
