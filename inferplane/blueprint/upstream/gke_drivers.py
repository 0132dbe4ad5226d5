"""Which driver Google's COS installer gives a GKE environment's GPU nodes: the default of
the node's COS build, or its latest, when a model's serving release needs more than the
default's branch.

The installer takes ``--version``: unset, the COS build's default driver; ``latest``, the
build's latest; anything else is installed as that exact version
(cos.googlesource.com/cos/tools ``src/cmd/cos_gpu_installer/internal/commands/install.go``,
``getDriverVersion``). Both named settings are read per COS build (``GetArtifact`` of the
build's ``default``/``latest`` file under its build number), so every node of one GKE node
version gets the same driver either way. An exact version is not pinned: whether a COS
build carries it is not stated anywhere readable, and COS's maintainers call it "not the
official interface" that may stop working in later COS releases
(GoogleCloudPlatform/cos-gpu-installer issue #77). GKE's own table of default and latest
drivers per GKE version was not readable either, so the branches of the two settings are
what ``releases.json`` ``gke_cos_installer`` records as observed.
"""

from __future__ import annotations

from typing import Final, Literal

from inferplane.blueprint import releases
from inferplane.blueprint.model import Environment

InstallerVersion = Literal["default", "latest"]
SETTINGS: Final[tuple[InstallerVersion, ...]] = ("default", "latest")


def model_releases(env: Environment) -> list[tuple[str, releases.EngineRelease]]:
    """Each model's serving release that the release table lists: a model's own image's
    release (Triton's NGC tag or `base_release`, vLLM's tag or `base_release`), else the
    environment's `versions`."""
    out = []
    for name, model in env.models.items():
        if model.server == "triton":
            release = model.triton_release or env.versions.triton
        else:
            tag = releases.vllm_image_tag(model.image) if model.image else None
            release = tag or model.base_release or env.versions.vllm
        row = releases.engine_release(model.server, release)
        if row is not None:
            out.append((name, row))
    return out


def installer_version(env: Environment) -> InstallerVersion:
    """``default`` while every model's release runs on the default driver's branch, else
    ``latest``."""
    default = releases.cos_installer_branch("default").branch
    needs = model_releases(env)
    if all(releases.runs_on(row, default) is not False for _, row in needs):
        return "default"
    return "latest"


__all__ = ["SETTINGS", "InstallerVersion", "installer_version", "model_releases"]
