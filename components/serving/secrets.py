"""A model's secrets (``models.<m>.secrets``): resolved by reference, kept secret end to end.

Each entry names where the value lives — never the value itself:

- ``from_env: VAR`` — read from the environment of the process that runs ``pulumi up``;
- ``from_pulumi_config: key`` — ``pulumi config set --secret key ...`` in the stack;
- ``from_secret_manager: id`` — AWS Secrets Manager (name or ARN) or GCP Secret Manager
  (``name``, ``projects/<p>/secrets/<name>`` or ``.../versions/<v>``; latest by default).

Every value is wrapped in `pulumi.Output.secret`, so it is encrypted in the Pulumi state and
masked in previews; it reaches the pods only through one Kubernetes Secret
(``<model>-secrets``, ``stringData``) read by ``env[].valueFrom.secretKeyRef``. The pod sees
entry ``hf_token`` as environment variable ``HF_TOKEN`` (`env_var_name`).

Offline runs (`inferplane plan`/`check`, Pulumi config ``inferplane:offline: true``) have no
credentials and no developer's environment: every value is then a fixed placeholder, so a
plan never depends on, nor contains, a real secret.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any, Final

import pulumi
import pulumi_aws as aws
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from inferplane.blueprint.errors import BlueprintError, Diagnostic, format_path
from inferplane.blueprint.model import Environment, Model, SecretRef
from inferplane.blueprint.secret_refs import aws_secret_account

OFFLINE_PLACEHOLDER: Final = "offline-placeholder"
"""The value every secret has in an offline run."""


def is_offline() -> bool:
    """True when the stack runs offline (Pulumi config ``inferplane:offline``)."""
    return bool(pulumi.Config("inferplane").get_bool("offline"))


def secret_name(model: Model) -> str:
    """Name of the Kubernetes Secret holding one model's secrets."""
    return f"{model.name}-secrets"


def env_var_name(ref: SecretRef) -> str:
    """The environment variable a secret appears as in the pod: ``hf_token`` -> ``HF_TOKEN``."""
    return re.sub(r"[^A-Za-z0-9_]", "_", ref.name).upper()


def secret_value(
    ref: SecretRef,
    env: Environment,
    *,
    offline: bool,
    parent: pulumi.Resource | None = None,
) -> pulumi.Output[str]:
    """The value of `ref`, always as a Pulumi secret.

    `parent` (the model's component) lends its cloud provider to the Secret Manager lookup.

    Raises BlueprintError (pointing at the blueprint entry) when ``from_env`` names a
    variable that is not set or empty, or ``from_pulumi_config`` a key that is not set or
    empty: failing before anything is created beats a pod that starts without its token. A
    Secret Manager value is known only once read, so an empty one (or, on AWS, a secret of
    another account than the deploying one) fails the update then, with the same message.
    """
    if offline:
        return pulumi.Output.secret(OFFLINE_PLACEHOLDER)
    if ref.from_env is not None:
        value = os.environ.get(ref.from_env)
        if value is None:
            raise BlueprintError([_missing(ref, env, "from_env", "is not set")])
        if not value.strip():
            raise BlueprintError([_missing(ref, env, "from_env", "is empty")])
        return pulumi.Output.secret(value)
    if ref.from_pulumi_config is not None:
        return pulumi.Output.secret(_config_secret(ref, env))
    if ref.from_secret_manager is not None:
        return pulumi.Output.secret(_secret_manager(ref, env, parent))
    raise ValueError(f"secret {ref.name!r} names no source")  # the schema requires one


def _missing(ref: SecretRef, env: Environment, field: str, what: str) -> Diagnostic:
    """The diagnostic of a secret whose source has no value, at the blueprint entry."""
    where = (*ref.path, field)
    secret = format_path(ref.path)
    if field == "from_env":
        message = (
            f"environment variable {ref.from_env} {what} (secret {secret} reads it when "
            "`pulumi up` runs)"
        )
        hint = (
            f"export {ref.from_env}=... before running pulumi, or store the value with "
            "`pulumi config set --secret` and use from_pulumi_config"
        )
    elif field == "from_pulumi_config":
        message = f"Pulumi config {ref.from_pulumi_config} {what} (secret {secret} reads it)"
        hint = f"pulumi config set --secret {ref.from_pulumi_config} ... in the stack"
    else:
        message = f"Secret Manager secret {ref.from_secret_manager} {what} (secret {secret})"
        hint = "store a value in it, or point the reference at the secret that holds one"
    return Diagnostic(env.locate(where), env.source_path(where), message, hint)


