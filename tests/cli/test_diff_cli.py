"""`inferplane diff` as a user runs it: two plans of a blueprint before and after an edit."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import inprocess
import pytest

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "blueprints" / "support-assistant.yaml"


def inferplane(*args: str) -> subprocess.CompletedProcess[str]:
    return inprocess.run(*args, cwd=ROOT)


# Every test here reads the plans of one module fixture: one worker makes them once.
pytestmark = pytest.mark.xdist_group("diff-cli")


@pytest.fixture(scope="session")
def plans(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The reference blueprint's prod plan (with an API key, so chat has a Secret of its own:
    the Hub token is never in it), and the plan after raising chat's max replicas and
    raising its max_num_seqs."""
    tmp = tmp_path_factory.mktemp("diff")
    token = "      hf_token: {from_env: HF_TOKEN}"
    text = REFERENCE.read_text(encoding="utf-8")
    assert token in text
    text = text.replace(token, token + "\n      openai_api_key: {from_pulumi_config: openaiKey}")
    edited = text.replace("replicas: {min: 2, max: 8}", "replicas: {min: 2, max: 12}", 1)
    assert edited != text
    seqs = edited.replace("max_num_seqs: 64", "max_num_seqs: 96", 1)
    assert seqs != edited
    edited = seqs
    base, blueprint = tmp / "base.yaml", tmp / "edited.yaml"
    base.write_text(text, encoding="utf-8")
    blueprint.write_text(edited, encoding="utf-8")
    old, new = tmp / "old", tmp / "new"
    for source, out in ((base, old), (blueprint, new)):
        run = inferplane("plan", str(source), "--env", "prod", "--out", str(out))
        assert run.returncode == 0, run.stderr
    # A resource only in the new plan, and one only in the old: edited plan.json files.
    doc = json.loads((new / "plan.json").read_text())
    doc["resources"].append(
        {"type": "kubernetes:core/v1:ConfigMap", "name": "extra", "parent": None, "inputs": {}}
    )
    gone = doc["resources"].pop(0)
    secret = next(r for r in doc["resources"] if r["type"] == "kubernetes:core/v1:Secret")
    secret["inputs"]["stringData"] = {"openai_api_key": "plaintext_must_not_show"}
    (new / "plan.json").write_text(json.dumps(doc))
    (tmp / "gone").write_text(f"{gone['type']} {gone['name']}")
    return old, new


def test_diff_lists_added_removed_and_changed_fields(plans: tuple[Path, Path]) -> None:
    old, new = plans
    run = inferplane("diff", str(old), str(new))
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    gone = (old.parent / "gone").read_text()
    assert f"- {gone}" in lines
    assert "+ kubernetes:core/v1:ConfigMap extra" in lines
    # The ScaledObject of chat: its max replica count, old → new.
    i = lines.index(
        "~ kubernetes:keda.sh/v1alpha1:ScaledObject "
        "support-assistant-prod-chat-autoscaling-scaledobject"
    )
    assert "    inputs.spec.maxReplicaCount: 8 → 12" in lines[i + 1 :]
    # The serving container's command line, in the blueprint's terms.
    i = lines.index("~ kubernetes:apps/v1:Deployment support-assistant-prod-chat")
    assert "    inputs.spec.template.spec.containers[0].args: --max-num-seqs 64 → 96" in lines[i:]
    # chat has no rollout: its pods all roll now, and the diff says so.
    j = next(k for k in range(i + 1, len(lines)) if not lines[k].startswith("    "))
    assert "    rolls every pod now: the Deployment's own rolling update, no canary" in lines[i:j]
    assert not any("args[" in line for line in lines)
    # Secrets are masked, whatever a plan file holds.
    assert "plaintext_must_not_show" not in run.stdout
    assert any(
        line.endswith("inputs.stringData.openai_api_key: [secret] (changed)") for line in lines
    )
    # Besides those two: chat's compile-cache Job and its programs' ConfigMap, both named
    # by the compile key, which max_num_seqs is part of.
    assert any(
        line.startswith("+ kubernetes:batch/v1:Job support-assistant-prod-chat-compile-")
        for line in lines
    )
    assert lines[-1].startswith("3 to add, 3 to remove, ")


def test_diff_of_a_plan_with_itself_is_empty(plans: tuple[Path, Path]) -> None:
    old, _ = plans
    run = inferplane("diff", str(old), str(old))
    assert run.returncode == 0, run.stderr
    count = len(json.loads((old / "plan.json").read_text())["resources"])
    assert run.stdout == f"0 to add, 0 to remove, 0 to change, {count} unchanged\n"


def test_a_directory_that_is_not_a_plan_exits_2(tmp_path: Path, plans: tuple[Path, Path]) -> None:
    old, _ = plans
    run = inferplane("diff", str(old), str(tmp_path))
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr == (
        f"inferplane diff: error: {tmp_path}: no plan.json, so not a plan directory; "
        "write one with `inferplane plan BLUEPRINT --env ENV --out DIR`\n"
    )
    (tmp_path / "plan.json").write_text('{"resources": 3}')
    run = inferplane("diff", str(old), str(tmp_path))
    assert run.returncode == 2
    assert run.stderr == (
        f"inferplane diff: error: {tmp_path / 'plan.json'}: has no list of resources with "
        "type and name; write one with `inferplane plan BLUEPRINT --env ENV --out DIR`\n"
    )
