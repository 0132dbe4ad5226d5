"""``hf://`` weights staged into the model store: one Job per repository and revision.

No serving pod talks to the Hugging Face hub. Every ``hf://org/name@revision`` an
environment uses — a model's weights, an EAGLE draft model, a LoRA adapter, a TensorRT-LLM
checkpoint — is copied once into the environment's model store, at

    <model_store>/.inferplane/hub/<org>/<name>/<revision>/

(`staged_uri`; a revision holding ``/``, e.g. ``refs/pr/1``, becomes one path segment
``rev-<hash>``), by a Job ``weights-<key[:10]>`` keyed by repository and revision
(`HubSource.key`). Two models of one environment naming the same repository and revision
share one Job. Replicas then copy the staged directory from the same-region store exactly
as they copy an s3:// or gs:// source (`vllm.vllm_fetch_container`), with the hub offline.

The pod (all containers hardened like the servers):

- init ``check-staged`` (cloud CLI): the completion marker `COMPLETE_MARKER` exists under
  the staged prefix -> every later step is a no-op, so a re-run costs one request;
- init ``download`` (the pinned vLLM image, which ships huggingface_hub as a vLLM
  dependency): ``snapshot_download(repo_id, revision=, local_dir=)`` (huggingface/
  huggingface_hub ``src/huggingface_hub/_snapshot_download.py``); it alone holds the Hub
  token, as the file ``HF_TOKEN_PATH`` names (`secrets`), from the Secret
  ``weights-<key[:10]>-hub-token`` this component writes from the token reference of the
  first model (in blueprint order) that uses the source and has one. ``local_dir`` keeps
  huggingface_hub's download metadata in ``<local_dir>/.cache/huggingface/``; it is removed
  before the upload;
- ``upload`` (cloud CLI, ServiceAccount ``weights-stager``, which may write only under
  the hub prefix, `identity`): ``aws s3 sync`` / ``gcloud storage rsync --recursive
  --no-clobber`` (objects already there are skipped, so a retried upload never needs to
  overwrite, which an object creator may not do on GCS:
  https://cloud.google.com/sdk/gcloud/reference/storage/rsync), then the marker, last.

The pod runs on a node of the GPU pool of the first model that uses the source, without
a GPU: the pool's disk (``disk_gib``) is sized for its models' weights, which a system
node's is not, and a serving replica needs that node right after. NetworkPolicy
``weights-<key[:10]>``: no ingress; egress to DNS and TCP 443 outside the cluster and the
VPC — the hub (huggingface.co and its CDN) and the store alike, since a NetworkPolicy
cannot tell public addresses apart (`network_policies`). The serving pods keep that
same 443 rule for the store: what keeps them off the hub is that they have no token, no
``hf://`` argument, and ``HF_HUB_OFFLINE=1``.

Streaming instead of copying: vLLM's ``--load-format runai_streamer`` reads safetensors
from ``s3://``/``gs://`` directly. It is not used: the stored ``docker/Dockerfile`` of
vllm-project/vllm (commit 0000977e, before v0.10.2) installs ``runai-model-streamer
runai-model-streamer[s3]`` into the ``vllm-openai`` image — no ``gcs`` extra — and the
v0.10.2 tag's Dockerfile was not read, so GKE would need the copy anyway; one path, the
copy, serves both clouds.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint import defaults, naming
from inferplane.blueprint.model import ModelSource
from inferplane.components.serving.containers import (
    HOME,
    MODELS_DIR,
    WORK_DIR,
    Manifest,
    container_security_context,
    empty_dir,
    gpu_placement,
    mount,
    pod_security_context,
    service_account,
    shell,
    store_container,
    store_copy,
    store_exists,
)
from inferplane.components.serving.engine_build import build_job
from inferplane.components.serving.network_policies import isolated_store_client_spec
from inferplane.components.serving.secrets import (
    SECRET_FILE_MODE,
    SECRETS_DIR,
    SECRETS_VOLUME,
    file_secrets,
    is_offline,
    secret_value,
)
from inferplane.components.serving.spec import (
    ModelSecret,
    ServedModel,
    ServingArgsError,
    ServingEnvironment,
    ServingPool,
)

STAGING_TIMEOUT: Final = "180m"
"""How long `pulumi up` waits for one staging Job: a 140 GB (70B bf16) repository is
downloaded from the hub and uploaded to the store; the Deployments wait for it."""
COMPLETE_MARKER: Final = "inferplane-staging-complete"
"""Written under the staged prefix after every file: the copy is complete when it exists."""
SNAPSHOT_DIR: Final = f"{WORK_DIR}/snapshot"
SKIP_FILE: Final = f"{WORK_DIR}/already-staged"
TOKEN_KEY: Final = "hf_token"
COMPONENT: Final = "weights-staging"
COMPONENT_LABEL: Final = "app.kubernetes.io/component"
KEY_LABEL: Final = "inferplane.dev/weights-key"
REPO_ANNOTATION: Final = "inferplane.dev/hf-repo"
REVISION_ANNOTATION: Final = "inferplane.dev/hf-revision"
USED_BY_ANNOTATION: Final = "inferplane.dev/used-by"
"""On the Job: the models reading the staged copy, comma-separated."""
TOKEN_OF_ANNOTATION: Final = "inferplane.dev/secret-of"
"""On the token Secret: ``<model>/<secret>``, the reference its value was read from."""
DRAFT_DIR: Final = f"{MODELS_DIR}/draft"
"""Where a serving pod copies its EAGLE draft model."""

# Run in the vLLM image; argv: repository, revision, target directory.
DOWNLOAD_SCRIPT: Final = """\
import sys
from huggingface_hub import snapshot_download
snapshot_download(repo_id=sys.argv[1], revision=sys.argv[2], local_dir=sys.argv[3])
"""


@dataclass(frozen=True, order=True)
class HubSource:
    """One pinned Hugging Face repository: what a staging Job copies."""

    repo: str
    """``org/name``."""
    revision: str
    """A commit, tag or branch."""

    @property
    def uri(self) -> str:
        return f"hf://{self.repo}@{self.revision}"

    @property
    def key(self) -> str:
        """Content key of the staged copy: the repository and revision, nothing else."""
        return naming.short_hash("hub", self.repo, self.revision)

    @property
    def job_name(self) -> str:
        return f"weights-{self.key[:10]}"

    @property
    def path(self) -> str:
        """``<org>/<name>/<revision>`` under the hub prefix. The schema lets a revision hold
        ``/`` (``refs/pr/1``), and so ``..`` segments: such a revision becomes one segment."""
        revision = self.revision
        if "/" in revision:
            revision = f"rev-{naming.short_hash(revision)}"
        return f"{self.repo}/{revision}"


def hub_source(
    model: str, field: tuple[str, ...], repo: str | None, revision: str | None
) -> HubSource:
    """The `HubSource` of an ``hf://`` reference of `model` at `field`; an unpinned one is
    refused: the staged copy is keyed by its revision."""
    if not repo or not revision:
        raise ServingArgsError(
            model,
            field,
            f"hf://{repo or ''} has no revision; the weights are staged into the model store "
            "keyed by repository and revision",
            "pin it: hf://org/name@<revision> (a commit, tag or branch)",
        )
    return HubSource(repo, revision)


def model_hub_sources(model: ServedModel) -> Iterator[tuple[tuple[str, ...], HubSource]]:
    """(field, source) of every ``hf://`` reference of `model`: weights, draft, adapters."""
    if model.source.scheme == "hf":
        yield (
            ("source",),
            hub_source(model.name, ("source",), model.source.hf_repo, model.source.hf_revision),
        )
    settings = model.vllm
    spec = settings.speculative if settings else None
    if spec and spec.draft_repo:
        draft: tuple[str, ...] = ("vllm", "speculative", "draft_model")
        yield draft, hub_source(model.name, draft, spec.draft_repo, spec.draft_revision)
    adapters = settings.lora.adapters if settings and settings.lora else ()
    for adapter in adapters:
        if adapter.source.scheme == "hf":
            field = ("vllm", "lora", "adapters", adapter.name)
            src = adapter.source
            yield field, hub_source(model.name, field, src.hf_repo, src.hf_revision)


