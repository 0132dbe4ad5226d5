"""`ModelServer`: one served model — Triton or vLLM — and everything around it.

Children (Kubernetes names in `ModelServerArgs.namespace`; Pulumi names derive from `name`):

- ``WeightsStaging`` (Job ``weights-<key[:10]>``) per ``hf://`` source the environment
  does not stage already (`ModelServerArgs.weights_staging`): the Deployment (and a
  TensorRT-LLM build) waits for the copy in the model store.
- ``TensorRtEngineBuild`` (Triton with ``tensorrt``) or ``TensorRtLlmEngineBuild`` (Triton
  with ``tensorrt_llm``): Job ``<model>-engine-<key[:10]>``; the Deployment waits for it, so
  pods start only once the engine exists. ``PipelineEngineBuild`` (a pipeline with
  ``tensorrt`` steps): one such Job per step's engine, waited for alike.
- ``VllmCompileCache`` (vLLM, unless ``enforce_eager``): Job ``<model>-compile-<key[:10]>``
  stages the model's ``torch.compile`` cache in the store (`vllm_compile`); the Deployment
  waits for it and its pods copy the cache, so a new replica skips the compile.
- ConfigMap ``<model>-triton-config`` (Triton): the model's ``config.pbtxt``.
- Secret ``<model>-secrets`` (when the model has secrets), values as Pulumi secrets.
- Deployment ``<model>``: one container serving exactly this model (see `serving_pod`,
  `vllm`, `triton_config` for the pod); ``replicas`` starts at ``replicas.min`` so the
  first rollout is warm, and is then KEDA's: Pulumi ignores later changes to it, so a
  ``pulumi up`` never scales a loaded model down.
- Service ``<model>`` (ClusterIP: ``http``, and ``grpc``/``metrics`` for Triton), Service
  ``<model>-lb`` (the region-local load balancer, `load_balancer`; through the KEDA HTTP
  add-on's interceptor for a model at zero that serves HTTP only, `wake`); both are created
  once the Deployment is Available and wait as long as it (`containers.await_timeout_s`).
  Service ``<model>-grpc`` (headless, for client-side gRPC balancing) when the model
  exposes gRPC. PodDisruptionBudget
  ``<model>`` (one replica at a time; a stuck-unhealthy pod never blocks a node drain),
  NetworkPolicy ``<model>`` (ingress) and ``<model>-egress`` (DNS and the model store,
  `network_policies`).
- ``ModelAutoscaler`` (ScaledObject ``<model>``) and ``ModelMonitoring`` (ServiceMonitor,
  PrometheusRule, dashboard).
- A model with a ``rollout``: per Deployment a Rollout and an AnalysisTemplate of the
  Deployment's name (`scaling.rollout`); its ScaledObject scales the Rollout.
- ``ResponseCacheStore`` (Triton with ``response_cache.backend: redis``): a Valkey server
  per zone, its Service ``<model>-cache``, Secret and NetworkPolicies (`response_cache`);
  the Deployment waits for it.

Every object carries `naming.model_labels` plus the pool and latency-class labels. What the
pods wait for (staging and build Jobs, the config, the secret, the egress policy and the cache
servers) is made by `model_prerequisites`.

Arguments are a `spec.ServedModel` and a `spec.ServingEnvironment`, fillable by hand;
`inferplane.components.stack_serving` fills them from a blueprint.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from inferplane.components.serving.containers import (
    await_timeout_s,
    model_object_labels,
)
from inferplane.components.serving.model_prerequisites import pod_prerequisites
from inferplane.components.serving.observability.monitoring import (
    ModelMonitoring,
    ModelMonitoringArgs,
)
from inferplane.components.serving.routing.load_balancer import (
    lb_namespace,
    lb_service_name,
    lb_service_type,
    model_load_balancer,
    model_network_policy,
)
from inferplane.components.serving.routing.router import (
    ModelRouter,
    ModelRouterArgs,
    router_ingress,
)
from inferplane.components.serving.scaling.autoscaling import ModelAutoscaler, ModelAutoscalerArgs
from inferplane.components.serving.scaling.rollout import model_rollout, revision, with_revision
from inferplane.components.serving.serving_pod import (
    cluster_service_spec,
    deployment_spec,
    grpc_service_name,
    grpc_service_spec,
    grpc_target,
    pdb_spec,
    precision_annotation,
    serves_grpc,
)
from inferplane.components.serving.spec import ServedModel, ServingEnvironment
from inferplane.components.serving.store.weights import HubSource
from inferplane.components.serving.store.weights_job import WeightsStaging
from inferplane.components.serving.triton.response_cache import with_password_revision
from inferplane.components.serving.zone_deployments import zone_deployments


def _minutes(seconds: int) -> str:
    return f"{-(-seconds // 60)}m"


def pod_spec_of(spec: dict, cache_revision: pulumi.Output[str] | None) -> dict:
    """The Deployment `spec`, its pods rolled with a Redis cache's password when it has one
    (`response_cache.with_password_revision`: Triton reads the password only at start)."""
    return spec if cache_revision is None else with_password_revision(spec, cache_revision)


def _versioned(model: ServedModel, spec: dict) -> dict:
    """A Deployment `spec` of a model with a rollout carries its version
    (`rollout.REVISION_POD_LABEL`); others are left as they are."""
    if model.rollout is None:
        return spec
    return with_revision(spec, revision(spec["template"]))


@dataclass(frozen=True)
class ModelServerArgs:
    """Inputs of `ModelServer`."""

    model: ServedModel
    """The model to serve, and the GPU pool it runs on."""
    env: ServingEnvironment
    """The facts of the environment it runs in (cloud, labels, versions, load balancer)."""
    namespace: str
    """The namespace of every object; it must hold the ``model-reader`` ServiceAccount (and
    ``engine-builder`` for a TensorRT build) with read access to the weights."""
    provider: k8s.Provider
    """The cluster's provider; every resource passes it explicitly."""
    lb_subnet_ids: pulumi.Input[Sequence[str]] | None = None
    """AWS: one private subnet per environment zone, for the internal NLB. None on GCP (and
    on AWS the controller then discovers subnets itself)."""
    weights_staging: Mapping[HubSource, WeightsStaging] | None = None
    """The environment's staging of hf:// sources (one Job per repository and revision,
    shared by the models that name it); a source of this model missing here is staged by a
    ``WeightsStaging`` child of its own."""
    after: Sequence[pulumi.Resource] = ()
    """Resources the serving pods (and so the Deployment's autoscaler, which waits for the
    Deployment) are created after. A component's own ``depends_on`` does not reach its
    children, so what must precede the pods is named here."""


