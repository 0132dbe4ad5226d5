"""The one mapping from a resolved blueprint environment to the components' args.

Components know nothing of blueprints; `InferenceStack` builds each component's args here
from the `Environment`, so a blueprint field reaches a component through exactly one line.
"""

from __future__ import annotations

from collections.abc import Mapping

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint import long_requests, naming, system_nodes, wake
from inferplane.blueprint.addons import discovery_terms
from inferplane.blueprint.derived import lazy_pull, scale_out
from inferplane.blueprint.model import Environment, GpuPool, Model
from inferplane.blueprint.triton_model import engine_steps
from inferplane.blueprint.upstream import gke_drivers
from inferplane.components import capacity_sources, node_pool
from inferplane.components.addon_values import AlertReceiverValues
from inferplane.components.addons import ClusterAddonsArgs
from inferplane.components.cloud import Ownership
from inferplane.components.cluster import Cluster, ClusterArgs
from inferplane.components.identity import ModelStoreAccessArgs
from inferplane.components.node_pool import GpuNodePoolArgs


def ownership(env: Environment) -> Ownership:
    """The environment's tags: its blueprint, its name and the blueprint's owner."""
    return Ownership(blueprint=env.blueprint, environment=env.name, owner=env.owner)


def cluster_name(env: Environment) -> str:
    """The EKS/GKE cluster's name: the existing cluster's, or the stack name for a new one.

    Known before anything is created, so autoscaler tags and IAM conditions can use it."""
    if env.cluster.existing:
        return env.cluster.existing
    if env.cluster.context:
        return env.cluster.context
    return naming.stack_name(env.blueprint, env.name)


def cluster_args(env: Environment) -> ClusterArgs:
    spec = env.cluster
    return ClusterArgs(
        cloud=env.cloud,
        cluster_name=cluster_name(env),
        owner=ownership(env),
        region=env.region,
        zones=env.zones,
        create=spec.create,
        extra_node_zones=env.node_zones[len(env.zones) :],
        project=env.project,
        gke_location=spec.location if env.cloud == "gcp" else None,
        context=spec.context,
        kubernetes_version=spec.kubernetes_version,
        vpc_cidr=spec.vpc_cidr,
        internal_load_balancers=env.load_balancer.scheme == "internal",
        system_nodes_per_zone=system_nodes.nodes_per_zone(env),
        image_streaming=env.cloud == "gcp"
        and any(lazy_pull.enabled(env, pool) for pool in env.pools.values()),
    )


def node_pool_args(
    env: Environment,
    pool: GpuPool,
    *,
    node_role_arn: pulumi.Input[str] | None = None,
    subnet_ids_by_zone: Mapping[str, pulumi.Input[str]] | None = None,
    cluster_location: pulumi.Input[str] | None = None,
    node_service_account: pulumi.Input[str] | None = None,
    provider: pulumi.ProviderResource | None = None,
) -> GpuNodePoolArgs:
    """`pool` of `env` on a cluster with these facts (`Cluster`'s outputs of the same names;
    on GCP `cluster_location` defaults to the environment's cluster location)."""
    if cluster_location is None and env.cloud == "gcp":
        cluster_location = env.cluster.location
    karpenter = env.cluster.addons.karpenter
    return GpuNodePoolArgs(
        cloud=env.cloud,
        cluster_name=cluster_name(env),
        owner=ownership(env),
        pool_name=pool.name,
        gpu=pool.gpu,
        instance_type=pool.instance_type,
        zones=pool.zones,
        gpus_per_node=pool.gpus_per_node,
        nodes_min_per_zone=pool.nodes.min,
        nodes_max_per_zone=pool.nodes.max,
        capacity=pool.capacity,
        capacity_sources=pool.capacity_sources,
        sharing=pool.sharing,
        mig_profile=pool.mig_profile,
        time_slices_per_gpu=pool.time_slices,
        disk_size_gib=pool.disk_gib,
        node_role_arn=node_role_arn,
        subnet_ids_by_zone=subnet_ids_by_zone,
        cluster_location=cluster_location,
        project=env.project,
        node_service_account=node_service_account,
        # The cluster's Karpenter launches the nodes instead of managed node groups.
        karpenter_node_role=karpenter.node_role if karpenter.existing else None,
        karpenter_ami_alias=karpenter.ami_alias if karpenter.existing else None,
        karpenter_security_groups=(
            karpenter.security_group_terms or discovery_terms(cluster_name(env))
        )
        if karpenter.existing
        else (),
        provider=provider if karpenter.existing else None,
        # An existing GPU Operator brings GKE nodes no driver: the blueprint installs it.
        own_driver_installer=env.cloud == "gcp" and env.cluster.addons.gpu_operator.existing,
        # A model on the pool chooses the lazy_image_pull lever (validated as supported).
        lazy_image_pull=not env.kubernetes and lazy_pull.enabled(env, pool),
    )


