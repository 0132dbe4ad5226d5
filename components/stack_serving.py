"""The one place a blueprint environment becomes serving arguments.

`InferenceStack` serves every model with `model_server`: the blueprint's `Environment` and
`Model` are mapped to the flat `ServingEnvironment` / `ServedModel` the serving components
take, and an inconsistency the components find (`ServingArgsError`, named by field) is
reported as a `BlueprintError` at the blueprint value that set the field.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint import naming, system_nodes
from inferplane.blueprint.capacity import targets
from inferplane.blueprint.derived import lever_options, router_wake, scale_out
from inferplane.blueprint.errors import BlueprintError, Diagnostic, YamlPath, format_path
from inferplane.blueprint.model import Environment, GpuPool, Model, SecretRef
from inferplane.blueprint.system_nodes import SystemPod
from inferplane.components import stack_args
from inferplane.components.serving.model_server import ModelServer, ModelServerArgs
from inferplane.components.serving.scaling.image_prepull import ImagePrePullArgs
from inferplane.components.serving.scaling.spare_gpus import SpareGpusArgs
from inferplane.components.serving.secrets import (
    is_offline,
    missing_fix,
    missing_problem,
    missing_state,
    secret_value,
)
from inferplane.components.serving.serving_pod import pod_images
from inferplane.components.serving.spec import ServedModel, ServingArgsError, ServingEnvironment
from inferplane.components.serving.spec_parts import ModelSecret, ServingPool
from inferplane.components.serving.store.weights import HubSource, plan_staging
from inferplane.components.serving.store.weights_job import WeightsStaging, WeightsStagingArgs


def serving_environment(env: Environment) -> ServingEnvironment:
    """The environment facts every serving object of `env` needs."""
    created, addons = env.cluster.create, env.cluster.addons
    return ServingEnvironment(
        part_of=env.blueprint,
        environment=env.name,
        cloud=env.cloud,
        region=env.region,
        zones=env.zones,
        project=env.project,
        model_store_uri=env.model_store,
        triton_release=env.versions.triton,
        vllm_version=env.versions.vllm,
        keda_version=env.versions.keda,
        prometheus_url=addons.prometheus.query_url,
        prometheus_namespace=addons.prometheus.namespace,
        prometheus_labels=dict(addons.prometheus.selector_labels),
        dashboard_labels=dict(addons.prometheus.dashboard_label),
        keda_http_namespace=addons.keda_http_add_on.namespace,
        keda_http_release=addons.keda_http_add_on.release,
        argo_rollouts_instance_id=addons.argo_rollouts.instance_id,
        # An attached cluster's version and network are not known from the blueprint.
        kubernetes_version=env.cluster.kubernetes_version if created else None,
        vpc_cidr=env.cluster.vpc_cidr if created else None,
        lb_scheme=env.load_balancer.scheme,
        lb_allowed_cidrs=env.load_balancer.allowed_cidrs,
        lb_client_namespaces=env.load_balancer.client_namespaces,
        dataplane="cilium" if env.cluster.dataplane == "cilium" else "other",
        lb_service_type="ClusterIP"
        if env.cluster.load_balancer == "cluster_ip"
        else "LoadBalancer",
        store_endpoint=env.model_store_endpoint,
        store_pod_labels=dict(env.model_store_pod_labels),
        store_secrets=stack_args.store_secrets(env),
        alerts=env.observability.alerts_enabled,
        grafana_dashboard=env.observability.grafana_enabled,
        # Stack config, not blueprint: where this deploy finds the chart, not what it serves.
        router_chart=router_chart_dir(),
    )


def router_chart_dir() -> str | None:
    """Stack config ``inferplane:routerChart`` as an absolute path (a relative one is the
    project directory's, where Pulumi runs the program), so the chart reference is a path
    wherever it is read."""
    given = pulumi.Config("inferplane").get("routerChart")
    return str(Path(given).resolve()) if given else None


def serving_pool(env: Environment, pool: GpuPool) -> ServingPool:
    """`pool` as its models see it, with the GPU units left at its maximum size."""
    capacity = pool.nodes.max * len(pool.zones) * pool.gpu_units_per_node
    demand = sum(m.replicas.max * m.gpus for m in env.models.values() if m.pool == pool.name)
    return ServingPool(
        name=pool.name,
        gpu_type=pool.gpu.id,
        zones=pool.zones,
        gpu_resource=pool.gpu_resource,
        gpu_units_per_node=pool.gpu_units_per_node,
        instance_type=pool.instance_type,
        # The labels `node_pool.node_labels` gives the pool's nodes: the pool name alone
        # would also select a same-named pool of another blueprint on the cluster.
        node_selector={naming.POOL_LABEL: pool.name, naming.BLUEPRINT_LABEL: env.blueprint},
        spare_gpu_units_at_max=capacity - demand,
    )


def served_model(env: Environment, model: Model) -> ServedModel:
    """`model` of `env` as the serving components take it."""
    with blueprint_errors(env, model):
        return ServedModel(
            name=model.name,
            server=model.server,
            source=model.source,
            pool=serving_pool(env, env.pool_of(model)),
            replicas=model.replicas,
            gpus=model.gpus,
            latency_class=model.latency_class,
            precision=model.precision,
            autoscaling=model.autoscaling,
            slo=model.slo,
            expose=model.expose,
            secrets=tuple(model_secret(env, ref) for ref in model.secrets),
            image=model.image,
            triton_release=model.triton_release,
            startup_timeout_s=model.startup_timeout_s,
            max_request_s=model.max_request_s,
            vllm=model.vllm,
            tensorrt=model.tensorrt,
            tensorrt_llm=model.tensorrt_llm,
            batching=model.batching,
            response_cache=model.response_cache,
            warmup=model.warmup,
            wake=model.wake,
            wake_hosts=model.wake_hosts,
            schedule=model.schedule,
            backend=model.backend,
            accelerator=model.accelerator,
            inputs=model.inputs,
            outputs=model.outputs,
            shapes=model.shapes,
            pipeline=model.pipeline,
            routing=model.routing,
            router_pods=router_pods(env, model),
            wake_s=wake_s(env, model),
            stream_weights=lever_options.streams_weights(model),
            histogram_buckets=tuple(
                sorted(targets.histogram_buckets(model, env.versions.vllm).items())
            ),
            rollout=model.rollout,
        )


def router_pods(env: Environment, model: Model) -> tuple[SystemPod, SystemPod]:
    """An llm-aware model's picker and Envoy as `system_nodes.routing_sizes` sizes them (the
    same sizes the system nodes are counted for); the floors for any other model."""
    if not model.routing.llm_aware:
        return system_nodes.PICKER, system_nodes.PROXY
    sizes = system_nodes.routing_sizes(env, model)
    return sizes.picker, sizes.proxy


def wake_s(env: Environment, model: Model) -> int | None:
    """A model at zero: its scale-out budget from zero as a wait (`router_wake.wake_s`)."""
    if model.replicas.min != 0:
        return None
    found = scale_out.budget(scale_out.inputs_of(env, model), node_autoscaler=not env.kubernetes)
    return router_wake.wake_s(found.total_s, bool(found.unknown), model.startup_timeout_s)


def model_secret(env: Environment, ref: SecretRef) -> ModelSecret:
    """A blueprint secret reference as the serving components take it."""
    return ModelSecret(
        name=ref.name,
        from_env=ref.from_env,
        from_pulumi_config=ref.from_pulumi_config,
        from_secret_manager=ref.from_secret_manager,
        origin=_origin(env, (*ref.path, "from_secret_manager")),
    )


def _origin(env: Environment, where: YamlPath) -> str:
    """``FILE:LINE:COL: error: yaml.path`` of a blueprint value, for deploy-time messages."""
    return f"{env.locate(where)}: error: {format_path(env.source_path(where))}"


def model_server_args(
    env: Environment,
    model: Model,
    provider: k8s.Provider,
    lb_subnet_ids: pulumi.Input[Sequence[str]] | None = None,
) -> ModelServerArgs:
    """The `ModelServer` arguments of `model`, in the blueprint's namespace."""
    return ModelServerArgs(
        model=served_model(env, model),
        env=serving_environment(env),
        namespace=naming.namespace(env.blueprint),
        provider=provider,
        lb_subnet_ids=lb_subnet_ids,
    )