def hub_sources(model: ServedModel) -> list[HubSource]:
    """The distinct ``hf://`` sources of `model`, in `model_hub_sources` order."""
    return list(dict.fromkeys(source for _, source in model_hub_sources(model)))


def staged_uri(env: ServingEnvironment, source: HubSource, model: str = "") -> str:
    """The store prefix of the staged copy of `source`, ending in ``/``."""
    if not env.model_store_uri:
        raise ServingArgsError(
            model,
            ("source",),
            "hf:// weights are staged into the model store, and none is given",
            "set ServingEnvironment.model_store_uri (s3:// or gs://)",
        )
    store = env.model_store_uri.rstrip("/")
    return f"{store}/{naming.HUB_PREFIX}/{source.path}/"


def source_uri(env: ServingEnvironment, model: ServedModel, source: ModelSource) -> str:
    """Where a replica copies `source` from: the store URI, or an hf:// source's staged copy."""
    if source.scheme != "hf":
        return source.uri
    found = hub_source(model.name, ("source",), source.hf_repo, source.hf_revision)
    return staged_uri(env, found, model.name)


def hub_token(model: ServedModel) -> ModelSecret | None:
    """The model's Hugging Face token reference (read as a file), if it has one."""
    tokens = file_secrets(model)
    return tokens[0] if tokens else None


