"""`ResponseCacheStore`: the shared response cache of one Triton model (``response_cache.backend:
redis``), a Valkey server in every zone the model runs in.

Children (Kubernetes names in the model's namespace; Pulumi names derive from `name`):

- GeneratedPassword ``<name>-password`` (`generated_password`, a dynamic provider in the
  program's own Python): 40 letters and digits, no symbols, so it needs no quoting in a
  config line, drawn once and kept by every later ``up``. Its ``result`` is a Pulumi
  secret (``additional_secret_outputs``, and it is wrapped again here), so state and plan
  output hold only ``[secret]``.
- Secret ``<model>-response-cache``: ``password`` (Triton reads it as an environment
  variable) and ``valkey.conf`` (``requirepass <password>``, the config file Valkey starts
  from). The password is never in a command line or a pod spec: both pods name the Secret.
- Deployment ``<model>-cache-<zone suffix>`` per zone of the model's pool: one Valkey pod
  that prefers its zone (see "Zone-local" below).
- Service ``<model>-cache``: ClusterIP on port 6379 over every zone's pod, with
  ``trafficDistribution`` preferring the client's zone.
- NetworkPolicy ``<model>-cache`` (ingress to Valkey only from the model's pods, port 6379)
  and ``<model>-cache-egress`` (the model's pods may reach Valkey on 6379): the namespace
  denies everything else (`inferplane.components.hardening`).

Zone-local. Triton's Redis cache takes one ``host`` (triton-inference-server/redis_cache
``src/redis_cache.cc`` `RedisCache::Create`), and every replica of the model runs the same
pod template, so a replica cannot be told its own zone's server by name. One Service over
the per-zone pods with ``spec.trafficDistribution`` does it instead: ``PreferClose`` (GA
in Kubernetes 1.33, KEP-4444 "Traffic Distribution for Services",
https://kubernetes.io/docs/concepts/services-networking/service/#traffic-distribution) or
``PreferSameZone`` from 1.34 (`load_balancer.traffic_distribution`) makes kube-proxy send a
client to endpoints of its own zone, and to all endpoints when its zone has none
(kubernetes ``pkg/proxy/topology.go`` `canUseTopology`: "no hints were provided for zone"),
so a replica whose zone's Valkey is down still gets a cache. Each zone therefore keeps its
own cache; a request's hit rate is that of its zone.

Placement prefers the zone (``preferredDuringScheduling`` weight 100) rather than requiring
it: Valkey runs on the untainted system nodes, and an EKS system node group is one
Auto Scaling group across the zones with fewer nodes than zones, which the Cluster
Autoscaler cannot grow in a chosen zone (kubernetes/autoscaler
``cluster-autoscaler/cloudprovider/aws/README.md``: a pod bound to one AZ needs "a single
AZ ASG ... or an ASG-per-AZ"). A required zone would leave the pod Pending and the model's
rollout stuck; a preferred one lands it in its zone whenever a node there fits.

Memory. ``maxmemory`` is ``response_cache.size_mb`` with ``allkeys-lru`` eviction: Valkey
evicts before it grows past it. The container's memory request and limit are
`MEMORY_OVERHEAD_FACTOR` times that plus `MEMORY_BASE_MIB`: ``maxmemory`` counts the
allocator's used bytes, while the kernel kills on resident memory, which the allocator
holds above used after evictions ("Redis will not always free up (return) memory to the OS
when keys are removed ... you need to provision memory based on your peak memory usage",
https://redis.io/docs/latest/operate/oss_and_stack/management/optimization/memory-optimization/#memory-allocation);
a managed Redis reserves 10% of maxmemory for fragmentation and 10% for other memory by
default (Azure Cache for Redis ``maxmemory-reserved`` / ``maxfragmentationmemory-reserved``,
https://learn.microsoft.com/en-us/answers/questions/2182594/how-should-i-set-maxmemory-reserved-and-maxfragmen).
1.5 leaves room for a fragmentation ratio of 1.5, more than those reserves, and there is
no fork to pay for since nothing is persisted (``save ""``, ``appendonly no``: a cache
restarts empty). Validation refuses, on clusters the blueprint creates, a cache whose
request no system node can hold (`inferplane.blueprint.checks.semantic_cache`).

Triton needs the server at start: the cache library pings it when Triton creates the cache
(redis_cache ``src/redis_cache.cc`` `init_client`, "Failed to ping Redis server."), so the
model's Deployment waits for these Deployments; later outages only cost hits ("Triton will
fallback to operating as it would with no cache access during any Redis server downtime",
server r25.08 ``docs/user_guide/response_cache.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint import defaults, naming, system_nodes
from inferplane.components.serving.containers import (
    Manifest,
    container_security_context,
    empty_dir,
    mount,
    pod_security_context,
)
from inferplane.components.serving.generated_password import GeneratedPassword
from inferplane.components.serving.routing.load_balancer import traffic_distribution
from inferplane.components.serving.spec import ServedModel, ServingEnvironment

PORT: Final = 6379
PORT_NAME: Final = "valkey"
PASSWORD_KEY: Final = "password"
CONFIG_KEY: Final = "valkey.conf"
CONFIG_DIR: Final = "/etc/valkey"
DATA_DIR: Final = "/data"
PASSWORD_LENGTH: Final = 40
MEMORY_OVERHEAD_FACTOR: Final = system_nodes.VALKEY_OVERHEAD_FACTOR
MEMORY_BASE_MIB: Final = system_nodes.VALKEY_BASE_MIB
"""The server itself, client buffers and the allocator's metadata (see the module docstring).
The formula lives in the blueprint layer, which refuses a cache no system node can hold."""
CPU_REQUEST: Final = "250m"
CACHE_FOR_LABEL: Final = "inferplane.dev/response-cache-for"
ZONE_LABEL: Final = "inferplane.dev/zone"
PASSWORD_ENV: Final = "TRITONCACHE_REDIS_PASSWORD"
"""Read by Triton's Redis cache when no ``password`` is configured (redis_cache
``src/redis_cache.h`` `PASSWORD_ENV_VAR_NAME`, README "Optional Environment Variables for
Credentials"; branch r25.08, a3a3121)."""