def _config_secret(ref: SecretRef, env: Environment) -> str:
    """``key`` or ``inferplane:key`` (the blueprint layer refuses other namespaces); a bare
    key is read from the project's namespace. Read as plain text here and wrapped in a
    Pulumi secret by the caller, so it can be checked for emptiness before anything runs."""
    key = str(ref.from_pulumi_config)
    namespace, _, name = key.rpartition(":")
    config = pulumi.Config(namespace) if namespace else pulumi.Config()
    value = config.get(name)
    if value is None:
        raise BlueprintError([_missing(ref, env, "from_pulumi_config", "is not set")])
    if not value.strip():
        raise BlueprintError([_missing(ref, env, "from_pulumi_config", "is empty")])
    return value


def _non_empty(ref: SecretRef, env: Environment) -> Callable[[str | None], str]:
    def check(value: str | None) -> str:
        if not value or not value.strip():
            raise pulumi.RunError(_missing(ref, env, "from_secret_manager", "is empty").format())
        return value

    return check


def _secret_manager(
    ref: SecretRef, env: Environment, parent: pulumi.Resource | None
) -> pulumi.Output[str]:
    secret_id = str(ref.from_secret_manager)
    opts = pulumi.InvokeOutputOptions(parent=parent)
    if env.cloud == "aws":
        return _same_account(ref, env, opts).apply(
            lambda _: aws.secretsmanager.get_secret_version_output(
                secret_id=secret_id, opts=opts
            ).secret_string.apply(_non_empty(ref, env))
        )
    # The blueprint layer has already required projects/<env.project>/... (semantic).
    secret, version = _gcp_secret(secret_id)
    return gcp.secretmanager.get_secret_version_output(
        secret=secret, version=version, project=env.project, opts=opts
    ).secret_data.apply(_non_empty(ref, env))


def _same_account(
    ref: SecretRef, env: Environment, opts: pulumi.InvokeOutputOptions
) -> pulumi.Output[str]:
    """The deploying account, once it is known to own the secret's ARN (the blueprint names
    no AWS account, so this is checked when the program runs, before the secret is read)."""
    account = aws_secret_account(str(ref.from_secret_manager))

    def check(caller: str) -> str:
        if account is not None and account != caller:
            where = (*ref.path, "from_secret_manager")
            raise pulumi.RunError(
                Diagnostic(
                    env.locate(where),
                    env.source_path(where),
                    f"the secret belongs to AWS account {account}, not the account that "
                    f"deploys ({caller})",
                    "keep the secret in the environment's own account",
                ).format()
            )
        return caller

    return aws.get_caller_identity_output(opts=opts).account_id.apply(check)


def _gcp_secret(secret_id: str) -> tuple[str, str | None]:
    """``projects/p/secrets/s/versions/3`` -> (``projects/p/secrets/s``, ``3``)."""
    secret, sep, version = secret_id.partition("/versions/")
    return secret, (version or None) if sep else None


def secret_env(model: Model) -> list[dict[str, Any]]:
    """The container ``env`` entries that expose a model's secrets (empty without any)."""
    return [
        {
            "name": env_var_name(ref),
            "valueFrom": {"secretKeyRef": {"name": secret_name(model), "key": ref.name}},
        }
        for ref in model.secrets
    ]


def model_secret(
    name: str,
    *,
    env: Environment,
    model: Model,
    namespace: str,
    labels: dict[str, str],
    opts: pulumi.ResourceOptions,
) -> k8s.core.v1.Secret | None:
    """The Kubernetes Secret of `model`'s secrets, or None when it has none.

    `opts` must carry the parent and provider. Values go in ``stringData`` as Pulumi
    secrets. A rotated value updates the Secret in place; running pods keep the value they
    started with (environment variables are read at start) until they are restarted.
    """
    if not model.secrets:
        return None
    offline = is_offline()
    data = {
        ref.name: secret_value(ref, env, offline=offline, parent=opts.parent)
        for ref in model.secrets
    }
    return k8s.core.v1.Secret(
        name,
        metadata={"name": secret_name(model), "namespace": namespace, "labels": labels},
        type="Opaque",
        string_data=data,
        opts=pulumi.ResourceOptions.merge(
            opts, pulumi.ResourceOptions(additional_secret_outputs=["data", "stringData"])
        ),
    )
