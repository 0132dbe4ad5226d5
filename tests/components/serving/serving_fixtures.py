"""Helpers of the serving tests: run ModelServers offline, find what they registered, and
vary an environment in one place."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from inferplane.app.offline import RecordedResource, Recording, run_program
from inferplane.blueprint import naming
from inferplane.blueprint.model import Environment, Model
from inferplane.components.serving.model_server import ModelServer, ModelServerArgs

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
    """Run one ModelServer per model (all of `env`'s by default) offline, as the stack does."""

    def program(e: Environment) -> object:
        provider = k8s.Provider("cluster")
        subnets = (
            pulumi.Output.from_input(list(lb_subnet_ids))
            if e.cloud == "aws" and lb_subnet_ids is not None
            else None
        )
        servers = {}
        for name in models or list(e.models):
            server = ModelServer(
                f"{e.blueprint}-{e.name}-{name}",
                ModelServerArgs(
                    env=e,
                    model=e.models[name],
                    namespace=naming.namespace(e.blueprint),
                    provider=provider,
                    lb_subnet_ids=subnets,
                ),
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
