"""Secret references (``models.<m>.secrets``, Alertmanager receivers' credentials) stay
within what the model may read: not the deploy runner's credentials, not another Pulumi
config namespace, not another project's or cloud's secrets, and never under a name whose
environment variable changes how the server runs (the lists are in `secret_refs`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inferplane.blueprint import secret_refs
from inferplane.blueprint.checks.semantic_env import EnvView
from inferplane.blueprint.errors import YamlPath


def check_secret_refs(env: EnvView) -> None:
    """Secret references stay within the model's own secrets (see `secret_refs`)."""
    for model_name, model in (env.data.get("models") or {}).items():
        owner: dict[str, str] = {}
        for name, ref in (model.get("secrets") or {}).items():
            path: YamlPath = ("models", model_name, "secrets", name)
            _secret_name(env, path, name)
            variable = secret_refs.container_variable(name)
            if variable in owner:
                env.error(
                    path,
                    f"secrets {owner[variable]!r} and {name!r} both set environment variable "
                    f"{variable} in the model's container",
                    "keep one of them",
                )
            owner.setdefault(variable, name)
            _secret_sources(env, path, ref)
    # Alertmanager receivers' credentials are read the same way, by the same runner.
    alerts = (env.data.get("observability") or {}).get("alerts") or {}
    for i, receiver in enumerate(alerts.get("receivers") or []):
        for integration, field, _ in secret_refs.RECEIVER_SECRETS:
            ref = (receiver.get(integration) or {}).get(field)
            if ref is not None:
                _secret_sources(
                    env, ("observability", "alerts", "receivers", i, integration, field), ref
                )


def _secret_sources(env: EnvView, path: YamlPath, ref: Mapping[str, Any]) -> None:
    """The runner's credentials, other config namespaces and other accounts stay out."""
    if "from_env" in ref:
        _secret_from_env(env, (*path, "from_env"), ref["from_env"])
    if "from_pulumi_config" in ref:
        _secret_from_config(env, (*path, "from_pulumi_config"), ref["from_pulumi_config"])
    if "from_secret_manager" in ref:
        _secret_owner(env, (*path, "from_secret_manager"), ref["from_secret_manager"])


def _secret_name(env: EnvView, path: YamlPath, name: str) -> None:
    variable = secret_refs.env_var_name(name)
    found = secret_refs.shadowed(variable)
    if found:
        env.error(
            path,
            f"secret {name!r} becomes the environment variable {variable} in the server's "
            f"container, which {found[1]} ({found[0]})",
            "rename the secret after the token it holds, e.g. hf_token",
        )


def _secret_from_env(env: EnvView, path: YamlPath, variable: str) -> None:
    found = secret_refs.runner_credential(variable)
    if found:
        env.error(
            path,
            f"{variable} is a credential of the runner that deploys ({found[0]}: {found[1]}); "
            "a model never receives it",
            "give the model a token of its own in a variable of its own (e.g. HF_TOKEN), or "
            "use from_pulumi_config or from_secret_manager",
        )


def _secret_from_config(env: EnvView, path: YamlPath, key: str) -> None:
    namespace = secret_refs.config_namespace(key)
    if namespace != secret_refs.PROJECT_NAMESPACE:
        env.error(
            path,
            f"{key} reads the Pulumi config namespace {namespace!r}; secrets come only from "
            f"the project's own namespace {secret_refs.PROJECT_NAMESPACE!r}",
            f"write the key without a namespace, or as {secret_refs.PROJECT_NAMESPACE}:<key>",
        )


def _secret_owner(env: EnvView, path: YamlPath, secret_id: str) -> None:
    cloud = env.spec["cloud"]
    project = secret_refs.gcp_secret_project(secret_id)
    if cloud == "aws" and project is not None:
        env.error(
            path,
            "a GCP Secret Manager secret cannot be read by an aws environment",
            "use an AWS Secrets Manager ARN in the environment's own account",
        )
    elif cloud == "gcp" and project is None:
        env.error(
            path,
            "an AWS Secrets Manager secret cannot be read by a gcp environment",
            f"use projects/{env.spec['project']}/secrets/<secret>/versions/<version>",
        )
    elif cloud == "gcp" and project != env.spec["project"]:
        env.error(
            path,
            f"the secret belongs to project {project!r}, not the environment's project "
            f"{env.spec['project']!r}",
            f"keep the secret in {env.spec['project']}: "
            f"projects/{env.spec['project']}/secrets/<secret>/versions/<version>",
        )
