"""Every rule against the golden blueprint changed in one place: exact rule, environment,
target and line, through the real program under mocks (`inferplane.app.check.check_files`)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
import yaml
from policy_fixtures import (
    FIXTURES,
    Fixture,
    fixtures,
    placements_config,
    write,
    write_config,
)

from inferplane.app.check import check_files
from inferplane.policies.rules import all_rules, rule_ids

TODAY = dt.date(2026, 6, 1)
ALL = fixtures()


def _violations(
    path: Path, rule: str | None = None, config: Path | None = None, invokes: Any = ()
) -> set[tuple[str, str, str, int]]:
    report = check_files(
        [str(path)], config_file=str(config) if config else None, today=TODAY, invokes=invokes
    )
    assert not report.invalid, report.invalid
    out = set()
    for r in report.results:
        if r.status == "violation" and (rule is None or r.rule == rule):
            assert r.location is not None and r.location.file == str(path), r
            out.add((r.rule, r.environment, r.target, r.location.line))
    return out


def test_golden_is_clean(tmp_path: Path) -> None:
    golden = FIXTURES / "golden.yaml"
    assert _violations(golden, config=placements_config(tmp_path)) == set()
    # The default places no aws or gcp environment.
    assert _violations(golden) == {
        ("deploy-placement", "staging", "environments.staging", 11),
        ("deploy-placement", "prod", "environments.prod", 21),
    }


def test_golden_with_a_rollout_is_clean(tmp_path: Path) -> None:
    golden = FIXTURES / "golden-rollout.yaml"
    assert _violations(golden, config=placements_config(tmp_path)) == set()


@pytest.mark.parametrize("fixture", ALL, ids=lambda f: f.id)
def test_fixture(fixture: Fixture, tmp_path: Path) -> None:
    path = write(fixture, tmp_path)
    config = write_config(fixture, tmp_path)
    expected = {(fixture.rule, e["environment"], e["target"], e["line"]) for e in fixture.expect}
    invokes = fixture.invokes
    if invokes == "example":
        invokes = yaml.safe_load(
            next(r for r in all_rules() if r.id == fixture.rule).example_invokes
        )
    assert _violations(path, fixture.rule, config, invokes) == expected, fixture.description


def _places(changes: dict[str, object]) -> set[str]:
    """The places a fixture changes. A model's own image and the release it declares
    (``base_release``) are one statement: validation refuses an image that is not vLLM's own
    release tag unless it says which release it is built from."""
    return {
        path.removesuffix(".base_release") + ".image"
        if path.endswith(".base_release")
        and path.removesuffix(".base_release") + ".image" in changes
        else path
        for path in changes
    }


def test_failing_fixtures_change_one_place() -> None:
    for fixture in ALL:
        if not fixture.passing:
            assert len(_places(fixture.set)) == 1, f"{fixture.id} changes {len(fixture.set)} places"


def test_every_rule_has_passing_and_failing_fixtures() -> None:
    by_rule: dict[str, list[Fixture]] = {}
    for fixture in ALL:
        by_rule.setdefault(fixture.rule, []).append(fixture)
    unknown = sorted(set(by_rule) - set(rule_ids()))
    assert not unknown, f"fixture folders for no rule: {unknown}"
    for rule in rule_ids():
        cases = by_rule.get(rule, [])
        assert any(f.passing for f in cases), f"{rule} has no passing fixture"
        assert any(not f.passing for f in cases), f"{rule} has no failing fixture"
