"""Semantic checks of the names inferplane derives from the blueprint.

The Kubernetes objects of a model are named after it (see the components): Deployment,
Service, PodDisruptionBudget, ScaledObject, ServiceMonitor and PrometheusRule ``<model>``;
Service ``<model>-lb``; Service ``<model>-grpc`` (headless, models exposing gRPC);
Service, NetworkPolicies and Deployments ``<model>-cache[-*]`` (a Redis response cache);
ConfigMaps ``<model>-triton-config`` and ``<model>-dashboard``;
Secret ``<model>-secrets``; Jobs ``<model>-engine-<key>``. Beside them, objects no model
owns (names in `naming`): per pool the spare-GPU placeholder Deployments
``<pool>-spare-gpus-<zone>`` and the pre-pull DaemonSet ``<pool>-image-prepull``; per
``hf://`` source the staging Job and NetworkPolicy ``weights-<10 hex digits>`` and Secret
``weights-<10 hex digits>-hub-token``. Two models may not derive the same name for objects of
one kind, nor a model claim a name of those objects (no model owns a DaemonSet, and no
model-derived Secret ends in ``-hub-token``: those two cannot collide), and the
blueprint's namespace may not be one that Kubernetes or the add-ons own. Length limits: the
schema caps every name the user writes so that every derived name fits; what only the
combination can exceed is hashed by `naming` (node groups, service account ids, label
values).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from inferplane.blueprint import defaults, naming

if TYPE_CHECKING:
    from inferplane.blueprint.checks.semantic_env import EnvView

KUBERNETES_NAMESPACES = frozenset(
    {"default", naming.KUBE_SYSTEM_NAMESPACE, "kube-public", "kube-node-lease"}
)
"""Namespaces that exist in every cluster ("Initial namespaces",
https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces/). The
``kube-`` prefix is reserved for Kubernetes system namespaces (same page): see
`kubernetes_owns`."""
RESERVED_NAMESPACES = KUBERNETES_NAMESPACES | {
    naming.GPU_OPERATOR_NAMESPACE,
    naming.KEDA_NAMESPACE,
    naming.MONITORING_NAMESPACE,
}
"""`KUBERNETES_NAMESPACES` and the ones the add-ons install into (`naming`)."""


def kubernetes_owns(namespace: str) -> bool:
    """An initial namespace of every cluster, or one with the ``kube-`` prefix."""
    return namespace in KUBERNETES_NAMESPACES or namespace.startswith("kube-")


LB_SUFFIX = "-lb"
"""Services of one model: ``<model>`` (ClusterIP) and ``<model>-lb`` (LoadBalancer); the
other derived names end in suffixes no model name can produce twice."""
GRPC_SUFFIX = "-grpc"
"""The headless Service ``<model>-grpc`` of a model exposing gRPC (client-side balancing)."""
CACHE_SUFFIX = naming.RESPONSE_CACHE_SUFFIX
"""A model with ``response_cache.backend: redis`` owns the Service and NetworkPolicies
``<model>-cache`` and ``<model>-cache-egress`` and a Deployment ``<model>-cache-<zone>``
per zone (`inferplane.components.serving.triton.response_cache`)."""
WEIGHTS_NAME = re.compile(rf"{naming.WEIGHTS_PREFIX}[0-9a-f]{{{naming.WEIGHTS_KEY_LENGTH}}}")
"""The staging objects' names (`naming.weights_job`): the prefix and hex digits of a content
key. A model so named would own the NetworkPolicy (and Deployment, Service, ...) of the
same name; which key a source gets is a hash, so the whole form is kept for staging."""


def _redis_cache(model: object) -> bool:
    if not isinstance(model, dict) or model.get("server") != "triton":
        return False
    cache = model.get("response_cache") or {}
    return bool(cache.get("enabled", True) and cache.get("backend") == "redis")


def _serves_grpc(model: object) -> bool:
    if not isinstance(model, dict) or model.get("server") != "triton":
        return False  # vLLM serves HTTP only
    protocol = (model.get("expose") or {}).get("protocol", defaults.EXPOSE_BY_SERVER["triton"])
    return protocol in ("grpc", "both")


def check_namespace(env: EnvView) -> None:
    name = env.data["name"]
    ns = naming.namespace(name)
    if ns in RESERVED_NAMESPACES or kubernetes_owns(ns):
        env.error(
            ("name",),
            f"the blueprint name {name!r} is also the namespace of its serving objects, and "
            f"namespace {ns!r} belongs to Kubernetes or a cluster add-on",
            "choose another name (the kube- prefix and default, kube-system, kube-public, "
            "kube-node-lease, gpu-operator, keda and monitoring are taken)",
        )


def check_collisions(env: EnvView) -> None:
    """A model named ``X-lb`` beside a model ``X``: both would own the Service ``X-lb``; the
    same for ``X-grpc`` beside a model ``X`` that exposes gRPC."""
    models = env.data.get("models") or {}
    for name in models:
        base = name.removesuffix(LB_SUFFIX)
        if base != name and base in models:
            env.error(
                ("models", name),
                f"model {name!r} and the load balancer of model {base!r} are both the "
                f"Service {name!r}",
                f"rename model {name!r} (a model X owns the Services X and X{LB_SUFFIX})",
            )
        base = name.removesuffix(GRPC_SUFFIX)
        if base != name and _serves_grpc(models.get(base)):
            env.error(
                ("models", name),
                f"model {name!r} and the gRPC Service of model {base!r} are both the "
                f"Service {name!r}",
                f"rename model {name!r} (a model X exposing gRPC owns the Service X{GRPC_SUFFIX})",
            )
        for other, model in models.items():
            owned = naming.response_cache_service(other)
            if (name == owned or name.startswith(f"{owned}-")) and _redis_cache(model):
                env.error(
                    ("models", name),
                    f"model {name!r} and the Redis response cache of model {other!r} both "
                    f"name objects {name!r}",
                    f"rename model {name!r} (a model X with a Redis cache owns the names "
                    f"X{CACHE_SUFFIX} and X{CACHE_SUFFIX}-*)",
                )
        _check_pool_and_staging_names(env, name)


def _check_pool_and_staging_names(env: EnvView, name: str) -> None:
    """Model `name` against the objects no model owns: a pool's placeholder Deployments
    (refused for every pool, so that a pool keeping spare GPUs in one environment only
    cannot make the same model name fail there alone) and the weight-staging objects."""
    for pool in env.data.get("gpu_pools") or {}:
        if name.startswith(f"{pool}{naming.SPARE_GPUS_INFIX}"):
            env.error(
                ("models", name),
                f"model {name!r} has the name form {pool}{naming.SPARE_GPUS_INFIX}<zone> of "
                f"the Deployments holding the spare GPUs of pool {pool!r}: both would be the "
                f"Deployment of that name",
                f"rename model {name!r} (a pool P owns the Deployment names "
                f"P{naming.SPARE_GPUS_INFIX}<zone>)",
            )
    if WEIGHTS_NAME.fullmatch(name):
        env.error(
            ("models", name),
            f"model {name!r} has the name form {naming.WEIGHTS_PREFIX}<10 hex digits> of the "
            "Job and NetworkPolicy staging an hf:// source: its NetworkPolicy could be theirs",
            f"rename model {name!r} (names {naming.WEIGHTS_PREFIX}<10 hex digits> are kept for "
            "weight staging)",
        )


__all__ = [
    "CACHE_SUFFIX",
    "GRPC_SUFFIX",
    "KUBERNETES_NAMESPACES",
    "LB_SUFFIX",
    "RESERVED_NAMESPACES",
    "WEIGHTS_NAME",
    "check_collisions",
    "check_namespace",
    "kubernetes_owns",
]
