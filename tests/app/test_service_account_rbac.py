"""On GKE the serving pods keep their Kubernetes API token (Workload Identity may need it:
argoproj/argo-workflows#12781, GoogleCloudPlatform/prometheus-engine#180), so the accounts
those pods run as must be able to do nothing with it: no RoleBinding or ClusterRoleBinding
of the whole program names them."""

from __future__ import annotations

from pathlib import Path

import pytest

from inferplane.app.check import stack_of
from inferplane.blueprint.resolution.resolve import load_blueprint, resolve

ROOT = Path(__file__).resolve().parents[2]
BINDINGS = ("RoleBinding", "ClusterRoleBinding")


def _gcp_environments() -> list[tuple[str, str]]:
    out = []
    for path in sorted((ROOT / "blueprints").glob("*.yaml")):
        doc, names = load_blueprint(path)
        out += [(str(path), n) for n in names if resolve(doc, n).cloud == "gcp"]
    return out


@pytest.mark.parametrize(("path", "env"), _gcp_environments())
def test_no_rbac_is_bound_to_an_account_whose_token_is_mounted(path: str, env: str) -> None:
    doc, _ = load_blueprint(path)
    stack = stack_of(resolve(doc, env))
    mounted: set[tuple[str, str]] = set()
    for r in stack.resources:
        spec = r.pod_spec
        if spec and spec.get("automountServiceAccountToken"):
            namespace = ((r.props.get("metadata") or {}).get("namespace")) or "default"
            mounted.add((str(namespace), str(spec.get("serviceAccountName") or "default")))
    assert mounted, "no GKE pod mounts its token: this test guards nothing"
    bound = []
    for r in stack.resources:
        if not r.type.endswith(BINDINGS):
            continue
        namespace = (r.props.get("metadata") or {}).get("namespace")
        for subject in r.props.get("subjects") or ():
            if subject.get("kind") == "ServiceAccount":
                key = (str(subject.get("namespace") or namespace), str(subject.get("name")))
                if key in mounted:
                    bound.append((r.name, key))
    assert bound == []
