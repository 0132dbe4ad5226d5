"""`inferplane plan` of blueprints whose model lists the ``lazy_image_pull`` lever, as a user
runs it: on GKE the plan counts the streamed pull and its node pool streams images; on EKS it
counts SOCI parallel pull's whole image at its rate and the nodes' launch template turns it
on; in a kubernetes environment the lever is refused at the lever, with exit code 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from test_plan_cli import inferplane

ROOT = Path(__file__).resolve().parents[2]
LEVER = "{scale_out: {levers: [lazy_image_pull]}}"


def blueprint(tmp_path: Path, name: str, old: str, new: str) -> Path:
    text = (ROOT / "blueprints" / name).read_text()
    assert text.count(old) == 1, old
    path = tmp_path / name
    path.write_text(text.replace(old, new))
    shutil.copytree(ROOT / "blueprints" / "schema", tmp_path / "schema")
    return path


def test_a_gke_plan_streams_the_pool_s_images_and_counts_the_streamed_pull(
    tmp_path: Path,
) -> None:
    # prod's chat-8b lists the lever, and its pool keeps no spare GPU: a scale-out waits for
    # a node, whose pull is streamed.
    overrides = (
        f"    overrides:\n      models: {{chat-8b: {LEVER}}}\n"
        "      gpu_pools: {l4: {nodes: {min: 2, max: 7}, spare_gpus: 0}}\n  local:\n"
    )
    path = blueprint(tmp_path, "llm-serving.yaml", "  local:\n", overrides)
    out = tmp_path / "out"
    result = inferplane("plan", str(path), "--env", "prod", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  scale-out chat-8b:"))
    assert "levers compile_cache, lazy_image_pull" in lines[at]
    pull = next(line for line in lines[at:] if line.strip().startswith("image_pull"))
    assert pull.split()[:3] == ["image_pull", "20", "s"]
    assert "[lazy_image_pull]" in pull

    resources: list[dict[str, Any]] = json.loads((out / "plan.json").read_text())["resources"]
    pools = {
        r["name"]: r["inputs"]["nodeConfig"].get("gcfsConfig")
        for r in resources
        if r["type"] == "gcp:container/nodePool:NodePool"
    }
    assert pools == {
        "llm-serving-prod-system": None,
        "llm-serving-prod-h100x4-a": None,
        "llm-serving-prod-l4-a": {"enabled": True},
        "llm-serving-prod-l4-classify-a": None,
    }
    roles = {
        r["inputs"]["role"] for r in resources if r["type"] == "gcp:projects/iAMMember:IAMMember"
    }
    assert "roles/serviceusage.serviceUsageConsumer" in roles


def test_an_eks_plan_counts_the_parallel_pull_of_the_whole_image(tmp_path: Path) -> None:
    lever = f"    overrides: {{models: {{chat: {LEVER}}}}}\n  local:\n"
    path = blueprint(tmp_path, "chat-minimal.yaml", "  local:\n", lever)
    out = tmp_path / "out"
    result = inferplane("plan", str(path), "--env", "prod", "--out", str(out))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  scale-out chat:"))
    pull = next(line for line in lines[at:] if line.strip().startswith("image_pull"))
    # 12 GB at 180 MB/s = 66.7 s: the whole image, faster; not GKE's 20 s.
    assert pull.split()[:3] == ["image_pull", "67", "s"]
    assert "[lazy_image_pull]" in pull and "SOCI parallel pull" in pull
    # prod is in eu-west-1, for which the price table has no gp3 row: the plan says so.
    assert (
        "lazy_image_pull (a faster gp3 root volume on every GPU node; the price table has no "
        "gp3 row for the region) [as listed]" in lines[at + 1]
    )
    resources: list[dict[str, Any]] = json.loads((out / "plan.json").read_text())["resources"]
    templates = [r for r in resources if r["type"] == "aws:ec2/launchTemplate:LaunchTemplate"]
    assert templates, "the GPU node groups start from a launch template that turns it on"


def test_an_eks_plan_prices_the_lazy_pull_s_faster_root_volumes(tmp_path: Path) -> None:
    # staging (us-east-1) keeps 4 l4 nodes in its one zone, each with a root volume of
    # 1,000 MiB/s and 16,000 IOPS: (875 MiB/s x $0.04 + 13,000 IOPS x $0.005) x 4 = $400.
    chat = "        chat:\n          replicas: {min: 1, max: 2}"
    path = blueprint(
        tmp_path,
        "support-assistant.yaml",
        chat,
        "        chat:\n          scale_out: {levers: [lazy_image_pull]}\n"
        "          replicas: {min: 1, max: 2}",
    )
    result = inferplane("plan", str(path), "--env", "staging", "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  scale-out chat:"))
    assert "levers compile_cache (free), lazy_image_pull (+$400/month) [as listed]" in lines[at + 1]


def test_a_kubernetes_environment_refuses_the_lever_at_the_lever(tmp_path: Path) -> None:
    slo = "    slo: {p95_ms: 2000, ttft_p95_ms: 400}\n"
    path = blueprint(
        tmp_path,
        "chat-minimal.yaml",
        slo,
        slo + "    scale_out: {levers: [standby, lazy_image_pull]}\n",
    )
    result = inferplane("plan", str(path), "--env", "prod", "--out", str(tmp_path / "out"))
    assert result.returncode == 2, result.stdout
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "error:" in line]
    assert errors == [
        f"{path}:60:35: error: models.chat.scale_out.levers[1]: lever lazy_image_pull cannot "
        "serve model 'chat' in environment 'local' (kubernetes): a kubernetes environment's "
        "nodes exist already: no new node joins on scale-out, and inferplane configures no "
        "node's container runtime there; remove it (levers: [standby]), or write levers: "
        "auto, which chooses among the levers that can",
    ]
    assert not (tmp_path / "out").exists()
