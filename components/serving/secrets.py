"""A model's secrets (``models.<m>.secrets``): resolved by reference, kept secret end to end.

Each entry names where the value lives — never the value itself:

- ``from_env: VAR`` — read from the environment of the process that runs ``pulumi up``;
- ``from_pulumi_config: key`` — ``pulumi config set --secret key ...`` in the stack;
- ``from_secret_manager: id`` — AWS Secrets Manager (name or ARN) or GCP Secret Manager
  (``projects/<p>/secrets/<name>/versions/<v>``; a blueprint must name the project, which
  must be the environment's own).

Every value is wrapped in `pulumi.Output.secret`, so it is encrypted in the Pulumi state and
masked in previews; it reaches the pods only through Kubernetes Secrets, ``stringData``.
Entry ``hf_token`` is meant for environment variable ``HF_TOKEN`` (`env_var_name`), and how
a container gets a secret depends on what reads it:

- the Hugging Face token (`FILE_VARIABLES`) is read only by the Job that stages a model's
  ``hf://`` sources into the model store (`weights`), from its own Secret
  ``weights-<key>-hub-token`` mounted read-only at `SECRETS_DIR`, with only the file's
  path in the environment. It is never in ``<model>-secrets`` and no serving container
  gets it (`served_secrets`). A file is not inherited by every child process and does not
  show in ``/proc/<pid>/environ`` or crash dumps: huggingface_hub's `get_token` tries
  ``HF_TOKEN`` and then the file at ``HF_TOKEN_PATH`` (huggingface/huggingface_hub
  ``src/huggingface_hub/constants.py``
  ``HF_TOKEN_PATH = ... os.getenv("HF_TOKEN_PATH", os.path.join(HF_HOME, "token"))``;
  ``src/huggingface_hub/utils/_auth.py`` `_get_token_from_file`), since v0.23.0 (#2185);
- every other secret (e.g. an API key a client library reads) is in the model's Secret
  ``<model>-secrets`` and reaches the server as an environment variable
  (``secretKeyRef``): inferplane cannot know whether the process reading it takes a file
  instead. Such a variable keeps the value it had when the container started.

Offline runs (`inferplane plan`/`check`, Pulumi config ``inferplane:offline: true``) have no
credentials and no developer's environment: every value is then a fixed placeholder, so a
plan never depends on, nor contains, a real secret.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Final

import pulumi
import pulumi_aws as aws
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from inferplane.blueprint import secret_refs
from inferplane.blueprint.secret_refs import FILE_VARIABLES, aws_secret_account
from inferplane.components.serving.spec import ServedModel, ServingArgsError, ServingEnvironment
from inferplane.components.serving.spec_parts import ModelSecret

OFFLINE_PLACEHOLDER: Final = "offline-placeholder"
"""The value every secret has in an offline run."""
SECRETS_DIR: Final = "/var/run/secrets/inferplane"
"""Where the staging Job mounts the Hub token (`weights_job`)."""
SECRETS_VOLUME: Final = "secrets"
SECRET_FILE_MODE: Final = 0o440
"""Read-only for the owner and the pod's fsGroup (the containers' gid), nobody else."""


def is_offline() -> bool:
    """True when the stack runs offline (Pulumi config ``inferplane:offline``)."""
    return bool(pulumi.Config("inferplane").get_bool("offline"))


def secret_name(model: str) -> str:
    """Name of the Kubernetes Secret holding the secrets of model `model`."""
    return f"{model}-secrets"


def env_var_name(ref: ModelSecret) -> str:
    """The environment variable a secret appears as in the pod: ``hf_token`` -> ``HF_TOKEN``."""
    return secret_refs.env_var_name(ref.name)


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

    Raises `ServingArgsError` (field ``secrets.<name>.<source>`` of `model`) when
    ``from_env`` names a variable, or ``from_pulumi_config`` a key, that is not set or is
    empty: failing before anything is created beats a pod that starts without its token. A
    Secret Manager value is known only once read, so an empty one (or, on AWS, a secret of
    another account than the deploying one) fails the update then, with the same wording.
    """
    if offline:
        return pulumi.Output.secret(OFFLINE_PLACEHOLDER)
    reader = f"secret {ref.name!r} of model {model!r}"
    state = missing_state(ref)
    if state is not None:
        source = "from_env" if ref.from_env is not None else "from_pulumi_config"
        raise ServingArgsError(
            model,
            ("secrets", ref.name, source),
            missing_problem(ref, state, reader),
            missing_fix(ref),
        )
    if ref.from_env is not None:
        return pulumi.Output.secret(os.environ[ref.from_env])
    if ref.from_pulumi_config is not None:
        return pulumi.Output.secret(str(_config_value(ref.from_pulumi_config)))
    if ref.from_secret_manager is not None:
        problem = f"{missing_problem(ref, 'is empty', reader)}; {missing_fix(ref)}"
        checked = _non_empty(f"{ref.origin}: {problem}" if ref.origin else problem)
        return pulumi.Output.secret(_secret_manager(ref, env, parent, checked))
    raise ValueError(f"secret {ref.name!r} names no source")  # ModelSecret requires one


