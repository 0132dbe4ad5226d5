"""Secrets at deploy time (`pulumi up` under mocks): an empty value, an unset Pulumi config
key, an empty Secret Manager secret and another account's secret each fail the update,
naming the secret, before the model's Kubernetes Secret is created."""

from __future__ import annotations

import re
from pathlib import Path

import pulumi
import pytest
from test_stacks import STACKS, _run_main_catching

from inferplane.app import offline_invokes, offline_mocks
from inferplane.app.offline import facts_of, run_callable
from inferplane.app.offline_mocks import ACCOUNT_ID
from inferplane.app.program import main
from inferplane.blueprint.resolution.resolve import resolve_file

REFERENCE = STACKS / "../blueprints/support-assistant.yaml"
MINIMAL = STACKS / "../blueprints/chat-minimal.yaml"  # prod on AWS, local on kubernetes
ENTRY = "hf_token: {from_env: HF_TOKEN}"


def _blueprint(tmp_path: Path, ref: str, base: Path = REFERENCE) -> tuple[str, int, int]:
    """`base` with chat's secret read from `ref`: path, line, column."""
    text = base.read_text()
    assert ENTRY in text
    if "from_secret_manager" in ref:
        # A kubernetes environment has no secret manager to read (validate refuses it):
        # the cloud environments alone.
        text, found = re.subn(r"\n  local:\n(?:    .*\n)+", "\n", text)
        assert found == 1
    text = text.replace(ENTRY, f"hf_token: {{{ref}}}")
    path = tmp_path / "bp.yaml"
    path.write_text(text)
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "hf_token: {" in ln)
    column = text.splitlines()[line - 1].index(ref.split(": ")[1]) + 1
    return str(path), line, column


def test_empty_variable_fails_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", "  ")
    config = {"inferplane:blueprint": "../blueprints/support-assistant.yaml"}
    rec, caught = _run_main_catching(config, "prod", "prod")
    assert len(rec) == 0
    message = str(caught[0])
    assert message.startswith("the blueprint is invalid; nothing was deployed:\n")
    assert message.endswith(
        "error: models.chat.secrets.hf_token.from_env: environment variable HF_TOKEN is "
        "empty (secret models.chat.secrets.hf_token reads it when `pulumi up` runs); export "
        "HF_TOKEN=... before running pulumi, or store the value with `pulumi config set "
        "--secret` and use from_pulumi_config"
    )


@pytest.mark.parametrize(("value", "what"), [(None, "is not set"), ("", "is empty")])
def test_pulumi_config_unset_or_empty(tmp_path: Path, value: str | None, what: str) -> None:
    path, line, column = _blueprint(tmp_path, "from_pulumi_config: hfToken")
    config = {"inferplane:blueprint": path}
    if value is not None:
        config["inferplane:hfToken"] = value
    rec, caught = _run_main_catching(config, "prod", "prod")
    assert len(rec) == 0
    assert str(caught[0]) == (
        "the blueprint is invalid; nothing was deployed:\n"
        f"{path}:{line}:{column}: error: models.chat.secrets.hf_token.from_pulumi_config: "
        f"Pulumi config hfToken {what} (secret models.chat.secrets.hf_token reads it); "
        "pulumi config set --secret hfToken ... in the stack"
    )


def test_pulumi_config_value_is_used_as_a_secret(tmp_path: Path) -> None:
    path, _, _ = _blueprint(tmp_path, "from_pulumi_config: inferplane:hfToken")
    config = {"inferplane:blueprint": path, "inferplane:hfToken": "hf_value_5d1e"}
    config["gcp:project"] = "acme-ml-prod"  # where the stack deploys: the blueprint's prod
    rec, caught = _run_main_catching(config, "prod", "prod")
    assert caught == []
    secrets = [r for r in rec if r.type == "kubernetes:core/v1:Secret"]
    # Read and checked, but held by no Secret: only a staging Job of an hf:// source keeps
    # the Hub token, and chat reads the store.
    assert [r.inputs["metadata"]["name"] for r in secrets] == []
    assert "hf_value_5d1e" not in repr([r.inputs for r in rec])


def _run_aws(path: str) -> pulumi.RunError:
    """Run the stack program of `path`'s prod (AWS) environment; the RunError it fails with."""
    env = resolve_file(path, "prod")
    with pytest.raises(pulumi.RunError) as caught:
        run_callable(
            lambda: main(STACKS),
            stack="prod",
            facts=facts_of(env),
            config={"inferplane:blueprint": path, "aws:region": env.region},
        )
    return caught.value


def test_secret_of_another_aws_account_fails_at_preview(tmp_path: Path) -> None:
    other = "111122223333"
    assert other != ACCOUNT_ID
    arn = f"arn:aws:secretsmanager:us-east-1:{other}:secret:hf-token"
    path, line, column = _blueprint(tmp_path, f"from_secret_manager: {arn}", MINIMAL)
    error = _run_aws(path)
    assert str(error) == (
        f"{path}:{line}:{column}: error: models.chat.secrets.hf_token.from_secret_manager: "
        f"the secret belongs to AWS account {other}, not the account that deploys "
        f"({ACCOUNT_ID}); keep the secret in the environment's own account"
    )


def test_empty_secret_manager_value_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = offline_invokes.answers

    def answers(facts):  # the same mocks, with a secret that holds an empty string
        out = real(facts)
        out["aws:secretsmanager/getSecretVersion:getSecretVersion"] = lambda a: {
            "id": a["secretId"],
            "secretString": "",
        }
        return out

    monkeypatch.setattr(offline_mocks, "answers", answers)
    arn = f"arn:aws:secretsmanager:us-east-1:{ACCOUNT_ID}:secret:hf-token"
    path, line, column = _blueprint(tmp_path, f"from_secret_manager: {arn}", MINIMAL)
    error = _run_aws(path)
    assert str(error) == (
        f"{path}:{line}:{column}: error: models.chat.secrets.hf_token.from_secret_manager: "
        f"Secret Manager secret {arn} is empty (secret 'hf_token' of model 'chat' reads it); "
        "store a value in it, or point the reference at the secret that holds one"
    )
