"""`ModelServer`: one served model — Triton or vLLM — and everything around it.

Children (Kubernetes names in `ModelServerArgs.namespace`; Pulumi names derive from `name`):

- ``TensorRtEngineBuild`` (Triton with ``tensorrt``) or ``TensorRtLlmEngineBuild`` (Triton
  with ``tensorrt_llm``): Job ``<model>-engine-<key[:10]>``; the Deployment waits for it, so
  pods start only once the engine exists.
- ConfigMap ``<model>-triton-config`` (Triton): the model's ``config.pbtxt``.
- Secret ``<model>-secrets`` (when the model has secrets), values as Pulumi secrets.
- Deployment ``<model>``: one container serving exactly this model (see `containers`,
  `vllm`, `triton_config` for the pod); ``replicas`` starts at ``replicas.min`` so the
  first rollout is warm, and is then KEDA's: Pulumi ignores later changes to it, so a
  ``pulumi up`` never scales a loaded model down.
- Service ``<model>`` (ClusterIP: ``http``, and ``grpc``/``metrics`` for Triton), Service
  ``<model>-lb`` (the region-local load balancer, `load_balancer`; through the KEDA HTTP
  add-on's interceptor for a model at zero that serves HTTP only, `wake`), PodDisruptionBudget
  ``<model>`` (one replica at a time; a stuck-unhealthy pod never blocks a node drain),
  NetworkPolicy ``<model>`` (ingress) and ``<model>-egress`` (DNS and the model store,
  `network_policies`).
- ``ModelAutoscaler`` (ScaledObject ``<model>``) and ``ModelMonitoring`` (ServiceMonitor,
  PrometheusRule, dashboard).

Every object carries `naming.model_labels` plus the pool and latency-class labels.

Arguments are a `spec.ServedModel` and a `spec.ServingEnvironment`, fillable by hand;
`inferplane.components.stack_serving` fills them from a blueprint.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint import defaults, naming
from inferplane.components.serving.autoscaling import ModelAutoscaler, ModelAutoscalerArgs
from inferplane.components.serving.containers import (
    Manifest,
    empty_dir,
    gpu_placement,
    model_object_labels,
    pod_security_context,
    progress_deadline_s,
    rollout_strategy,
    service_account,
    shm_size_mib,
    termination_grace_s,
    zone_spread,
)
from inferplane.components.serving.engine_build import TensorRtEngineBuild, TensorRtEngineBuildArgs
from inferplane.components.serving.load_balancer import (
    lb_service_name,
    model_load_balancer,
    model_network_policy,
    service_ports,
    traffic_distribution,
)
from inferplane.components.serving.monitoring import ModelMonitoring, ModelMonitoringArgs
from inferplane.components.serving.network_policies import serving_egress_policy
from inferplane.components.serving.secrets import (
    model_secret,
    secret_env,
    secret_mounts,
    secret_volume,
)
from inferplane.components.serving.spec import ServedModel, ServingEnvironment
from inferplane.components.serving.triton_config import (
    CONFIG_FILE,
    render_config_pbtxt,
    triton_container,
    triton_fetch_container,
)
from inferplane.components.serving.trtllm import render_config_pbtxt as render_trtllm_config
from inferplane.components.serving.trtllm import trtllm_container, trtllm_fetch_container
from inferplane.components.serving.trtllm_build import (
    TensorRtLlmEngineBuild,
    TensorRtLlmEngineBuildArgs,
    trtllm_image,
)
from inferplane.components.serving.vllm import vllm_container, vllm_fetch_container

CONFIG_HASH_ANNOTATION: Final = "inferplane.dev/config-hash"
"""On the pod template: a changed config.pbtxt rolls the pods (a ConfigMap change alone
would not)."""
AWAIT_MARGIN_S: Final = 300


def server_image(env: ServingEnvironment, model: ServedModel) -> str:
    if model.image:
        return model.image
    if model.server == "triton" and model.tensorrt_llm is not None:
        return trtllm_image(env)
    if model.server == "triton":
        return defaults.TRITON_IMAGE.format(release=env.triton_release)
    return defaults.VLLM_IMAGE.format(version=env.vllm_version)


def config_map_name(model: ServedModel) -> str:
    return f"{model.name}-triton-config"


def reads_store(model: ServedModel) -> bool:
    """True when the serving pod reads the model store (its fetch init container), so it
    uses the cloud identity; vLLM downloads an hf:// repository itself, without it."""
    return model.server == "triton" or model.source.scheme != "hf"


