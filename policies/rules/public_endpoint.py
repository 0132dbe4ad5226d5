"""public-endpoint: model endpoints are internal and never open to the whole internet."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator, Mapping
from typing import Any

from inferplane.policies.framework import ConfigKey, Finding, Rule, RuleConfig
from inferplane.policies.resources import NETWORK_POLICY, SERVICE, Resource
from inferplane.policies.scoping import KEY_DESCRIPTION, KEY_PATTERN
from inferplane.policies.stack import Stack

AWS_SCHEME = "service.beta.kubernetes.io/aws-load-balancer-scheme"
AWS_INTERNAL = "service.beta.kubernetes.io/aws-load-balancer-internal"
AWS_TYPE = "service.beta.kubernetes.io/aws-load-balancer-type"
AWS_SOURCE_RANGES = "service.beta.kubernetes.io/load-balancer-source-ranges"
GKE_TYPE = "networking.gke.io/load-balancer-type"
GKE_TYPE_OLD = "cloud.google.com/load-balancer-type"
INTERNAL_CLASSES = ("networking.gke.io/l4-regional-internal",)
AWS_LBC_CLASSES = ("service.k8s.aws/nlb",)


def is_internal(svc: Resource) -> bool:
    """Whether a LoadBalancer Service gets an internal load balancer on EKS or GKE."""
    a: Mapping[str, Any] = svc.annotations
    scheme = str(a.get(AWS_SCHEME, "")).lower()
    if scheme:
        return scheme == "internal"
    if str(a.get(AWS_INTERNAL, "")).lower() in ("true", "0.0.0.0/0"):
        return True
    if str(a.get(GKE_TYPE, a.get(GKE_TYPE_OLD, ""))).lower() == "internal":
        return True
    lb_class = str(svc.spec.get("loadBalancerClass", ""))
    if lb_class in INTERNAL_CLASSES:
        return True
    # The AWS Load Balancer Controller defaults to internal; the in-tree controller and GKE
    # default to internet-facing.
    return lb_class in AWS_LBC_CLASSES or str(a.get(AWS_TYPE, "")).lower() == "external"


def is_public(cidr: str, private: list[str]) -> bool:
    """Whether `cidr` admits any address outside the private ranges (an unparsable range
    counts as public: it cannot be shown to be private)."""
    try:
        net = ipaddress.ip_network(cidr.strip(), strict=False)
    except ValueError:
        return True
    for p in private:
        block = ipaddress.ip_network(p, strict=False)
        if net.version == block.version and net.subnet_of(block):  # type: ignore[arg-type]
            return False
    return True


def _confirmed_internal(stack: Stack, config: RuleConfig) -> bool:
    """Whether the platform lists this environment's cluster as one whose own load balancer
    gives only private addresses (keys as `scoping` reads them)."""
    facts = stack.facts
    if facts is None:
        return False
    listed = {str(k) for k in config.get("internal_load_balancers") or ()}
    keys = {"*", facts.blueprint, f"{facts.blueprint}/{facts.environment}"}
    return bool(listed & keys)


def _target(r: Resource) -> str:
    """Scheme and CIDRs are set once for the whole blueprint, under `load_balancer`."""
    del r
    return "load_balancer"


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    private = [str(c) for c in config["private_cidrs"]]
    balanced = [s for s in stack.of_type(SERVICE) if s.spec.get("type") == "LoadBalancer"]
    on_kubernetes = stack.facts is not None and stack.facts.cloud == "kubernetes"
    if on_kubernetes and balanced and not _confirmed_internal(stack, config):
        # A kubernetes environment's Service carries no scheme: the cluster's own load
        # balancer decides where its address lives, which nothing in the stack can show, and
        # a cloud's controller gives such a Service a public address by default. Only the
        # platform can say that its cluster's implementation hands out private addresses.
        # One setting makes every model's Service so: said once, naming them all.
        env = stack.environment
        names = ", ".join(sorted(s.k8s_name for s in balanced))
        yield Finding(
            f"environments.{env}",
            ("environments", env, "cluster", "load_balancer"),
            f"Services {names} are of type LoadBalancer on a kubernetes environment, whose "
            "own load balancer decides where their addresses live (a cloud's controller "
            "makes them public by default) and the platform has not confirmed it private; "
            "use cluster.load_balancer: cluster_ip, or ask the platform team to list this "
            "environment in public-endpoint.internal_load_balancers",
            min(balanced, key=lambda s: s.k8s_name).ref,
        )
    for svc in balanced:
        if not on_kubernetes and not is_internal(svc):
            yield Finding(
                _target(svc),
                ("load_balancer", "scheme"),
                f"Service {svc.k8s_name} gets an internet-facing load balancer; model "
                "endpoints belong on the private network (load_balancer.scheme: internal)",
                svc.ref,
            )
        ranges = [str(c) for c in svc.spec.get("loadBalancerSourceRanges") or ()]
        ranges += [
            c.strip() for c in str(svc.annotations.get(AWS_SOURCE_RANGES, "")).split(",") if c
        ]
        open_to = sorted({c for c in ranges if is_public(c, private)})
        if open_to:
            yield Finding(
                _target(svc),
                ("load_balancer", "allowed_cidrs"),
                f"Service {svc.k8s_name} accepts connections from {', '.join(open_to)}, "
                "outside the private address ranges; list only the clients' private networks "
                "in load_balancer.allowed_cidrs",
                svc.ref,
            )
    for netpol in stack.of_type(NETWORK_POLICY):
        for rule in netpol.spec.get("ingress") or ():
            for peer in (rule.get("from") or ()) if isinstance(rule, Mapping) else ():
                block = peer.get("ipBlock") if isinstance(peer, Mapping) else None
                if isinstance(block, Mapping) and is_public(str(block.get("cidr")), private):
                    yield Finding(
                        _target(netpol),
                        ("load_balancer", "allowed_cidrs"),
                        f"NetworkPolicy {netpol.k8s_name} admits {block.get('cidr')}, outside "
                        "the private address ranges; list only the clients' private networks "
                        "in load_balancer.allowed_cidrs",
                        netpol.ref,
                    )


RULE = Rule(
    id="public-endpoint",
    title="Model endpoints are internal, never open to any address",
    level="mandatory",
    scope="resource",
    check=check,
    rationale=(
        "An inference endpoint runs expensive GPUs and often has no authentication of its "
        "own: exposed to the internet it invites abuse, cost and data exposure. GKE's "
        "default for a LoadBalancer Service is external, so internal must be explicit; a "
        "source range outside the private address space (RFC 1918, RFC 6598 shared space, "
        "IPv6 unique-local) admits clients on the internet. On a kubernetes environment the "
        "Service carries no scheme: the cluster's own load balancer decides where its "
        "address lives, and a cloud's controller makes it public by default, so a "
        "LoadBalancer Service there needs the platform's word that the cluster's "
        "implementation is private (internal_load_balancers). "
        "Mandatory: a public endpoint needs a waiver with a reason and an expiry."
    ),
    remediation=(
        "Keep load_balancer.scheme: internal (the default) and list only the clients' "
        "private networks in load_balancer.allowed_cidrs. If a public endpoint is intended, "
        "put an authenticating gateway in front and record a waiver (reason and expiry)."
    ),
    links=(
        "https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/service/annotations/#lb-scheme",
        "https://cloud.google.com/kubernetes-engine/docs/how-to/internal-load-balancing",
    ),
    config=(
        ConfigKey(
            "private_cidrs",
            ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7"],
            {"type": "array", "items": {"type": "string"}},
            "Address ranges that count as private (RFC 1918, RFC 6598, RFC 4193); a source "
            "range not inside one of them is public.",
        ),
        ConfigKey(
            "internal_load_balancers",
            [],
            {"type": "array", "items": {"type": "string", "pattern": KEY_PATTERN}},
            "The kubernetes environments whose cluster's own load balancer gives only private "
            "addresses (MetalLB on a private pool, a controller set internal by default), "
            f"{KEY_DESCRIPTION}. A LoadBalancer Service of an environment not listed is a "
            "violation: without the platform's word, its address may be public.",
        ),
    ),
    sources=(
        "Each LoadBalancer Service (scheme annotations, loadBalancerClass, source ranges; on "
        "a kubernetes environment the platform's internal_load_balancers) and NetworkPolicy "
        "(ingress ipBlocks). Offline and online alike."
    ),
    passing_example="""\
load_balancer:
  scheme: internal
  allowed_cidrs: [10.0.0.0/8]
""",
    failing_example="""\
load_balancer:
  scheme: internal
  allowed_cidrs: [203.0.113.0/24]
""",
)