@dataclass(frozen=True)
class Staging:
    """Who stages one source: the source, the pool its Job runs on, and its token."""

    source: HubSource
    pool: ServingPool
    token: ModelSecret | None
    token_owner: str | None
    """The model whose token reference `token` is (for messages)."""
    used_by: tuple[str, ...] = ()
    """The models that read the staged copy (annotation `USED_BY_ANNOTATION`)."""


def plan_staging(models: list[ServedModel]) -> dict[HubSource, Staging]:
    """One `Staging` per distinct ``hf://`` source of `models`: the Job runs on the pool of
    the first model that uses it, with the token of the first such model that has one."""
    out: dict[HubSource, Staging] = {}
    for model in models:
        token = hub_token(model)
        for source in hub_sources(model):
            found = out.get(source)
            if found is None:
                found = Staging(source, model.pool, token, model.name if token else None)
            elif found.token is None and token is not None:
                found = dataclasses.replace(found, token=token, token_owner=model.name)
            out[source] = dataclasses.replace(found, used_by=(*found.used_by, model.name))
    return out


def pod_labels(env: ServingEnvironment, source: HubSource) -> dict[str, str]:
    """Labels of the staging pod; never a model's selector labels."""
    return {
        "app.kubernetes.io/name": COMPONENT,
        "app.kubernetes.io/part-of": f"{env.part_of}-weights",
        "app.kubernetes.io/managed-by": "inferplane",
        COMPONENT_LABEL: COMPONENT,
        naming.ENVIRONMENT_LABEL: env.environment,
        KEY_LABEL: source.key,
    }


def token_secret_name(source: HubSource) -> str:
    return f"{source.job_name}-hub-token"


def _download_container(env: ServingEnvironment, staging: Staging) -> Manifest:
    environment: list[Manifest] = [
        {"name": "HOME", "value": HOME},
        {"name": "HF_HOME", "value": f"{WORK_DIR}/.huggingface"},
        {"name": "HF_HUB_DISABLE_TELEMETRY", "value": "1"},
        {"name": "HF_REPO", "value": staging.source.repo},
        {"name": "HF_REVISION", "value": staging.source.revision},
    ]
    mounts = [mount("home", HOME), mount("tmp", "/tmp"), mount("work", WORK_DIR)]
    if staging.token is not None:
        environment.append({"name": "HF_TOKEN_PATH", "value": f"{SECRETS_DIR}/{TOKEN_KEY}"})
        mounts.append({"name": SECRETS_VOLUME, "mountPath": SECRETS_DIR, "readOnly": True})
    return {
        "name": "download",
        "image": defaults.VLLM_IMAGE.format(version=env.vllm_version),
        "command": shell(
            f"if [ -f {SKIP_FILE} ]; then exit 0; fi",
            # Blueprint text reaches the script only as quoted variables.
            f'python3 -c {shlex.quote(DOWNLOAD_SCRIPT)} "$HF_REPO" "$HF_REVISION" "{SNAPSHOT_DIR}"',
            f'rm -rf "{SNAPSHOT_DIR}/.cache"',
        ),
        "env": environment,
        "resources": {
            "requests": {"cpu": "2", "memory": "4Gi"},
            "limits": {"memory": "8Gi"},
        },
        "securityContext": container_security_context(),
        "volumeMounts": mounts,
    }


def store_upload(env: ServingEnvironment, src: str, dst: str) -> str:
    """Copies directory `src` under prefix `dst`, skipping objects already there."""
    if env.cloud == "aws":
        return f"aws s3 sync --only-show-errors {src} {dst}"
    return f"gcloud storage rsync --recursive --no-clobber {src} {dst}"