def serving_pod_spec(
    env: ServingEnvironment, model: ServedModel, model_uri: str, with_secrets: bool
) -> Manifest:
    """The serving pod: init container(s) that fetch the model, one server container."""
    pool = model.pool
    image = server_image(env, model)
    volumes = [
        empty_dir("models"),
        empty_dir("home"),
        empty_dir("tmp"),
        empty_dir("dshm", f"{shm_size_mib(model)}Mi", memory=True),
    ]
    init: list[Manifest] = []
    if model.server == "triton" and model.tensorrt_llm is not None:
        server = trtllm_container(env, model, image)
        init.append(trtllm_fetch_container(env, model, model_uri))
        volumes.append({"name": "triton-config", "configMap": {"name": config_map_name(model)}})
    elif model.server == "triton":
        server = triton_container(env, model, image)
        init.append(triton_fetch_container(env, model, model_uri))
        volumes.append({"name": "triton-config", "configMap": {"name": config_map_name(model)}})
    else:
        server = vllm_container(env, model, image)
        fetch = vllm_fetch_container(env, model)
        if fetch is not None:
            init.append(fetch)
    if with_secrets:
        server["env"] = [*server["env"], *secret_env(model)]
        files = secret_volume(model)
        if files is not None:
            volumes.append(files)
            server["volumeMounts"] = [*server["volumeMounts"], *secret_mounts(model)]
    spec: Manifest = {
        **service_account(env, naming.MODEL_READER_SA, cloud_identity=reads_store(model)),
        "enableServiceLinks": False,
        "terminationGracePeriodSeconds": termination_grace_s(model),
        "securityContext": pod_security_context(),
        **gpu_placement(pool),
        "topologySpreadConstraints": zone_spread(env, model),
        "containers": [server],
        "volumes": volumes,
    }
    if init:
        spec["initContainers"] = init
    return spec


def deployment_spec(
    env: ServingEnvironment,
    model: ServedModel,
    model_uri: str,
    with_secrets: bool,
    config_text: str | None,
) -> Manifest:
    labels = model_object_labels(env, model)
    template_meta: Manifest = {"labels": labels}
    if config_text is not None:
        digest = hashlib.sha256(config_text.encode()).hexdigest()[:16]
        template_meta["annotations"] = {CONFIG_HASH_ANNOTATION: digest}
    return {
        "replicas": model.replicas.min,
        "selector": {"matchLabels": naming.model_selector(env.part_of, model.name)},
        "strategy": rollout_strategy(env, model),
        "progressDeadlineSeconds": progress_deadline_s(model),
        "revisionHistoryLimit": 5,
        "template": {
            "metadata": template_meta,
            "spec": serving_pod_spec(env, model, model_uri, with_secrets),
        },
    }


def cluster_service_spec(env: ServingEnvironment, model: ServedModel) -> Manifest:
    names = ["http", "grpc", "metrics"] if model.server == "triton" else ["http"]
    return {
        "type": "ClusterIP",
        "selector": naming.model_selector(env.part_of, model.name),
        "ports": service_ports(names),
        "trafficDistribution": traffic_distribution(env),
    }


def pdb_spec(env: ServingEnvironment, model: ServedModel) -> Manifest:
    return {
        "maxUnavailable": 1,
        "selector": {"matchLabels": naming.model_selector(env.part_of, model.name)},
        "unhealthyPodEvictionPolicy": "AlwaysAllow",
    }


def _minutes(seconds: int) -> str:
    return f"{-(-seconds // 60)}m"


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


