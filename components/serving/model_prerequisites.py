"""What a model's serving pods wait for, created before its Deployment (`model_server`).

- Secret ``<model>-secrets`` (when the model has secrets) and NetworkPolicy
  ``<model>-egress`` (DNS and the model store: the pods fetch their weights first thing).
- ``ResponseCacheStore`` (Triton with ``response_cache.backend: redis``).
- ``WeightsStaging`` per ``hf://`` source the environment does not stage already.
- ConfigMap ``<model>-chat-template`` (vLLM with ``vllm.chat_template``): the template, the
  one file ``--chat-template`` names, mounted read-only (`vllm.CHAT_TEMPLATE_DIR`).
- ConfigMap ``<model>-route-guard`` (every vLLM model): inferplane's route guard module,
  which answers only the release's client, probe and metrics routes (`route_guard`),
  mounted read-only (`vllm.ROUTE_GUARD_DIR`).
- ``VllmCompileCache`` (vLLM, unless ``enforce_eager``).
- ``TensorRtEngineBuild`` or ``TensorRtLlmEngineBuild`` (Triton with ``tensorrt`` or
  ``tensorrt_llm``), ``RequirementsStaging`` (a pipeline's staged wheels), and ConfigMap
  ``<model>-triton-config`` (Triton): the model's config files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint.triton_model import engine_steps
from inferplane.components.serving.network_policies import serving_egress_policy
from inferplane.components.serving.secrets import model_secret
from inferplane.components.serving.serving_pod import config_map_name
from inferplane.components.serving.spec import ServedModel, ServingEnvironment
from inferplane.components.serving.store import pip_requirements
from inferplane.components.serving.store.requirements_job import (
    RequirementsStaging,
    RequirementsStagingArgs,
)
from inferplane.components.serving.store.weights import HubSource, hub_sources, plan_staging
from inferplane.components.serving.store.weights_job import WeightsStaging, WeightsStagingArgs
from inferplane.components.serving.tensorrt.engine_build import (
    TensorRtEngineBuild,
    TensorRtEngineBuildArgs,
)
from inferplane.components.serving.tensorrt.pipeline_engines import (
    PipelineEngineBuild,
    PipelineEngineBuildArgs,
)
from inferplane.components.serving.triton import triton_pipeline
from inferplane.components.serving.triton.response_cache import (
    ResponseCacheStore,
    ResponseCacheStoreArgs,
)
from inferplane.components.serving.triton.triton_config import (
    CONFIG_FILE,
    render_config_pbtxt,
)
from inferplane.components.serving.trtllm.trtllm import render_config_pbtxt as render_trtllm_config
from inferplane.components.serving.trtllm.trtllm_build import (
    TensorRtLlmEngineBuild,
    TensorRtLlmEngineBuildArgs,
)
from inferplane.components.serving.trtllm.trtllm_text import pipeline_files
from inferplane.components.serving.vllm.vllm import (
    chat_template_config_map,
    chat_template_file,
    route_guard_config_map,
    route_guard_data,
)
from inferplane.components.serving.vllm.vllm_compile import (
    VllmCompileCache,
    VllmCompileCacheArgs,
    compiles,
)


@dataclass(frozen=True)
class PodPrerequisites:
    """What `pod_prerequisites` made, for the model's Deployments."""

    before_pods: list[pulumi.Resource]
    """The serving pods are created after these (the given `after` first)."""
    model_uri: str
    """Where the pods load the model from: its source, or the built engine's keyed prefix."""
    engine_uri: str | None
    """The TensorRT or TensorRT-LLM engine's keyed store prefix; None: no engine build."""
    config_text: str | None
    """Triton: every config file in one string, so that a changed file rolls the pods;
    None for vLLM."""
    cache_password_revision: pulumi.Output[str] | None = None
    """A Redis response cache's password revision (`response_cache.PASSWORD_REVISION_ANNOTATION`),
    for the pods' template; None without one."""


