"""The storage-CLI containers that copy to and from the model store: the AWS CLI for S3
(aws) and S3-compatible stores (kubernetes), gcloud for GCS (gcp); their image, their
environment (region, project, and on kubernetes the endpoint and the pod role's keys), and
the shell commands that copy, sync and test for objects."""

from __future__ import annotations

from typing import Final

from inferplane.blueprint import defaults
from inferplane.components.serving.containers import (
    HOME,
    Manifest,
    container_security_context,
    mount,
)
from inferplane.components.serving.spec import ServingEnvironment


def s3_cli(env: ServingEnvironment) -> bool:
    """Whether the store is S3 (AWS) or S3-compatible (kubernetes): the AWS CLI copies."""
    return env.cloud in ("aws", "kubernetes")


def store_image(env: ServingEnvironment) -> str:
    return defaults.AWS_CLI_IMAGE if s3_cli(env) else defaults.GCLOUD_IMAGE


STORE_KEY_VARIABLES: Final = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
"""The keys of a kubernetes environment's credential Secrets, and the variables the AWS CLI
reads them from (https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-envvars.html)."""


def store_credentials(env: ServingEnvironment, role: str) -> list[Manifest]:
    """A kubernetes environment's store endpoint and `role`'s keys (`role`: the pod's
    ServiceAccount), as container variables. The keys come from the existing Secret by
    ``secretKeyRef``: their values never pass through the blueprint, Pulumi or its state.

    ``AWS_ENDPOINT_URL`` sends every request of the AWS CLI v2 to the store
    (https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-endpoints.html, "Set
    global endpoint for all AWS services"; honoured since AWS CLI 2.13.0, aws/aws-cli
    ``CHANGELOG.rst``; `defaults.AWS_CLI_IMAGE` is 2.27.50), so the copy commands stay the
    same ``aws s3 ...`` as on AWS. A role without a Secret (a pod kind the blueprint never
    runs; validation requires the Secret of every role it uses) raises ValueError."""
    if env.cloud != "kubernetes":
        return []
    secret = env.store_secrets.get(role)
    if not secret or not env.store_endpoint:
        raise ValueError(
            f"a kubernetes environment's {role} pods need store_endpoint and a Secret for "
            f"{role} in store_secrets"
        )
    keys = [
        {"name": key, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}}
        for key in STORE_KEY_VARIABLES
    ]
    return [{"name": "AWS_ENDPOINT_URL", "value": env.store_endpoint}, *keys]


def store_env(env: ServingEnvironment, role: str) -> list[Manifest]:
    """Environment of a storage-CLI container of a pod running as ServiceAccount `role`:
    region/project, config dirs under $HOME, and on kubernetes the store's endpoint and
    credentials (`store_credentials`)."""
    out = [{"name": "HOME", "value": HOME}]
    if s3_cli(env):
        out += [
            {"name": "AWS_REGION", "value": env.region},
            {"name": "AWS_DEFAULT_REGION", "value": env.region},
            *store_credentials(env, role),
        ]
    else:
        out += [
            {"name": "CLOUDSDK_CONFIG", "value": f"{HOME}/gcloud"},
            {"name": "CLOUDSDK_CORE_DISABLE_PROMPTS", "value": "1"},
        ]
        if env.project:
            out.append({"name": "CLOUDSDK_CORE_PROJECT", "value": env.project})
    return out


def store_copy(env: ServingEnvironment, src: str, dst: str) -> str:
    """Shell command copying one object (`src`, `dst`: shell words, e.g. ``"$URI"``)."""
    if s3_cli(env):
        return f"aws s3 cp --only-show-errors {src} {dst}"
    return f"gcloud storage cp {src} {dst}"


def store_sync(env: ServingEnvironment, src: str, dst: str) -> str:
    """Shell command copying every object under prefix `src` into directory `dst`."""
    if s3_cli(env):
        return f"aws s3 sync --only-show-errors {src} {dst}"
    return f"gcloud storage rsync --recursive {src} {dst}"


def store_exists(env: ServingEnvironment, uri: str) -> str:
    """Shell condition: true when object `uri` (a shell word) exists."""
    if s3_cli(env):
        return (
            f'( u={uri}; u="${{u#s3://}}"; '
            'aws s3api head-object --bucket "${u%%/*}" --key "${u#*/}" >/dev/null 2>&1 )'
        )
    return f"gcloud storage objects describe {uri} >/dev/null 2>&1"


def store_container(
    env: ServingEnvironment,
    role: str,
    name: str,
    script: list[str],
    extra_env: list[Manifest],
    mounts: list[Manifest],
) -> Manifest:
    """A storage-CLI container (fetch or upload), hardened like the servers, in a pod that
    runs as ServiceAccount `role` (`naming.MODEL_READER_SA`, ...)."""
    return {
        "name": name,
        "image": store_image(env),
        "command": script,
        "env": store_env(env, role) + extra_env,
        "resources": {
            "requests": {"cpu": "1", "memory": "1Gi"},
            "limits": {"memory": "2Gi"},
        },
        "securityContext": container_security_context(),
        "volumeMounts": [mount("home", HOME), mount("tmp", "/tmp"), *mounts],
    }
