"""The real Karpenter (KWOK cloud provider) launches a node for the NodePool inferplane plans,
and stops at its limit (e2e/rehearse_karpenter.py): what it takes from the plan, the one field
it changes, the instance type it describes, and the whole run where the tools are built
(`needs_tools`; skipped with the reason elsewhere)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ci_gate import cannot_run

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "e2e" / "rehearse_karpenter.py"
sys.path.insert(0, str(ROOT / "e2e"))

import rehearse_karpenter  # noqa: E402


def run(env: dict[str, str] | None = None) -> tuple[int, dict]:
    res = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=900, env=env
    )
    return res.returncode, json.loads(res.stdout)


@pytest.fixture(scope="module")
def plan() -> dict[str, Any]:
    return rehearse_karpenter.planned()


def test_without_the_tools_it_does_not_run_and_says_which_to_build(tmp_path: Path) -> None:
    code, report = run({**os.environ, "XDG_CACHE_HOME": str(tmp_path)})
    assert code == 2
    assert report == {
        "steps": [],
        "passed": False,
        "not_run": "not built: kubernetes, etcd, kwok, karpenter-kwok; run `python "
        "e2e/tools.py build` and `python e2e/tools.py build --group karpenter`",
    }


def test_it_takes_the_planned_node_pool_and_serving_pod(plan: dict[str, Any]) -> None:
    pool = plan["node_pool"]
    assert pool["metadata"]["name"] == "karpenter-gpu-prod-l4-a"
    spec = pool["spec"]
    assert spec["limits"] == {"nvidia.com/gpu": "2"}
    assert spec["disruption"]["consolidationPolicy"] == "WhenEmpty"
    assert spec["template"]["spec"]["taints"] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    ]
    assert spec["template"]["spec"]["nodeClassRef"]["kind"] == "EC2NodeClass"
    assert (plan["instance_type"], plan["gpus_per_node"]) == ("g6.2xlarge", 1)
    pod = rehearse_karpenter.serving_pod(plan, "serving-0")["spec"]
    assert pod["nodeSelector"] == {
        "inferplane.dev/blueprint": "karpenter-gpu",
        "inferplane.dev/pool": "l4",
    }
    assert pod["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}
    ]
    assert pod["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] == "1"


def test_only_the_node_class_ref_changes(plan: dict[str, Any]) -> None:
    planned = plan["node_pool"]
    applied = rehearse_karpenter.kwok_node_pool(planned)
    ref = applied["spec"]["template"]["spec"].pop("nodeClassRef")
    assert ref == {
        "group": "karpenter.kwok.sh",
        "kind": "KWOKNodeClass",
        "name": planned["spec"]["template"]["spec"]["nodeClassRef"]["name"],
    }
    planned_spec = json.loads(json.dumps(planned["spec"]))
    del planned_spec["template"]["spec"]["nodeClassRef"]
    assert applied["spec"] == planned_spec
    assert applied["metadata"] == planned["metadata"]


def test_the_instance_type_is_the_pools_own_with_its_gpus(plan: dict[str, Any]) -> None:
    assert rehearse_karpenter.instance_types(plan) == [
        {
            "name": "g6.2xlarge",
            "offerings": [
                {
                    "Price": 1.0,
                    "Available": True,
                    "Requirements": [
                        {
                            "key": "karpenter.sh/capacity-type",
                            "operator": "In",
                            "values": ["on-demand"],
                        },
                        {
                            "key": "topology.kubernetes.io/zone",
                            "operator": "In",
                            "values": ["us-east-1a"],
                        },
                    ],
                }
            ],
            "architecture": "amd64",
            "operatingSystems": ["linux"],
            "resources": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "1"},
        }
    ]


MISSING = rehearse_karpenter.not_built()


@pytest.mark.needs_tools
@pytest.mark.skipif(
    bool(MISSING), reason=f"tools the rehearsal needs are not built: {', '.join(MISSING)}"
)
def test_karpenter_launches_the_pools_node_and_stops_at_its_limit() -> None:
    code, report = run()
    if code == 2:
        cannot_run(report["not_run"])
    assert code == 0, report.get("error", "") + json.dumps(report.get("log_tails"), indent=1)
    node = report["node"]
    assert node["ready"]
    assert node["labels"]["node.kubernetes.io/instance-type"] == "g6.2xlarge"
    assert node["labels"]["topology.kubernetes.io/zone"] == "us-east-1a"
    assert node["labels"]["karpenter.sh/capacity-type"] == "on-demand"
    assert node["labels"]["karpenter.sh/nodepool"] == "karpenter-gpu-prod-l4-a"
    assert node["labels"]["inferplane.dev/pool"] == "l4"
    assert {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"} in node["taints"]
    assert node["allocatable"]["nvidia.com/gpu"] == "1"
    marks = report["seconds_from_pod_created"]
    assert (
        marks["nodeclaim_created"]
        <= marks["node_created"]
        <= marks["node_ready"]
        <= marks["pod_bound"]
        <= rehearse_karpenter.LAUNCH_WAIT
    )
    limit = report["limit"]
    assert (limit["nodeclaims"], limit["nodes"]) == (2, 2)
    # Either added pod may get the second node (one scheduling batch); one of them waits.
    assert limit["pending_after_hold"] in (["serving-1"], ["serving-2"])
    assert limit["nodepool_status_resources"]["nvidia.com/gpu"] == "2"
    assert limit["karpenter_said"] == (
        "Failed to schedule pod, all available instance types exceed limits for nodepool "
        "(NodePool=karpenter-gpu-prod-l4-a)"
    )
