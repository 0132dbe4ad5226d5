"""`inferplane plan` as a user runs it: a subprocess, its exit code, output and files."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "blueprints" / "support-assistant.yaml"
HF_TOKEN = "hf_e2e_plan_7d1f0c9a5b"  # the value `from_env: HF_TOKEN` reads


def inferplane(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "inferplane", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "HF_TOKEN": HF_TOKEN, **(env or {})},
    )


def all_text(directory: Path) -> str:
    return "\n".join(p.read_text() for p in sorted(directory.rglob("*")) if p.is_file())


@pytest.mark.parametrize(
    ("environment", "expected_types"),
    [
        ("staging", {"aws:eks/cluster:Cluster", "aws:eks/nodeGroup:NodeGroup"}),
        ("prod", {"gcp:container/nodePool:NodePool"}),
    ],
)
def test_plan_writes_a_complete_secret_free_plan(
    environment: str, expected_types: set[str], tmp_path: Path
) -> None:
    out = tmp_path / environment
    started = time.perf_counter()
    result = inferplane("plan", str(REFERENCE), "--env", environment, "--out", str(out))
    elapsed = time.perf_counter() - started
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    stdout = result.stdout
    assert stdout.startswith(f"Plan: support-assistant / {environment} (")
    assert f"inferplane:stack:InferenceStack  support-assistant-{environment}" in stdout
    total = int(re.search(r"^\s+(\d+)  total$", stdout, re.M).group(1))  # type: ignore[union-attr]

    doc = json.loads((out / "plan.json").read_text())
    assert (doc["blueprint"], doc["environment"]) == ("support-assistant", environment)
    assert len(doc["resources"]) == total
    types = {r["type"] for r in doc["resources"]}
    assert expected_types <= types
    names = {r["name"] for r in doc["resources"]}
    assert all(r["parent"] is None or r["parent"] in names for r in doc["resources"])

    manifests = sorted((out / "manifests").glob("*.yaml"))
    assert manifests, "the stack creates Kubernetes objects"
    kinds = set()
    for path in manifests:
        obj = yaml.safe_load(path.read_text())
        assert {"apiVersion", "kind", "metadata"} <= set(obj), path.name
        assert obj["metadata"]["name"], path.name
        kinds.add(obj["kind"])
        assert re.fullmatch(r"\d{2,}-[a-z0-9.-]+\.yaml", path.name)
    assert {"Deployment", "Service", "ScaledObject", "Namespace", "ConfigMap"} <= kinds
    helm = {p.stem: yaml.safe_load(p.read_text()) for p in (out / "helm").glob("*.yaml")}
    assert {"gpu-operator", "keda", "kube-prometheus-stack"} <= set(helm)
    for release in helm.values():
        assert release["chart"] and release["version"] and release["repository"]

    # no secret value anywhere a reviewer or CI log could see it
    assert HF_TOKEN not in all_text(out)
    assert HF_TOKEN not in stdout + result.stderr
    print(f"\nplan {environment}: {total} resources, {elapsed:.2f}s wall (subprocess)")


def test_invalid_blueprint_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(REFERENCE.read_text().replace("max_num_seqs: 64", "max_num_seqs: lots"))
    out = tmp_path / "out"
    result = inferplane("plan", str(bad), "--env", "staging", "--out", str(out))
    assert result.returncode == 2
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert f"{bad}:" in result.stderr and "models.chat.vllm.max_num_seqs" in result.stderr
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [bad]


def test_unknown_environment_exits_2(tmp_path: Path) -> None:
    result = inferplane("plan", str(REFERENCE), "--env", "qa", "--out", str(tmp_path / "o"))
    assert result.returncode == 2
    assert "no environment named 'qa'" in result.stderr
    assert not (tmp_path / "o").exists()


def test_out_that_is_not_a_plan_is_refused(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    result = inferplane("plan", str(REFERENCE), "--env", "prod", "--out", str(tmp_path))
    assert result.returncode == 2
    assert "not a previous plan" in result.stderr and "Traceback" not in result.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_internal_error_is_one_line_unless_debugging(tmp_path: Path) -> None:
    boom = (
        "import sys, inferplane.app.offline as offline\n"
        "def broken(env, **kw):\n"
        "    raise RuntimeError('mock monitor exploded')\n"
        "offline.run_program = broken\n"
        "from inferplane.app.cli import main\n"
        f"sys.exit(main(['plan', {str(REFERENCE)!r}, '--env', 'prod', '--out', "
        f"{str(tmp_path / 'o')!r}]))\n"
    )

    def run(debug: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", boom],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env={**os.environ, "INFERPLANE_DEBUG": debug},
        )

    quiet = run("0")
    assert quiet.returncode == 3
    assert "internal error: RuntimeError: mock monitor exploded" in quiet.stderr
    assert "Traceback" not in quiet.stderr
    assert not (tmp_path / "o").exists()
    loud = run("1")
    assert loud.returncode == 3 and "Traceback" in loud.stderr
