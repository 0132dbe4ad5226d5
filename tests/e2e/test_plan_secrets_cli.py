"""`inferplane plan` lists every secret reference — model, name, source kind and name, and
where the planned objects mount it — and never a value, in the printed plan and plan.json."""

from __future__ import annotations

import json
from pathlib import Path

from test_plan_cli import HF_TOKEN, REFERENCE, all_text, inferplane

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
        "  models.chat.secrets.hf_token: from_env HF_TOKEN -> Secret chat-secrets",
        "      mounted in Deployment chat, volume secrets",
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
            "kubernetes_secret": "chat-secrets",
            "mounted_in": ["Deployment chat, volume secrets"],
        },
        {
            "model": "chat",
            "name": "openai_api_key",
            "source": "from_pulumi_config",
            "source_name": "openaiKey",
            "kubernetes_secret": "chat-secrets",
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