def service_name(model: ServedModel) -> str:
    return naming.response_cache_service(model.name)


def secret_name(model: ServedModel) -> str:
    return naming.response_cache_secret(model.name)


def deployment_name(model: ServedModel, zone: str) -> str:
    return naming.response_cache_deployment(model.name, zone)


def memory_limit_mib(model: ServedModel) -> int:
    size = model.response_cache.size_mb if model.response_cache else 0
    return system_nodes.valkey_memory_mib(size)


def cache_selector(env: ServingEnvironment, model: ServedModel) -> dict[str, str]:
    """Every zone's Valkey pod of `model`. Never the model's own selector (no
    ``inferplane.dev/model`` label), so the model's Services and rules never count them."""
    return {"app.kubernetes.io/part-of": env.part_of, CACHE_FOR_LABEL: model.name}


def cache_labels(env: ServingEnvironment, model: ServedModel) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": "valkey",
        "app.kubernetes.io/instance": naming.label_value(f"{env.part_of}-{model.name}-cache"),
        "app.kubernetes.io/component": "response-cache",
        "app.kubernetes.io/part-of": env.part_of,
        "app.kubernetes.io/managed-by": "inferplane",
        naming.ENVIRONMENT_LABEL: env.environment,
        CACHE_FOR_LABEL: model.name,
    }


def password_env(model: ServedModel) -> Manifest:
    """The Triton container's password variable, from the Secret (never a value)."""
    ref = {"name": secret_name(model), "key": PASSWORD_KEY}
    return {"name": PASSWORD_ENV, "valueFrom": {"secretKeyRef": ref}}


def valkey_args(model: ServedModel) -> list[str]:
    """The config file (the password), then the other settings as ``--<directive> <value>``:
    the server reads the file given as first argument (valkey-io/valkey ``valkey.conf``
    header) and then the command-line directives, "exactly the same as the one used in the
    redis.conf file" (https://redis.io/docs/latest/operate/oss_and_stack/management/config/,
    "Passing arguments via the command line"). None of them is secret."""
    size = model.response_cache.size_mb if model.response_cache else 0
    return [
        f"{CONFIG_DIR}/{CONFIG_KEY}",
        "--port",
        str(PORT),
        "--maxmemory",
        f"{size}mb",
        "--maxmemory-policy",
        "allkeys-lru",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        DATA_DIR,
    ]


