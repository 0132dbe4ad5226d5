"""The router's CRDs: verbatim copies of the pinned upstream files, created by the stack
only when a model is llm-aware, before any router release."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from crd_schema import REFERENCE

from inferplane.app.plan import render_routing
from inferplane.blueprint.resolution.resolve import resolve_file
from inferplane.components.serving.routing.router_crds import CRD_SHA256

ROOT = Path(__file__).resolve().parents[3]
VENDORED = ROOT / "components" / "serving" / "routing" / "crds"
UPSTREAM = {
    "inference.networking.k8s.io_inferencepools.yaml": REFERENCE
    / "gateway-api-inference-extension-v1.6.0/crd",
    "llm-d.ai_inferenceobjectives.yaml": REFERENCE / "llm-d-router-v0.10.0/crd",
}
CRD = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinitionPatch"
RELEASE = "kubernetes:helm.sh/v4:Chart"


def test_the_vendored_crds_are_the_pinned_files() -> None:
    assert sorted(p.name for p in VENDORED.iterdir()) == sorted(CRD_SHA256)
    for name, digest in CRD_SHA256.items():
        data = (VENDORED / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == digest, name
        upstream = UPSTREAM[name] / name
        if upstream.exists():
            assert upstream.read_bytes() == data, name


def test_the_stack_creates_the_crds_before_the_routers(run_mocked: Any) -> None:
    env = resolve_file(ROOT / "blueprints" / "llm-routing.yaml", "prod")
    rec = run_mocked(env)
    crds = {r.get("metadata", "name"): r for r in rec.of_type(CRD)}
    assert sorted(crds) == [
        "inferenceobjectives.llm-d.ai",
        "inferencepools.inference.networking.k8s.io",
    ]
    # Applied, shared with any other owner, and kept when this stack goes.
    assert all(r.options.get("retain_on_delete") is True for r in crds.values())
    urns = {r.urn for r in crds.values()}
    routers = [r for r in rec.of_type(RELEASE) if "llm-d-router" in str(r.get("chart"))]
    assert len(routers) == 2
    for release in routers:
        assert urns <= set(release.depends_on), release.name


def test_no_crd_without_an_llm_aware_model(reference_recording: Any) -> None:
    assert reference_recording("prod").of_type(CRD) == []


def test_plan_says_how_each_model_is_routed_and_woken() -> None:
    env = resolve_file(ROOT / "blueprints" / "llm-routing.yaml", "prod")
    assert render_routing(env) == [
        "Routing (and the way back from zero replicas):",
        "  chat: llm-aware, one InferencePool and llm-d router per zone (eu-west-1a, "
        "eu-west-1b); prefix cache approximate, flow control on",
    ]
