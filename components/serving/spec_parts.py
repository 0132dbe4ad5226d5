"""The parts of a `ServedModel` that stand on their own: where its weights are
(`model_source`), its secrets by reference (`ModelSecret`), and the GPU nodes it runs on
(`ServingPool`). Each checks itself and raises `ValueError` naming what is wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from inferplane.blueprint import naming
from inferplane.blueprint.model import ModelSource


def model_source(uri: str) -> ModelSource:
    """A `ModelSource` from an absolute ``s3://``, ``gs://`` or ``hf://repo@revision`` URI
    (`ServedModel` refuses an hf:// source without its revision)."""
    scheme, sep, rest = uri.partition("://")
    if not sep or not rest or scheme not in ("s3", "gs", "hf"):
        raise ValueError(
            f"model source {uri!r} is not an absolute s3://, gs:// or hf:// URI; "
            "give e.g. hf://Qwen/Qwen2.5-7B-Instruct@<revision> or s3://bucket/models/chat/"
        )
    if scheme == "hf":
        repo, _, revision = rest.partition("@")
        return ModelSource(uri, "hf", None, None, hf_repo=repo, hf_revision=revision or None)
    bucket, _, key = rest.partition("/")
    return ModelSource(uri, "s3" if scheme == "s3" else "gs", bucket, key)


@dataclass(frozen=True)
class ModelSecret:
    """A secret of the model, by reference, for environment variable ``NAME`` (upper-cased,
    other characters as ``_``): the model server gets it as that variable; the Hugging Face
    token goes only to the Job that stages the model's hf:// sources, as a file named by
    ``HF_TOKEN_PATH`` (`secrets.FILE_VARIABLES`); exactly one source is set."""

    name: str
    """Key in the model's Kubernetes Secret, e.g. ``hf_token``."""
    from_env: str | None = None
    """Read from this environment variable of the process that runs ``pulumi up``."""
    from_pulumi_config: str | None = None
    """Read from this Pulumi config secret (``key`` or ``namespace:key``)."""
    from_secret_manager: str | None = None
    """Read from AWS Secrets Manager (secret id) or GCP Secret Manager
    (``projects/p/secrets/s[/versions/v]``, or a bare name in the environment's project when
    used without a blueprint; a blueprint must name its own project)."""
    origin: str | None = None
    """Where the reference was written (``FILE:LINE:COL: error: yaml.path``), prefixed to
    the problems found only while `pulumi up` runs (an empty Secret Manager value, a secret
    of another account); without one, those messages name the secret."""

    def __post_init__(self) -> None:
        sources = [self.from_env, self.from_pulumi_config, self.from_secret_manager]
        if sum(s is not None for s in sources) != 1:
            raise ValueError(
                f"secret {self.name!r} needs exactly one of from_env, from_pulumi_config, "
                "from_secret_manager"
            )


@dataclass(frozen=True)
class ServingPool:
    """The GPU nodes a model runs on."""

    name: str
    """The pool's name: label ``inferplane.dev/pool`` on the model's objects, and the node
    selector unless `node_selector` is given."""
    gpu_type: str
    """The GPU model's catalog id (``l4``, ``h100``, ...); part of a TensorRT engine's key,
    because an engine runs only on the GPU it was built for."""
    zones: tuple[str, ...]
    """Zones the pool has nodes in; pods are pinned to them and spread over them."""
    gpu_resource: str = "nvidia.com/gpu"
    """The extended resource a replica requests: whole GPUs unless this names a MIG slice
    (``nvidia.com/mig-<profile>``)."""
    gpu_units_per_node: int = 1
    """`gpu_resource` units one node advertises; a replica's CPU and memory are its share
    of the node by this count."""
    instance_type: str | None = None
    """The node's machine type. Unknown (or None): each GPU unit gets a fixed CPU and
    memory share (`containers.FALLBACK_VCPUS_PER_GPU`, `FALLBACK_MEMORY_GIB_PER_GPU`)."""
    node_selector: Mapping[str, str] | None = None
    """Labels that select the pool's nodes. None: ``inferplane.dev/pool: <name>``, the label
    inferplane's node pools carry."""
    spare_gpu_units_at_max: int | None = None
    """GPU units left free when the pool is at its maximum size and every model on it at
    its maximum replicas. A model with fewer than two warm replicas surges a new pod first
    on rollout only when this holds one more replica; None (unknown): pods are replaced in
    place, never waiting for a GPU that may not come."""

    @property
    def mig(self) -> bool:
        """True when replicas run on MIG slices."""
        return self.gpu_resource.startswith("nvidia.com/mig-")

    @property
    def selector(self) -> dict[str, str]:
        return dict(self.node_selector or {naming.POOL_LABEL: self.name})

    def __post_init__(self) -> None:
        if not self.zones:
            raise ValueError(f"pool {self.name!r} names no zones; give the zones its nodes run in")
        if self.gpu_units_per_node < 1:
            raise ValueError(f"pool {self.name!r}: gpu_units_per_node must be at least 1")
