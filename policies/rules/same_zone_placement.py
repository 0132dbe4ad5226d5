"""same-zone-placement: nodes, pods and the load balancer stay in the clients' zones."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from inferplane.blueprint import naming
from inferplane.blueprint.errors import YamlPath
from inferplane.policies.framework import ConfigKey, Finding, Rule, RuleConfig
from inferplane.policies.resources import SERVICE, Resource
from inferplane.policies.routers import router_releases
from inferplane.policies.stack import ModelView, Stack

GKE_GLOBAL_ACCESS = "networking.gke.io/internal-load-balancer-allow-global-access"
AWS_ATTRIBUTES = "service.beta.kubernetes.io/aws-load-balancer-attributes"
AWS_CROSS_ZONE = "service.beta.kubernetes.io/aws-load-balancer-cross-zone-load-balancing-enabled"
AWS_ANNOTATION_PREFIX = "service.beta.kubernetes.io/aws-load-balancer-"
CLIENT_ROUTING = "dns_record.client_routing_policy"
"""NLB attribute (AWS Load Balancer Controller ``pkg/shared_constants/attributes.go``):
``availability_zone_affinity`` (100% of DNS answers in the client's zone),
``partial_availability_zone_affinity`` (85%) or ``any_availability_zone`` (the default: no
affinity, so clients get every zone's address even with cross-zone load balancing off)."""


def nlb_attributes(annotations: Mapping[str, str]) -> dict[str, str]:
    """The ``k=v,k2=v2`` attributes annotation as a map (the controller's stringMap)."""
    text = str(annotations.get(AWS_ATTRIBUTES, ""))
    pairs = (item.split("=", 1) for item in text.split(",") if "=" in item)
    return {k.strip(): v.strip() for k, v in pairs}


def _is_aws(stack: Stack, annotations: Mapping[str, str]) -> bool:
    if stack.facts is not None:
        return stack.facts.cloud == "aws"
    return any(str(k).startswith(AWS_ANNOTATION_PREFIX) for k in annotations)


def pinned_zones(workload: Resource) -> tuple[str, ...] | None:
    """Zones a serving pod may run in, by the cloud's zone label or inferplane's own."""
    return workload.node_selection(naming.TOPOLOGY_ZONE_LABEL) or workload.node_selection(
        naming.ZONE_LABEL
    )


def _node_groups(stack: Stack) -> Iterator[Finding]:
    env_zones = set(stack.facts.zones) if stack.facts else set()
    outside: dict[str, tuple[list[str], Resource | None]] = {}
    for group in stack.node_groups:
        pool = group.pool
        if pool is None:
            continue  # not a GPU pool (a system node group may span the cluster's subnets)
        target = f"gpu_pools.{pool}"
        field: YamlPath = ("gpu_pools", pool, "zones")
        if group.spans > 1:
            yield Finding(
                target,
                field,
                f"node group {group.resource.name} spans {group.spans} zones or subnets; "
                "create one node group per zone so pods can be pinned and a zone can fail "
                "alone",
                group.resource.ref,
            )
        elif group.zones is None:
            yield Finding(
                target,
                field,
                f"node group {group.resource.name} does not say its zone; give it one "
                f"subnet (or node location) and the label {naming.ZONE_LABEL}",
                group.resource.ref,
            )
        if env_zones and group.zones:
            for zone in group.zones:
                if zone not in env_zones:
                    zones, _ = outside.setdefault(pool, ([], group.resource))
                    zones.append(zone)
    if stack.facts:
        for facts in stack.facts.pools.values():
            for zone in facts.zones:
                if env_zones and zone not in env_zones:
                    zones, _ = outside.setdefault(facts.name, ([], None))
                    zones.append(zone)
    for pool_name, (zones, resource) in sorted(outside.items()):
        yield Finding(
            f"gpu_pools.{pool_name}",
            ("gpu_pools", pool_name, "zones"),
            f"pool {pool_name} places GPU nodes in {', '.join(dict.fromkeys(zones))}, outside "
            f"the environment's zones ({', '.join(sorted(env_zones))}); every request to them "
            "would cross zones",
            resource.ref if resource else None,
        )


def _pods(stack: Stack, model: ModelView) -> Iterator[Finding]:
    target = f"models.{model.name}"
    field: YamlPath = ("models", model.name, "pool")
    pool_zones = set(stack.pool_zones(model.pool)) if model.pool else set()
    for w in model.workloads:
        if model.pool and w.node_selection(naming.POOL_LABEL) is None:
            yield Finding(
                target,
                field,
                f"{w.k8s_name} pods do not select their pool's nodes ({naming.POOL_LABEL}="
                f"{model.pool}); select them with a nodeSelector or required node affinity",
                w.ref,
            )
        zones = pinned_zones(w)
        if zones is None:
            yield Finding(
                target,
                field,
                f"{w.k8s_name} pods are not pinned to zones; require node affinity "
                f"{naming.TOPOLOGY_ZONE_LABEL} In [{', '.join(sorted(pool_zones))}]",
                w.ref,
            )
        elif pool_zones and not set(zones) <= pool_zones:
            extra = sorted(set(zones) - pool_zones)
            yield Finding(
                target,
                field,
                f"{w.k8s_name} pods may run in {', '.join(extra)}, outside the zones of pool "
                f"{model.pool} ({', '.join(sorted(pool_zones))})",
                w.ref,
            )


def _every_zone(stack: Stack, model: ModelView) -> Iterator[Finding]:
    if not stack.facts or not model.pool:
        return
    env_zones = stack.facts.zones
    served = set(stack.pool_zones(model.pool))
    field: YamlPath = ("gpu_pools", model.pool, "zones")
    # A model's workloads together serve the zones any of them is pinned to (an llm-aware
    # model runs one Deployment per zone); an unpinned one may run anywhere in the pool.
    pinned = [pinned_zones(w) for w in model.workloads]
    if pinned and all(z is not None for z in pinned):
        union = {zone for zones in pinned if zones is not None for zone in zones}
        if served and union < served:
            served &= union
            field = ("models", model.name, "pool")
    missing = [z for z in env_zones if z not in served]
    if served and missing:
        yield Finding(
            f"models.{model.name}",
            field,
            f"realtime model {model.name} is served only in {', '.join(sorted(served))}; "
            f"clients in {', '.join(missing)} would cross zones — serve it from a pool in "
            "every zone of the environment",
            model.workloads[0].ref if model.workloads else None,
        )


def _load_balancers(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    allowed = [str(v) for v in config["traffic_distribution"]]
    for svc in stack.of_type(SERVICE):
        if svc.spec.get("type") != "LoadBalancer":
            continue
        model = svc.model
        target = f"models.{model}" if model else "load_balancer"
        field: YamlPath = ("load_balancer",)
        annotations: Mapping[str, str] = svc.annotations
        distribution = svc.spec.get("trafficDistribution")
        if distribution not in allowed:
            yield Finding(
                target,
                field,
                f"load balancer {svc.k8s_name} does not prefer same-zone endpoints "
                f"(spec.trafficDistribution is {distribution or 'unset'}); set it to "
                f"{' or '.join(allowed)}",
                svc.ref,
            )
        if str(annotations.get(GKE_GLOBAL_ACCESS, "")).lower() == "true":
            yield Finding(
                target,
                field,
                f"load balancer {svc.k8s_name} allows global access, so clients in other "
                f"regions reach it; remove {GKE_GLOBAL_ACCESS}",
                svc.ref,
            )
        attributes = nlb_attributes(annotations)
        if (
            attributes.get("load_balancing.cross_zone.enabled", "").lower() == "true"
            or str(annotations.get(AWS_CROSS_ZONE, "")).lower() == "true"
        ):
            yield Finding(
                target,
                field,
                f"load balancer {svc.k8s_name} enables cross-zone load balancing, sending "
                "requests to other zones; leave load_balancing.cross_zone.enabled false",
                svc.ref,
            )
        elif _is_aws(stack, annotations):
            policies = [str(v) for v in config["aws_client_routing_policies"]]
            policy = attributes.get(CLIENT_ROUTING)
            if policy not in policies:
                yield Finding(
                    target,
                    field,
                    f"load balancer {svc.k8s_name} lets DNS answer with every zone's address "
                    f"({CLIENT_ROUTING} is {policy or 'unset, so any_availability_zone'}), "
                    "so clients cross zones even with cross-zone load balancing off; set "
                    f"{CLIENT_ROUTING}={' or '.join(policies)} in {AWS_ATTRIBUTES}",
                    svc.ref,
                )


def _router_pools(stack: Stack) -> Iterator[Finding]:
    """Each llm-d router's InferencePool holds one zone: its selector names the zone, and
    every serving workload it selects is pinned to that zone alone. A pool across zones
    would send a request from one zone to a replica in another."""
    for router in router_releases(stack):
        model = router.model or router.name
        target = f"models.{model}"
        field: YamlPath = ("models", model, "routing", "mode")
        labels = router.pool_labels
        zone = labels.get(naming.ZONE_LABEL)
        if zone is None:
            yield Finding(
                target,
                field,
                f"the InferencePool {router.name} selects pods of every zone (its selector "
                f"has no {naming.ZONE_LABEL}); give each zone its own pool",
                router.release.ref,
            )
            continue
        selected = [
            w
            for w in stack.serving_workloads
            if all(w.pod_labels.get(k) == v for k, v in labels.items())
        ]
        for w in selected:
            zones = pinned_zones(w)
            if zones is None or tuple(zones) != (zone,):
                where = ", ".join(zones) if zones else "any zone"
                yield Finding(
                    target,
                    field,
                    f"the InferencePool {router.name} of zone {zone} selects {w.k8s_name}, "
                    f"whose pods may run in {where}; pin them to {zone} alone",
                    w.ref,
                )


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    yield from _node_groups(stack)
    yield from _router_pools(stack)
    for model in stack.iter_models():
        yield from _pods(stack, model)
        if model.realtime:
            yield from _every_zone(stack, model)
    yield from _load_balancers(stack, config)


RULE = Rule(
    id="same-zone-placement",
    title="GPU nodes, serving pods and load balancers stay in the environment's zones",
    level="mandatory",
    scope="stack",
    check=check,
    rationale=(
        "A cross-zone hop adds latency and cost to every request. The environment's zones "
        "are where its clients run, so GPU node groups (one per zone, so a zonal GPU "
        "stockout takes down one zone only), serving pods and load balancers belong there "
        "and nowhere else. Each realtime model must be served in every client zone, or "
        "that zone's clients cross zones; the load balancer must stay regional and prefer "
        "endpoints in the caller's zone (spec.trafficDistribution; on AWS NLBs cross-zone "
        "load balancing off and DNS answering each client with its own zone's address, "
        "dns_record.client_routing_policy=availability_zone_affinity: with the default "
        "policy the NLB's name resolves to every zone's address). An llm-d router's "
        "InferencePool picks among the pods it selects whatever their zone, so each pool "
        "holds one zone's pods only."
    ),
    remediation=(
        "Keep gpu_pools.<p>.zones within the environment's zones; give every realtime "
        "model a pool that covers all of them (a pool may use a subset only for batch "
        "models). Hand-written programs: one node group per zone with the "
        f"{naming.ZONE_LABEL} label, serving pods pinned with required node affinity on "
        f"{naming.TOPOLOGY_ZONE_LABEL}, and LoadBalancer Services with "
        "spec.trafficDistribution: PreferClose; on AWS the annotation "
        f"{AWS_ATTRIBUTES}: load_balancing.cross_zone.enabled=false,"
        f"{CLIENT_ROUTING}=availability_zone_affinity (or, through the rule's "
        "aws_client_routing_policies, partial_availability_zone_affinity: 85% of answers "
        "in-zone, the rest spread load when one zone's clients outnumber its replicas). "
        f"llm-d router releases: matchLabels with {naming.ZONE_LABEL}, selecting pods pinned "
        "to that zone alone (one Deployment per zone)."
    ),
    links=(
        "https://kubernetes.io/docs/concepts/services-networking/service/#traffic-distribution",
        "https://github.com/aws/karpenter-provider-aws/issues/2275",
        "https://docs.aws.amazon.com/elasticloadbalancing/latest/network/"
        "edit-load-balancer-attributes.html#zonal-dns-affinity",
        "https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/service/"
        "annotations/#load-balancer-attributes",
    ),
    config=(
        ConfigKey(
            "traffic_distribution",
            ["PreferClose", "PreferSameZone"],
            {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "Accepted spec.trafficDistribution values of a LoadBalancer Service.",
        ),
        ConfigKey(
            "aws_client_routing_policies",
            ["availability_zone_affinity"],
            {
                "type": "array",
                "items": {
                    "enum": ["availability_zone_affinity", "partial_availability_zone_affinity"]
                },
                "minItems": 1,
            },
            "Accepted dns_record.client_routing_policy values of an AWS NLB (add "
            "partial_availability_zone_affinity to accept 85% zonal affinity).",
        ),
    ),
    sources=(
        "Resources only: node groups (EKS subnets and zone label, GKE node locations), "
        "serving pods' node selection, LoadBalancer Services, the llm-d routers' pool "
        "selectors (chart values, or the InferencePools a rendered chart created), and the "
        "environment's and pools' zones from the environment ConfigMap."
    ),
    passing_example="""\
environments:
  prod:
    zones: [us-central1-a, us-central1-b]
gpu_pools:
  l4: {gpu: nvidia-l4}          # zones default to the environment's
models:
  chat: {pool: l4}              # realtime: served in both zones
""",
    failing_example="""\
environments:
  prod:
    zones: [us-central1-a, us-central1-b]
    overrides: {gpu_pools: {l4: {zones: [us-central1-a]}}}
gpu_pools:
  l4: {gpu: nvidia-l4}
models:
  chat: {pool: l4}              # clients in us-central1-b cross zones
""",
)
