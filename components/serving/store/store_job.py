"""What every Job that writes to the model store shares: its pod (`job_pod_spec`), the
ConfigMap of the programs its containers run (`jobs`), and the Job resource itself
(`build_job`; `store_job`: the ConfigMap and the Job as one piece).

The programs are modules of the ``jobs`` package, shipped with inferplane. A Job's ConfigMap
``<job>-scripts-<hash>`` holds the source of each module it runs, is mounted read-only at
`JOBS_DIR`, and the container runs a module with its image's ``python3``. The hash covers
every module's source: a changed program is a new, immutable ConfigMap, so the Job's pod
spec changes and the Job is replaced, as when the program was written into the spec.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from typing import Final

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint import naming
from inferplane.components.serving.containers import (
    Manifest,
    gpu_placement,
    mount,
    pod_security_context,
    service_account,
)
from inferplane.components.serving.spec import ServingEnvironment
from inferplane.components.serving.spec_parts import ServingPool

JOBS_PACKAGE: Final = "inferplane.components.serving.store.jobs"
JOBS_DIR: Final = "/opt/inferplane/jobs"
"""Where a Job's programs are mounted (read-only)."""
SCRIPTS_VOLUME: Final = "job-scripts"
SCRIPTS_FILE_MODE: Final = 0o444


def job_source(module: str) -> str:
    """The source of job program `module` (``jobs/<module>.py``), as shipped."""
    return resources.files(JOBS_PACKAGE).joinpath(f"{module}.py").read_text(encoding="utf-8")


def scripts_data(modules: Sequence[str]) -> dict[str, str]:
    """The ConfigMap's ``data``: ``<module>.py`` -> source."""
    return {f"{module}.py": job_source(module) for module in sorted(set(modules))}


def scripts_name(job_name: str, modules: Sequence[str]) -> str:
    """``<job>-scripts-<hash of the sources, 8 hex digits>``."""
    data = scripts_data(modules)
    digest = naming.short_hash(*(part for item in data.items() for part in item), length=8)
    return f"{job_name}-scripts-{digest}"


def scripts_volume(job_name: str, modules: Sequence[str]) -> Manifest:
    return {
        "name": SCRIPTS_VOLUME,
        "configMap": {"name": scripts_name(job_name, modules), "defaultMode": SCRIPTS_FILE_MODE},
    }


def scripts_mount() -> Manifest:
    return mount(SCRIPTS_VOLUME, JOBS_DIR, read_only=True)


def program(module: str) -> str:
    """The path of job program `module` in the container."""
    return f"{JOBS_DIR}/{module}.py"


def scripts_config_map(
    name: str,
    job_name: str,
    modules: Sequence[str],
    namespace: str,
    labels: dict[str, str],
    parent: pulumi.Resource,
    provider: k8s.Provider,
) -> k8s.core.v1.ConfigMap:
    """The immutable ConfigMap of the programs of Job `job_name` (`scripts_name`)."""
    return k8s.core.v1.ConfigMap(
        name,
        metadata={
            "name": scripts_name(job_name, modules),
            "namespace": namespace,
            "labels": labels,
        },
        data=scripts_data(modules),
        immutable=True,
        opts=pulumi.ResourceOptions(parent=parent, provider=provider),
    )


def build_job(
    name: str,
    metadata: Manifest,
    spec: Manifest,
    parent: pulumi.Resource,
    provider: k8s.Provider,
    timeout: str,
    depends_on: Sequence[pulumi.Resource] = (),
) -> k8s.batch.v1.Job:
    """The Job resource: awaited up to `timeout`, replaced by delete-then-create, started
    only after `depends_on` (its NetworkPolicy, its scripts, the Jobs it reads from).

    The Job sets no ``backoffLimit``, ``activeDeadlineSeconds`` or
    ``ttlSecondsAfterFinished``: Pulumi waits for it to complete and must still find it
    afterwards. A failed Job is replaced on the next ``pulumi up``
    (``pulumi.com/replaceUnready``)."""
    return k8s.batch.v1.Job(
        name,
        metadata=metadata,
        spec=spec,
        opts=pulumi.ResourceOptions(
            parent=parent,
            provider=provider,
            # The Job's name is fixed (it carries the key): a replacement must delete first.
            delete_before_replace=True,
            depends_on=list(depends_on),
            custom_timeouts=pulumi.CustomTimeouts(create=timeout, update=timeout),
        ),
    )


def job_pod_spec(
    env: ServingEnvironment,
    account: str,
    pool: ServingPool,
    init_containers: Sequence[Manifest],
    containers: Sequence[Manifest],
    volumes: Sequence[Manifest],
) -> Manifest:
    """The pod of a Job that writes to the store: ServiceAccount `account` (a writer of the
    store), no service links, never restarted in place (a failed Job is replaced), the
    restricted security context, on a node of `pool`."""
    return {
        **service_account(env, account),
        "enableServiceLinks": False,
        "restartPolicy": "Never",
        "securityContext": pod_security_context(),
        **gpu_placement(pool),
        "initContainers": list(init_containers),
        "containers": list(containers),
        "volumes": list(volumes),
    }


def store_job(
    name: str,
    metadata: Manifest,
    spec: Manifest,
    modules: Sequence[str],
    namespace: str,
    parent: pulumi.Resource,
    provider: k8s.Provider,
    timeout: str,
    policy: pulumi.Resource,
    after: Sequence[pulumi.Resource] = (),
) -> k8s.batch.v1.Job:
    """The ConfigMap ``<name>-scripts`` of the programs `modules` (`scripts_config_map`) and
    the Job ``<name>`` (`build_job`), started once `policy` allows its pod's egress (the
    namespace denies by default), its programs exist, and `after` exist (the Jobs it reads
    from)."""
    scripts = scripts_config_map(
        f"{name}-scripts",
        metadata["name"],
        modules,
        namespace,
        metadata["labels"],
        parent,
        provider,
    )
    return build_job(name, metadata, spec, parent, provider, timeout, [policy, scripts, *after])