def model_server(
    name: str,
    env: Environment,
    model: Model,
    provider: k8s.Provider,
    lb_subnet_ids: pulumi.Input[Sequence[str]] | None = None,
    opts: pulumi.ResourceOptions | None = None,
    weights_staging: Mapping[HubSource, WeightsStaging] | None = None,
    after: Sequence[pulumi.Resource] = (),
) -> ModelServer:
    """`ModelServer` `name` for `model`; problems are `BlueprintError`s at their value.
    `weights_staging`: the environment's (`weights_staging`); `after`: what its pods wait
    for (`ModelServerArgs.after`)."""
    if not is_offline():
        problems = secret_env_diagnostics(env, model)
        if problems:
            raise BlueprintError(problems)
    args = model_server_args(env, model, provider, lb_subnet_ids)
    args = dataclasses.replace(args, weights_staging=weights_staging, after=tuple(after))
    with blueprint_errors(env, model):
        return ModelServer(name, args, opts=opts)


def weights_staging(
    name: str,
    env: Environment,
    provider: k8s.Provider,
    opts: pulumi.ResourceOptions | None = None,
) -> dict[HubSource, WeightsStaging]:
    """One `WeightsStaging` (``<name>-weights-<key[:10]>``) per distinct hf:// source of
    the environment's models, shared by every model naming it."""
    served = {m.name: served_model(env, m) for m in env.models.values()}
    serving_env = serving_environment(env)
    out: dict[HubSource, WeightsStaging] = {}
    for source, staging in plan_staging(list(served.values())).items():
        owner = env.models[staging.token_owner] if staging.token_owner else None
        args = WeightsStagingArgs(staging, serving_env, naming.namespace(env.blueprint), provider)
        with blueprint_errors(env, owner) if owner else nullcontext():
            out[source] = WeightsStaging(f"{name}-weights-{source.key[:10]}", args, opts=opts)
    return out


