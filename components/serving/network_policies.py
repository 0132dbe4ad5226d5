"""Egress of the pods inferplane runs: DNS, the model store, and nothing else.

The blueprint's namespace denies all ingress and egress by default
(`inferplane.components.hardening`); each kind of pod then gets exactly what it needs:

- every pod: DNS (`dns_egress_rule`), given once for the whole namespace;
- serving pods (``<model>-egress``) and engine-build pods (``<model>-engine-build``): the
  model store and, on GKE, the metadata server that hands out Workload Identity tokens
  (`store_egress_rules`). Every serving pod reads its weights at start (an init
  container copies them from s3/gs, or vLLM streams them, `weight_streaming`).

Ingress to the serving ports and the metrics port is the model's own NetworkPolicy
(`inferplane.components.serving.routing.load_balancer`); build pods accept no ingress at all.
Callers are admitted by address and, inside the cluster, by namespace (`client_peers`).

On ``kubernetes`` the model store is the S3-compatible endpoint, and a store client reaches
it and nothing else (`store_endpoint_egress_rule`): the endpoint's Service pods by
namespace and labels, or its one address (`inferplane.blueprint.store_endpoint`). Only the
pods that download from the internet (the hub staging Job, the package-index staging Job)
also get the HTTPS rule below; the serving pods, engine builds and compile-cache Jobs, which
hold the reader's or a writer's keys and may run a pipeline's Python code, do not.

A NetworkPolicy cannot name S3, GCS or the Hugging Face hub: they are large, changing sets
of public addresses. The model store is therefore "TCP 443 to any address outside the
private and link-local ranges" (`public_ipv4_blocks`), which keeps these pods away from
every address inside the cluster and the VPC (pods, Services, nodes, the private API
endpoint) and from the cloud's instance metadata service, while S3 (directly, through NAT
or a gateway VPC endpoint, which routes to S3's public prefixes) and GCS (directly, through
Cloud NAT or Private Google Access, 199.36.153.8/30) stay reachable. An interface VPC
endpoint (PrivateLink) for S3 or STS would have a private address and needs an extra
allow; inferplane creates none. The public space is written out as the CIDRs that make it
up, not as ``0.0.0.0/0`` with ``except``: EKS's network policy agent lets an ``except``
range override another rule's allow, which blocks DNS to a kube-dns ClusterIP inside it
(aws/amazon-network-policy-controller-k8s#146, open).

DNS is allowed to the cluster DNS pods by label. GKE Dataplane V2 matches that after the
kube-dns Service address is translated; EKS's agent sees only the Service address, and its
controller therefore adds the ClusterIP of every Service whose selector matches the rule's
podSelector (aws/amazon-network-policy-controller-k8s ``pkg/resolvers/endpoints.go``,
`getMatchingServiceClusterIPs`), so the selector is exactly the kube-dns Service's own
(`KUBE_DNS_LABELS`). For clusters that answer DNS elsewhere, DNS is also allowed to
NodeLocal DNSCache's link-local address (https://kubernetes.io/docs/tasks/administer-cluster/nodelocaldns/,
``169.254.20.10``) and on GKE to the metadata server, which is the resolver of clusters
using Cloud DNS (tektoncd/operator#4000); both only on port 53.

Cloud identity:

- EKS, IRSA: the pod webhook injects ``AWS_WEB_IDENTITY_TOKEN_FILE`` and its own projected
  token volume (aws/amazon-eks-pod-identity-webhook ``pkg/handler/handler.go``, volume
  ``aws-iam-token``; README "AWS_WEB_IDENTITY_TOKEN_FILE"), and the SDKs exchange that
  token at STS over HTTPS (``sts.<region>.amazonaws.com:443``): covered by the 443 rule.
  The AWS CLI's chain tries the web-identity provider before the container and instance
  metadata providers (botocore ``botocore/credentials.py``: `create_credential_resolver`
  puts ``ProfileProviderBuilder.providers()``, web identity first, ahead of
  ``container_provider`` and ``instance_metadata_provider``), so 169.254.169.254 stays
  closed and a pod can never borrow the node's role.
- GKE, Workload Identity: tokens come from the GKE metadata server. GKE's documentation
  (https://cloud.google.com/kubernetes-engine/docs/how-to/workload-identity, limitations)
  asks NetworkPolicies to allow 169.254.169.254/32 on TCP 80 with GKE Dataplane V2 (what
  inferplane's GKE clusters run), and 169.254.169.252/32 on TCP 988 on the older
  Calico-enforced dataplane (GKE 1.21.0-gke.1000 and later), which an attached cluster
  may run; both are allowed, and nothing else in 169.254.0.0/16. (The page's wording was
  not re-read for this code; the same address and port pairs recur in public GKE
  NetworkPolicies written against it.)
"""

from __future__ import annotations

