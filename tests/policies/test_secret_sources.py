"""secret-sources on Secrets Manager names and runner variables (the fixtures cover the GCP
side; AWS needs an aws-only blueprint)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from inferplane.app.check import check_files
from inferplane.blueprint.secret_refs import secret_manager_name

ROOT = Path(__file__).resolve().parents[2]
TODAY = dt.date(2026, 6, 1)
LINE = "      hf_token: {from_env: HF_TOKEN}\n"
ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:"


@pytest.mark.parametrize(
    ("secret_id", "name"),
    [
        (ARN + "inferplane/chat/hf-AbCdEf", "inferplane/chat/hf-AbCdEf"),
        ("projects/p/secrets/inferplane-chat_hf/versions/1", "inferplane-chat_hf"),
        ("projects/p/secrets/x/versions/latest", "x"),
        ("hf", None),
    ],
)
def test_secret_manager_name(secret_id: str, name: str | None) -> None:
    assert secret_manager_name(secret_id) == name


def _aws_only() -> str:
    """chat-minimal without its kubernetes environment (which reads no secret manager)."""
    lines = (ROOT / "blueprints" / "chat-minimal.yaml").read_text().splitlines(keepends=True)
    start = lines.index("  local:\n")
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("    "))
    return "".join(lines[:start] + lines[end:])


def _check(tmp_path: Path, ref: str, config: str | None = None) -> list[tuple[int, str]]:
    text = _aws_only()
    assert LINE in text
    path = tmp_path / "chat-minimal.yaml"
    path.write_text(text.replace(LINE, "      hf_token: {" + ref + "}\n"))
    config_file = None
    if config is not None:
        config_file = tmp_path / "policy.yaml"
        config_file.write_text(config)
    report = check_files(
        [str(path)], ["prod"], str(config_file) if config_file else None, today=TODAY
    )
    assert not report.invalid, report.invalid
    line = text.splitlines().index(LINE.rstrip("\n")) + 1
    found = []
    for r in report.results:
        if r.rule == "secret-sources" and r.status == "violation":
            assert r.location is not None and r.location.file == str(path)
            assert r.location.line == line
            found.append((r.location.column, r.message))
    return found


def test_a_secrets_manager_secret_outside_the_blueprints_prefix_fails(tmp_path: Path) -> None:
    [(column, message)] = _check(tmp_path, f"from_secret_manager: {ARN}prod/finance/db")
    assert column == LINE.index("{") + 2 + len("from_secret_manager: ")
    assert "does not start with inferplane/chat-minimal/" in message
    assert "secret-sources.aws_secret_prefixes in its policy config" in message
    # Another blueprint's prefix is not the blueprint's own.
    assert _check(tmp_path, f"from_secret_manager: {ARN}inferplane/chat-minimal-x/hf")
    assert not _check(tmp_path, f"from_secret_manager: {ARN}inferplane/chat-minimal/hf")
    config = "secret-sources: {aws_secret_prefixes: ['prod/finance/']}\n"
    assert not _check(tmp_path, f"from_secret_manager: {ARN}prod/finance/db", config)


def test_a_runner_variable_the_platform_does_not_list_fails(tmp_path: Path) -> None:
    [(_, message)] = _check(tmp_path, "from_env: OTHER_TEAM_TOKEN")
    assert "reads the runner variable OTHER_TEAM_TOKEN, which the platform does not allow" in (
        message
    )
    assert "secret-sources.allowed_runner_variables in its policy config" in message
    assert not _check(tmp_path, "from_env: CHAT_MINIMAL__HF_TOKEN")  # {BLUEPRINT}__*
    # `_` alone is no separator: `CHAT_MINIMAL_X` could be blueprint chat-minimal-x's.
    assert _check(tmp_path, "from_env: CHAT_MINIMAL_HF_TOKEN")
    # A runner credential stays refused even when the platform lists it.
    config = "secret-sources: {allowed_runner_variables: ['*']}\n"
    [(_, message)] = _check(tmp_path, "from_env: VAULT_TOKEN", config)
    assert "a variable of the runner that deploys" in message


def test_a_blueprint_cannot_read_a_longer_named_blueprints_variables(tmp_path: Path) -> None:
    """`chat` must not read `chat-minimal`'s variables: the prefix ends in `__`, and no
    blueprint name has `--`, so `CHAT__` is a prefix of chat's variables only."""
    text = _aws_only().replace("name: chat-minimal", "name: chat", 1)
    path = tmp_path / "chat.yaml"
    path.write_text(text.replace(LINE, "      hf_token: {from_env: CHAT_MINIMAL__HF_TOKEN}\n"))
    report = check_files([str(path)], ["prod"], None, today=TODAY)
    assert not report.invalid, report.invalid
    [found] = [r for r in report.results if r.rule == "secret-sources"]
    assert found.status == "violation"
    assert "CHAT_MINIMAL__HF_TOKEN, which the platform does not allow" in found.message
    path.write_text(text.replace(LINE, "      hf_token: {from_env: CHAT__HF_TOKEN}\n"))
    report = check_files([str(path)], ["prod"], None, today=TODAY)
    assert not [r for r in report.results if r.rule == "secret-sources" and r.status == "violation"]
