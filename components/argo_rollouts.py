"""Argo Rollouts' custom resource definitions, applied by the stack beside the add-on's chart.

The controller inferplane pins and tests is Argo Rollouts v1.10.1 (built from its Go module:
e2e/tools.toml ``[argo_rollouts]``, where the reason for v1.10.1 over v1.10.2 is written).
Its five CRDs are verbatim copies of the module's ``manifests/crds/*-crd.yaml`` at that
version (Rollout, Experiment, AnalysisRun, AnalysisTemplate, ClusterAnalysisTemplate),
copied by scripts/facts/argo_rollouts_crds.py into ``crds/argo-rollouts/`` beside this
module; their SHA-256 are `CRD_SHA256`, checked by the tests.

The chart's own CRDs (``installCRDs``) are not used: argo-helm's ``argo-rollouts`` chart
ships the CRDs of its own ``appVersion`` (``templates/crds/``, refreshed by
``hack/update_crds.sh``), and the chart inferplane pins is older than the controller it runs
(`inferplane.components.addon_values.argo_rollouts_values`). As with the router's CRDs
(`inferplane.components.serving.routing.router_crds`), each is applied as a server-side-apply
patch that creates a missing CRD and otherwise takes a share of its fields, and is kept when
the stack is destroyed (``retain_on_delete``): Rollouts of other stacks on the cluster live
in them.
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path
from typing import Any, Final

import pulumi
import pulumi_kubernetes as k8s
import yaml

VERSION: Final = "v1.10.1"
"""The controller release the CRDs, the chart's image tag and the rehearsal share."""
CRD_DIR: Final = "crds/argo-rollouts"
CRD_SHA256: Final = {
    "analysis-run-crd.yaml": "bd5fc4bdabe5fb4e7655bdd5e670244bad5d1757aa52f729a193a5fa6e6a729a",
    "analysis-template-crd.yaml": (
        "bb41aa62329355c5ffb38031822b4515cc2f60c5a94fcae5df6099ddbf8c5a08"
    ),
    "cluster-analysis-template-crd.yaml": (
        "e9689a6f2566acca3c4580c8756963535289ca5092f9fd92727b5770ea0fea68"
    ),
    "experiment-crd.yaml": "a5dcd79b08bcfdd0c134cf8ca2ccd2e347a13864256c3e3a4748407ac0ad4b4d",
    "rollout-crd.yaml": "1562decc7b3720c31cbe382eeb62b6fbfd236f8e81a1f98644a9774d1e7d7933",
}


def crd_files() -> list[str]:
    return sorted(CRD_SHA256)


def crd_path(file: str) -> Path:
    """A vendored CRD file on disk (the package is installed from the checkout)."""
    return Path(str(resources.files("inferplane.components").joinpath(CRD_DIR, file)))


@functools.cache
def crd_manifest(file: str) -> dict[str, Any]:
    """One vendored CRD, parsed once per process (3 MB of YAML in all: libyaml's parser
    where PyYAML has it). Shared between callers: read it, never change it."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loaded: dict[str, Any] = yaml.load(crd_path(file).read_text(), Loader=loader)
    return loaded


def rollouts_crds(
    name: str, provider: k8s.Provider, opts: pulumi.ResourceOptions | None = None
) -> list[k8s.apiextensions.v1.CustomResourceDefinitionPatch]:
    """The five CRDs, applied and kept (module docstring)."""
    out = []
    for file in crd_files():
        crd = crd_manifest(file)
        out.append(
            k8s.apiextensions.v1.CustomResourceDefinitionPatch(
                f"{name}-{crd['spec']['names']['plural']}",
                metadata=crd["metadata"],
                spec=crd["spec"],
                opts=pulumi.ResourceOptions.merge(
                    opts, pulumi.ResourceOptions(provider=provider, retain_on_delete=True)
                ),
            )
        )
    return out
