"""An invalid blueprint checked together with a valid one: reported in the chosen format,
exit 2, and the valid file is still checked and reported."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import inprocess
import pytest

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "blueprints" / "support-assistant.yaml"
TODAY = "2026-06-01"
# The platform's policy config places staging (the default places no aws environment).
PLATFORM = str(ROOT / "policies" / "platform-config.yaml")
FLAGS = ("--policy-config", PLATFORM, "--env", "staging", "--format")

# The valid file is the reference blueprint, which other tests plan too: planned once.
pytestmark = pytest.mark.usefixtures("plans_by_environment")

INVALID = [
    (
        "gpu_pools.h100.gpus_per_node",
        "aws has no nvidia-h100-80gb node with 3 GPUs",
        "use one of 1, 8, or name an `instance_type`",
    ),
    (
        "gpu_pools.h100.gpus_per_node",
        "gcp has no nvidia-h100-80gb node with 3 GPUs",
        "use one of 1, 2, 4, 8, or name an `instance_type`",
    ),
]
SUMMARY = (
    "inferplane check: 0 mandatory violations, 2 advisory, 0 waived in 1 environment of "
    "1 blueprint, 1 invalid file: failed"
)


@pytest.fixture(scope="session")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`bad.yaml` (the reference with an impossible GPU count on line 88) and `good.yaml`."""
    work = tmp_path_factory.mktemp("invalid")
    text = REFERENCE.read_text(encoding="utf-8")
    assert text.splitlines()[87].strip() == "gpus_per_node: 8"
    (work / "bad.yaml").write_text(text.replace("gpus_per_node: 8", "gpus_per_node: 3"))
    shutil.copy(REFERENCE, work / "good.yaml")
    return work


def run_check(workdir: Path, fmt: str) -> subprocess.CompletedProcess[str]:
    return inprocess.run(
        "check",
        "bad.yaml",
        "good.yaml",
        *FLAGS,
        fmt,
        cwd=workdir,
        env={"HF_TOKEN": "hf_e2e_check", "INFERPLANE_TODAY": TODAY},
    )


def test_text_prints_located_diagnostics_and_the_other_files_results(workdir: Path) -> None:
    proc = run_check(workdir, "text")
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"bad.yaml:88:20: error: {path}: {what}; {fix}" for path, what, fix in INVALID
    ]
    assert proc.stdout.startswith("good.yaml · environment staging\n")
    assert "advisory latency-signal: models.toxicity" in proc.stdout
    assert proc.stdout.endswith(SUMMARY + "\n")


def test_json_carries_the_diagnostics_and_the_other_files_results(workdir: Path) -> None:
    proc = run_check(workdir, "json")
    assert (proc.returncode, proc.stderr) == (2, "")
    report = json.loads(proc.stdout)
    assert report["diagnostics"] == [
        {
            "severity": "error",
            "location": {"file": "bad.yaml", "line": 88, "column": 20},
            "field": path,
            "message": what,
            "hint": fix,
        }
        for path, what, fix in INVALID
    ]
    assert report["summary"] == {
        "passed": False,
        "mandatory": 0,
        "advisory": 2,
        "waived": 0,
        "invalid": 1,
        "mandatory_waivers": [],
        "environments": [{"blueprint": "good.yaml", "environment": "staging"}],
    }
    assert {r["location"]["file"] for r in report["results"]} == {"good.yaml"}


def test_sarif_reports_a_located_invalid_blueprint_result(workdir: Path) -> None:
    proc = run_check(workdir, "sarif")
    assert (proc.returncode, proc.stderr) == (2, "")
    (run,) = json.loads(proc.stdout)["runs"]
    rules = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    index = rules.index("invalid-blueprint")
    invalid = [r for r in run["results"] if r["ruleId"] == "invalid-blueprint"]
    assert invalid == [
        {
            "ruleId": "invalid-blueprint",
            "ruleIndex": index,
            "level": "error",
            "message": {"text": f"{path}: {what}; {fix}"},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": "bad.yaml", "uriBaseId": "%SRCROOT%"},
                        "region": {"startLine": 88, "startColumn": 20},
                    }
                }
            ],
            "properties": {"field": path},
        }
        for path, what, fix in INVALID
    ]
    others = [r for r in run["results"] if r["ruleId"] != "invalid-blueprint"]
    assert len(others) == 2  # latency-signal on toxicity, scale-out-budget on chat
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in others} == {
        "good.yaml"
    }


def test_github_annotates_the_invalid_value_and_the_other_files_results(workdir: Path) -> None:
    proc = run_check(workdir, "github")
    assert (proc.returncode, proc.stderr) == (2, "")
    lines = proc.stdout.splitlines()
    assert lines[:2] == [
        f"::error file=bad.yaml,line=88,col=20,title=invalid-blueprint::{path}: {what}; {fix}"
        for path, what, fix in INVALID
    ]
    assert [line.split(" ", 1)[0] for line in lines[2:-1]] == ["::warning", "::warning"]
    assert all("file=good.yaml," in line for line in lines[2:-1])
    assert lines[-1] == SUMMARY


@pytest.mark.parametrize(
    ("port", "why"),
    [
        ("99999", "port 99999 is not a TCP port (1 to 65535)"),
        ("0", "port 0 is not a TCP port (1 to 65535)"),
    ],
)
@pytest.mark.parametrize("command", ["validate", "check", "plan"])
def test_a_store_port_out_of_range_is_a_located_error(
    tmp_path: Path, command: str, port: str, why: str
) -> None:
    """Port 99999 once crashed check and plan (exit 3), and port 0 opened port 80."""
    text = (ROOT / "blueprints" / "chat-minimal.yaml").read_text(encoding="utf-8")
    endpoint = "http://store.inferplane-system.svc:9000"
    assert text.splitlines()[22].strip() == f"model_store_endpoint: {endpoint}"
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace(endpoint, endpoint.replace("9000", port)))
    extra = ["--env", "local", "--out", str(tmp_path / "plan")] if command == "plan" else []
    result = subprocess.run(
        [sys.executable, "-m", "inferplane", command, str(bad), *extra],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "INFERPLANE_TODAY": TODAY},
        timeout=300,
        check=False,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert (
        f"{bad}:23:27: error: environments.local.model_store_endpoint: {why}; write "
        "http(s)://<service>.<namespace>.svc:<port> for a store in the cluster, or the IP "
        "address of one outside it, with a port from 1 to 65535"
    ) in result.stdout + result.stderr
    assert "Traceback" not in result.stderr
