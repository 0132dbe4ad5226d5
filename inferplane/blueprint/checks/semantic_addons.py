"""Semantic checks of ``environments.<env>.cluster.addons``: what an `existing` add-on can
and cannot do for the blueprint, checked where the blueprint says it.

The schema already requires the coordinates of each `existing` add-on; here the checks
that need the rest of the environment: the cluster it runs on, the cloud, the pools'
GPU sharing, the models that wake on traffic and the observability settings.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from inferplane.blueprint import defaults, naming
from inferplane.blueprint.addons import ADDON_KEYS, AWS_ONLY, is_existing
from inferplane.blueprint.checks import semantic_names
from inferplane.blueprint.checks.semantic_wake_path import traffic_models
from inferplane.blueprint.errors import YamlPath

if TYPE_CHECKING:
    from inferplane.blueprint.checks.semantic_env import EnvView

MANAGED_PROMETHEUS: Final = (
    (
        re.compile(r"(^|\.)monitoring\.googleapis\.com$"),
        "Google Cloud Managed Service for Prometheus",
        # GMP collects from PodMonitoring/ClusterPodMonitoring objects
        # (monitoring.googleapis.com/v1) and its query API takes OAuth2 tokens
        # (https://cloud.google.com/stackdriver/docs/managed-prometheus/query-api-ui).
        "it collects PodMonitoring objects, not ServiceMonitors, and its query API needs "
        "OAuth2 tokens",
    ),
    (
        re.compile(r"^aps-workspaces\.[a-z0-9-]+\.amazonaws\.com$"),
        "Amazon Managed Service for Prometheus",
        # AMP's query API needs SigV4-signed requests
        # (https://docs.aws.amazon.com/prometheus/latest/userguide/AMP-onboard-query.html).
        "its query API needs SigV4-signed requests and it has no Prometheus Operator",
    ),
)
"""Query endpoints of managed Prometheus services: the ServiceMonitors, PrometheusRules and
unauthenticated KEDA queries the blueprint relies on do not work with them."""
IN_CLUSTER_SERVICE: Final = re.compile(
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\.[a-z0-9]([-a-z0-9]*[a-z0-9])?\.svc(\.cluster\.local)?"
)
"""``<service>.<namespace>.svc[.cluster.local]``: a Service's name and its namespace are
DNS-1123 labels (https://kubernetes.io/docs/concepts/services-networking/dns-pod-service/#services)."""
OWN_LABEL_PREFIXES: Final = ("inferplane.dev/", "app.kubernetes.io/")
"""The label keys the stack sets on its own objects (`naming`: ``inferplane.dev/...`` and
the ``app.kubernetes.io/`` name, instance, component, part-of and managed-by labels):
never the labels an existing Prometheus selects by."""
ADDON_NAMESPACE_EXAMPLE: Final = {
    "gpu_operator": naming.GPU_OPERATOR_NAMESPACE,
    "keda": naming.KEDA_NAMESPACE,
    "keda_http_add_on": naming.KEDA_NAMESPACE,
    "prometheus": naming.MONITORING_NAMESPACE,
}
AWS_ONLY_FIX: Final = {
    "aws_load_balancer_controller": "GKE provisions the load balancers itself",
    "cluster_autoscaler": "GKE scales its node pools itself",
    "karpenter": "GKE scales its node pools itself",
}

KUBERNETES_FIX: Final = {
    "aws_load_balancer_controller": "a kubernetes environment's Services use the cluster's own "
    "load balancer, if any (`cluster.load_balancer`)",
    "cluster_autoscaler": "nothing scales the nodes of a kubernetes environment",
    "karpenter": "nothing scales the nodes of a kubernetes environment",
}


def _addons(env: EnvView) -> Mapping[str, Any]:
    return (env.spec.get("cluster") or {}).get("addons") or {}


def _path(env: EnvView, *rest: str) -> YamlPath:
    return ("environments", env.name, "cluster", "addons", *rest)


def check_addons(env: EnvView) -> None:
    addons = _addons(env)
    created = bool((env.spec.get("cluster") or {}).get("create"))
    for key in ADDON_KEYS:
        spec = addons.get(key)
        if key in AWS_ONLY and spec is not None and env.spec["cloud"] != "aws":
            env.error(
                _path(env, key),
                f"`{key}` is an AWS add-on",
                "remove it: "
                + (KUBERNETES_FIX if env.spec["cloud"] == "kubernetes" else AWS_ONLY_FIX)[key],
            )
        elif created and is_existing(spec):
            env.error(
                _path(env, key, "mode"),
                "an `existing` add-on needs an attached cluster: a cluster this blueprint "
                "creates runs no add-ons before its first deploy",
                "remove `mode: existing` (inferplane installs it), or attach to the cluster "
                "with `existing: <cluster name>`",
            )
    _check_shared_cluster(env)
    _check_namespaces(env, addons)
    _check_gpu_sharing(env, addons)
    _check_http_add_on(env, addons)
    _check_prometheus(env, addons)


def _cluster_key(spec: Mapping[str, Any]) -> tuple[Any, ...] | None:
    cluster = spec.get("cluster") or {}
    if cluster.get("context"):
        return ("kubernetes", None, None, cluster["context"])
    if not cluster.get("existing"):
        return None
    location = cluster.get("location", spec["region"])
    return (spec["cloud"], spec.get("project"), location, cluster["existing"])


def _check_shared_cluster(env: EnvView) -> None:
    """Two environments of one blueprint on one cluster would both create the blueprint's
    namespace (and its objects, named alike): the second is refused."""
    key = _cluster_key(env.spec)
    if key is None:
        return
    for name, other in env.doc.data["environments"].items():
        if name == env.name:
            return
        if _cluster_key(other) == key:
            kube = key[0] == "kubernetes"
            namespace = naming.namespace(env.data["name"])
            env.error(
                ("environments", env.name, "cluster", "context" if kube else "existing"),
                f"environment {name!r} attaches to cluster {key[-1]!r} too, and both would "
                + (
                    f"deploy into the namespace {namespace!r}, creating the same objects"
                    if kube
                    else f"create the namespace {namespace!r} and the objects in it"
                ),
                "attach each environment of a blueprint to its own cluster; two blueprints "
                "(with different names) may share one",
            )
            return


def _check_namespaces(env: EnvView, addons: Mapping[str, Any]) -> None:
    """The stack creates the blueprint's namespace (default-deny, Pod Security
    ``restricted``): an add-on cannot already run in it. Nor in a namespace Kubernetes owns
    (`semantic_names.kubernetes_owns`): the blueprint creates objects in the add-ons'
    namespaces (the wake load balancer of a model goes beside the HTTP add-on), which must
    never land among the cluster's system objects. The Argo Rollouts controller gets nothing
    of the blueprint's in its namespace, so it may run in one of those."""
    own = naming.namespace(env.data["name"])
    for key in ("gpu_operator", "keda", "keda_http_add_on", "prometheus", "argo_rollouts"):
        spec = addons.get(key) or {}
        if not is_existing(spec):
            continue
        namespace = spec.get("namespace")
        if namespace == own:
            env.error(
                _path(env, key, "namespace"),
                f"namespace {own!r} is the blueprint's own namespace, which it creates for its "
                "serving objects",
                "give the namespace the add-on runs in; a blueprint and an add-on never share one",
            )
        elif (
            key != "argo_rollouts"
            and isinstance(namespace, str)
            and semantic_names.kubernetes_owns(namespace)
        ):
            env.error(
                _path(env, key, "namespace"),
                f"namespace {namespace!r} belongs to Kubernetes, and the blueprint would place "
                "objects of its own in it",
                "run the add-on in a namespace of its own (such as "
                f"{ADDON_NAMESPACE_EXAMPLE[key]!r}); default and the kube- namespaces are refused",
            )


def _check_gpu_sharing(env: EnvView, addons: Mapping[str, Any]) -> None:
    """The GPU Operator's ClusterPolicy names ONE device-plugin ConfigMap
    (``devicePlugin.config.name``) whose keys nodes select by label: time-slicing pools need
    their keys in it, and MIG pools need the ``mixed`` strategy and the MIG manager
    (https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-sharing.html,
    gpu-operator-mig.html). An existing GPU Operator keeps its own ClusterPolicy, which a
    blueprint cannot change without taking it over from its owner."""
    if not is_existing(addons.get("gpu_operator")):
        return
    for name, pool in (env.data.get("gpu_pools") or {}).items():
        sharing = pool.get("sharing", defaults.POOL_SHARING)
        if sharing in ("time_slicing", "mig"):
            env.error(
                _path(env, "gpu_operator", "mode"),
                f"pool {name!r} shares its GPUs ({sharing}), which needs the device-plugin "
                "configuration of the GPU Operator inferplane installs; an existing GPU "
                "Operator keeps its own ClusterPolicy",
                f"use `mode: install` for the GPU Operator, or `sharing: exclusive` on pool "
                f"{name!r}",
            )


def _check_http_add_on(env: EnvView, addons: Mapping[str, Any]) -> None:
    """With an existing KEDA, the HTTP add-on's default (installed beside it) could install
    a second copy next to one the cluster already runs: say which it is."""
    if not is_existing(addons.get("keda")) or "keda_http_add_on" in addons:
        return
    waking = [name for name, _, on in traffic_models(env) if on]
    if waking:
        env.error(
            _path(env, "keda"),
            f"model {waking[0]!r} wakes on its own HTTP traffic through the KEDA HTTP add-on, "
            "and with an existing KEDA the blueprint must say whether the cluster runs it",
            "add `keda_http_add_on: {mode: existing, namespace: <its namespace>, drain_s: "
            "<its interceptor.drainTimeout, in seconds>}`, or "
            "`keda_http_add_on: {mode: install}` to install it beside KEDA",
        )


def _check_query_url(env: EnvView, url: str, namespace: str | None) -> None:
    """KEDA sends queries naming the blueprint's namespace and models to `url` and scales
    GPU Deployments on the answers: only a Service inside the cluster may give them. A
    Service's DNS name is ``<service>.<namespace>.svc.<cluster domain>`` ("DNS for Services
    and Pods", https://kubernetes.io/docs/concepts/services-networking/dns-pod-service/#services),
    ``cluster.local`` by default; the schema already refuses credentials, query strings and
    fragments."""
    path = _path(env, "prometheus", "query_url")
    host = urlsplit(url).hostname or ""
    for pattern, service, why in MANAGED_PROMETHEUS:
        if pattern.search(host):
            env.error(
                path,
                f"{service} is not supported: {why}",
                "give a Prometheus run by the Prometheus Operator (such as kube-prometheus-stack) "
                "that answers queries without authentication, or use `mode: install`",
            )
            return
    if not IN_CLUSTER_SERVICE.fullmatch(host):
        env.error(
            path,
            f"host {host!r} is not the DNS name of a Service in the cluster, and KEDA "
            "would scale the GPU Deployments on the answers of whatever server it names",
            "give the in-cluster Service of the Prometheus as "
            "<service>.<namespace>.svc or <service>.<namespace>.svc.cluster.local, such as "
            "http://prometheus-operated.monitoring.svc:9090",
        )
        return
    written = re.search(r":([0-9]+)$", urlsplit(url).netloc)
    port = int(written.group(1)) if written else None
    if port is not None and not 1 <= port <= 65535:
        env.error(
            path,
            f"port {port} of {url!r} is not a TCP port",
            "give the Service's port, from 1 to 65535, such as :9090",
        )
        return
    service, in_namespace = host.split(".")[:2]
    if namespace and in_namespace != namespace:
        # An allowlist, not a list of namespaces to avoid: the one namespace the blueprint
        # says the Prometheus runs in (which may not be a blueprint's: `check` across files).
        env.error(
            path,
            f"{url!r} names Service {service!r} in namespace {in_namespace!r}, not in "
            f"{namespace!r}, the namespace this Prometheus runs in: KEDA would scale the GPU "
            "Deployments on the answers of whatever serves there",
            f"give the Service of the Prometheus in namespace {namespace!r}, such as "
            f"http://prometheus-operated.{namespace}.svc:9090",
        )


def _check_prometheus(env: EnvView, addons: Mapping[str, Any]) -> None:
    prom = addons.get("prometheus") or {}
    if not is_existing(prom):
        return
    _check_query_url(env, prom["query_url"], prom.get("namespace"))
    for key in prom.get("selector_labels") or {}:
        if str(key).startswith(OWN_LABEL_PREFIXES):
            env.error(
                _path(env, "prometheus", "selector_labels", key),
                f"label {key!r} is one inferplane sets itself on the ServiceMonitors and "
                "PrometheusRules; as a selector label it would overwrite that value, and "
                "whatever selects by it would no longer find the blueprint's objects",
                "give the label the existing Prometheus selects by (such as "
                "`release: kube-prometheus-stack`), not an inferplane.dev/ or "
                "app.kubernetes.io/ label",
            )
    obs = env.data.get("observability") or {}
    if "prometheus" in obs:
        env.error(
            ("observability", "prometheus"),
            "`observability.prometheus` configures the Prometheus inferplane installs, and "
            f"environment {env.name!r} uses an existing one",
            "remove it: the existing Prometheus keeps its own retention and storage",
        )
    alerts = obs.get("alerts") or {}
    for key in ("receivers", "route"):
        if key in alerts:
            env.error(
                ("observability", "alerts", key),
                f"`alerts.{key}` configures the Alertmanager inferplane installs, and "
                f"environment {env.name!r} uses an existing Prometheus",
                "remove it and route the alerts in the existing Alertmanager: the "
                "blueprint's alerting rules still reach it",
            )


__all__ = ["MANAGED_PROMETHEUS", "check_addons"]