import functools
import ipaddress
from typing import Final

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint import naming, store_endpoint
from inferplane.components.serving.containers import Manifest
from inferplane.components.serving.spec import ServingEnvironment

ANY_IPV4: Final = "0.0.0.0/0"
LINK_LOCAL: Final = "169.254.0.0/16"
PRIVATE_IPV4: Final = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10")
"""RFC 1918 and the shared address space (RFC 6598; EKS custom networking puts pods there):
every pod, Service, node and VPC range of a cluster inferplane creates or attaches."""
HTTPS_PORT: Final = 443
DNS_PORT: Final = 53
KUBE_DNS_LABELS: Final = {"k8s-app": "kube-dns"}
"""The cluster DNS pods' label, CoreDNS on EKS and kube-dns on GKE alike
(https://kubernetes.io/docs/tasks/administer-cluster/dns-debugging-resolution/:
``kubectl get pods --namespace=kube-system -l k8s-app=kube-dns``)."""
NAMESPACE_NAME_LABEL: Final = "kubernetes.io/metadata.name"
"""Set by the API server on every namespace (https://kubernetes.io/docs/reference/labels-annotations-taints/#kubernetes-io-metadata-name)."""
GKE_METADATA: Final = (("169.254.169.254/32", 80), ("169.254.169.252/32", 988))
"""(address, TCP port) of the GKE metadata server: Dataplane V2, then the Calico dataplane."""
NODE_LOCAL_DNS: Final = "169.254.20.10/32"
GKE_CLOUD_DNS: Final = "169.254.169.254/32"


