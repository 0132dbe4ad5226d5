"""Hand-built resources in the shapes a CrossGuard run hands the rules, for programs that
were not written with the components (and for what a blueprint cannot express)."""

from __future__ import annotations

from typing import Any

from inferplane.blueprint import naming
from inferplane.blueprint.derived.facts import EnvFacts, PoolFacts, to_config_map
from inferplane.policies import resources as R
from inferplane.policies.resources import Resource
from inferplane.policies.stack import Stack

ZONES = ("us-east-1a", "us-east-1b")


def res(type_: str, name: str, props: dict[str, Any]) -> Resource:
    return Resource(type=type_, name=name, urn=f"urn:pulumi:test::p::{type_}::{name}", props=props)


def env_configmap(zones: tuple[str, ...] = ZONES) -> Resource:
    """The environment ConfigMap a stack of one exclusive L4 pool across `zones` publishes."""
    pool = PoolFacts(
        name="l4",
        gpu="nvidia-l4",
        gpus_per_node=1,
        gpu_resource="nvidia.com/gpu",
        slices_per_gpu=1,
        units_per_node=1,
        sharing="exclusive",
        zones=zones,
        nodes_min=2,
        nodes_max=4,
    )
    facts = EnvFacts(
        blueprint="app",
        environment="prod",
        cloud="aws",
        region="us-east-1",
        zones=zones,
        pools={"l4": pool},
        waivers=(),
        models={},
    )
    return res(
        R.CONFIG_MAP,
        "env",
        {
            "metadata": {"name": naming.ENVIRONMENT_CONFIGMAP, "namespace": "app"},
            "data": to_config_map(facts),
        },
    )


def node_group(pool: str, zone: str, lo: int = 2, hi: int = 4, subnets: int = 1) -> Resource:
    return res(
        R.EKS_NODE_GROUP,
        f"app-prod-{pool}-{zone[-1]}",
        {
            "subnetIds": [f"subnet-{i}" for i in range(subnets)],
            "scalingConfig": {"minSize": float(lo), "maxSize": float(hi), "desiredSize": float(lo)},
            "labels": {naming.POOL_LABEL: pool, naming.ZONE_LABEL: zone},
        },
    )


def deployment(
    model: str,
    pool: str = "l4",
    zones: tuple[str, ...] = ZONES,
    gpus: Any = 1,
    limit: Any = None,
    resource: str = "nvidia.com/gpu",
    latency: str = "realtime",
    image: str = "vllm/vllm-openai:v0.10.2",
    args: list[str] | None = None,
    strategy: dict[str, Any] | None = None,
) -> Resource:
    labels = {
        naming.MODEL_LABEL: model,
        naming.POOL_LABEL: pool,
        naming.LATENCY_CLASS_LABEL: latency,
    }
    container = {
        "name": "server",
        "image": image,
        "args": args or ["--model", model],
        "resources": {
            "requests": {resource: gpus},
            "limits": {resource: gpus if limit is None else limit},
        },
    }
    spec: dict[str, Any] = {
        "replicas": 2.0,
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                "nodeSelector": {naming.POOL_LABEL: pool},
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {
                                    "matchExpressions": [
                                        {
                                            "key": naming.TOPOLOGY_ZONE_LABEL,
                                            "operator": "In",
                                            "values": list(zones),
                                        }
                                    ]
                                }
                            ]
                        }
                    }
                },
                "containers": [container],
            },
        },
    }
    if strategy is not None:
        spec["strategy"] = strategy
    return res(R.DEPLOYMENT, model, {"metadata": {"name": model, "labels": labels}, "spec": spec})


def scaled_object(
    model: str,
    lo: Any = 2.0,
    hi: Any = 4.0,
    query: str = "sum(vllm:num_requests_waiting)",
    latency: str = "realtime",
    **extra: Any,
) -> Resource:
    spec: dict[str, Any] = {
        "scaleTargetRef": {"name": model},
        "maxReplicaCount": hi,
        "triggers": [{"type": "prometheus", "metadata": {"query": query, "threshold": "4"}}],
        **extra,
    }
    if lo is not None:
        spec["minReplicaCount"] = lo
    labels = {naming.MODEL_LABEL: model, naming.LATENCY_CLASS_LABEL: latency}
    return res(
        R.SCALED_OBJECT,
        f"{model}-so",
        {"metadata": {"name": model, "labels": labels}, "spec": spec},
    )


def lb_service(model: str, annotations: dict[str, str] | None = None, **spec: Any) -> Resource:
    body = {"type": "LoadBalancer", "trafficDistribution": "PreferClose", **spec}
    return res(
        R.SERVICE,
        f"{model}-lb",
        {
            "metadata": {
                "name": f"{model}-lb",
                "labels": {naming.MODEL_LABEL: model},
                "annotations": annotations
                if annotations is not None
                else {
                    "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
                    "service.beta.kubernetes.io/aws-load-balancer-attributes": (
                        "load_balancing.cross_zone.enabled=false,"
                        "dns_record.client_routing_policy=availability_zone_affinity"
                    ),
                },
            },
            "spec": body,
        },
    )


def alerts(model: str) -> Resource:
    return res(
        R.PROMETHEUS_RULE,
        f"{model}-rules",
        {
            "metadata": {"name": model, "labels": {naming.MODEL_LABEL: model}},
            "spec": {"groups": [{"name": model, "rules": [{"alert": "SloBurn", "expr": "1"}]}]},
        },
    )


def compliant(model: str = "chat") -> list[Resource]:
    """A hand-written stack that every rule accepts."""
    return [
        env_configmap(),
        *(node_group("l4", z) for z in ZONES),
        deployment(model),
        scaled_object(model),
        lb_service(model),
        alerts(model),
    ]


def stack(resources: list[Resource]) -> Stack:
    return Stack.of(resources)
