"""The region-local load balancer of one model, and the NetworkPolicy of its serving path.

On a ``kubernetes`` environment the Service is the blueprint's choice
(`ServingEnvironment.lb_service_type`): ``ClusterIP`` (the default: in-cluster clients only),
or ``LoadBalancer`` with no annotations, which the cluster's own implementation serves. A
LoadBalancer Service that no implementation serves never gets an address, and Pulumi's
Kubernetes provider waits for ``.status.loadBalancer.ingress`` until its timeout (10
minutes; pulumi-kubernetes ``provider/pkg/await/service.go``, `processServiceEvent` and
``DefaultServiceTimeoutMins``) and then fails the update. That failure is the honest
signal, so no ``pulumi.com/skipAwait`` is set. The NetworkPolicy admits exactly
``load_balancer.allowed_cidrs`` there (validation requires them: no VPC range is known).

Service ``<model>-lb`` (type LoadBalancer) exposes the ports of ``expose.protocol``
(``http`` 8000, ``grpc`` 8001, or both), internal unless ``load_balancer.scheme: external``:

- AWS, through the AWS Load Balancer Controller: an NLB (``aws-load-balancer-type:
  external``) with IP targets (traffic goes straight to the pods: no node hop, so
  ``externalTrafficPolicy`` is irrelevant and node ports are not allocated), in exactly
  the environment's zones (``-subnets`` = their private subnets) with cross-zone load
  balancing off, so a client's zone-local NLB address reaches pods in its zone; and DNS
  answers with that address only (`ZONE_AFFINITY`): with cross-zone off but the default
  client routing policy (``any_availability_zone``), the NLB's name resolves to every
  zone's address and clients still cross zones. Each
  listener keeps a silent connection open for the model's longest silence
  (``tcp.idle_timeout.seconds``, `long_requests`), not the NLB's 350 s. Targets
  drain for as long as a pod does (deregistration delay = the pod's grace period) and
  their connections are then closed, so long-lived gRPC/HTTP2 connections move on.
  An external NLB lets the controller pick the public subnets.
- GKE: ``networking.gke.io/load-balancer-type: "Internal"`` (GKE's default is an
  *external* load balancer, so internal is always explicit), and ``externalTrafficPolicy:
  Local``: only nodes with a ready pod receive traffic, the client address is preserved
  (the NetworkPolicy can check it) and there is no second hop to another node or zone.
  The internal passthrough load balancer keeps a client's connections in its zone (zonal
  affinity, from ``spec.trafficDistribution`` below) only on GKE >= 1.33.3-gke.1392000
  with GKE subsetting enabled (https://cloud.google.com/kubernetes-engine/docs/how-to/
  internal-load-balancing, "Using zonal affinity"; reference NOTES.md §7). A created
  cluster enables subsetting and sets that version floor (`cluster_gke`); an attached
  cluster is checked at preview time (`cluster_gke.check_zonal_affinity`).
- Both: ``loadBalancerSourceRanges`` = ``load_balancer.allowed_cidrs``; and
  ``spec.trafficDistribution`` to prefer endpoints in the client's zone: ``PreferSameZone``
  from Kubernetes 1.34 (beta, on by default), else ``PreferClose`` (GA in 1.33, and its
  alias since). An attached cluster's version is not known here, so it gets
  ``PreferClose``, which every supported version accepts. The ClusterIP Service carries the
  same hint for in-cluster clients.

A model at zero replicas that serves only HTTP is reached through the KEDA HTTP add-on's
interceptor instead (`wake`): its load balancer Service, with the same annotations, ranges
and port, lives in the add-on's namespace and selects the interceptor's pods, and its
NetworkPolicy also admits the interceptor on ``http``.

NetworkPolicy ``<model>``: ingress to the model's pods only on the exposed ports from the
allowed CIDRs — on AWS also the VPC (the NLB's health checks and, without client-IP
preservation, its connections come from its own addresses there; an attached cluster's VPC
is not known, so 10.0.0.0/8 stands for it) — and on the metrics port from the monitoring
namespace (Prometheus). With no ``allowed_cidrs`` (a created cluster only: validation
requires them on an attached one, whose VPC range is not known) the VPC range is used.
In-cluster callers are admitted by namespace (``load_balancer.client_namespaces``,
`network_policies.client_peers`): Cilium-based dataplanes never match a pod by address.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import Final

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint import long_requests, naming
from inferplane.components.serving.containers import PORTS, Manifest, termination_grace_s
from inferplane.components.serving.network_policies import client_peers
from inferplane.components.serving.scaling import wake
from inferplane.components.serving.spec import ServedModel, ServingEnvironment

AWS: Final = "service.beta.kubernetes.io/aws-load-balancer-"
GKE_LB_TYPE: Final = "networking.gke.io/load-balancer-type"
ATTACHED_VPC_CIDR: Final = "10.0.0.0/8"
SAME_ZONE_SINCE: Final = (1, 34)
METRICS_PORT: Final = {"triton": "metrics", "vllm": "http"}


ZONE_AFFINITY: Final = "availability_zone_affinity"
"""NLB attribute ``dns_record.client_routing_policy``: "100 percent zonal affinity", a
client's DNS query (through the Route 53 Resolver of its VPC) gets only its own zone's NLB
address while that zone is healthy, and every zone's otherwise. The other values are
``partial_availability_zone_affinity`` ("85 percent zonal affinity": 15% of queries still
get other zones, which spreads load when a zone's clients outnumber its replicas) and the
default ``any_availability_zone`` (no affinity). Sources: AWS Load Balancer Controller
``docs/guide/service/annotations.md`` ("load-balancer-attributes") and
``pkg/shared_constants/attributes.go``; https://docs.aws.amazon.com/elasticloadbalancing/
latest/network/edit-load-balancer-attributes.html#zonal-dns-affinity; the values' meanings
from the AWS CDK ``ClientRoutingPolicy`` enum."""
NLB_ATTRIBUTES: Final = (
    f"load_balancing.cross_zone.enabled=false,dns_record.client_routing_policy={ZONE_AFFINITY}"
)
"""Both set explicitly: the controller changes only the attributes the annotation names
("Only attributes defined in the annotation will be updated", annotations.md)."""


def lb_service_name(model: ServedModel, env: ServingEnvironment | None = None) -> str:
    """``<model>-lb``; for a model that wakes on its own traffic (given `env`), the Service
    beside the HTTP add-on's interceptor (`wake`)."""
    if env is not None and model.wakes_on_traffic:
        return naming.wake_lb_name(env.part_of, env.environment, model.name)
    return f"{model.name}-lb"


def lb_namespace(env: ServingEnvironment, model: ServedModel, namespace: str) -> str:
    """The model's namespace, or the interceptor's for a model that wakes on its traffic."""
    return env.keda_http_namespace if model.wakes_on_traffic else namespace


def exposed_ports(model: ServedModel) -> list[str]:
    """Port names the load balancer exposes (vLLM serves HTTP only)."""
    if model.server == "vllm" or model.protocols == "http":
        return ["http"]
    if model.protocols == "grpc":
        return ["grpc"]
    return ["http", "grpc"]


def service_ports(names: Sequence[str]) -> list[Manifest]:
    return [
        {"name": name, "port": PORTS[name], "targetPort": name, "protocol": "TCP"} for name in names
    ]


def _version(text: str) -> tuple[int, int]:
    major, minor = text.lstrip("v").split(".")[:2]
    return int(major), int(minor)


def traffic_distribution(env: ServingEnvironment) -> str:
    """``PreferSameZone`` on a cluster known to run Kubernetes >= 1.34, else ``PreferClose``."""
    known = env.kubernetes_version
    if known is not None and _version(known) >= SAME_ZONE_SINCE:
        return "PreferSameZone"
    return "PreferClose"


def internal(env: ServingEnvironment) -> bool:
    return env.lb_scheme == "internal"


LISTENER_ATTRIBUTES: Final = f"{AWS}listener-attributes.TCP-"
"""Followed by the Service port: the controller reads the attributes of the listener of
protocol TCP on port P from ``listener-attributes.TCP-<P>`` (AWS Load Balancer Controller
v2.13.4, the app of chart 1.13.4: ``docs/guide/service/annotations.md`` "listener-attributes",
``pkg/service/model_build_listener.go`` `buildListenerAttributes`, called with the Service
port)."""


def listener_annotations(model: ServedModel) -> dict[str, str]:
    """The NLB listeners' ``tcp.idle_timeout.seconds`` (`long_requests.nlb_idle_timeout_s`):
    the NLB's 350 s default would reset a request that stays silent longer."""
    idle = long_requests.nlb_idle_timeout_s(
        model.max_request_s, model.startup_timeout_s, model.wakes_on_traffic
    )
    return {
        f"{LISTENER_ATTRIBUTES}{PORTS[name]}": f"tcp.idle_timeout.seconds={idle}"
        for name in exposed_ports(model)
    }


def aws_annotations(
    env: ServingEnvironment, model: ServedModel, drain_s: int | None = None
) -> dict[str, str]:
    """Annotations of the NLB, except the subnets (they are known only at deploy time);
    `drain_s`: how long a target takes to leave (default: the model pod's grace period).
    `ValueError` when the NLB cannot keep the model's longest silence open (validation
    refuses such a blueprint first: `long_requests.path_limit_problem`)."""
    problem = long_requests.path_limit_problem(
        "aws", model.max_request_s, model.startup_timeout_s, model.wakes_on_traffic
    )
    if problem is not None:
        raise ValueError(f"model {model.name!r}: {problem[0]}; {problem[1]}")
    grace = termination_grace_s(model) if drain_s is None else drain_s
    return {
        f"{AWS}type": "external",
        f"{AWS}nlb-target-type": "ip",
        f"{AWS}scheme": "internal" if internal(env) else "internet-facing",
        f"{AWS}attributes": NLB_ATTRIBUTES,
        f"{AWS}target-group-attributes": (
            f"deregistration_delay.timeout_seconds={grace},"
            "deregistration_delay.connection_termination.enabled=true"
        ),
        **listener_annotations(model),
    }


def lb_annotations(
    env: ServingEnvironment,
    model: ServedModel,
    lb_subnet_ids: pulumi.Input[Sequence[str]] | None,
    drain_s: int | None = None,
) -> pulumi.Input[dict[str, str]]:
    """The load balancer Service's annotations for the environment's cloud.

    On AWS with an internal scheme, `lb_subnet_ids` (one private subnet per zone it
    serves) pins the NLB to those zones; without it the controller discovers subnets
    itself. `drain_s`: as in `aws_annotations`.
    """
    if env.cloud == "kubernetes":
        return {}  # the cluster's own implementation, whatever it is, takes none of ours
    if env.cloud == "gcp":
        return {GKE_LB_TYPE: "Internal"} if internal(env) else {}
    base = aws_annotations(env, model, drain_s)
    if lb_subnet_ids is None or not internal(env):
        return base
    return pulumi.Output.from_input(lb_subnet_ids).apply(
        lambda ids: {**base, f"{AWS}subnets": ",".join(ids)}
    )


def lb_service_type(env: ServingEnvironment) -> str:
    """``LoadBalancer`` on EKS and GKE; on kubernetes the blueprint's choice."""
    return env.lb_service_type if env.cloud == "kubernetes" else "LoadBalancer"


def lb_service_spec(env: ServingEnvironment, model: ServedModel) -> Manifest:
    if lb_service_type(env) == "ClusterIP":
        # In-cluster clients only: no source ranges (a ClusterIP Service has none; the
        # NetworkPolicy admits `lb_allowed_cidrs`), no node hop to keep local.
        spec: Manifest = {
            "type": "ClusterIP",
            "selector": naming.model_selector(env.part_of, model.name),
            "ports": service_ports(exposed_ports(model)),
            "trafficDistribution": traffic_distribution(env),
        }
        return wake.interceptor_lb_spec(env, spec) if model.wakes_on_traffic else spec
    spec = {
        "type": "LoadBalancer",
        "selector": naming.model_selector(env.part_of, model.name),
        "ports": service_ports(exposed_ports(model)),
        "trafficDistribution": traffic_distribution(env),
    }
    if env.lb_allowed_cidrs:
        spec["loadBalancerSourceRanges"] = list(env.lb_allowed_cidrs)
    if env.cloud == "aws":
        spec["allocateLoadBalancerNodePorts"] = False
    else:
        # GKE, and the cluster's own load balancer on kubernetes: client addresses are kept
        # (the NetworkPolicy checks them) and there is no second hop to another node.
        spec["externalTrafficPolicy"] = "Local"
    return wake.interceptor_lb_spec(env, spec) if model.wakes_on_traffic else spec


def _vpc_cidr(env: ServingEnvironment) -> str:
    return env.vpc_cidr or ATTACHED_VPC_CIDR


def source_cidrs(env: ServingEnvironment) -> list[str]:
    """Who may reach the serving ports (see the module docstring), smallest covering set."""
    wanted = list(env.lb_allowed_cidrs)
    if env.cloud == "kubernetes" and not wanted:
        # No VPC is known to stand in for the clients; never pick a range silently.
        raise ValueError(
            "a kubernetes environment's NetworkPolicy admits exactly lb_allowed_cidrs; "
            "give at least one (load_balancer.allowed_cidrs)"
        )
    if not wanted and env.vpc_cidr is None:
        # An attached cluster: its VPC range is not known, and 10.0.0.0/8 may be far wider
        # or miss the clients altogether (validation requires the ranges there too).
        raise ValueError(
            "the cluster's VPC range is not known (an attached cluster), so the clients' "
            "ranges must be given: lb_allowed_cidrs (load_balancer.allowed_cidrs)"
        )
    if env.cloud == "aws" or not wanted:
        wanted.append(_vpc_cidr(env))
    networks = [ipaddress.ip_network(c, strict=False) for c in wanted]
    v4 = ipaddress.collapse_addresses(n for n in networks if n.version == 4)
    v6 = ipaddress.collapse_addresses(n for n in networks if n.version == 6)
    return [str(n) for n in (*v4, *v6)]


def network_policy_spec(
    env: ServingEnvironment, model: ServedModel, extra_ingress: Sequence[Manifest] = ()
) -> Manifest:
    """Ingress of the model's pods; `extra_ingress`: further rules (an llm-aware model's
    routers, `router.router_ingress`)."""
    metrics = METRICS_PORT[model.server]
    return {
        "podSelector": {"matchLabels": naming.model_selector(env.part_of, model.name)},
        "policyTypes": ["Ingress"],
        "ingress": [
            {
                "from": client_peers(env, source_cidrs(env)),
                "ports": [
                    {"protocol": "TCP", "port": PORTS[name]} for name in exposed_ports(model)
                ],
            },
            {
                "from": [
                    {
                        "namespaceSelector": {
                            "matchLabels": {"kubernetes.io/metadata.name": env.prometheus_namespace}
                        }
                    }
                ],
                "ports": [{"protocol": "TCP", "port": PORTS[metrics]}],
            },
            *([wake.interceptor_ingress(env)] if model.wakes_on_traffic else []),
            *extra_ingress,
        ],
    }


def model_load_balancer(
    name: str,
    *,
    env: ServingEnvironment,
    model: ServedModel,
    namespace: str,
    labels: dict[str, str],
    lb_subnet_ids: pulumi.Input[Sequence[str]] | None,
    opts: pulumi.ResourceOptions,
) -> k8s.core.v1.Service:
    """The LoadBalancer Service ``<model>-lb`` (or the interceptor's, `wake`); `opts` carries
    the parent and provider."""
    return k8s.core.v1.Service(
        name,
        metadata={
            "name": lb_service_name(model, env),
            "namespace": lb_namespace(env, model, namespace),
            "labels": labels,
            "annotations": lb_annotations(env, model, lb_subnet_ids),
        },
        spec=lb_service_spec(env, model),
        opts=opts,
    )


def model_network_policy(
    name: str,
    *,
    env: ServingEnvironment,
    model: ServedModel,
    namespace: str,
    labels: dict[str, str],
    opts: pulumi.ResourceOptions,
    extra_ingress: Sequence[Manifest] = (),
) -> k8s.networking.v1.NetworkPolicy:
    return k8s.networking.v1.NetworkPolicy(
        name,
        metadata={"name": model.name, "namespace": namespace, "labels": labels},
        spec=network_policy_spec(env, model, extra_ingress),
        opts=opts,
    )