class ModelServer(pulumi.ComponentResource):
    """One served model and everything around it (see the module docstring).

    Outputs:
        deployment_name: the Deployment (``<model>``).
        service_name: the ClusterIP Service (``<model>``).
        lb_service_name: the LoadBalancer Service (``<model>-lb``; for a model that wakes on
            its own HTTP traffic ``<blueprint>-<env>-<model>-lb`` in the KEDA namespace).
        endpoint: the load balancer's hostname (AWS) or IP address (GCP), once assigned.
        engine_uri: the TensorRT engine's store URI (Triton with ``tensorrt``) or the
            TensorRT-LLM engine directory's (``tensorrt_llm``), else None.
    """

    deployment_name: pulumi.Output[str]
    service_name: pulumi.Output[str]
    lb_service_name: pulumi.Output[str]
    endpoint: pulumi.Output[str | None]
    engine_uri: str | None

    def __init__(
        self, name: str, args: ModelServerArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("inferplane:serving:ModelServer", name, None, opts)
        env, model = args.env, args.model
        ns = args.namespace
        labels = model_object_labels(env, model)
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        before_pods: list[pulumi.Resource] = []

        secret = model_secret(
            f"{name}-secrets", env=env, model=model, namespace=ns, labels=labels, opts=child
        )
        if secret is not None:
            before_pods.append(secret)
        # The pods fetch their weights first thing: their egress must be allowed by then.
        before_pods.append(
            serving_egress_policy(
                f"{name}-egress",
                env=env,
                model_name=model.name,
                cloud_identity=reads_store(model),
                namespace=ns,
                labels=labels,
                opts=child,
            )
        )

        model_uri = model.source.uri
        self.engine_uri = None
        config_text = None
        if model.server == "triton":
            if model.tensorrt is not None:
                build = TensorRtEngineBuild(
                    f"{name}-engine",
                    TensorRtEngineBuildArgs(model, env, ns, args.provider),
                    opts=pulumi.ResourceOptions(parent=self),
                )
                before_pods.append(build.job)
                self.engine_uri = model_uri = build.engine_uri
            if model.tensorrt_llm is not None:
                # The build reads the model's Secret (a gated checkpoint's HF_TOKEN).
                llm_build = TensorRtLlmEngineBuild(
                    f"{name}-engine",
                    TensorRtLlmEngineBuildArgs(model, env, ns, args.provider),
                    opts=pulumi.ResourceOptions(parent=self, depends_on=list(before_pods)),
                )
                before_pods.append(llm_build.job)
                self.engine_uri = model_uri = llm_build.engine_uri
                config_text = render_trtllm_config(model, env)
            else:
                config_text = render_config_pbtxt(model, env)
            before_pods.append(
                k8s.core.v1.ConfigMap(
                    f"{name}-triton-config",
                    metadata={"name": config_map_name(model), "namespace": ns, "labels": labels},
                    data={CONFIG_FILE: config_text},
                    opts=child,
                )
            )

        await_timeout = _minutes(progress_deadline_s(model) + AWAIT_MARGIN_S)
        deployment = k8s.apps.v1.Deployment(
            name,
            metadata={"name": model.name, "namespace": ns, "labels": labels},
            spec=deployment_spec(env, model, model_uri, secret is not None, config_text),
            opts=pulumi.ResourceOptions.merge(
                child,
                pulumi.ResourceOptions(
                    depends_on=before_pods,
                    ignore_changes=["spec.replicas"],
                    custom_timeouts=pulumi.CustomTimeouts(
                        create=await_timeout, update=await_timeout
                    ),
                ),
            ),
        )
        service = k8s.core.v1.Service(
            name,
            metadata={"name": model.name, "namespace": ns, "labels": labels},
            spec=cluster_service_spec(env, model),
            opts=child,
        )
        lb = model_load_balancer(
            f"{name}-lb",
            env=env,
            model=model,
            namespace=ns,
            labels=labels,
            lb_subnet_ids=args.lb_subnet_ids,
            opts=child,
        )
        k8s.policy.v1.PodDisruptionBudget(
            name,
            metadata={"name": model.name, "namespace": ns, "labels": labels},
            spec=pdb_spec(env, model),
            opts=child,
        )
        model_network_policy(name, env=env, model=model, namespace=ns, labels=labels, opts=child)

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
                wake_hosts=lb.status.apply(lambda st: [a] if (a := _lb_address(st)) else [])
                if model.wakes_on_traffic
                else None,
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[deployment, service]),
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
        self.lb_service_name = lb.metadata.apply(lambda _: lb_service_name(model, env))
        self.endpoint = lb.status.apply(_lb_address)
        self.register_outputs(
            {
                "deployment_name": self.deployment_name,
                "service_name": self.service_name,
                "lb_service_name": self.lb_service_name,
                "endpoint": self.endpoint,
                "engine_uri": self.engine_uri,
            }
        )


def _lb_address(status: k8s.core.v1.outputs.ServiceStatus | None) -> str | None:
    ingress = (status.load_balancer.ingress if status and status.load_balancer else None) or []
    for entry in ingress:
        if entry.hostname or entry.ip:
            return entry.hostname or entry.ip
    return None