def models_on(env: Environment, pool: GpuPool) -> list[Model]:
    return [m for m in env.models.values() if m.pool == pool.name]


def spare_gpus_args(env: Environment, pool: GpuPool, provider: k8s.Provider) -> SpareGpusArgs:
    """`pool`'s spare GPUs (`GpuPool.spare_gpus` > 0, on a pool some model uses: the
    blueprint layer refuses others). A placeholder holds one replica of the pool's largest
    model, and `spare_gpus` is a whole number of them (`semantic_spare`)."""
    return SpareGpusArgs(
        pool=serving_pool(env, pool),
        spare_gpu_units_per_zone=pool.spare_gpus,
        gpu_units_per_pod=max(m.gpus for m in models_on(env, pool)),
        part_of=env.blueprint,
        environment=env.name,
        namespace=naming.namespace(env.blueprint),
        provider=provider,
    )


def image_prepull_args(env: Environment, pool: GpuPool, provider: k8s.Provider) -> ImagePrePullArgs:
    """The pre-pull DaemonSet of `pool`: every image of every serving pod on it."""
    serving_env = serving_environment(env)
    images: list[str] = []
    for model in models_on(env, pool):
        served = served_model(env, model)
        with blueprint_errors(env, model):
            images.extend(pod_images(serving_env, served))
    return ImagePrePullArgs(
        pool=serving_pool(env, pool),
        images=tuple(dict.fromkeys(images)),
        part_of=env.blueprint,
        environment=env.name,
        namespace=naming.namespace(env.blueprint),
        provider=provider,
    )


def alert_receiver_secrets(
    env: Environment, parent: pulumi.Resource
) -> dict[str, pulumi.Output[str]]:
    """The Alertmanager receivers' credentials by Secret key, each a Pulumi secret, read
    the way model secrets are (`secret_value`; `parent` lends its cloud provider to Secret
    Manager lookups). `check_deploy_inputs` has checked every ``from_env`` variable."""
    serving_env = serving_environment(env)
    offline = is_offline()
    return {
        ref.name: secret_value(
            model_secret(env, ref),
            serving_env,
            model="alertmanager",
            offline=offline,
            parent=parent,
        )
        for receiver in env.observability.alert_receivers
        for ref in receiver.secrets
    }


def alert_secret_env_diagnostics(env: Environment) -> list[Diagnostic]:
    """`secret_env_diagnostics` for the Alertmanager receivers' credentials."""
    refs = [ref for r in env.observability.alert_receivers for ref in r.secrets]
    return _missing_diagnostics(env, refs)


def secret_env_diagnostics(env: Environment, model: Model) -> list[Diagnostic]:
    """One diagnostic per ``from_env`` / ``from_pulumi_config`` secret of `model` whose
    value is not set, or empty, now (read as `pulumi up` reads it)."""
    return _missing_diagnostics(env, model.secrets)


def _missing_diagnostics(env: Environment, refs: Sequence[SecretRef]) -> list[Diagnostic]:
    problems = []
    for ref in refs:
        served = model_secret(env, ref)
        state = missing_state(served)
        if state is None:
            continue
        where = (*ref.path, "from_env" if ref.from_env is not None else "from_pulumi_config")
        problems.append(
            Diagnostic(
                env.locate(where),
                env.source_path(where),
                missing_problem(served, state, f"secret {format_path(ref.path)}"),
                missing_fix(served),
            )
        )
    return problems


@contextmanager
def blueprint_errors(env: Environment, model: Model) -> Iterator[None]:
    """Turn a `ServingArgsError` about `model` into a `BlueprintError` at the blueprint
    value behind the field it names."""
    try:
        yield
    except ServingArgsError as exc:
        where = (*model.path, *exc.field)
        raise BlueprintError(
            [Diagnostic(env.locate(where), env.source_path(where), exc.problem, exc.fix)]
        ) from exc
