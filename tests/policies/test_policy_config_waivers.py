"""Policy config (levels, thresholds, located errors), waivers (waived, expired, unused),
and the generated rule documentation."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import pytest
import shapes as S

from inferplane.blueprint.errors import BlueprintError, Location
from inferplane.blueprint.model import Waiver
from inferplane.policies import rule_docs, waivers
from inferplane.policies.config import PolicyConfig, default_document, load
from inferplane.policies.engine import Result, evaluate
from inferplane.policies.rules import rule

ON = dt.date(2026, 6, 1)


def _failing_stack() -> S.Stack:
    resources = S.compliant()
    resources[4] = S.scaled_object("chat", lo=1.0)
    return S.stack(resources)


def test_levels_and_thresholds_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(
        "all: advisory\n"
        "warm-replicas:\n"
        "  enforcementLevel: mandatory\n"
        "  min_warm_replicas_per_zone: 1\n"
        "batching-window:\n"
        "  max_queue_delay_us: 5000\n"
        "pinned-images: disabled\n"
    )
    config = load(path)
    assert config.level(rule("warm-replicas")) == "mandatory"
    assert config.level(rule("same-zone-placement")) == "advisory"
    assert config.level(rule("pinned-images")) == "disabled"
    assert config.values_for(rule("batching-window")) == {"max_queue_delay_us": 5000}
    [result] = evaluate(_failing_stack(), config)
    assert (result.rule, result.level) == ("warm-replicas", "mandatory")
    lowered = PolicyConfig.from_mapping({"warm-replicas": "advisory"})
    assert [r.level for r in evaluate(_failing_stack(), lowered)] == ["advisory"]
    off = PolicyConfig.from_mapping({"warm-replicas": {"enforcementLevel": "disabled"}})
    assert evaluate(_failing_stack(), off) == []


@pytest.mark.parametrize(
    ("text", "line", "expected"),
    [
        (
            "warm-replicas:\n  min_warm_replica_per_zone: 2\n",
            2,
            "2:3: error: warm-replicas: Additional properties are not allowed "
            "('min_warm_replica_per_zone' was unexpected); use one of: enforcementLevel, "
            "min_warm_replicas_per_zone",
        ),
        ("batching-window: sometimes\n", 1, "is not one of"),
        ("warm-replica: mandatory\n", 1, "use one of: all, batching-window"),
        ("warm-replicas:\n  min_warm_replicas_per_zone: 0\n", 2, "0 is less than the minimum of 1"),
    ],
)
def test_config_errors_are_located(tmp_path: Path, text: str, line: int, expected: str) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(text)
    with pytest.raises(BlueprintError) as err:
        load(path)
    [diagnostic] = err.value.diagnostics
    assert diagnostic.location.line == line
    assert expected in diagnostic.format()


def test_default_config_file_is_valid_and_matches_the_rules() -> None:
    config = load(rule_docs.HERE / "default-config.yaml")
    assert config.levels == {k: v["enforcementLevel"] for k, v in default_document().items()}


def test_generated_files_are_current() -> None:
    assert rule_docs.stale() == [], "run: python -m inferplane.policies.rule_docs"


# --- waivers ------------------------------------------------------------------------------
def _waiver(
    target: str = "models.chat",
    expires: str = "2026-07-31",  # within 90 days of ON
    envs: tuple[str, ...] | None = None,
    rule_id: str = "warm-replicas",
) -> Waiver:
    return Waiver(
        rule_id, target, envs, "cold starts are fine here", expires, ("policies", "waivers", 0)
    )


def _results() -> list[Result]:
    return evaluate(_failing_stack())


def _loc(path: tuple[object, ...]) -> Location:
    return Location("bp.yaml", 90, 7)


def test_a_waiver_waives_but_keeps_the_result() -> None:
    use = waivers.WaiverUse.new()
    [result] = waivers.apply(_results(), [_waiver()], ON, _loc, use, platform=True)
    assert result.status == "waived" and not result.blocking
    assert result.waiver is not None and result.waiver.location == Location("bp.yaml", 90, 7)
    assert waivers.unused([_waiver()], ["prod"], use, ON) == []


def test_the_expiry_day_still_waives_the_next_day_does_not() -> None:
    [on_day] = waivers.apply(_results(), [_waiver(expires="2026-06-01")], ON, platform=True)
    assert on_day.status == "waived"
    [after] = waivers.apply(_results(), [_waiver(expires="2026-05-31")], ON, platform=True)
    assert after.status == "violation" and after.blocking
    assert after.message.endswith("(waiver expired 2026-05-31)")
    assert after.waiver is not None and after.waiver.expired


@pytest.mark.parametrize(
    "waiver",
    [
        _waiver(target="models.chat2"),
        _waiver(target="models"),  # a prefix of the target: waives
        _waiver(envs=("staging",)),
        _waiver(rule_id="same-zone-placement"),
    ],
)
def test_a_waiver_matches_rule_target_prefix_and_environment(waiver: Waiver) -> None:
    [result] = waivers.apply(_results(), [waiver], ON, platform=True)
    waived = waiver.target == "models"
    assert result.status == ("waived" if waived else "violation")


def test_an_unused_waiver_is_an_advisory_result() -> None:
    use = waivers.WaiverUse.new()
    stale = _waiver(target="models.ranker")
    waivers.apply(_results(), [stale], ON, None, use, platform=True)
    [result] = waivers.unused([stale], ["staging", "prod"], use, ON, _loc)
    assert (result.rule, result.level, result.status) == ("unused-waiver", "advisory", "violation")
    assert result.environment == "staging,prod" and result.location == Location("bp.yaml", 90, 7)
    assert "warm-replicas reports nothing on models.ranker" in result.message
    unknown = _waiver(rule_id="warm-replica")
    [result] = waivers.unused([unknown], ["prod"], waivers.WaiverUse.new(), ON)
    assert "no rule is named 'warm-replica'" in result.message
    # Out of scope (another environment checked) is not unused.
    assert waivers.unused([_waiver(envs=("staging",))], ["prod"], waivers.WaiverUse.new(), ON) == []


def test_today_is_overridable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INFERPLANE_TODAY", "2030-01-02")
    assert waivers.today() == dt.date(2030, 1, 2)
    assert waivers.today("2031-05-06") == dt.date(2031, 5, 6)


def test_a_blueprint_waiver_of_a_mandatory_rule_does_not_waive() -> None:
    [result] = waivers.apply(_results(), [_waiver()], ON, _loc)
    assert result.level == "mandatory" and result.status == "violation" and result.blocking
    assert result.message.endswith(
        "(waiver does not apply: a blueprint may waive advisory rules only; a waiver of "
        "mandatory rule warm-replicas is kept in the platform's policy config "
        "(mandatory_waivers), which the platform team owns)"
    )
    advisory = [dataclasses.replace(r, level="advisory") for r in _results()]
    [waived] = waivers.apply(advisory, [_waiver()], ON, _loc)
    assert waived.status == "waived"


def test_platform_waivers_are_read_from_the_policy_config(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(
        "mandatory_waivers:\n"
        "  - {blueprint: golden, rule: warm-replicas, target: models.chat,\n"
        "     reason: cold starts are fine here, expires: '2026-07-31'}\n"
        "  - {blueprint: other, rule: warm-replicas, target: models.chat,\n"
        "     reason: cold starts are fine here, expires: '2026-07-31'}\n"
    )
    config = load(path)
    [mine] = waivers.platform_waivers(config.mandatory_waivers, "golden")
    assert (mine.rule, mine.target, mine.path) == ("warm-replicas", "models.chat", (
        "mandatory_waivers", 0))  # fmt: skip
    assert config.locate_mandatory_waiver(mine.path) == Location(str(path), 2, 5)
    assert waivers.platform_waivers(config.mandatory_waivers, "nobody") == []
    path.write_text("mandatory_waivers:\n  - {blueprint: golden, rule: warm-replicas}\n")
    with pytest.raises(BlueprintError) as err:
        load(path)
    assert "mandatory_waivers[0]: 'target' is a required property" in str(err.value)


def test_a_waiver_expiring_too_far_ahead_does_not_waive() -> None:
    # ON + 90 days is 2026-08-30: the last expiry that still waives.
    [limit] = waivers.apply(_results(), [_waiver(expires="2026-08-30")], ON, platform=True)
    assert limit.status == "waived"
    [later] = waivers.apply(_results(), [_waiver(expires="2026-08-31")], ON, _loc, platform=True)
    assert later.status == "violation" and later.blocking
    assert later.message.endswith(
        "(waiver does not apply: it expires 2026-08-31, more than 90 days after 2026-06-01; "
        "set expires to 2026-08-30 or earlier)"
    )
    assert later.waiver is not None and later.waiver.as_dict()["refused"] is not None
    # The limit is policy config; an applying waiver beats a refused one for the same result.
    [looser] = waivers.apply(
        _results(), [_waiver(expires="2026-08-31")], ON, max_days=120, platform=True
    )
    assert looser.status == "waived"
    [both] = waivers.apply(
        _results(), [_waiver(expires="2027-01-01"), _waiver()], ON, platform=True
    )
    assert (
        both.status == "waived"
        and both.waiver is not None
        and both.waiver.expires == ("2026-07-31")
    )


def test_the_waiver_limit_is_policy_config(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text("waivers: {max_days: 30}\n")
    assert load(path).waiver_max_days == 30
    assert PolicyConfig().waiver_max_days == 90
    path.write_text("waivers: {max_day: 30}\n")
    with pytest.raises(BlueprintError) as err:
        load(path)
    assert str(err.value).endswith(
        "1:10: error: waivers: Additional properties are not allowed ('max_day' was "
        "unexpected); use: max_days"
    )
    path.write_text("waivers: {max_days: 1000}\n")
    with pytest.raises(BlueprintError) as err:
        load(path)
    assert "waivers.max_days: 1000 is greater than the maximum of 365" in str(err.value)


def test_mandatory_waivers_are_listed_once_with_their_environments() -> None:
    stack_results = _results()
    staging = [r.__class__(**{**r.__dict__, "environment": "staging"}) for r in stack_results]
    applied = waivers.apply([*stack_results, *staging], [_waiver()], ON, _loc, platform=True)
    entries = waivers.mandatory_waivers(applied)
    assert entries == [
        {
            "rule": "warm-replicas",
            "target": "models.chat",
            "environments": [stack_results[0].environment, "staging"],
            "expires": "2026-07-31",
            "reason": "cold starts are fine here",
            "location": "bp.yaml:90:7",
        }
    ]
    assert waivers.describe_mandatory(entries[0]) == (
        f"waived mandatory rule warm-replicas on models.chat in "
        f"{stack_results[0].environment}, staging until 2026-07-31 (bp.yaml:90:7): "
        "cold starts are fine here"
    )


def test_unusable_dates_are_clear_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INFERPLANE_TODAY", "tomorrow")
    with pytest.raises(ValueError) as err:
        waivers.today()
    assert str(err.value) == "INFERPLANE_TODAY='tomorrow' is not a date YYYY-MM-DD; unset it"
