"""The NVIDIA driver of the AMI that an existing Karpenter's alias names, against the
serving releases' driver floor.

``cluster.addons.karpenter.ami_alias`` (``al2023@v<YYYYMMDD>``) decides the GPU nodes'
driver: Karpenter resolves it to the EKS-optimized AL2023 NVIDIA AMI of that release, built
for the cluster's Kubernetes minor (aws/karpenter-provider-aws
``pkg/providers/amifamily/al2023.go``, ``resolvePath``). Which driver each release carries
per minor is in ``eks_al2023_nvidia.json`` (read from awslabs/amazon-eks-ami's release
notes): releases before the 580 rollout of October/November 2025 carry R570 (or R560, or
R575 in v20250715), on which CUDA 13 builds do not start. ``al2023@latest`` never gets
here: the schema refuses an unpinned alias.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from importlib import resources

from inferplane.blueprint import defaults, releases
from inferplane.blueprint.addons import is_existing
from inferplane.blueprint.checks.semantic_env import EnvView
from inferplane.blueprint.checks.semantic_releases import _model_release

TABLE_FILE = "eks_al2023_nvidia.json"
_ALIAS = re.compile(r"^al2023@(v[0-9]{8})$")
_NAMES = {"triton": "Triton", "vllm": "vLLM"}


@functools.cache
def al2023_releases() -> Mapping[str, Mapping[str, str]]:
    """Release (``v20251029``) -> Kubernetes minor -> the NVIDIA driver of its AL2023
    x86_64 NVIDIA AMI (``580.95.05``), oldest release first."""
    text = resources.files("inferplane.blueprint.upstream").joinpath(TABLE_FILE).read_text()
    rows = json.loads(text)["releases"]
    return {
        release: {minor: driver for driver, minors in row.items() for minor in minors}
        for release, row in sorted(rows.items())
    }


def al2023_driver(release: str, minor: str) -> str | None:
    """The driver of AMI `release` for Kubernetes `minor`; None when the table has no such
    AMI."""
    return al2023_releases().get(release, {}).get(minor)


def check_karpenter_ami(env: EnvView) -> None:
    """The alias names an AL2023 NVIDIA AMI of the cluster's Kubernetes minor whose driver
    runs every model's serving release. A release newer than the table is not judged:
    every release since v20251120 carries R580 or later for each minor it is built for."""
    cluster = env.spec.get("cluster") or {}
    karpenter = (cluster.get("addons") or {}).get("karpenter")
    if env.spec["cloud"] != "aws" or karpenter is None or not is_existing(karpenter):
        return
    alias = str(karpenter.get("ami_alias", ""))
    match = _ALIAS.match(alias)
    if match is None:
        return  # the schema refuses it
    release = match.group(1)
    minor = str(cluster.get("kubernetes_version", defaults.KUBERNETES_VERSION))
    table = al2023_releases()
    if release > max(table):
        return
    where = ("environments", env.name, "cluster", "addons", "karpenter", "ami_alias")
    needs = _needs(env)
    fits = [r for r, row in table.items() if minor in row and _runs(row[minor], needs)]
    hint = (
        f"pin a release whose AMI for Kubernetes {minor} runs them: al2023@{fits[0]} or "
        f"later (newest in {TABLE_FILE}: al2023@{fits[-1]})"
        if fits
        else f"no AL2023 NVIDIA AMI of Kubernetes {minor} in {TABLE_FILE} runs them: "
        "upgrade the cluster's Kubernetes minor"
    )
    driver = al2023_driver(release, minor)
    if driver is None:
        what = (
            f"{alias} names no EKS-optimized AL2023 NVIDIA AMI: the first was release {min(table)}"
            if release < min(table)
            else f"{alias} names no EKS-optimized AL2023 NVIDIA AMI of Kubernetes {minor}"
            + (
                f" (release {release} was built for Kubernetes "
                f"{', '.join(sorted(table[release], key=_minor_key))})"
                if release in table
                else f" (there is no release {release})"
            )
        )
        env.error(where, f"{what}, so Karpenter finds no AMI for the GPU nodes", hint)
        return
    short = [(name, row) for name, row in needs if releases.runs_on(row, _branch(driver)) is False]
    if not short:
        return
    models = "; ".join(
        f"model {name} runs {_NAMES[row.engine]} {row.release} (CUDA {row.cuda}), which "
        f"needs driver {row.min_driver} or later"
        for name, row in short
    )
    env.error(
        where,
        f"{alias} gives the GPU nodes of Kubernetes {minor} the AL2023 NVIDIA AMI of "
        f"release {release}, whose NVIDIA driver is {driver}: {models}",
        hint,
    )


def _needs(env: EnvView) -> list[tuple[str, releases.EngineRelease]]:
    out = []
    for name, model in (env.data.get("models") or {}).items():
        found = _model_release(env, name, model)
        row = None if found is None else releases.engine_release(found[0], found[1])
        if row is not None:
            out.append((str(name), row))
    return out


def _branch(driver: str) -> str:
    return driver.split(".")[0]


def _runs(driver: str, needs: list[tuple[str, releases.EngineRelease]]) -> bool:
    return all(releases.runs_on(row, _branch(driver)) is not False for _, row in needs)


def _minor_key(minor: str) -> int:
    return int(minor.split(".")[1])


__all__ = ["TABLE_FILE", "al2023_driver", "al2023_releases", "check_karpenter_ami"]
