"""The storage-CLI containers that copy to and from the model store: the AWS CLI for S3
(aws) and S3-compatible stores (kubernetes), gcloud for GCS (gcp); their image, their
environment (region, project, and on kubernetes the endpoint and the pod role's keys), and
the shell commands that copy, sync and test for objects.

What a Job writes (an engine, a staged repository, a compile cache) is published by
attempt (`publish_attempt`): each pod uploads under a folder of its own,
``<prefix>attempt-<pod uid>/``, and then writes the marker `ATTEMPT_MARKER` naming that
folder; readers follow the marker (`resolve_attempt`). No object is ever written twice,
so a Job retried after a pod died mid-upload succeeds where the writer may only create
objects: on GCS the writers hold ``roles/storage.objectCreator``, which has
``storage.objects.create`` but not ``storage.objects.delete``, and "to replace existing
objects, both storage.objects.create and storage.objects.delete permissions are required"
(https://cloud.google.com/storage/docs/access-control/iam-permissions,
https://cloud.google.com/storage/docs/access-control/iam-roles). A dead attempt's folder
stays behind, unread. These containers run the cloud CLI images, whose shell is the one
language both have: the AWS CLI image is Amazon Linux 2 with the CLI's own frozen
interpreter and no ``python3`` (aws/aws-cli ``docker/Dockerfile``)."""

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


ATTEMPT_MARKER: Final = "inferplane-complete-attempt"
"""Written under a published prefix after every file of one attempt; its content is the
name of the attempt's folder (``attempt-<pod uid>``). A prefix without it holds nothing."""
ATTEMPT_ENV: Final = {"name": "POD_UID", "valueFrom": {"fieldRef": {"fieldPath": "metadata.uid"}}}
"""The pod's UID, unique to each pod a Job creates (a retried Job's pod included), as
``$POD_UID`` (downward API: https://kubernetes.io/docs/concepts/workloads/pods/downward-api/,
``metadata.uid``)."""
GCS_NO_COMPOSITE: Final = {
    "name": "CLOUDSDK_STORAGE_PARALLEL_COMPOSITE_UPLOAD_ENABLED",
    "value": "False",
}
"""gcloud's ``storage/parallel_composite_upload_enabled``: unset (None), ``gcloud storage cp``
uploads a large file as temporary objects, composes them and deletes them
(https://cloud.google.com/storage/docs/parallel-composite-uploads), and an object creator
may not delete. Every gcloud property is also read from ``CLOUDSDK_<SECTION>_<PROPERTY>``
(https://cloud.google.com/sdk/docs/properties)."""

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
            GCS_NO_COMPOSITE,
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


def store_read(env: ServingEnvironment, uri: str) -> str:
    """Shell command printing object `uri` (a shell word) on stdout: ``aws s3 cp <uri> -``
    ("Downloading an S3 object as a local file stream",
    https://docs.aws.amazon.com/cli/latest/reference/s3/cp.html) or ``gcloud storage cat``
    (https://cloud.google.com/sdk/gcloud/reference/storage/cat)."""
    if s3_cli(env):
        return f"aws s3 cp --only-show-errors {uri} -"
    return f"gcloud storage cat {uri}"


def marker_uri(prefix_variable: str) -> str:
    """Shell word of the attempt marker under the prefix in ``$<prefix_variable>``."""
    return f'"${{{prefix_variable}}}{ATTEMPT_MARKER}"'


def published(env: ServingEnvironment, prefix_variable: str) -> str:
    """Shell condition: an attempt under ``$<prefix_variable>`` (ending in ``/``) is
    complete."""
    return store_exists(env, marker_uri(prefix_variable))


def publish_attempt(
    env: ServingEnvironment, prefix_variable: str, upload: str, work_dir: str, what: str
) -> list[str]:
    """Shell lines that publish one attempt under ``$<prefix_variable>`` (ending in
    ``/``): `upload`, a command that writes under ``"$ATTEMPT_URI"`` (this attempt's
    folder, ending in ``/``, never written before), then the marker naming the folder.
    Should the marker be refused because another attempt wrote it first (a creator may
    not overwrite; on S3 the later marker wins, naming a complete folder too), the
    prefix is complete and the attempt ends well. The pod needs `ATTEMPT_ENV`."""
    local = f'"{work_dir}/{ATTEMPT_MARKER}"'
    marker = marker_uri(prefix_variable)
    return [
        'attempt="attempt-$POD_UID"',
        f'ATTEMPT_URI="${{{prefix_variable}}}$attempt/"',
        upload,
        f'printf "%s\\n" "$attempt" > {local}',
        f"if ! {store_copy(env, local, marker)}; then",
        f"  if {store_exists(env, marker)}; then",
        f'    echo "{what} already published at ${prefix_variable} by another attempt"',
        "    exit 0",
        "  fi",
        "  exit 1",
        "fi",
        f'echo "{what} published at $ATTEMPT_URI"',
    ]


def resolve_attempt(env: ServingEnvironment, prefix_variable: str, what: str) -> list[str]:
    """Shell lines that set ``$ATTEMPT_URI`` to the folder (ending in ``/``) the marker under
    ``$<prefix_variable>`` names, or stop: no marker means no complete copy, and a marker
    naming anything but ``attempt-<uid>`` is refused rather than followed."""
    bad = f'echo "error: the marker {ATTEMPT_MARKER} under ${prefix_variable} names no attempt"'
    return [
        f'if ! attempt="$({store_read(env, marker_uri(prefix_variable))})"; then',
        f'  echo "error: no complete {what} under ${prefix_variable} (no {ATTEMPT_MARKER})" >&2',
        "  exit 1",
        "fi",
        'case "$attempt" in',
        f"  attempt-*[!0-9a-f-]* | attempt-) {bad} >&2; exit 1 ;;",
        "  attempt-*) ;;",
        f"  *) {bad} >&2; exit 1 ;;",
        "esac",
        f'ATTEMPT_URI="${{{prefix_variable}}}$attempt/"',
    ]


def sync_published(
    env: ServingEnvironment, prefix_variable: str, target: str, what: str, by_attempt: bool
) -> list[str]:
    """Shell lines copying the prefix in ``$<prefix_variable>`` into directory `target`
    (a shell word): the folder its marker names when it is published `by_attempt` (a
    Job's output), else the prefix itself (a store URI the blueprint gave)."""
    if not by_attempt:
        return [store_sync(env, f'"${prefix_variable}"', target)]
    return [
        *resolve_attempt(env, prefix_variable, what),
        store_sync(env, '"$ATTEMPT_URI"', target),
    ]


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
