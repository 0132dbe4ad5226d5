"""The custom resource definitions the llm-d router's chart needs and does not ship.

``llm-d-router-standalone`` renders an ``InferencePool`` and ``InferenceObjective`` objects
but no CRD (its templates hold none: llm-d/llm-d-router v0.10.0
``config/charts/llm-d-router-standalone/templates``), so a cluster without them refuses the
release. They are created here, once per stack with an llm-aware model, from verbatim
copies of the pinned files beside this module (``crds/``; their SHA-256 are in
`CRD_SHA256`, checked by the tests):

- ``inference.networking.k8s.io_inferencepools.yaml``: kubernetes-sigs/
  gateway-api-inference-extension v1.6.0 (commit 992e5c292afb248801ce8d9234eb5b9d28eea231)
  ``config/crd/bases/``;
- ``llm-d.ai_inferenceobjectives.yaml``: llm-d/llm-d-router v0.10.0 (commit
  71f4f0999f95b96c49a9d0c4afbd18dfdb943c26) ``config/crd/bases/``.

Several stacks may serve llm-aware models on one cluster (two blueprints sharing it), and
another gateway may have installed the CRDs already, so no stack owns them: each applies
them as a server-side-apply patch (``CustomResourceDefinitionPatch``), which creates a
missing CRD and otherwise takes a share of its fields, and keeps them when it is destroyed
(``retain_on_delete``). pulumi-kubernetes creates a Patch resource with an apply request
and deletes it by giving its fields up (``provider/pkg/await/await.go`` `Creation`,
`Deletion`, ``ssa.Relinquish``), which it refuses for a required field such as a CRD's
``spec`` (``provider/pkg/provider/provider.go`` `Delete`: "set the retainOnDelete resource
option"); a plain ``CustomResourceDefinition`` would instead fail on a cluster that has
one (AlreadyExists, CHANGELOG #2926) and delete every other stack's pools with it. A
stack pinning other CRD contents than another's conflicts on those fields at ``pulumi
up`` (not forced), which is the signal to align the pins.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any, Final

import pulumi
import pulumi_kubernetes as k8s
import yaml

CRD_SHA256: Final = {
    "inference.networking.k8s.io_inferencepools.yaml": (
        "55e0dbf39c50c4bbdd60106493a4573df4bb44479f9ce46762f1af718883e5cd"
    ),
    "llm-d.ai_inferenceobjectives.yaml": (
        "c1e763412fcbe2b55e9282850156269a10053be2d052547cb80a2ca639c09990"
    ),
}


@functools.cache
def crd_manifest(file: str) -> dict[str, Any]:
    """One vendored CRD, parsed once per process. Shared between callers: read it, never
    change it."""
    text = (
        resources.files("inferplane.components.serving.routing").joinpath("crds", file).read_text()
    )
    loaded: dict[str, Any] = yaml.safe_load(text)
    return loaded


def router_crds(
    name: str, provider: k8s.Provider, opts: pulumi.ResourceOptions | None = None
) -> list[k8s.apiextensions.v1.CustomResourceDefinitionPatch]:
    """The InferencePool and InferenceObjective CRDs, applied and kept (module docstring)."""
    out = []
    for file in sorted(CRD_SHA256):
        crd = crd_manifest(file)
        short = crd["spec"]["names"]["plural"]
        out.append(
            k8s.apiextensions.v1.CustomResourceDefinitionPatch(
                f"{name}-{short}",
                metadata=crd["metadata"],
                spec=crd["spec"],
                opts=pulumi.ResourceOptions.merge(
                    opts, pulumi.ResourceOptions(provider=provider, retain_on_delete=True)
                ),
            )
        )
    return out
