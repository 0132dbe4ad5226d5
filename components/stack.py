"""One blueprint environment as one component: cluster, GPU node pools, add-ons, the
blueprint's namespace and environment facts, model-store identities, the staging of every
hf:// source into the model store, and every model.

The graph is kept wide: node pools, add-ons, the namespace and the identities each depend
on the cluster only, and every model on the add-ons, namespace and identities.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint import naming
from inferplane.blueprint.derived import facts
from inferplane.blueprint.model import Environment
from inferplane.components import capacity_preflight, hardening, prometheus_query, stack_args
from inferplane.components.addons import ClusterAddons
from inferplane.components.cloud import cloud_provider
from inferplane.components.cluster import Cluster
from inferplane.components.identity import ModelStoreAccess
from inferplane.components.node_pool import GpuNodePool
from inferplane.components.serving.routing.router_crds import router_crds
from inferplane.components.serving.scaling.image_prepull import ImagePrePull
from inferplane.components.serving.scaling.spare_gpus import SpareGpus
from inferplane.components.stack_serving import (
    alert_receiver_secrets,
    image_prepull_args,
    model_server,
    models_on,
    spare_gpus_args,
    weights_staging,
)


def environment_data(env: Environment) -> dict[str, str]:
    """Data of the `naming.ENVIRONMENT_CONFIGMAP` ConfigMap: the facts policies need to
    check placement from the cluster's objects alone (`inferplane.blueprint.derived.facts`), the
    blueprint's waivers for this environment included, so the CrossGuard pack honours the
    same exceptions online that `inferplane check` reports as waived offline."""
    return facts.to_config_map(facts.environment_facts(env))


POD_READINESS_GATE_LABEL = "elbv2.k8s.aws/pod-readiness-gate-inject"


def blueprint_namespace(
    name: str,
    env: Environment,
    namespace: str,
    labels: dict[str, str],
    opts: pulumi.ResourceOptions,
) -> k8s.core.v1.Namespace | k8s.core.v1.NamespacePatch:
    """The blueprint's namespace, with `labels` (Pod Security among them).

    On aws and gcp the stack creates it. On a kubernetes environment the platform has
    created it already, with the model store's credential Secrets in it (pods read a
    Secret only in their own namespace), so the stack only applies its labels with a
    server-side-apply patch: a Patch resource "modif[ies] existing Kubernetes resources"
    and never creates the object, and deleting it removes only the fields it set
    (https://www.pulumi.com/registry/packages/kubernetes/how-to-guides/managing-resources-with-server-side-apply/),
    so ``pulumi destroy`` leaves the namespace and its Secrets to the platform."""
    metadata = k8s.meta.v1.ObjectMetaPatchArgs(name=namespace, labels=labels)
    if env.kubernetes:
        return k8s.core.v1.NamespacePatch(f"{name}-namespace", metadata=metadata, opts=opts)
    return k8s.core.v1.Namespace(
        f"{name}-namespace",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=namespace, labels=labels),
        opts=opts,
    )


@dataclass(frozen=True)
class InferenceStackArgs:
    """Arguments of `InferenceStack`."""

    env: Environment
    """The resolved environment
    (`inferplane.blueprint.resolution.resolve.resolve_file(path, env_name)`)."""


class InferenceStack(pulumi.ComponentResource):
    """Everything one environment of a blueprint provisions.

    Name it `naming.stack_name(blueprint, environment)`.

    Outputs:
      cluster_name, endpoint: the Kubernetes cluster and its API server.
      namespace: the blueprint's namespace.
      model_endpoints: model name -> the address of the model's load balancer.
      grpc_endpoints: model name -> the in-cluster target for client-side gRPC balancing
        (``dns:///<model>-grpc.<ns>.svc.cluster.local:8001``), for models exposing gRPC.
      cluster, node_pools, addons, store_access, weights_staging, models: the child
        components (`weights_staging`: one per distinct hf:// repository and revision);
      image_prepull, spare_gpus: pool name -> the pool's `ImagePrePull` / `SpareGpus`.
    """

    cluster_name: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    namespace: str
    model_endpoints: dict[str, pulumi.Output[str | None]]
    grpc_endpoints: dict[str, str]

    def __init__(
        self, name: str, args: InferenceStackArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("inferplane:stack:InferenceStack", name, None, opts)
        env = args.env
        # A kubernetes environment calls no cloud API: no cloud provider, no node groups.
        cloud = (
            None
            if env.kubernetes
            else cloud_provider(
                name, env.cloud, env.region, env.project, stack_args.ownership(env), self
            )
        )

        def child(*after: pulumi.Resource) -> pulumi.ResourceOptions:
            providers = [cloud] if cloud is not None else None
            return pulumi.ResourceOptions(parent=self, providers=providers, depends_on=list(after))

        self.cluster = Cluster(name, stack_args.cluster_args(env), opts=child())
        cluster = self.cluster
        provider = cluster.provider
        self.node_pools = {
            pool.name: GpuNodePool(
                f"{name}-{pool.name}",
                stack_args.cluster_node_pool_args(env, pool, cluster),
                opts=child(cluster),
            )
            for pool in env.pools.values()
            if not env.kubernetes
        }
        # The receivers' credentials are read through the cloud provider the cluster uses.
        receiver_secrets = alert_receiver_secrets(env, cluster)
        self.addons = ClusterAddons(
            name, stack_args.addons_args(env, cluster, receiver_secrets), opts=child(cluster)
        )

        self.namespace = naming.namespace(env.blueprint)
        labels = {
            "app.kubernetes.io/part-of": env.blueprint,
            "app.kubernetes.io/managed-by": "inferplane",
            naming.ENVIRONMENT_LABEL: env.name,
        }
        k8s_opts = pulumi.ResourceOptions(parent=self, provider=provider)
        ns_labels = dict(labels)
        if env.cloud == "aws":
            # The Load Balancer Controller then gates each serving pod's readiness on its NLB
            # target being healthy, so a rollout never removes the last in-service target.
            ns_labels[POD_READINESS_GATE_LABEL] = "enabled"
        # Pod Security Admission `restricted`, pinned to the cluster's version when known.
        created = env.cluster.create
        ns_labels.update(
            hardening.pod_security_labels(env.cluster.kubernetes_version if created else None)
        )
        namespace = blueprint_namespace(name, env, self.namespace, ns_labels, k8s_opts)
        # Default-deny plus DNS; the models' pods wait for them, so no pod ever runs with
        # the namespace open (and none starts before it can resolve names).
        guard_rails = hardening.namespace_network_policies(
            name, cloud=env.cloud, namespace=namespace.metadata.name, labels=labels, opts=k8s_opts
        )
        annotations: dict[str, pulumi.Input[str]] = {}
        prometheus = env.cluster.addons.prometheus
        if prometheus.existing:  # never through an ExternalName alias (`prometheus_query`)
            annotations[prometheus_query.ANNOTATION] = prometheus_query.checked_query_service(
                name, prometheus.query_url, provider, self
            )
        environment_cm = k8s.core.v1.ConfigMap(
            f"{name}-environment",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=naming.ENVIRONMENT_CONFIGMAP,
                namespace=namespace.metadata.name,
                labels=labels,
                annotations=annotations or None,
            ),
            data=environment_data(env),
            opts=k8s_opts,
        )
        if capacity_preflight.wanted(env):
            k8s.core.v1.ConfigMap(
                f"{name}-preflight",
                metadata=k8s.meta.v1.ObjectMetaArgs(
                    name=naming.PREFLIGHT_CONFIGMAP,
                    namespace=namespace.metadata.name,
                    labels=labels,
                ),
                data={"preflight.json": capacity_preflight.answers_json(env, cluster)},
                opts=k8s_opts,
            )
        self.store_access = ModelStoreAccess(
            name,
            stack_args.store_access_args(env, namespace.metadata.name, provider, cluster),
            opts=child(cluster),
        )

        # Per pool some model uses: its nodes pull the serving images as they join, and
        # `spare_gpus` per zone are held by placeholders that a new replica preempts.
        pool_opts = pulumi.ResourceOptions(parent=self, depends_on=[namespace, *guard_rails])
        served_pools = [p for p in env.pools.values() if models_on(env, p)]
        self.image_prepull = {
            pool.name: ImagePrePull(
                f"{name}-{pool.name}-image-prepull",
                image_prepull_args(env, pool, provider),
                opts=pool_opts,
            )
            for pool in served_pools
        }
        self.spare_gpus = {
            pool.name: SpareGpus(
                f"{name}-{pool.name}-spare-gpus",
                spare_gpus_args(env, pool, provider),
                opts=pool_opts,
            )
            for pool in served_pools
            if pool.spare_gpus > 0
        }

        # `stack_serving` maps the blueprint to the serving components' arguments.
        after = (namespace, self.store_access, *guard_rails)
        # No serving pod, and so no ScaledObject querying the Prometheus (each waits for its
        # Deployment), is created before the query Service was read and found not to be an
        # ExternalName alias: the environment ConfigMap takes that check as an input and
        # fails with it. Named per model server: a component's depends_on does not reach its
        # children.
        pods_after = [environment_cm] if prometheus.existing else []
        self.weights_staging = weights_staging(name, env, provider, opts=child(*after))
        routed = [m for m in env.models.values() if m.routing.llm_aware]
        # The llm-d router's chart renders pools and objectives, whose CRDs it does not ship.
        crds = router_crds(f"{name}-router", provider, child()) if routed else []
        self.models = {
            model.name: model_server(
                f"{name}-{model.name}",
                env,
                model,
                provider,
                lb_subnet_ids=cluster.lb_subnet_ids,
                opts=child(self.addons, *after),
                weights_staging=self.weights_staging,
                after=[*pods_after, *(crds if model.routing.llm_aware else [])],
            )
            for model in env.models.values()
        }
        self.cluster_name = cluster.name
        self.endpoint = cluster.endpoint
        self.model_endpoints = {model: server.endpoint for model, server in self.models.items()}
        self.grpc_endpoints = {
            model: server.grpc_endpoint
            for model, server in self.models.items()
            if server.grpc_endpoint is not None
        }
        self.register_outputs(
            {
                "cluster_name": self.cluster_name,
                "endpoint": self.endpoint,
                "namespace": self.namespace,
                "model_endpoints": self.model_endpoints,
                "grpc_endpoints": self.grpc_endpoints,
            }
        )
