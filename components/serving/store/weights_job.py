"""The staging Job of one ``hf://`` source (`weights`): the pod, its NetworkPolicy, its
copy of the Hub token, and the `WeightsStaging` component that creates them.

The pod: an init container (cloud CLI) skips everything when the attempt marker is in
the store; an init container in the pinned vLLM image downloads the pinned revision with
huggingface_hub (`jobs.hub_download`), the only container holding the token; the main
container (cloud CLI, ServiceAccount ``weights-stager``) uploads the copy into a folder of
its attempt and writes the marker naming it last (`store_cli.publish_attempt`). See the
`weights` module docstring for the sources and choices.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Final

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint import defaults, naming
from inferplane.components.serving.containers import (
    HOME,
    NO_GPU,
    WORK_DIR,
    Manifest,
    container_security_context,
    empty_dir,
    mount,
    shell,
)
from inferplane.components.serving.network_policies import isolated_store_client_spec
from inferplane.components.serving.secrets import (
    SECRET_FILE_MODE,
    SECRETS_DIR,
    SECRETS_VOLUME,
    is_offline,
    secret_value,
)
from inferplane.components.serving.spec import ServingEnvironment
from inferplane.components.serving.store.store_cli import (
    ATTEMPT_ENV,
    publish_attempt,
    published,
    store_container,
    store_sync,
)
from inferplane.components.serving.store.store_job import (
    build_job,
    job_pod_spec,
    program,
    scripts_config_map,
    scripts_mount,
    scripts_volume,
)
from inferplane.components.serving.store.weights import HubSource, Staging, staged_uri

STAGING_TIMEOUT: Final = "180m"
"""How long `pulumi up` waits for one staging Job: a 140 GB (70B bf16) repository is
downloaded from the hub and uploaded to the store; the Deployments wait for it."""
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

IGNORE_PATTERNS: Final = ("original/**/*", "original/*")
"""Files of a repository the staging Job leaves out: Llama's ``original/`` copy of the weights
in Meta's own format (``original/consolidated.*.pth``), as large as the safetensors vLLM
loads, which every replica would otherwise copy from the store as well. vLLM skips it when
it downloads: vllm-project/vllm ``vllm/config/load.py`` ``LoadConfig.ignore_patterns``
``Field(default_factory=lambda: ["original/**/*"])``, "Default to "original/**/*" to avoid
repeated loading of llama's checkpoints" (the older ``LoadConfig.__post_init__`` falls back to
the same list when none is given). That pattern is passed as it is, plus ``original/*``:
huggingface_hub's ``snapshot_download(..., ignore_patterns=)`` matches repository paths with
`fnmatch.fnmatch` (``src/huggingface_hub/utils/_paths.py`` `filter_repo_objects`), where
``original/**/*`` needs a second ``/`` and so misses ``original/consolidated.00.pth``; vLLM
itself never fetches those files because it also passes ``allow_patterns=["*.safetensors"]``
when the repository has safetensors (``vllm/model_executor/model_loader/weight_utils.py``
``download_weights_from_hf``). ``original/*`` matches every file under ``original/``."""

DOWNLOAD_PROGRAM: Final = "hub_download"
"""The job program that downloads the repository (`jobs.hub_download`)."""


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
    return naming.weights_token_secret(source.key)


def _download_container(env: ServingEnvironment, staging: Staging) -> Manifest:
    environment: list[Manifest] = [
        # A CUDA image on a GPU node, without a GPU request: it must see no GPU.
        NO_GPU,
        {"name": "HOME", "value": HOME},
        {"name": "HF_HOME", "value": f"{WORK_DIR}/.huggingface"},
        {"name": "HF_HUB_DISABLE_TELEMETRY", "value": "1"},
        {"name": "HF_REPO", "value": staging.source.repo},
        {"name": "HF_REVISION", "value": staging.source.revision},
    ]
    mounts = [mount("home", HOME), mount("tmp", "/tmp"), mount("work", WORK_DIR), scripts_mount()]
    if staging.token is not None:
        environment.append({"name": "HF_TOKEN_PATH", "value": f"{SECRETS_DIR}/{TOKEN_KEY}"})
        mounts.append({"name": SECRETS_VOLUME, "mountPath": SECRETS_DIR, "readOnly": True})
    return {
        "name": "download",
        "image": defaults.VLLM_IMAGE.format(version=env.vllm_version),
        "command": shell(
            f"if [ -f {SKIP_FILE} ]; then exit 0; fi",
            # Blueprint text reaches the script only as quoted variables.
            f'python3 {program(DOWNLOAD_PROGRAM)} "$HF_REPO" "$HF_REVISION" "{SNAPSHOT_DIR}" '
            + " ".join(shlex.quote(p) for p in IGNORE_PATTERNS),
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


def pod_spec(env: ServingEnvironment, staging: Staging) -> Manifest:
    uri_env = [{"name": "STAGED_URI", "value": staged_uri(env, staging.source)}]
    work = [mount("work", WORK_DIR)]
    check = store_container(
        env,
        naming.WEIGHTS_STAGER_SA,
        "check-staged",
        shell(
            f"if {published(env, 'STAGED_URI')}; then",
            f'  touch {SKIP_FILE}; echo "already staged: $STAGED_URI"',
            "fi",
        ),
        uri_env,
        work,
    )
    upload = store_container(
        env,
        naming.WEIGHTS_STAGER_SA,
        "upload",
        shell(
            f"if [ -f {SKIP_FILE} ]; then exit 0; fi",
            *publish_attempt(
                env,
                "STAGED_URI",
                store_sync(env, f'"{SNAPSHOT_DIR}"', '"$ATTEMPT_URI"'),
                WORK_DIR,
                "staged copy",
            ),
        ),
        [*uri_env, ATTEMPT_ENV],
        work,
    )
    volumes = [
        empty_dir("work"),
        empty_dir("home"),
        empty_dir("tmp"),
        scripts_volume(staging.source.job_name, [DOWNLOAD_PROGRAM]),
    ]
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
    return job_pod_spec(
        env,
        naming.WEIGHTS_STAGER_SA,
        staging.pool,
        [check, _download_container(env, staging)],
        [upload],
        volumes,
    )


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
        staged_uri: ``<store>/.inferplane/hub/<blueprint>/<org>/<name>/<revision>/``.
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
            spec=isolated_store_client_spec(pod_labels(env, source), env, internet=True),
            opts=child,
        )
        before.append(self.network_policy)
        before.append(
            scripts_config_map(
                f"{name}-scripts",
                source.job_name,
                [DOWNLOAD_PROGRAM],
                args.namespace,
                metadata["labels"],
                self,
                args.provider,
            )
        )
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
