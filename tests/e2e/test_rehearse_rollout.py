"""The real Argo Rollouts controller on the local control plane (e2e/rehearse_rollout.py):
the objects it is given, the vendored CRDs it runs on, and the whole run where the tools are
built (`needs_tools`; skipped with the reason elsewhere)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ci_gate import cannot_run

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "e2e" / "rehearse_rollout.py"
sys.path.insert(0, str(ROOT / "e2e"))

import rehearse_rollout  # noqa: E402
import tools  # noqa: E402

from inferplane.components import argo_rollouts  # noqa: E402


def run(env: dict[str, str] | None = None) -> tuple[int, dict]:
    res = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=600, env=env
    )
    return res.returncode, json.loads(res.stdout)


def test_without_the_tools_it_does_not_run_and_says_which_to_build(tmp_path: Path) -> None:
    code, report = run({**os.environ, "XDG_CACHE_HOME": str(tmp_path)})
    assert code == 2
    assert report == {
        "steps": [],
        "passed": False,
        "not_run": "not built: kubernetes, etcd, kwok, keda, argo-rollouts; run "
        "`python e2e/tools.py build` and `python e2e/tools.py build --group rehearsal`",
    }


def test_the_vendored_crds_are_the_pinned_release_files() -> None:
    assert argo_rollouts.crd_files() == [
        "analysis-run-crd.yaml",
        "analysis-template-crd.yaml",
        "cluster-analysis-template-crd.yaml",
        "experiment-crd.yaml",
        "rollout-crd.yaml",
    ]
    for name in argo_rollouts.crd_files():
        data = argo_rollouts.crd_path(name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == argo_rollouts.CRD_SHA256[name], name
    # The controller the rehearsal builds and the CRDs the add-on applies are one release.
    assert tools.pins()["argo_rollouts"]["version"] == argo_rollouts.VERSION


def test_the_rollout_crd_has_the_scale_subresource_the_hpa_uses() -> None:
    crd = argo_rollouts.crd_manifest("rollout-crd.yaml")
    assert crd["metadata"]["name"] == "rollouts.argoproj.io"
    (version,) = crd["spec"]["versions"]
    assert version["subresources"] == {
        "scale": {
            "labelSelectorPath": ".status.selector",
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.HPAReplicas",
        },
        "status": {},
    }
    ref = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["workloadRef"]
    assert sorted(ref["properties"]) == ["apiVersion", "kind", "name", "scaleDown"]


def test_the_rollout_takes_the_deployments_template_and_pauses_after_half() -> None:
    ro = rehearse_rollout.rollout()
    assert ro["spec"]["workloadRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "chat",
        "scaleDown": "onsuccess",
    }
    assert "template" not in ro["spec"]
    assert ro["spec"]["strategy"] == {"canary": {"steps": [{"setWeight": 50}, {"pause": {}}]}}
    dep = rehearse_rollout.deployment("v1")
    assert ro["spec"]["selector"] == dep["spec"]["selector"]
    scaled = rehearse_rollout.scaled_object()["spec"]
    assert scaled["scaleTargetRef"] == {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "name": "chat",
    }


MISSING = rehearse_rollout.not_built()


@pytest.mark.needs_tools
@pytest.mark.skipif(
    bool(MISSING) and os.environ.get("CI") != "true",  # CI builds them first: a fail there
    reason=f"tools the rehearsal needs are not built: {', '.join(MISSING)}",
)
def test_the_real_controller_rolls_out_a_canary_promotes_it_and_scales_through_scale() -> None:
    code, report = run()
    if code == 2:
        cannot_run(report["not_run"])
    assert code == 0, report.get("error", "") + json.dumps(report.get("log_tails"), indent=1)
    assert [s["step"] for s in report["steps"]] == [
        "control plane up",
        "Argo Rollouts CRDs",
        "controller started and leading",
        "the Rollout is Healthy on the Deployment's template",
        "scaleDown onsuccess scales the Deployment to zero",
        "the change stops at the canary pause with half the replicas on the new hash",
        "promoted: the new hash becomes stable",
        "/scale sets 6 replicas and the controller follows",
        "KEDA CRDs",
        "KEDA operator started",
        "KEDA scales the Rollout to zero while no pod matches its trigger",
        "a matching pod: KEDA scales the Rollout from zero",
    ]
    assert report["controller"]["lease_holder"]
    hashes = report["pod_hashes"]
    assert hashes["stable"] != hashes["canary"]
    paused = report["paused"]["status"]
    assert paused["phase"] == "Paused"
    assert paused["currentStepIndex"] == 1
    assert paused["pauseConditions"] == ["CanaryPauseStep"]
    assert (paused["stableRS"], paused["currentPodHash"]) == (hashes["stable"], hashes["canary"])
    # Without traffic routing the weight is a share of the replicas: 2 of 4 on each hash.
    assert report["paused"]["replica_sets"] == {
        hashes["stable"]: {"replicas": 2, "ready": 2},
        hashes["canary"]: {"replicas": 2, "ready": 2},
    }
    # The canary's pods carry the Deployment template's labels, which the Service selects.
    assert report["paused"]["canary_pod_labels"] == [[["app", "chat"]], [["app", "chat"]]]
    promoted = report["promoted"]
    assert (promoted["phase"], promoted["currentStepIndex"]) == ("Healthy", 2)
    assert promoted["stableRS"] == hashes["canary"]
    assert report["scale_before"]["spec"] == {"replicas": 4}
    assert report["scale_after"]["spec"] == {"replicas": 6}
    assert report["scale_after"]["status"] == {"replicas": 6, "selector": "app=chat"}
    assert report["scaled"]["HPAReplicas"] == 6
    assert report["keda_from_zero"]["availableReplicas"] == 1
    assert report["scaled_object"]["scaleTargetGVKR"] == {
        "group": "argoproj.io",
        "kind": "Rollout",
        "resource": "rollouts",
        "version": "v1alpha1",
    }
    assert report["scaled_object"]["conditions"]["Ready"] == "True"
    assert report["hpa_target"] == {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "name": "chat",
    }
