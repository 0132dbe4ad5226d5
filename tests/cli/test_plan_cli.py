"""`inferplane plan` as a user runs it: a subprocess, its exit code, output and files."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import inprocess
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "blueprints" / "support-assistant.yaml"
HF_TOKEN = "hf_e2e_plan_7d1f0c9a5b"  # the value `from_env: HF_TOKEN` reads


def inferplane(
    *args: str, env: dict[str, str] | None = None, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    return inprocess.run(*args, cwd=cwd, env={"HF_TOKEN": HF_TOKEN, **(env or {})})


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


# --- --out replaces only a directory that a plan wrote ---------------------------------------
def _refused(result: subprocess.CompletedProcess[str], out: str, why: str) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stderr == (
        f"inferplane plan: error: --out {out}: {why}; choose a new or empty directory\n"
    )
    assert result.stdout == ""


def _repository(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / "plan.json").write_text("{}")  # a plan.json alone no longer marks a plan
    return repo


@pytest.mark.parametrize(
    ("out", "why"),
    [
        (".", "is the current directory"),
        ("..", "contains the current directory"),
        ("/", "is the root directory"),
    ],
)
def test_out_refuses_the_current_directory_and_its_ancestors(
    tmp_path: Path, out: str, why: str
) -> None:
    repo = _repository(tmp_path)
    _refused(inferplane("plan", str(REFERENCE), "--env", "prod", "--out", out, cwd=repo), out, why)
    assert (repo / ".git" / "HEAD").is_file() and (repo / "plan.json").is_file()


def test_out_refuses_a_repository_root_and_home(tmp_path: Path) -> None:
    repo = _repository(tmp_path)
    result = inferplane("plan", str(REFERENCE), "--env", "prod", "--out", str(repo))
    _refused(result, str(repo), "is the root of a git repository")
    (repo / ".inferplane-plan").write_text("")  # even with a marker planted in it
    result = inferplane("plan", str(REFERENCE), "--env", "prod", "--out", str(repo))
    _refused(result, str(repo), "is the root of a git repository")
    assert (repo / ".git" / "HEAD").is_file()
    home = tmp_path / "home"
    home.mkdir()
    result = inferplane(
        "plan", str(REFERENCE), "--env", "prod", "--out", str(home), env={"HOME": str(home)}
    )
    _refused(result, str(home), "is the home directory")
    result = inferplane(
        "plan", str(REFERENCE), "--env", "prod", "--out", str(tmp_path), env={"HOME": str(home)}
    )
    _refused(result, str(tmp_path), "contains the home directory")


def test_out_with_a_plan_json_but_no_marker_is_not_replaced(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "plan.json").write_text("{}")
    (out / "notes.txt").write_text("mine")
    result = inferplane("plan", str(REFERENCE), "--env", "prod", "--out", str(out))
    _refused(result, str(out), "not empty and not a previous plan (no .inferplane-plan file in it)")
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", "plan.json"]


def test_out_is_replaced_when_a_plan_wrote_it(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert inferplane("plan", str(REFERENCE), "--env", "prod", "--out", str(out)).returncode == 0
    assert (out / ".inferplane-plan").read_text().startswith("Written by `inferplane plan --out`")
    (out / "stale.txt").write_text("from an older plan")
    assert inferplane("plan", str(REFERENCE), "--env", "prod", "--out", str(out)).returncode == 0
    assert not (out / "stale.txt").exists() and (out / "plan.json").is_file()


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("file/out", "{parent} is a file, not a directory; choose a new or empty directory"),
        ("x" * 300, "cannot use the path: File name too long"),
    ],
    ids=["under-a-file", "too-long"],
)
def test_out_paths_that_cannot_exist_exit_2(tmp_path: Path, name: str, why: str) -> None:
    (tmp_path / "file").write_text("")
    out = str(tmp_path / name)
    result = inferplane("plan", str(REFERENCE), "--env", "prod", "--out", out)
    assert result.returncode == 2, result.stderr
    why = why.format(parent=tmp_path / "file")
    assert result.stderr == f"inferplane plan: error: --out {out}: {why}\n"


def test_out_in_an_unwritable_directory_exits_2(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    out = str(locked / "out")
    if os.access(locked, os.W_OK):  # root may write anywhere, but not into sysfs
        out = "/sys/inferplane-plan-out"
    result = inferplane("plan", str(REFERENCE), "--env", "prod", "--out", out)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"inferplane plan: error: --out {out}: cannot write")
    assert "Permission denied" in result.stderr or "Operation not permitted" in result.stderr


def test_a_kubernetes_plan_lists_the_nodes_the_cluster_must_have(tmp_path: Path) -> None:
    out = tmp_path / "local"
    proc = inferplane("plan", str(REFERENCE), "--env", "local", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "Plan: support-assistant / local (kubernetes local; zones zone-a, zone-b)" in (
        proc.stdout
    )
    lines = proc.stdout.splitlines()
    start = lines.index(
        "GPU nodes the cluster must have (nothing creates them; label and taint them so):"
    )
    assert lines[start + 1 : start + 4] == [
        "  pool l4, zone zone-a: 5 node(s), each with 1 x nvidia.com/gpu (1 GPU(s))",
        "    labels: inferplane.dev/pool=l4, inferplane.dev/blueprint=support-assistant, "
        "inferplane.dev/gpu=nvidia-l4, inferplane.dev/zone=zone-a, "
        "topology.kubernetes.io/zone=zone-a, topology.kubernetes.io/region=local",
        "    taints: nvidia.com/gpu=present:NoSchedule",
    ]
    plan = json.loads((out / "plan.json").read_text())
    assert [(n["pool"], n["zone"], n["nodes_min"]) for n in plan["nodes"]] == [
        ("l4", "zone-a", 5),
        ("l4", "zone-b", 5),
        ("h100", "zone-a", 1),
    ]
    assert not [r for r in plan["resources"] if r["type"].split(":")[0] in ("aws", "gcp")]
    # plans of aws and gcp environments carry no `nodes`: their node groups are resources
    cloud = tmp_path / "prod"
    assert inferplane("plan", str(REFERENCE), "--env", "prod", "--out", str(cloud)).returncode == 0
    assert "nodes" not in json.loads((cloud / "plan.json").read_text())
