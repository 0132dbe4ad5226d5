"""The release table (`releases.json`): every pinned version with its source, the serving
releases a blueprint may choose, and what NVIDIA driver each needs.

A serving image runs only on a node whose driver is at least the release's minimum, or,
on a data-center GPU, one of the older driver branches its CUDA forward-compatibility
package supports (the "Driver Requirements" of each Triton release note; CUDA's own table
"CUDA Toolkit and Corresponding Driver Versions" for a vLLM image's CUDA).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Final

ENGINES: Final = ("triton", "vllm")
VLLM_REPOSITORY: Final = re.compile(r"^(?:docker\.io/)?vllm/vllm-openai(?=[:@])")
"""vLLM's own server image on Docker Hub (``vllm/vllm-openai``, also written with its
registry ``docker.io/``), whose tag is the release it runs: ``v0.33.0``, optionally pinned
to a digest (``v0.33.0@sha256:...``)."""
_VLLM_TAG: Final = re.compile(r"^:([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})(?:@sha256:[0-9a-f]{64})?$")


@dataclass(frozen=True)
class EngineRelease:
    engine: str
    release: str
    cuda: str
    min_driver: str
    datacenter_drivers: tuple[str, ...]
    """The lowest version of each older branch the release's forward-compatibility package
    runs on (data-center GPUs only: every GPU of the catalog is one)."""
    source: str
    tensorrt: str | None = None


@dataclass(frozen=True)
class NodeDriver:
    branch: str
    image: str
    source: str


@cache
def table() -> dict[str, Any]:
    """The parsed `releases.json`."""
    text = resources.files("inferplane.blueprint").joinpath("releases.json").read_text()
    data: dict[str, Any] = json.loads(text)
    return data


def pinned_versions() -> dict[str, str]:
    """Every pin by `versions:` key, in the table's order."""
    return {key: str(row["version"]) for key, row in table()["pins"].items()}


def bundled(name: str) -> str:
    """The version of a bundled component by its table name (``llm_d_router``, ...)."""
    return str(table()["bundled"][name]["version"])


def image(name: str) -> str:
    """A pinned helper image by its table name (``valkey``, ``aws_cli``, ``gcloud``, ``pause``)."""
    return str(table()["images"][name]["image"])


def engine_releases(engine: str) -> tuple[EngineRelease, ...]:
    """The supported releases of `engine` (``triton``/``vllm``), oldest first."""
    return tuple(
        EngineRelease(
            engine=engine,
            release=row["release"],
            cuda=row["cuda"],
            min_driver=row["min_driver"],
            datacenter_drivers=tuple(row["datacenter_drivers"]),
            source=row["source"],
            tensorrt=row.get("tensorrt"),
        )
        for row in table()["engines"][engine]
    )


def engine_release(engine: str, release: str) -> EngineRelease | None:
    """The table's row of `release`, None when the table does not list it."""
    return next((r for r in engine_releases(engine) if r.release == release), None)


def is_vllm_image(image: str) -> bool:
    """Whether `image` is vLLM's own server image (`VLLM_REPOSITORY`), whatever its tag."""
    return VLLM_REPOSITORY.match(image) is not None


def vllm_image_tag(image: str) -> str | None:
    """The tag of vLLM's own server image (``v0.5.4`` of ``vllm/vllm-openai:v0.5.4``); None
    for another image, or for vLLM's pinned by digest alone."""
    if not is_vllm_image(image):
        return None
    match = _VLLM_TAG.match(VLLM_REPOSITORY.sub("", image))
    return match.group(1) if match else None


def node_driver(cloud: str, kubernetes: str) -> NodeDriver | None:
    """The driver branch the GPU node image of `cloud` brings at Kubernetes minor
    `kubernetes`, None where the table does not know it (GKE's default driver per node
    version; a kubernetes environment's own nodes; a minor no source states)."""
    for row in table()["node_drivers"].get(cloud, []):
        if kubernetes in row["kubernetes"]:
            return NodeDriver(row["branch"], row["image"], row["source"])
    return None


def cos_installer_branch(setting: str) -> NodeDriver:
    """The driver branch Google's COS installer gives GKE nodes with `setting` (``default``:
    no ``--version``; ``latest``), as observed (``gke_cos_installer`` of the table)."""
    row = table()["gke_cos_installer"][setting]
    image = f"GKE's COS node image, Google's driver installer with the {setting} driver"
    return NodeDriver(row["branch"], image, row["source"])


def _numbers(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def runs_on(release: EngineRelease, branch: str) -> bool | None:
    """Whether a node with a driver of `branch` (``"580"``) runs `release`: True, False, or
    None when only the branch is known and the release needs a version within it."""
    have = int(branch)
    need = _numbers(release.min_driver)
    if have > need[0]:
        return True
    for older in release.datacenter_drivers:
        if _numbers(older)[0] == have:
            return None if len(_numbers(older)) > 1 else True
    if have < need[0]:
        return False
    return True if len(need) == 1 else None
