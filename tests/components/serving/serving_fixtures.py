"""Helpers of the serving tests: run ModelServers offline, find what they registered, and
vary an environment in one place."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from inferplane.app.offline import RecordedResource, Recording, run_program
from inferplane.blueprint.model import Environment, Model
from inferplane.components.serving.spec import ServedModel, ServingEnvironment
from inferplane.components.serving.store import store_job
from inferplane.components.stack_serving import (
    model_server,
    served_model,
    serving_environment,
    weights_staging,
)

DEPLOYMENT = "kubernetes:apps/v1:Deployment"
SERVICE = "kubernetes:core/v1:Service"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
SECRET = "kubernetes:core/v1:Secret"
JOB = "kubernetes:batch/v1:Job"
PDB = "kubernetes:policy/v1:PodDisruptionBudget"
NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
SUBNETS = ("subnet-0aaa1111", "subnet-0bbb2222")
"""What `lb_subnet_ids` carries on AWS in these tests (an Output, as the cluster gives it)."""


def serve(
    env: Environment,
    models: Sequence[str] | None = None,
    *,
    lb_subnet_ids: Sequence[str] | None = SUBNETS,
    config: dict[str, str] | None = None,
) -> Recording:
    """Run one ModelServer per model (all of `env`'s by default) offline, as the stack does
    (`stack_serving.model_server`: blueprint mapped to the serving args, errors located),
    with the environment's staging of hf:// sources (`stack_serving.weights_staging`)."""

    def program(e: Environment) -> object:
        provider = k8s.Provider("cluster")
        subnets = (
            pulumi.Output.from_input(list(lb_subnet_ids))
            if e.cloud == "aws" and lb_subnet_ids is not None
            else None
        )
        servers = {}
        staged = weights_staging(f"{e.blueprint}-{e.name}", e, provider)
        for name in models or list(e.models):
            server = model_server(
                f"{e.blueprint}-{e.name}-{name}",
                e,
                e.models[name],
                provider,
                subnets,
                weights_staging=staged,
            )
            pulumi.export(f"{name}.endpoint", server.endpoint)
            pulumi.export(f"{name}.deployment", server.deployment_name)
            pulumi.export(f"{name}.service", server.service_name)
            pulumi.export(f"{name}.lb_service", server.lb_service_name)
            servers[name] = server
        return servers

    return run_program(env, program=program, config=config)


def k8s_object(rec: Recording, type_: str, name: str) -> RecordedResource:
    """The one recorded object of `type_` whose Kubernetes name is `name`."""
    found = [r for r in rec.of_type(type_) if r.get("metadata", "name") == name]
    assert len(found) == 1, f"{len(found)} {type_} named {name!r}"
    return found[0]


def pod_spec(resource: RecordedResource) -> dict[str, Any]:
    spec: dict[str, Any] = resource.get("spec", "template", "spec")
    return spec


def container(resource: RecordedResource, name: str, init: bool = False) -> dict[str, Any]:
    key = "initContainers" if init else "containers"
    found = [c for c in pod_spec(resource).get(key, []) if c["name"] == name]
    assert len(found) == 1, f"no {key[:-1]} {name!r}"
    return found[0]


def with_model(env: Environment, name: str, **changes: Any) -> Environment:
    """`env` with model `name` changed (dataclasses.replace on the Model)."""
    models: dict[str, Model] = dict(env.models)
    models[name] = dataclasses.replace(models[name], **changes)
    return dataclasses.replace(env, models=models)


def with_pool(env: Environment, name: str, **changes: Any) -> Environment:
    pools = dict(env.pools)
    pools[name] = dataclasses.replace(pools[name], **changes)
    return dataclasses.replace(env, pools=pools)


def with_versions(env: Environment, **changes: str) -> Environment:
    return dataclasses.replace(env, versions=dataclasses.replace(env.versions, **changes))


def args_of(env: Environment, model: Model | str) -> tuple[ServingEnvironment, ServedModel]:
    """(environment, model) as the serving functions take them, mapped from a blueprint
    environment and one of its models (or a variant of one) as the stack maps them."""
    found = env.models[model] if isinstance(model, str) else model
    return serving_environment(env), served_model(env, found)


def args_of_mf(env: Environment, model: Model | str) -> tuple[ServedModel, ServingEnvironment]:
    """`args_of`, model first (for `engine_build` and `triton_config`)."""
    serving_env, served = args_of(env, model)
    return served, serving_env


def component_args(env: Environment, name: str) -> dict[str, Any]:
    """``model=`` and ``env=`` of a serving component's args for model `name` of `env`."""
    serving_env, model = args_of(env, name)
    return {"model": model, "env": serving_env}


def job_program(rec: Recording, job: RecordedResource, container_name: str, module: str) -> str:
    """The source of job program `module` as the Job's `container_name` container (an init
    container or the main one) gets it: its scripts ConfigMap is a dependency of the Job,
    holds exactly the shipped module, and is mounted read-only at `store_job.JOBS_DIR`."""
    pod = pod_spec(job)
    (volume,) = [v for v in pod["volumes"] if v["name"] == store_job.SCRIPTS_VOLUME]
    config_map = k8s_object(rec, CONFIG_MAP, volume["configMap"]["name"])
    assert config_map.urn in job.depends_on
    assert config_map.get("immutable") is True
    data = config_map.get("data")
    assert data == {f"{module}.py": store_job.job_source(module)}
    found = [
        c
        for c in [*pod.get("initContainers", []), *pod["containers"]]
        if c["name"] == container_name
    ]
    assert len(found) == 1, container_name
    mounts = found[0]["volumeMounts"]
    assert store_job.scripts_mount() in mounts
    assert store_job.scripts_mount() == {
        "name": "job-scripts",
        "mountPath": "/opt/inferplane/jobs",
        "readOnly": True,
    }
    source: str = data[f"{module}.py"]
    return source