def valkey_container(model: ServedModel) -> Manifest:
    memory = f"{memory_limit_mib(model)}Mi"
    # TCP probes: an authenticated PING would need the password in the probe's command.
    tcp = {"tcpSocket": {"port": PORT_NAME}}
    return {
        "name": "valkey",
        "image": defaults.VALKEY_IMAGE,
        # The server directly, not the image's entrypoint script (which only re-executes
        # as its own user when started as root).
        "command": ["valkey-server"],
        "args": valkey_args(model),
        "ports": [{"name": PORT_NAME, "containerPort": PORT, "protocol": "TCP"}],
        "resources": {
            "requests": {"cpu": CPU_REQUEST, "memory": memory},
            "limits": {"memory": memory},
        },
        "securityContext": container_security_context(),
        "readinessProbe": {**tcp, "periodSeconds": 5, "failureThreshold": 2},
        "livenessProbe": {**tcp, "periodSeconds": 10, "failureThreshold": 3},
        "volumeMounts": [mount("config", CONFIG_DIR, read_only=True), mount("data", DATA_DIR)],
    }


def zone_preference(zone: str) -> Manifest:
    term = {"key": naming.TOPOLOGY_ZONE_LABEL, "operator": "In", "values": [zone]}
    return {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "preference": {"matchExpressions": [term]}}
            ]
        }
    }


PASSWORD_REVISION_ANNOTATION: Final = "inferplane.dev/cache-password-revision"
"""On the pod templates of the Valkey servers and of the model's replicas: the generated
password's resource id (a random uuid, not secret), new exactly when the password is. Both
read the password only when they start, so a new password rolls both."""


def with_password_revision(spec: Manifest, revision: pulumi.Input[str]) -> Manifest:
    """`spec` (a Deployment's) with `PASSWORD_REVISION_ANNOTATION` on its pod template."""
    template = dict(spec["template"])
    metadata = dict(template.get("metadata") or {})
    metadata["annotations"] = {
        **(metadata.get("annotations") or {}),
        PASSWORD_REVISION_ANNOTATION: revision,
    }
    return {**spec, "template": {**template, "metadata": metadata}}


def deployment_spec(env: ServingEnvironment, model: ServedModel, zone: str) -> Manifest:
    selector = {**cache_selector(env, model), ZONE_LABEL: zone}
    return {
        "replicas": 1,
        "selector": {"matchLabels": selector},
        # The new pod is ready before the old one goes: the Service always has a server.
        "strategy": {
            "type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
        },
        "revisionHistoryLimit": 3,
        "template": {
            "metadata": {"labels": {**cache_labels(env, model), ZONE_LABEL: zone}},
            "spec": {
                "automountServiceAccountToken": False,
                "enableServiceLinks": False,
                "securityContext": pod_security_context(),
                "affinity": zone_preference(zone),
                "containers": [valkey_container(model)],
                "volumes": [
                    {
                        "name": "config",
                        "secret": {
                            "secretName": secret_name(model),
                            "items": [{"key": CONFIG_KEY, "path": CONFIG_KEY}],
                            "defaultMode": 0o440,
                        },
                    },
                    empty_dir("data", "64Mi"),
                ],
            },
        },
    }


def service_spec(env: ServingEnvironment, model: ServedModel) -> Manifest:
    return {
        "type": "ClusterIP",
        "selector": cache_selector(env, model),
        "ports": [{"name": PORT_NAME, "port": PORT, "targetPort": PORT_NAME, "protocol": "TCP"}],
        "trafficDistribution": traffic_distribution(env),
    }


def _port() -> list[Manifest]:
    return [{"protocol": "TCP", "port": PORT}]


def ingress_policy_spec(env: ServingEnvironment, model: ServedModel) -> Manifest:
    model_pods = {"matchLabels": naming.model_selector(env.part_of, model.name)}
    return {
        "podSelector": {"matchLabels": cache_selector(env, model)},
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [{"from": [{"podSelector": model_pods}], "ports": _port()}],
        "egress": [],
    }