def missing_state(ref: ModelSecret) -> str | None:
    """``"is not set"`` or ``"is empty"`` when a ``from_env`` / ``from_pulumi_config``
    source has no value now; None when it has one (or the source is a Secret Manager, whose
    value is known only once read)."""
    if ref.from_env is not None:
        value = os.environ.get(ref.from_env)
    elif ref.from_pulumi_config is not None:
        value = _config_value(ref.from_pulumi_config)
    else:
        return None
    if value is None:
        return "is not set"
    return "is empty" if not value.strip() else None


def missing_problem(ref: ModelSecret, state: str, reader: str) -> str:
    """What is wrong when a secret's source has no value (`state`: "is not set", "is
    empty"); `reader` names the secret in the caller's terms."""
    if ref.from_env is not None:
        return (
            f"environment variable {ref.from_env} {state} ({reader} reads it when `pulumi up` runs)"
        )
    if ref.from_pulumi_config is not None:
        return f"Pulumi config {ref.from_pulumi_config} {state} ({reader} reads it)"
    return f"Secret Manager secret {ref.from_secret_manager} {state} ({reader} reads it)"


def missing_fix(ref: ModelSecret) -> str:
    if ref.from_env is not None:
        return (
            f"export {ref.from_env}=... before running pulumi, or store the value "
            "with `pulumi config set --secret` and use from_pulumi_config"
        )
    if ref.from_pulumi_config is not None:
        return f"pulumi config set --secret {ref.from_pulumi_config} ... in the stack"
    return "store a value in it, or point the reference at the secret that holds one"


def _config_value(key: str) -> str | None:
    """``key`` or ``inferplane:key`` (the blueprint layer refuses other namespaces); a bare
    key is read from the project's namespace. Read as plain text, so emptiness can be
    checked before anything runs; the caller wraps it in a Pulumi secret."""
    namespace, _, name = key.rpartition(":")
    config = pulumi.Config(namespace) if namespace else pulumi.Config()
    return config.get(name)


def _non_empty(message: str) -> Callable[[str | None], str]:
    def check(value: str | None) -> str:
        if not value or not value.strip():
            raise pulumi.RunError(message)
        return value

    return check


def _secret_manager(
    ref: ModelSecret,
    env: ServingEnvironment,
    parent: pulumi.Resource | None,
    checked: Callable[[str | None], str],
) -> pulumi.Output[str]:
    secret_id = str(ref.from_secret_manager)
    opts = pulumi.InvokeOutputOptions(parent=parent)
    if env.cloud == "aws":
        return _same_account(ref, opts).apply(
            lambda _: aws.secretsmanager.get_secret_version_output(
                secret_id=secret_id, opts=opts
            ).secret_string.apply(checked)
        )
    secret, version = _gcp_secret(secret_id)
    return gcp.secretmanager.get_secret_version_output(
        secret=secret, version=version, project=env.project, opts=opts
    ).secret_data.apply(checked)