def pod_spec(env: ServingEnvironment, staging: Staging) -> Manifest:
    marker = f'"${{STAGED_URI}}{COMPLETE_MARKER}"'
    uri_env = [{"name": "STAGED_URI", "value": staged_uri(env, staging.source)}]
    work = [mount("work", WORK_DIR)]
    check = store_container(
        env,
        "check-staged",
        shell(
            f"if {store_exists(env, marker)}; then",
            f'  touch {SKIP_FILE}; echo "already staged: $STAGED_URI"',
            "fi",
        ),
        uri_env,
        work,
    )
    upload = store_container(
        env,
        "upload",
        shell(
            f"if [ -f {SKIP_FILE} ]; then exit 0; fi",
            store_upload(env, f'"{SNAPSHOT_DIR}"', '"$STAGED_URI"'),
            f'date -u > "{WORK_DIR}/{COMPLETE_MARKER}"',
            store_copy(env, f'"{WORK_DIR}/{COMPLETE_MARKER}"', marker),
            'echo "staged at $STAGED_URI"',
        ),
        uri_env,
        work,
    )
    volumes = [empty_dir("work"), empty_dir("home"), empty_dir("tmp")]
    if staging.token is not None:
        volumes.append(
            {
                "name": SECRETS_VOLUME,
                "secret": {
                    "secretName": token_secret_name(staging.source),
                    "items": [{"key": TOKEN_KEY, "path": TOKEN_KEY}],
                    "defaultMode": SECRET_FILE_MODE,
                },
            }
        )
    return {
        **service_account(env, naming.WEIGHTS_STAGER_SA),
        "enableServiceLinks": False,
        "restartPolicy": "Never",
        "securityContext": pod_security_context(),
        **gpu_placement(staging.pool),
        "initContainers": [check, _download_container(env, staging)],
        "containers": [upload],
        "volumes": volumes,
    }


def job_manifest(
    env: ServingEnvironment, staging: Staging, namespace: str
) -> tuple[Manifest, Manifest]:
    """(metadata, spec) of the staging Job."""
    labels = pod_labels(env, staging.source)
    metadata = {
        "name": staging.source.job_name,
        "namespace": namespace,
        "labels": labels,
        "annotations": {
            "pulumi.com/replaceUnready": "true",
            REPO_ANNOTATION: staging.source.repo,
            REVISION_ANNOTATION: staging.source.revision,
            USED_BY_ANNOTATION: ",".join(staging.used_by),
        },
    }
    spec = {"template": {"metadata": {"labels": labels}, "spec": pod_spec(env, staging)}}
    return metadata, spec


@dataclass(frozen=True)
class WeightsStagingArgs:
    """Inputs of `WeightsStaging`."""

    staging: Staging
    """The source, the pool the Job runs on and the token it uses (`plan_staging`)."""
    env: ServingEnvironment
    """The environment: model store, cloud, vLLM version (the download image)."""
    namespace: str
    """Namespace of the Job; it must hold the ``weights-stager`` ServiceAccount."""
    provider: k8s.Provider
    """The cluster's provider; every resource passes it explicitly."""


class WeightsStaging(pulumi.ComponentResource):
    """Copies one ``hf://`` repository at one revision into the model store, once.

    Outputs:
        staged_uri: ``<store>/.inferplane/hub/<org>/<name>/<revision>/``.
        job_name: ``weights-<key[:10]>``.
        job: the Job resource; depend on it to start only once the copy is complete.
        network_policy: NetworkPolicy ``weights-<key[:10]>`` of the pod.
    """

    staged_uri: str
    job_name: str
    job: k8s.batch.v1.Job
    network_policy: k8s.networking.v1.NetworkPolicy

    def __init__(
        self, name: str, args: WeightsStagingArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("inferplane:serving:WeightsStaging", name, None, opts)
        env, staging = args.env, args.staging
        source = staging.source
        first = staging.used_by[0] if staging.used_by else source.uri
        self.staged_uri = staged_uri(env, source, first)
        self.job_name = source.job_name
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        metadata, spec = job_manifest(env, staging, args.namespace)
        before: list[pulumi.Resource] = []
        self.network_policy = k8s.networking.v1.NetworkPolicy(
            f"{name}-network-policy",
            metadata={
                "name": source.job_name,
                "namespace": args.namespace,
                "labels": metadata["labels"],
            },
            spec=isolated_store_client_spec(pod_labels(env, source), env),
            opts=child,
        )
        before.append(self.network_policy)
        if staging.token is not None:
            value = secret_value(
                staging.token,
                env,
                model=staging.token_owner or source.repo,
                offline=is_offline(),
                parent=self,
            )
            before.append(
                k8s.core.v1.Secret(
                    f"{name}-hub-token",
                    metadata={
                        "name": token_secret_name(source),
                        "namespace": args.namespace,
                        "labels": metadata["labels"],
                        "annotations": {
                            TOKEN_OF_ANNOTATION: f"{staging.token_owner}/{staging.token.name}"
                        },
                    },
                    type="Opaque",
                    string_data={TOKEN_KEY: value},
                    opts=pulumi.ResourceOptions.merge(
                        child,
                        pulumi.ResourceOptions(additional_secret_outputs=["data", "stringData"]),
                    ),
                )
            )
        self.job = build_job(
            f"{name}-job", metadata, spec, self, args.provider, STAGING_TIMEOUT, before
        )
        self.register_outputs(
            {
                "staged_uri": self.staged_uri,
                "job_name": self.job_name,
                "job": self.job,
                "network_policy": self.network_policy,
            }
        )
