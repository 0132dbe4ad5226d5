"""The rendered rule groups under Prometheus' own tool: ``promtool check rules`` and
``promtool test rules`` (input series -> expected alerts, fixtures in ``promtool/``).

promtool comes from Debian's ``prometheus`` package. Without it these tests skip, except
under CI (``CI=true``), where a missing promtool is a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from serving_fixtures import args_of

from inferplane.blueprint.model import Environment
from inferplane.components.serving.observability import rules

NS = "support-assistant"
FIXTURES = Path(__file__).parent / "promtool"
TEST_FILES = sorted(FIXTURES.glob("*.test.yaml"))


@pytest.fixture(scope="session")
def promtool() -> str:
    path = shutil.which("promtool")
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("promtool is required under CI: apt-get install prometheus")
        pytest.skip("promtool not installed (Debian package `prometheus`)")
    return path


def rule_file(env: Environment, *, annotations: bool = True) -> dict[str, Any]:
    """All models' groups of one environment, as one Prometheus rule file."""
    groups = [
        g for model in env.models.values() for g in rules.rule_groups(*args_of(env, model), NS)
    ]
    if not annotations:
        # Unit tests compare labels; annotation text is `promtool check rules`' business
        # (it parses every template) and the component tests'.
        for group in groups:
            for rule in group["rules"]:
                rule.pop("annotations", None)
    return {"groups": groups}


def run(promtool: str, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [promtool, *map(str, args)], capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize("env_name", ["staging", "prod"])
def test_check_rules(
    env_name: str,
    promtool: str,
    tmp_path: Path,
    reference_env: Callable[[str], Environment],
) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump(rule_file(reference_env(env_name)), sort_keys=False))
    result = run(promtool, "check", "rules", path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout + result.stderr


@pytest.mark.parametrize("test_file", TEST_FILES, ids=[p.name for p in TEST_FILES])
def test_rules_unit_tests(
    test_file: Path,
    promtool: str,
    tmp_path: Path,
    reference_env: Callable[[str], Environment],
) -> None:
    env = reference_env("prod")
    (tmp_path / "rules.yaml").write_text(
        yaml.safe_dump(rule_file(env, annotations=False), sort_keys=False)
    )
    shutil.copy(test_file, tmp_path / test_file.name)
    result = run(promtool, "test", "rules", tmp_path / test_file.name)
    assert result.returncode == 0, result.stdout + result.stderr


def test_fixtures_cover_the_required_alerts_of_both_servers() -> None:
    fired: set[tuple[str, str]] = set()
    for path in TEST_FILES:
        for case in yaml.safe_load(path.read_text())["tests"]:
            for check in case.get("alert_rule_test", []):
                for alert in check["exp_alerts"]:
                    fired.add((check["alertname"], alert["exp_labels"]["model"]))
    for alert in (
        "InferenceP95LatencyAboveSLO",
        "InferenceQueueGrowing",
        "InferenceNoReadyReplica",
    ):
        assert (alert, "toxicity") in fired  # Triton
        assert (alert, "chat") in fired  # vLLM
    assert ("InferenceP95LatencyAboveSLO", "ranker") in fired  # Triton with response cache
    assert ("InferenceTTFTAboveSLO", "chat") in fired