def _same_account(ref: ModelSecret, opts: pulumi.InvokeOutputOptions) -> pulumi.Output[str]:
    """The deploying account, once it is known to own the secret's ARN (which account
    deploys is known only when the program runs, so this is checked then, before the secret
    is read)."""
    account = aws_secret_account(str(ref.from_secret_manager))

    def check(caller: str) -> str:
        if account is not None and account != caller:
            where = ref.origin or f"secret {ref.from_secret_manager}"
            raise pulumi.RunError(
                f"{where}: the secret belongs to AWS account {account}, not the account "
                f"that deploys ({caller}); keep the secret in the environment's own account"
            )
        return caller

    return aws.get_caller_identity_output(opts=opts).account_id.apply(check)


def _gcp_secret(secret_id: str) -> tuple[str, str | None]:
    """``projects/p/secrets/s/versions/3`` -> (``projects/p/secrets/s``, ``3``)."""
    secret, sep, version = secret_id.partition("/versions/")
    return secret, (version or None) if sep else None


def file_secrets(model: ServedModel) -> list[ModelSecret]:
    """The secrets of `model` read from files (`FILE_VARIABLES`): the Hugging Face token,
    which only the staging Job of an hf:// source gets (`weights`)."""
    return [ref for ref in model.secrets if env_var_name(ref) in FILE_VARIABLES]


def served_secrets(model: ServedModel) -> list[ModelSecret]:
    """The secrets of `model` its serving pods get: every one but the Hub token."""
    return [ref for ref in model.secrets if env_var_name(ref) not in FILE_VARIABLES]


def secret_env(model: ServedModel) -> list[dict[str, Any]]:
    """The server container's ``env`` entries (``secretKeyRef`` into ``<model>-secrets``)
    of `served_secrets` (empty without any). The Hugging Face token is left out: a serving
    pod never gets it, only the Job that stages hf:// weights (`weights`).

    Raises `ServingArgsError` when two entries would set the same variable (for the Hub
    token, the variable naming its file).
    """
    out: list[dict[str, Any]] = []
    owner: dict[str, str] = {}
    for ref in model.secrets:
        name = env_var_name(ref)
        variable = FILE_VARIABLES.get(name, name)
        if variable in owner:
            raise ServingArgsError(
                model.name,
                ("secrets", ref.name),
                f"secrets {owner[variable]!r} and {ref.name!r} both set environment "
                f"variable {variable}",
                "keep one of them",
            )
        owner[variable] = ref.name
        if name not in FILE_VARIABLES:
            out.append(
                {
                    "name": name,
                    "valueFrom": {
                        "secretKeyRef": {"name": secret_name(model.name), "key": ref.name}
                    },
                }
            )
    return out


def model_secret(
    name: str,
    *,
    env: ServingEnvironment,
    model: ServedModel,
    namespace: str,
    labels: dict[str, str],
    opts: pulumi.ResourceOptions,
) -> k8s.core.v1.Secret | None:
    """The Kubernetes Secret of `model`'s `served_secrets`, or None when it has none.

    The Hub token is never in it: only the staging Job's own Secret holds that
    (`weights_job`). `opts` must carry the parent and provider. Values go in
    ``stringData`` as Pulumi secrets. A rotated value updates the Secret in place; running
    pods keep the value they started with in environment variables until they are restarted.
    """
    served = served_secrets(model)
    if not served:
        return None
    offline = is_offline()
    data = {
        ref.name: secret_value(ref, env, model=model.name, offline=offline, parent=opts.parent)
        for ref in served
    }
    return k8s.core.v1.Secret(
        name,
        metadata={"name": secret_name(model.name), "namespace": namespace, "labels": labels},
        type="Opaque",
        string_data=data,
        opts=pulumi.ResourceOptions.merge(
            opts, pulumi.ResourceOptions(additional_secret_outputs=["data", "stringData"])
        ),
    )
