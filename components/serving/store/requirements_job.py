"""The staging Job of one Python step's requirements (`pip_requirements`): its pod, its
NetworkPolicy, and the `RequirementsStaging` component that creates them.

The pod, like the ``hf://`` staging pod (`weights_job`): an init container (cloud CLI,
ServiceAccount ``weights-stager``) skips everything when the attempt marker is in the store;
an init container in the pinned Triton image of the release (never a blueprint's own image:
the pod holds the write identity), without a GPU, downloads the pinned wheels
with that image's Python (`jobs.pip_stage` ``download``: hashes required, no dependency
resolution, wheels only); the main container (cloud CLI, ``weights-stager``) uploads them
into a folder of its attempt under ``.../.pip/<key>/`` and writes the marker last. The Job
writes nothing else: its only prefix is ``$STAGED_URI``. NetworkPolicy ``<job>``: no
ingress; egress to DNS and TCP 443 outside the cluster (the package index, and the store),
as the weights staging pod's (`network_policies.isolated_store_client_spec`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint import naming
from inferplane.blueprint.triton_model import PipelineStep
from inferplane.components.serving.containers import (
    HOME,
    NO_GPU,
    WORK_DIR,
    Manifest,
    container_security_context,
    empty_dir,
    model_object_labels,
    mount,
    shell,
)
from inferplane.components.serving.network_policies import isolated_store_client_spec
from inferplane.components.serving.spec import ServedModel, ServingEnvironment
from inferplane.components.serving.store.pip_requirements import (
    PROGRAM,
    job_name,
    requirements_key,
    staged_steps,
    staged_uri,
    staging_image,
)
from inferplane.components.serving.store.store_cli import (
    ATTEMPT_ENV,
    publish_attempt,
    published,
    store_container,
    store_sync,
)
from inferplane.components.serving.store.store_job import (
    job_pod_spec,
    program,
    scripts_mount,
    scripts_volume,
    store_job,
)

STAGING_TIMEOUT: Final = "30m"
"""How long `pulumi up` waits for one staging Job: a node for the pod, the Triton image
pull, and wheels of tens to hundreds of MB."""
WHEELS: Final = f"{WORK_DIR}/wheels"
SKIP_FILE: Final = f"{WORK_DIR}/already-staged"
COMPONENT: Final = "requirements-staging"
KEY_LABEL: Final = "inferplane.dev/requirements-key"
COMPONENT_LABEL: Final = "app.kubernetes.io/component"


def pod_labels(env: ServingEnvironment, model: ServedModel, key: str) -> dict[str, str]:
    """Labels of the staging pod; never the model's selector labels."""
    return {
        "app.kubernetes.io/name": COMPONENT,
        "app.kubernetes.io/part-of": f"{env.part_of}-requirements",
        "app.kubernetes.io/managed-by": "inferplane",
        COMPONENT_LABEL: COMPONENT,
        naming.ENVIRONMENT_LABEL: env.environment,
        naming.MODEL_LABEL: model.name,
        KEY_LABEL: key,
    }


def pod_spec(env: ServingEnvironment, model: ServedModel, step: PipelineStep) -> Manifest:
    key = requirements_key(staging_image(env), step)
    uri_env = [{"name": "STAGED_URI", "value": staged_uri(env, model, key)}]
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
    download = {
        "name": "download",
        "image": staging_image(env),
        "command": shell(
            f"if [ -f {SKIP_FILE} ]; then exit 0; fi",
            # The requirements reach the program as a variable, never as script text.
            f'python3 {program(PROGRAM)} download "{WHEELS}"',
        ),
        "env": [
            NO_GPU,
            {"name": "HOME", "value": HOME},
            {"name": "REQUIREMENTS", "value": "\n".join(step.requirements)},
        ],
        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "2Gi"}},
        "securityContext": container_security_context(),
        "volumeMounts": [mount("home", HOME), mount("tmp", "/tmp"), *work, scripts_mount()],
    }
    upload = store_container(
        env,
        naming.WEIGHTS_STAGER_SA,
        "upload",
        shell(
            f"if [ -f {SKIP_FILE} ]; then exit 0; fi",
            *publish_attempt(
                env,
                "STAGED_URI",
                store_sync(env, f'"{WHEELS}"', '"$ATTEMPT_URI"'),
                WORK_DIR,
                "wheels",
            ),
        ),
        [*uri_env, ATTEMPT_ENV],
        work,
    )
    return job_pod_spec(
        env,
        naming.WEIGHTS_STAGER_SA,
        model.pool,
        [check, download],
        [upload],
        [
            empty_dir("work"),
            empty_dir("home"),
            empty_dir("tmp"),
            scripts_volume(job_name(model, key), [PROGRAM]),
        ],
    )


def job_manifest(
    env: ServingEnvironment, model: ServedModel, step: PipelineStep, namespace: str
) -> tuple[Manifest, Manifest]:
    """(metadata, spec) of the staging Job of `step`'s requirements."""
    key = requirements_key(staging_image(env), step)
    labels = pod_labels(env, model, key)
    metadata = {
        "name": job_name(model, key),
        "namespace": namespace,
        "labels": {**model_object_labels(env, model), COMPONENT_LABEL: COMPONENT, KEY_LABEL: key},
        "annotations": {"pulumi.com/replaceUnready": "true"},
    }
    spec = {"template": {"metadata": {"labels": labels}, "spec": pod_spec(env, model, step)}}
    return metadata, spec


def unique_steps(env: ServingEnvironment, model: ServedModel) -> list[PipelineStep]:
    """One step per requirements key: steps with the same list share a Job."""
    image = staging_image(env)
    found: dict[str, PipelineStep] = {}
    for step in staged_steps(model):
        found.setdefault(requirements_key(image, step), step)
    return list(found.values())


@dataclass(frozen=True)
class RequirementsStagingArgs:
    """Inputs of `RequirementsStaging`."""

    model: ServedModel
    """The pipeline model; every Python step with requirements gets its wheels staged."""
    env: ServingEnvironment
    """The environment: model store, cloud, Triton release (the image the wheels are for)."""
    namespace: str
    """Namespace of the Jobs; it must hold the ``weights-stager`` ServiceAccount."""
    provider: k8s.Provider
    """The cluster's provider; every resource passes it explicitly."""


class RequirementsStaging(pulumi.ComponentResource):
    """Stages (once per key) the wheels of a pipeline's Python steps into the model store.

    Outputs:
        jobs: the Jobs, one per requirements key; the serving pods start after them.
    """

    jobs: list[k8s.batch.v1.Job]

    def __init__(
        self, name: str, args: RequirementsStagingArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("inferplane:serving:RequirementsStaging", name, None, opts)
        env, model = args.env, args.model
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        self.jobs = []
        for step in unique_steps(env, model):
            metadata, spec = job_manifest(env, model, step, args.namespace)
            key = metadata["labels"][KEY_LABEL]
            policy = k8s.networking.v1.NetworkPolicy(
                f"{name}-{key[:10]}-network-policy",
                metadata={
                    "name": metadata["name"],
                    "namespace": args.namespace,
                    "labels": metadata["labels"],
                },
                spec=isolated_store_client_spec(pod_labels(env, model, key), env, internet=True),
                opts=child,
            )
            self.jobs.append(
                store_job(
                    f"{name}-{key[:10]}",
                    metadata,
                    spec,
                    [PROGRAM],
                    args.namespace,
                    self,
                    args.provider,
                    STAGING_TIMEOUT,
                    policy,
                )
            )
        self.register_outputs({"jobs": self.jobs})