class ModelServer(pulumi.ComponentResource):
    """One served model and everything around it (see the module docstring).

    Outputs:
        deployment_name: the Deployment (``<model>``).
        service_name: the ClusterIP Service (``<model>``).
        lb_service_name: the LoadBalancer Service (``<model>-lb``; for a model that wakes on
            its own HTTP traffic ``<blueprint>-<env>-<model>-lb`` in the KEDA namespace).
        endpoint: the load balancer's hostname (AWS) or IP address (GCP, or the cluster's own
            load balancer on kubernetes), once assigned; for a ClusterIP Service (kubernetes)
            its in-cluster DNS name.
        grpc_endpoint: for a model exposing gRPC, the client-side balancing target
            ``dns:///<model>-grpc.<ns>.svc.cluster.local:8001`` (`grpc_service_spec`); else None.
        engine_uri: the keyed store prefix of the TensorRT engine (Triton with ``tensorrt``)
            or the TensorRT-LLM engine (``tensorrt_llm``), else None; its marker names the
            attempt folder that holds the engine (`store_cli.resolve_attempt`).
    """

    deployment_name: pulumi.Output[str]
    service_name: pulumi.Output[str]
    lb_service_name: pulumi.Output[str]
    endpoint: pulumi.Output[str | None]
    grpc_endpoint: str | None
    engine_uri: str | None

    def __init__(
        self, name: str, args: ModelServerArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("inferplane:serving:ModelServer", name, None, opts)
        env, model = args.env, args.model
        ns = args.namespace
        labels = model_object_labels(env, model)
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)

        prerequisites = pod_prerequisites(
            name,
            self,
            env=env,
            model=model,
            namespace=ns,
            provider=args.provider,
            labels=labels,
            after=args.after,
            weights_staging=args.weights_staging,
        )
        before_pods = prerequisites.before_pods
        model_uri, config_text = prerequisites.model_uri, prerequisites.config_text
        self.engine_uri = prerequisites.engine_uri

        # The Deployment and both Services wait the model's load budget (`await_timeout_s`),
        # and the Services are created once the Deployment is Available: their await
        # (Endpoints with no not-ready address, and a load balancer address) cannot then
        # fail on a first load that takes longer than pulumi-kubernetes' 10-minute default.
        await_timeout = _minutes(await_timeout_s(model))
        timeouts = pulumi.CustomTimeouts(create=await_timeout, update=await_timeout)
        if model.zoned:
            deployments = zone_deployments(
                self,
                name,
                env,
                model,
                ns,
                args.provider,
                labels,
                before_pods,
                model_uri,
                config_text,
                timeouts,
                prerequisites.cache_password_revision,
            )
        else:
            deployments = [
                k8s.apps.v1.Deployment(
                    name,
                    metadata={
                        "name": model.name,
                        "namespace": ns,
                        "labels": labels,
                        "annotations": precision_annotation(model),
                    },
                    spec=pod_spec_of(
                        _versioned(
                            model,
                            deployment_spec(
                                env, model, model_uri, bool(model.secrets), config_text
                            ),
                        ),
                        prerequisites.cache_password_revision,
                    ),
                    opts=pulumi.ResourceOptions.merge(
                        child,
                        pulumi.ResourceOptions(
                            depends_on=before_pods,
                            ignore_changes=["spec.replicas"],
                            custom_timeouts=timeouts,
                        ),
                    ),
                )
            ]
        deployment = deployments[0]
        rollouts = (
            [
                model_rollout(
                    name,
                    env,
                    model,
                    ns,
                    model.name,
                    labels,
                    pulumi.ResourceOptions.merge(
                        child, pulumi.ResourceOptions(depends_on=deployments)
                    ),
                )
            ]
            if model.rollout is not None and not model.zoned
            else []
        )
        after_deployment = pulumi.ResourceOptions.merge(
            child, pulumi.ResourceOptions(depends_on=deployments, custom_timeouts=timeouts)
        )
        service = k8s.core.v1.Service(
            name,
            metadata={"name": model.name, "namespace": ns, "labels": labels},
            spec=cluster_service_spec(env, model),
            opts=after_deployment,
        )
        if model.routing.llm_aware:
            # Per zone: the router and the zone's own load balancer (`router`).
            # One zone after the other: each release waits for the previous zone's to be
            # rolled (`ModelRouterArgs.after`), so an update never takes every zone's
            # router at once.
            routers: list[ModelRouter] = []
            for zone in model.pool.zones:
                previous = (routers[-1].chart,) if routers else ()
                routers.append(
                    ModelRouter(
                        f"{name}-router-{zone}",
                        ModelRouterArgs(
                            model,
                            env,
                            ns,
                            args.provider,
                            zone,
                            args.lb_subnet_ids,
                            after=(*args.after, *deployments, *previous),
                        ),
                        opts=pulumi.ResourceOptions(parent=self),
                    )
                )
            lb_name: pulumi.Output[str] = pulumi.Output.all(
                *[r.lb_service_name for r in routers]
            ).apply(lambda names: ",".join(str(n) for n in names))
            address: pulumi.Output[str | None] = lb_name.apply(lambda _: None)
        else:
            lb = model_load_balancer(
                f"{name}-lb",
                env=env,
                model=model,
                namespace=ns,
                labels=labels,
                lb_subnet_ids=args.lb_subnet_ids,
                opts=after_deployment,
            )
            lb_name = lb.metadata.apply(lambda _: lb_service_name(model, env))
            # A ClusterIP Service (kubernetes) has no load balancer address: its DNS name is it.
            address = (
                lb.metadata.apply(
                    lambda _: (
                        f"{lb_service_name(model, env)}."
                        f"{lb_namespace(env, model, ns)}.svc.cluster.local"
                    )
                )
                if lb_service_type(env) == "ClusterIP"
                else lb.status.apply(_lb_address)
            )
        self.grpc_endpoint = None
        if serves_grpc(model):
            # Headless: no await on Pods (service.go shouldWaitForPods), so no ordering needed.
            k8s.core.v1.Service(
                f"{name}-grpc",
                metadata={"name": grpc_service_name(model), "namespace": ns, "labels": labels},
                spec=grpc_service_spec(env, model),
                opts=child,
            )
            self.grpc_endpoint = grpc_target(model, ns)
        if not model.zoned:
            k8s.policy.v1.PodDisruptionBudget(
                name,
                metadata={"name": model.name, "namespace": ns, "labels": labels},
                spec=pdb_spec(env, model),
                opts=child,
            )
            ModelAutoscaler(
                f"{name}-autoscaling",
                ModelAutoscalerArgs(
                    model,
                    env,
                    ns,
                    args.provider,
                    deployment_name=model.name,
                    service_name=model.name,
                    # The interceptor routes by Host: the load balancer's address is one.
                    wake_hosts=address.apply(lambda a: [a] if a else [])
                    if model.wakes_on_traffic
                    else None,
                ),
                opts=pulumi.ResourceOptions(
                    parent=self, depends_on=[deployment, service, *rollouts]
                ),
            )
        model_network_policy(
            name,
            env=env,
            model=model,
            namespace=ns,
            labels=labels,
            opts=child,
            extra_ingress=[router_ingress(model)] if model.routing.llm_aware else (),
        )
        ModelMonitoring(
            f"{name}-monitoring",
            ModelMonitoringArgs(
                model, env, ns, args.provider, service_name=model.name, deployment_name=model.name
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[service]),
        )

        # Derived from the resources so that readers wait until they exist.
        self.deployment_name = deployment.metadata.apply(lambda _: model.name)
        self.service_name = service.metadata.apply(lambda _: model.name)
        self.lb_service_name = lb_name
        self.endpoint = address
        self.register_outputs(
            {
                "deployment_name": self.deployment_name,
                "service_name": self.service_name,
                "lb_service_name": self.lb_service_name,
                "endpoint": self.endpoint,
                "grpc_endpoint": self.grpc_endpoint,
                "engine_uri": self.engine_uri,
            }
        )


def _lb_address(status: k8s.core.v1.outputs.ServiceStatus | None) -> str | None:
    ingress = (status.load_balancer.ingress if status and status.load_balancer else None) or []
    for entry in ingress:
        if entry.hostname or entry.ip:
            return entry.hostname or entry.ip
    return None