def namespace_selector(name: str) -> Manifest:
    return {"namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: name}}}


def dns_egress_rule(cloud: str) -> Manifest:
    """DNS, UDP and TCP (large answers fall back to TCP), to the cluster's resolvers only
    (see the module docstring)."""
    resolvers = [NODE_LOCAL_DNS, *([GKE_CLOUD_DNS] if cloud == "gcp" else [])]
    return {
        "to": [
            {
                **namespace_selector(naming.KUBE_SYSTEM_NAMESPACE),
                "podSelector": {"matchLabels": dict(KUBE_DNS_LABELS)},
            },
            *({"ipBlock": {"cidr": cidr}} for cidr in resolvers),
        ],
        "ports": [
            {"protocol": "UDP", "port": DNS_PORT},
            {"protocol": "TCP", "port": DNS_PORT},
        ],
    }


def store_except(env: ServingEnvironment) -> list[str]:
    """Ranges the store rule leaves out: private, shared and link-local ranges, and the
    environment's network when it is none of those (a VPC on public addresses)."""
    excluded = [*PRIVATE_IPV4, LINK_LOCAL]
    if env.vpc_cidr:
        vpc = ipaddress.ip_network(env.vpc_cidr, strict=False)
        covered = any(
            vpc.version == 4 and vpc.subnet_of(ipaddress.IPv4Network(r)) for r in excluded
        )
        if vpc.version == 4 and not covered:
            excluded.append(str(vpc))
    return excluded


def public_ipv4_blocks(env: ServingEnvironment) -> list[str]:
    """The IPv4 space minus `store_except`, as the fewest CIDRs, in address order."""
    return list(_ipv4_space_without(tuple(store_except(env))))


@functools.lru_cache(maxsize=64)
def _ipv4_space_without(holes: tuple[str, ...]) -> tuple[str, ...]:
    """The IPv4 space minus `holes`, as the fewest CIDRs, in address order (computed once
    per set of holes: every serving, build and store policy of a stack asks for it)."""
    blocks = [ipaddress.IPv4Network(ANY_IPV4)]
    for cidr in holes:
        hole = ipaddress.IPv4Network(cidr)
        kept: list[ipaddress.IPv4Network] = []
        for block in blocks:
            if hole.subnet_of(block):
                kept += block.address_exclude(hole)
            elif not block.subnet_of(hole):
                kept.append(block)
        blocks = kept
    return tuple(str(n) for n in ipaddress.collapse_addresses(blocks))


def https_egress_rule(env: ServingEnvironment) -> Manifest:
    """TCP 443 to addresses outside the cluster and the VPC (see the module docstring)."""
    return {
        "to": [{"ipBlock": {"cidr": cidr}} for cidr in public_ipv4_blocks(env)],
        "ports": [{"protocol": "TCP", "port": HTTPS_PORT}],
    }


def metadata_egress_rules(env: ServingEnvironment) -> list[Manifest]:
    """GKE: the metadata server's Workload Identity endpoints; AWS: none (IRSA uses STS)."""
    if env.cloud != "gcp":
        return []
    return [
        {"to": [{"ipBlock": {"cidr": cidr}}], "ports": [{"protocol": "TCP", "port": port}]}
        for cidr, port in GKE_METADATA
    ]


def store_egress_rules(
    env: ServingEnvironment, cloud_identity: bool = True, internet: bool = False
) -> list[Manifest]:
    """What a pod that reads or writes the model store needs besides DNS; without
    `cloud_identity` (an hf:// download), HTTPS alone. On kubernetes the store is the
    S3-compatible endpoint alone (`store_endpoint_egress_rule`), and HTTPS outside the
    cluster only for a pod that downloads from the internet (`internet`: the Hugging Face
    hub, the package index)."""
    if env.cloud == "kubernetes":
        public = [https_egress_rule(env)] if internet else []
        return [*public, store_endpoint_egress_rule(env)]
    metadata = metadata_egress_rules(env) if cloud_identity else []
    return [https_egress_rule(env), *metadata]


def store_endpoint_egress_rule(env: ServingEnvironment) -> Manifest:
    """TCP to a kubernetes environment's store endpoint, on its port (80/443 by scheme),
    and nowhere else (`inferplane.blueprint.store_endpoint`): an in-cluster Service's pods
    by namespace (and by `ServingEnvironment.store_pod_labels` when given), or the one
    address of a store outside the cluster. The store's pods must listen on the
    endpoint's port: a policy sees the port after the Service translates it."""
    if not env.store_endpoint:
        raise ValueError("a kubernetes environment needs store_endpoint")
    endpoint = store_endpoint.require(env.store_endpoint)
    ports = [{"protocol": "TCP", "port": endpoint.port}]
    if endpoint.namespace is None:
        return {"to": [{"ipBlock": {"cidr": endpoint.cidr}}], "ports": ports}
    peer = namespace_selector(endpoint.namespace)
    if env.store_pod_labels:
        peer["podSelector"] = {"matchLabels": dict(env.store_pod_labels)}
    return {"to": [peer], "ports": ports}


def client_peers(env: ServingEnvironment, cidrs: list[str]) -> list[Manifest]:
    """Who may call a model or its router: `cidrs` by address (callers outside the cluster,
    and in-cluster ones where the dataplane matches pods by address), then each of
    `ServingEnvironment.lb_client_namespaces` by namespace. Cilium, GKE Dataplane V2
    included, never matches a pod or node by ``ipBlock`` (cilium/cilium
    ``Documentation/security/policy/layer3.rst``, "IP/CIDR based": "CIDR rules do not
    apply to traffic where both sides of the connection are either managed by Cilium or
    use an IP belonging to a node in the cluster"; cilium/cilium#19601, #35212, #9209),
    so in-cluster callers there are admitted by their namespace only."""
    return [
        *({"ipBlock": {"cidr": cidr}} for cidr in cidrs),
        *(namespace_selector(ns) for ns in env.lb_client_namespaces),
    ]


def namespace_dns_policy_spec(cloud: str) -> Manifest:
    """Every pod of the namespace may resolve names (and do nothing else through this)."""
    return {"podSelector": {}, "policyTypes": ["Egress"], "egress": [dns_egress_rule(cloud)]}


def serving_egress_policy_spec(
    env: ServingEnvironment, model_name: str, cloud_identity: bool = True
) -> Manifest:
    """Serving pods of one model: DNS and the model store (weights are fetched at start),
    or the Hugging Face hub, which needs no cloud identity."""
    return {
        "podSelector": {"matchLabels": naming.model_selector(env.part_of, model_name)},
        "policyTypes": ["Egress"],
        "egress": [dns_egress_rule(env.cloud), *store_egress_rules(env, cloud_identity)],
    }


def isolated_store_client_spec(
    pod_labels: dict[str, str], env: ServingEnvironment, internet: bool = False
) -> Manifest:
    """A job pod (engine build, ...): no ingress at all; egress to DNS and the model store,
    and with `internet` HTTPS outside the cluster (`store_egress_rules`).

    It declares both policy types itself, so it stays isolated even where the namespace's
    default-deny policy is missing (an attached cluster's namespace managed elsewhere).
    """
    return {
        "podSelector": {"matchLabels": dict(pod_labels)},
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [],
        "egress": [dns_egress_rule(env.cloud), *store_egress_rules(env, internet=internet)],
    }


def serving_egress_policy(
    name: str,
    *,
    env: ServingEnvironment,
    model_name: str,
    cloud_identity: bool,
    namespace: str,
    labels: dict[str, str],
    opts: pulumi.ResourceOptions,
) -> k8s.networking.v1.NetworkPolicy:
    """NetworkPolicy ``<model>-egress``; `opts` carries the parent and provider."""
    return k8s.networking.v1.NetworkPolicy(
        name,
        metadata={"name": f"{model_name}-egress", "namespace": namespace, "labels": labels},
        spec=serving_egress_policy_spec(env, model_name, cloud_identity),
        opts=opts,
    )
