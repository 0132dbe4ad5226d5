"""Validate custom resources against the upstream CRDs in ``shared/reference``.

The API server prunes fields a structural schema does not declare, silently: a
``min_replica_count`` would vanish and KEDA would scale to zero. So validation here is
stricter than the server's: every object schema that lists ``properties`` (and does not
preserve unknown fields) also forbids other keys.
"""

from __future__ import annotations

import copy
import functools
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
REFERENCE = ROOT.parent / "shared" / "reference"
VENDORED = ROOT / "tests" / "reference"
ARGO_ROLLOUTS = ROOT / "components" / "crds" / "argo-rollouts"

CRDS = {
    "ScaledObject": REFERENCE / "keda" / "crd" / "keda.sh_scaledobjects.yaml",
    "ServiceMonitor": REFERENCE
    / "prometheus-operator"
    / "crd"
    / "monitoring.coreos.com_servicemonitors.yaml",
    "PodMonitor": REFERENCE
    / "prometheus-operator"
    / "crd"
    / "monitoring.coreos.com_podmonitors.yaml",
    "HTTPScaledObject": REFERENCE / "keda-http-add-on-0.15.0" / "crd-httpscaledobjects.yaml",
    "PrometheusRule": REFERENCE
    / "prometheus-operator"
    / "crd"
    / "monitoring.coreos.com_prometheusrules.yaml",
    "InferencePool": REFERENCE
    / "gateway-api-inference-extension-v1.6.0"
    / "crd"
    / "inference.networking.k8s.io_inferencepools.yaml",
    "InferenceObjective": REFERENCE
    / "llm-d-router-v0.10.0"
    / "crd"
    / "llm-d.ai_inferenceobjectives.yaml",
    # Karpenter's CRDs are kept in the repository (tests/reference/README.md).
    "NodePool": VENDORED / "karpenter-v1.14.1" / "crds" / "karpenter.sh_nodepools.yaml",
    "EC2NodeClass": VENDORED
    / "karpenter-v1.14.1"
    / "crds"
    / "karpenter.k8s.aws_ec2nodeclasses.yaml",
    # Argo Rollouts' CRDs ship with the components (components/argo_rollouts.py).
    "Rollout": ARGO_ROLLOUTS / "rollout-crd.yaml",
    "AnalysisTemplate": ARGO_ROLLOUTS / "analysis-template-crd.yaml",
}


def _strict(schema: Any) -> Any:
    if isinstance(schema, dict):
        out = {key: _strict(value) for key, value in schema.items()}
        if (
            "properties" in out
            and "additionalProperties" not in out
            and not out.get("x-kubernetes-preserve-unknown-fields")
        ):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_strict(item) for item in schema]
    return schema


@functools.cache
def crd_schema(kind: str, version: str) -> dict[str, Any]:
    """The strict openAPIV3Schema of `kind` at `version` (skips when the file is absent)."""
    path = CRDS[kind]
    if not path.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"the upstream CRD is required under CI: {path}")
        pytest.skip(f"upstream CRD not found at {path}")
    crd = yaml.safe_load(path.read_text())
    assert crd["spec"]["names"]["kind"] == kind
    for served in crd["spec"]["versions"]:
        if served["name"] == version:
            schema = copy.deepcopy(served["schema"]["openAPIV3Schema"])
            # metadata is validated by the API server, not by the CRD schema.
            schema.get("properties", {}).pop("metadata", None)
            return dict(_strict(schema))
    raise AssertionError(f"{kind} CRD has no version {version}")


def validate(obj: dict[str, Any]) -> None:
    """Raise jsonschema.ValidationError if `obj` (apiVersion, kind, spec) breaks the CRD."""
    version = obj["apiVersion"].split("/")[-1]
    body = {k: v for k, v in obj.items() if k != "metadata"}
    jsonschema.validate(body, crd_schema(obj["kind"], version))


def errors(obj: dict[str, Any]) -> list[str]:
    """All schema violations of `obj`, as readable strings (empty when valid)."""
    version = obj["apiVersion"].split("/")[-1]
    body = {k: v for k, v in obj.items() if k != "metadata"}
    validator = jsonschema.Draft7Validator(crd_schema(obj["kind"], version))
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(body)
    ]
