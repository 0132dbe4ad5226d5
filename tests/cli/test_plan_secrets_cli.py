"""`inferplane plan` lists every secret reference — model, name, source kind and name, and
where the planned objects mount it — and never a value, in the printed plan and plan.json."""

from __future__ import annotations

import json
from pathlib import Path

from test_plan_cli import HF_TOKEN, REFERENCE, all_text, inferplane

from inferplane.blueprint.loading.loader import load
from inferplane.components.serving.store.weights import HubSource

CONFIG_VALUE = "hf_config_value_9a2c"


def test_plan_lists_secret_references_without_values(tmp_path: Path) -> None:
    text = REFERENCE.read_text()
    text = text.replace(
        "    secrets:\n      hf_token: {from_env: HF_TOKEN}",
        "    secrets:\n      hf_token: {from_env: HF_TOKEN}\n"
        "      openai_api_key: {from_pulumi_config: openaiKey}",
    )
    blueprint = tmp_path / "bp.yaml"
    blueprint.write_text(text)
    out = tmp_path / "plan"
    result = inferplane(
        "plan",
        str(blueprint),
        "--env",
        "staging",
        "--out",
        str(out),
        env={"OPENAI_API_KEY": CONFIG_VALUE},
    )
    assert result.returncode == 0, result.stderr
    section = result.stdout.split("\nSecret references", 1)[1].split("\n\n", 1)[0]
    assert section.splitlines() == [
        " (values are never read by a plan):",
        # chat reads its weights from the store: no staging Job needs the Hub token, and
        # no model Secret ever holds it, so it is in no Secret at all.
        "  models.chat.secrets.hf_token: from_env HF_TOKEN -> no Secret",
        "      mounted nowhere",
        "  models.chat.secrets.openai_api_key: from_pulumi_config openaiKey -> Secret chat-secrets",
        "      mounted in Deployment chat, container vllm, env OPENAI_API_KEY",
    ]
    plan = json.loads((out / "plan.json").read_text())
    assert plan["secrets"] == [
        {
            "model": "chat",
            "name": "hf_token",
            "source": "from_env",
            "source_name": "HF_TOKEN",
            "kubernetes_secret": None,
            "copied_to": [],
            "mounted_in": [],
        },
        {
            "model": "chat",
            "name": "openai_api_key",
            "source": "from_pulumi_config",
            "source_name": "openaiKey",
            "kubernetes_secret": "chat-secrets",
            "copied_to": [],
            "mounted_in": ["Deployment chat, container vllm, env OPENAI_API_KEY"],
        },
    ]
    for value in (HF_TOKEN, CONFIG_VALUE):
        assert value not in result.stdout + result.stderr
        assert value not in all_text(out)


def test_plan_without_secrets_says_so(tmp_path: Path) -> None:
    text = REFERENCE.read_text().replace("    secrets:\n      hf_token: {from_env: HF_TOKEN}", "")
    blueprint = tmp_path / "bp.yaml"
    blueprint.write_text(text)
    result = inferplane("plan", str(blueprint), "--env", "staging")
    assert result.returncode == 0, result.stderr
    assert "\nSecret references: none\n" in result.stdout


def test_the_hub_token_of_an_hf_model_lands_only_in_its_staging_job(tmp_path: Path) -> None:
    blueprint = Path(__file__).resolve().parents[2] / "blueprints" / "chat-minimal.yaml"
    env = next(iter(load(blueprint).data["environments"]))
    result = inferplane("plan", str(blueprint), "--env", env, env={"HF_TOKEN": HF_TOKEN})
    assert result.returncode == 0, result.stderr
    section = result.stdout.split("\nSecret references", 1)[1].split("\nWrote ", 1)[0]
    job = HubSource("Qwen/Qwen2.5-7B-Instruct", "a09a35458c702b33eeacc393d103063234e8bc28")
    lines = section.splitlines()
    # Only the staging Job's own Secret holds the token: chat-secrets does not exist.
    assert lines[1].endswith(f"-> Secret {job.job_name}-hub-token")
    assert lines[2] == f"      mounted in Job {job.job_name}, volume secrets"
    assert not lines[3].startswith("      mounted")  # and nowhere else
    assert HF_TOKEN not in result.stdout + result.stderr