def pod_prerequisites(
    name: str,
    parent: pulumi.Resource,
    *,
    env: ServingEnvironment,
    model: ServedModel,
    namespace: str,
    provider: k8s.Provider,
    labels: dict[str, str],
    after: Sequence[pulumi.Resource],
    weights_staging: Mapping[HubSource, WeightsStaging] | None,
) -> PodPrerequisites:
    """Everything the model's pods wait for, as children of `parent` named after `name`
    (see the module docstring); `weights_staging` is the environment's staging of hf://
    sources, and a source missing there gets a ``WeightsStaging`` of its own."""
    ns = namespace
    child = pulumi.ResourceOptions(parent=parent, provider=provider)
    before_pods: list[pulumi.Resource] = list(after)

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
            cloud_identity=True,
            namespace=ns,
            labels=labels,
            opts=child,
        )
    )

    cache = model.response_cache
    cache_revision: pulumi.Output[str] | None = None
    if model.server == "triton" and cache is not None and cache.redis:
        # Triton pings the cache server when it starts: the servers come first.
        store = ResponseCacheStore(
            f"{name}-response-cache",
            ResponseCacheStoreArgs(model, env, ns, provider),
            opts=pulumi.ResourceOptions(parent=parent),
        )
        before_pods += store.ready
        cache_revision = store.password_revision

    # hf:// weights, drafts, adapters and checkpoints come from their staged copies.
    staged = weights_staging or {}
    planned = plan_staging([model])
    staging_jobs: list[pulumi.Resource] = []
    for source in hub_sources(model):
        staging = staged.get(source)
        if staging is None:
            staging = WeightsStaging(
                f"{name}-weights-{source.key[:10]}",
                WeightsStagingArgs(planned[source], env, ns, provider),
                opts=pulumi.ResourceOptions(parent=parent),
            )
        staging_jobs.append(staging.job)
    before_pods += staging_jobs

    # vLLM's chat template: the only file --chat-template names (`vllm.CHAT_TEMPLATE_DIR`),
    # read by the serving pods and the compile-cache Job alike.
    config_maps: list[pulumi.Resource] = []
    template_file = chat_template_file(model)
    if template_file is not None and model.vllm is not None and model.vllm.chat_template:
        config_maps.append(
            k8s.core.v1.ConfigMap(
                f"{name}-chat-template",
                metadata={
                    "name": chat_template_config_map(model),
                    "namespace": ns,
                    "labels": labels,
                },
                data={template_file: model.vllm.chat_template},
                opts=child,
            )
        )
        before_pods += config_maps

    # vLLM's route guard (`route_guard`): the serving pods and the compile-cache Job import it.
    if model.server == "vllm":
        config_maps.append(
            k8s.core.v1.ConfigMap(
                f"{name}-route-guard",
                metadata={
                    "name": route_guard_config_map(model),
                    "namespace": ns,
                    "labels": labels,
                },
                data=route_guard_data(env),
                opts=child,
            )
        )
        before_pods.append(config_maps[-1])

    if compiles(model, env):
        # The serving pods copy the staged cache: they start once it is there.
        compile_cache = VllmCompileCache(
            f"{name}-compile",
            VllmCompileCacheArgs(model, env, ns, provider, after=(*staging_jobs, *config_maps)),
            opts=pulumi.ResourceOptions(parent=parent),
        )
        before_pods.append(compile_cache.job)

    model_uri = model.source.uri
    engine_uri: str | None = None
    config_text = None
    if model.server == "triton":
        if model.tensorrt is not None:
            build = TensorRtEngineBuild(
                f"{name}-engine",
                TensorRtEngineBuildArgs(model, env, ns, provider),
                opts=pulumi.ResourceOptions(parent=parent),
            )
            before_pods.append(build.job)
            engine_uri = model_uri = build.engine_uri
        if model.tensorrt_llm is not None:
            # The build reads an hf:// checkpoint's staged copy: after its staging Job.
            llm_build = TensorRtLlmEngineBuild(
                f"{name}-engine",
                TensorRtLlmEngineBuildArgs(model, env, ns, provider, after=tuple(staging_jobs)),
                opts=pulumi.ResourceOptions(parent=parent, depends_on=list(before_pods)),
            )
            before_pods.append(llm_build.job)
            engine_uri = model_uri = llm_build.engine_uri
            # The engine's config and the text pipeline (ensemble, tokenizer models).
            config_data = {
                CONFIG_FILE: render_trtllm_config(model, env),
                **pipeline_files(model, model.release(env)),
            }
        elif model.pipeline is not None:
            config_data = triton_pipeline.config_files(model)
            if engine_steps(model.pipeline):
                # The serving pods copy the steps' engines: they start after the builds.
                before_pods += PipelineEngineBuild(
                    f"{name}-engine",
                    PipelineEngineBuildArgs(model, env, ns, provider),
                    opts=pulumi.ResourceOptions(parent=parent),
                ).jobs
            if pip_requirements.staged_steps(model):
                # The serving pods install the staged wheels: they start after the Jobs.
                wheels = RequirementsStaging(
                    f"{name}-requirements",
                    RequirementsStagingArgs(model, env, ns, provider),
                    opts=pulumi.ResourceOptions(parent=parent),
                )
                before_pods += wheels.jobs
        else:
            config_data = {CONFIG_FILE: render_config_pbtxt(model, env)}
        # Every file rolls the pods when it changes.
        config_text = "".join(f"{key}\n{config_data[key]}" for key in sorted(config_data))
        before_pods.append(
            k8s.core.v1.ConfigMap(
                f"{name}-triton-config",
                metadata={"name": config_map_name(model), "namespace": ns, "labels": labels},
                data=config_data,
                opts=child,
            )
        )

    return PodPrerequisites(before_pods, model_uri, engine_uri, config_text, cache_revision)