def cluster_node_pool_args(env: Environment, pool: GpuPool, cluster: Cluster) -> GpuNodePoolArgs:
    """`pool` of `env` on `cluster`."""
    return node_pool_args(
        env,
        pool,
        node_role_arn=cluster.node_role_arn,
        subnet_ids_by_zone=cluster.subnet_ids_by_zone,
        cluster_location=cluster.location,
        node_service_account=cluster.node_service_account,
        provider=cluster.provider,
    )


def mig_enabled(env: Environment) -> bool:
    """Some pool of `env` uses MIG."""
    return any(p.sharing == "mig" for p in env.pools.values())


def time_slices_by_pool(env: Environment) -> dict[str, int]:
    """Pool name -> pods per GPU, for each time-slicing pool of `env`."""
    return {p.name: p.time_slices for p in env.pools.values() if p.sharing == "time_slicing"}


def alert_receivers(env: Environment) -> tuple[AlertReceiverValues, ...]:
    """The environment's Alertmanager receivers, their credentials named by Secret key."""
    return tuple(
        AlertReceiverValues(
            name=r.name,
            slack_channel=r.slack_channel,
            slack_api_url_key=r.slack_api_url.name if r.slack_api_url else None,
            pagerduty_routing_key_key=(
                r.pagerduty_routing_key.name if r.pagerduty_routing_key else None
            ),
            webhook_url_key=r.webhook_url.name if r.webhook_url else None,
        )
        for r in env.observability.alert_receivers
    )


def expander_priorities(env: Environment) -> dict[int, list[str]] | None:
    """The Cluster Autoscaler's priority table for the pools that list several capacity
    sources (`capacity_sources.expander_priorities`); None when no pool does."""
    if env.cloud != "aws" or env.cluster.addons.karpenter.existing:
        return None
    groups: list[list[str]] = []
    for pool in env.pools.values():
        for zone in pool.zones:
            first = naming.node_group_name(
                env.blueprint, env.name, pool.name, zone, node_pool.EKS_NODE_GROUP_NAME_MAX
            )
            groups.append(
                [
                    capacity_sources.group_name(first, s, i, node_pool.EKS_NODE_GROUP_NAME_MAX)
                    for i, s in enumerate(pool.sources_in(zone))
                ]
            )
    return capacity_sources.expander_priorities(groups) or None


def addons_args(
    env: Environment,
    cluster: Cluster,
    alert_receiver_secrets: Mapping[str, pulumi.Input[str]] | None = None,
) -> ClusterAddonsArgs:
    """`alert_receiver_secrets`: the receivers' credentials by Secret key
    (`stack_serving.alert_receiver_secrets`)."""
    obs, versions, addons = env.observability, env.versions, env.cluster.addons
    on_traffic = [
        m
        for m in env.models.values()
        if wake.wakes_on_traffic(m.server, m.expose, m.replicas.min, llm_aware=m.routing.llm_aware)
    ]
    return ClusterAddonsArgs(
        cloud=env.cloud,
        provider=cluster.provider,
        cluster_name=cluster_name(env),
        owner=ownership(env),
        region=env.region,
        kubernetes_version=env.cluster.kubernetes_version,
        mig_enabled=mig_enabled(env),
        time_slices_by_pool=time_slices_by_pool(env),
        prometheus_retention=obs.prometheus_retention,
        prometheus_storage_gib=obs.prometheus_storage_gib,
        grafana_enabled=obs.grafana_enabled,
        alerts_enabled=obs.alerts_enabled,
        alert_receivers=alert_receivers(env),
        alert_route_receiver=obs.alert_route_receiver,
        alert_receiver_secrets=dict(alert_receiver_secrets or {}),
        # A created EKS cluster runs the EBS CSI driver (see `EksCluster`).
        gp3_storage_class=env.cloud == "aws" and env.cluster.create,
        gpu_operator_version=versions.gpu_operator,
        keda_version=versions.keda,
        keda_http_add_on=bool(on_traffic),
        keda_http_add_on_version=versions.keda_http_add_on,
        keda_http_drain_s=long_requests.interceptor_drain_s(m.max_request_s for m in on_traffic),
        keda_http_zones=len(env.zones),
        kube_prometheus_stack_version=versions.kube_prometheus_stack,
        aws_load_balancer_controller_version=versions.aws_load_balancer_controller,
        cluster_autoscaler_version=versions.cluster_autoscaler,
        install_prometheus=not addons.prometheus.existing,
        prometheus_labels=dict(addons.prometheus.selector_labels),
        install_gpu_operator=not addons.gpu_operator.existing,
        install_keda=not addons.keda.existing,
        keda_namespace=addons.keda.namespace,
        install_keda_http_add_on=not addons.keda_http_add_on.existing,
        install_aws_load_balancer_controller=not addons.aws_load_balancer_controller.existing,
        argo_rollouts=addons.argo_rollouts.enabled and not addons.argo_rollouts.existing,
        argo_rollouts_version=versions.argo_rollouts,
        # With Karpenter there are no node groups for a Cluster Autoscaler to scale.
        install_cluster_autoscaler=not (
            addons.cluster_autoscaler.existing or addons.karpenter.existing
        ),
        expander_priorities=expander_priorities(env),
        vpc_id=cluster.vpc_id,
        oidc_provider_arn=cluster.oidc_provider_arn,
        oidc_issuer=cluster.oidc_issuer,
        gke_driver_version=gke_drivers.installer_version(env) if env.cloud == "gcp" else "default",
    )


