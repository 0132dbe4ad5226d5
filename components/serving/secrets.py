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
from typing import Any, Final

import pulumi
import pulumi_aws as aws
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from inferplane.components.serving.spec import (
    ModelSecret,
    ServedModel,
    ServingArgsError,
    ServingEnvironment,
)

OFFLINE_PLACEHOLDER: Final = "offline-placeholder"
"""The value every secret has in an offline run."""


def is_offline() -> bool:
    """True when the stack runs offline (Pulumi config ``inferplane:offline``)."""
    return bool(pulumi.Config("inferplane").get_bool("offline"))


def secret_name(model: ServedModel) -> str:
    """Name of the Kubernetes Secret holding one model's secrets."""
    return f"{model.name}-secrets"


def env_var_name(ref: ModelSecret) -> str:
    """The environment variable a secret appears as in the pod: ``hf_token`` -> ``HF_TOKEN``."""
    return re.sub(r"[^A-Za-z0-9_]", "_", ref.name).upper()


def secret_value(
    ref: ModelSecret,
    env: ServingEnvironment,
    *,
    model: str,
    offline: bool,
    parent: pulumi.Resource | None = None,
) -> pulumi.Output[str]:
    """The value of `ref`, always as a Pulumi secret.

    `parent` (the model's component) lends its cloud provider to the Secret Manager lookup.

    Raises `ServingArgsError` (field ``secrets.<name>.from_env`` of `model`) when
    ``from_env`` names a variable that is not set: failing before anything is created beats
    a pod that starts without its token.
    """
    if offline:
        return pulumi.Output.secret(OFFLINE_PLACEHOLDER)
    if ref.from_env is not None:
        value = os.environ.get(ref.from_env)
        if value is None:
            raise ServingArgsError(
                model,
                ("secrets", ref.name, "from_env"),
                missing_env_problem(ref.from_env, f"secret {ref.name!r} of model {model!r}"),
                missing_env_fix(ref.from_env),
            )
        return pulumi.Output.secret(value)
    if ref.from_pulumi_config is not None:
        return pulumi.Output.secret(_config_secret(ref.from_pulumi_config))
    if ref.from_secret_manager is not None:
        return pulumi.Output.secret(_secret_manager(ref.from_secret_manager, env, parent))
    raise ValueError(f"secret {ref.name!r} names no source")  # ModelSecret requires one


def missing_env_problem(variable: str, reader: str) -> str:
    """What is wrong when a ``from_env`` secret's variable is not set; `reader` names the
    secret in the caller's terms."""
    return f"environment variable {variable} is not set ({reader} reads it when `pulumi up` runs)"


def missing_env_fix(variable: str) -> str:
    return (
        f"export {variable}=... before running pulumi, or store the value "
        "with `pulumi config set --secret` and use from_pulumi_config"
    )


def _config_secret(key: str) -> pulumi.Output[str]:
    """``key`` or ``namespace:key``; a bare key is read from the project's namespace."""
    namespace, _, name = key.rpartition(":")
    config = pulumi.Config(namespace) if namespace else pulumi.Config()
    return config.require_secret(name)


def _secret_manager(
    secret_id: str, env: ServingEnvironment, parent: pulumi.Resource | None
) -> pulumi.Output[str]:
    opts = pulumi.InvokeOutputOptions(parent=parent)
    if env.cloud == "aws":
        return aws.secretsmanager.get_secret_version_output(
            secret_id=secret_id, opts=opts
        ).secret_string
    secret, version = _gcp_secret(secret_id)
    return gcp.secretmanager.get_secret_version_output(
        secret=secret, version=version, project=env.project, opts=opts
    ).secret_data


def _gcp_secret(secret_id: str) -> tuple[str, str | None]:
    """``projects/p/secrets/s/versions/3`` -> (``projects/p/secrets/s``, ``3``)."""
    secret, sep, version = secret_id.partition("/versions/")
    return secret, (version or None) if sep else None


def secret_env(model: ServedModel) -> list[dict[str, Any]]:
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
    env: ServingEnvironment,
    model: ServedModel,
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
        ref.name: secret_value(ref, env, model=model.name, offline=offline, parent=opts.parent)
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