def egress_policy_spec(env: ServingEnvironment, model: ServedModel) -> Manifest:
    """The model's pods to Valkey. The peer is exactly the Service's selector: EKS's policy
    agent allows a Service's ClusterIP only for a Service whose selector the rule's
    podSelector matches (see `network_policies`)."""
    cache = {"matchLabels": cache_selector(env, model)}
    return {
        "podSelector": {"matchLabels": naming.model_selector(env.part_of, model.name)},
        "policyTypes": ["Egress"],
        "egress": [{"to": [{"podSelector": cache}], "ports": _port()}],
    }


def config_text(password: str) -> str:
    return f"requirepass {password}\n"


@dataclass(frozen=True)
class ResponseCacheStoreArgs:
    """Inputs of `ResponseCacheStore`."""

    model: ServedModel
    """A Triton model with ``response_cache.backend: redis``; one server per pool zone."""
    env: ServingEnvironment
    """The environment (labels, Kubernetes version for the traffic distribution)."""
    namespace: str
    """The model's namespace."""
    provider: k8s.Provider
    """The cluster's provider."""


class ResponseCacheStore(pulumi.ComponentResource):
    """The per-zone Valkey of one model (see the module docstring).

    Outputs:
        service_name: the Service Triton connects to (``<model>-cache``).
        secret_name: the Secret with the password (``<model>-response-cache``).
    """

    service_name: pulumi.Output[str]
    secret_name: pulumi.Output[str]
    ready: list[pulumi.Resource]
    """What the model's pods wait for: the Secret, the egress policy, every zone's server."""

    def __init__(
        self, name: str, args: ResponseCacheStoreArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("inferplane:serving:ResponseCacheStore", name, None, opts)
        env, model, ns = args.env, args.model, args.namespace
        labels = cache_labels(env, model)
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)

        generated = GeneratedPassword(
            f"{name}-password", PASSWORD_LENGTH, opts=pulumi.ResourceOptions(parent=self)
        )
        result: pulumi.Output[str] = generated.result
        password: pulumi.Output[str] = pulumi.Output.secret(result)
        secret = k8s.core.v1.Secret(
            name,
            metadata={"name": secret_name(model), "namespace": ns, "labels": labels},
            type="Opaque",
            string_data={
                PASSWORD_KEY: password,
                CONFIG_KEY: pulumi.Output.secret(password.apply(config_text)),  # type: ignore[arg-type]
            },
            opts=child,
        )
        policies = [
            k8s.networking.v1.NetworkPolicy(
                name,
                metadata={"name": service_name(model), "namespace": ns, "labels": labels},
                spec=ingress_policy_spec(env, model),
                opts=child,
            ),
            k8s.networking.v1.NetworkPolicy(
                f"{name}-egress",
                metadata={"name": f"{service_name(model)}-egress", "namespace": ns},
                spec=egress_policy_spec(env, model),
                opts=child,
            ),
        ]
        after_secret = pulumi.ResourceOptions.merge(
            child, pulumi.ResourceOptions(depends_on=[secret])
        )
        servers = [
            k8s.apps.v1.Deployment(
                f"{name}-{naming.zone_suffix(zone)}",
                metadata={
                    "name": deployment_name(model, zone),
                    "namespace": ns,
                    "labels": {**labels, ZONE_LABEL: zone},
                },
                spec=with_password_revision(deployment_spec(env, model, zone), generated.id),
                opts=after_secret,
            )
            for zone in model.pool.zones
        ]
        service = k8s.core.v1.Service(
            name,
            metadata={"name": service_name(model), "namespace": ns, "labels": labels},
            spec=service_spec(env, model),
            opts=pulumi.ResourceOptions.merge(
                child, pulumi.ResourceOptions(depends_on=list(servers))
            ),
        )
        self.ready = [secret, *policies, *servers, service]
        self.password_revision: pulumi.Output[str] = generated.id
        self.service_name = service.metadata.apply(lambda _: service_name(model))
        self.secret_name = secret.metadata.apply(lambda _: secret_name(model))
        self.register_outputs({"service_name": self.service_name, "secret_name": self.secret_name})