def store_access_args(
    env: Environment,
    namespace: pulumi.Input[str],
    provider: k8s.Provider,
    cluster: Cluster,
) -> ModelStoreAccessArgs:
    return ModelStoreAccessArgs(
        cloud=env.cloud,
        owner=ownership(env),
        namespace=namespace,
        provider=provider,
        store_bucket=env.store_bucket,
        store_prefix=env.store_prefix,
        read_locations=env.read_locations,
        project=env.project,
        oidc_provider_arn=cluster.oidc_provider_arn,
        oidc_issuer=cluster.oidc_issuer,
        workload_pool=cluster.workload_pool,
        store_secrets=store_secrets(env),
        writers=store_writers(env),
    )


def store_writers(env: Environment) -> frozenset[str]:
    """The store-writing roles whose Jobs `env` runs: TensorRT engine builds of a model or
    of a pipeline's steps, and TensorRT-LLM engine builds (`engine-builder`), hf:// staging
    of weights, draft models and adapters, and of Python steps' requirements
    (`weights-stager`), and vLLM compile caches (`vllm-compiler`,
    `scale_out.compiles_vllm_graph`)."""
    out = set()
    for model in env.models.values():
        if model.server == "triton" and (
            model.tensorrt is not None
            or model.tensorrt_llm is not None
            or engine_steps(model.pipeline)
        ):
            out.add(naming.ENGINE_BUILDER_SA)
        if _hub_sourced(model) or _stages_requirements(model):
            out.add(naming.WEIGHTS_STAGER_SA)
        if scale_out.compiles_vllm_graph(model) and env.model_store:
            out.add(naming.VLLM_COMPILER_SA)
    return frozenset(out)


def _stages_requirements(model: Model) -> bool:
    """Python pipeline steps with requirements, staged under the hub area of the store
    (`serving.pip_requirements`) by the weights-staging identity."""
    steps = model.pipeline.steps if model.pipeline is not None else ()
    return any(step.requirements for step in steps)


def _hub_sourced(model: Model) -> bool:
    settings = model.vllm
    spec = settings.speculative if settings else None
    adapters = settings.lora.adapters if settings and settings.lora else ()
    return (
        model.source.scheme == "hf"
        or bool(spec and spec.draft_repo)
        or any(adapter.source.scheme == "hf" for adapter in adapters)
    )


def store_secrets(env: Environment) -> dict[str, str]:
    """A kubernetes environment's credential Secrets by the ServiceAccount of their role;
    empty on aws and gcp (their pods read the store through a cloud identity)."""
    secrets = env.model_store_secrets
    if secrets is None:
        return {}
    by_sa = {
        naming.MODEL_READER_SA: secrets.reader,
        naming.ENGINE_BUILDER_SA: secrets.engine_builder,
        naming.WEIGHTS_STAGER_SA: secrets.weights_stager,
        naming.VLLM_COMPILER_SA: secrets.vllm_compiler,
    }
    return {sa: name for sa, name in by_sa.items() if name}
