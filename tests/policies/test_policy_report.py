"""Report formats on a hand-made report: exact text, escaping and SARIF structure."""

from __future__ import annotations

import json
from pathlib import Path

from inferplane.app.report import CheckReport, render, to_github, to_sarif
from inferplane.blueprint.errors import Location
from inferplane.policies.engine import Result, WaiverInfo


def _report(tmp_path: Path) -> CheckReport:
    blueprint = tmp_path / "bp.yaml"
    blueprint.write_text("models:\n  chat:\n    replicas: {min: 0, max: 2}\n")
    loc = Location(str(blueprint), 3, 21)
    waiver = WaiverInfo(
        "warm-replicas",
        "models.chat",
        ("staging",),
        "no traffic, 100%",
        "2027-03-31",
        False,
        Location(str(blueprint), 9, 7),
    )
    results = [
        Result(
            "warm-replicas",
            "mandatory",
            "waived",
            "staging",
            "models.chat",
            ("models", "chat", "replicas", "min"),
            "keeps 0 warm replicas",
            loc,
            None,
            waiver,
        ),
        Result(
            "latency-signal",
            "advisory",
            "violation",
            "staging",
            "models.chat",
            ("models", "chat", "autoscaling", "metric"),
            "scales on 100%,\nnot queues",
            loc,
        ),
    ]
    return CheckReport(results, [(str(blueprint), "staging"), (str(blueprint), "prod")])


def test_text_groups_by_environment_and_quotes_the_line(tmp_path: Path) -> None:
    text = render(_report(tmp_path), "text")
    bp = tmp_path / "bp.yaml"
    assert text.splitlines()[:5] == [
        f"{bp} · environment staging",
        f"  {bp}:3:21: waived warm-replicas: models.chat: keeps 0 warm replicas",
        "    3 |     replicas: {min: 0, max: 2}",
        "      |                     ^",
        f"    waived until 2027-03-31 ({bp}:9:7): no traffic, 100%",
    ]
    assert f"{bp} · environment prod\n  no findings" in text
    assert text.endswith(
        "inferplane check: 0 mandatory violations, 1 advisory, 1 waived in 2 environments of "
        "1 blueprint: passed\n"
        f"  waived mandatory rule warm-replicas on models.chat in staging until 2027-03-31 "
        f"({bp}:9:7): no traffic, 100%\n"
    )


def test_every_format_lists_the_waivers_of_mandatory_rules(tmp_path: Path) -> None:
    report = _report(tmp_path)
    bp = tmp_path / "bp.yaml"
    entry = {
        "rule": "warm-replicas",
        "target": "models.chat",
        "environments": ["staging"],
        "expires": "2027-03-31",
        "reason": "no traffic, 100%",
        "location": f"{bp}:9:7",
    }
    line = (
        f"  waived mandatory rule warm-replicas on models.chat in staging until 2027-03-31 "
        f"({bp}:9:7): no traffic, 100%"
    )
    assert json.loads(render(report, "json"))["summary"]["mandatory_waivers"] == [entry]
    sarif = json.loads(render(report, "sarif"))
    assert sarif["runs"][0]["properties"]["mandatoryWaivers"] == [entry]
    assert render(report, "github").splitlines()[-1] == line
    assert render(report, "text").splitlines()[-1] == line


def test_github_annotations_escape_data_and_properties(tmp_path: Path) -> None:
    lines = to_github(_report(tmp_path)).splitlines()
    assert lines[0].startswith("::notice file=")
    assert (
        ",line=3,col=21,title=warm-replicas [staging] models.chat::keeps 0 warm replicas "
        "(waived until 2027-03-31: no traffic, 100%25)" in lines[0]
    )
    assert lines[1].startswith("::warning ") and lines[1].endswith(
        "::scales on 100%25,%0Anot queues"
    )


def test_sarif_has_rules_help_and_suppressions(tmp_path: Path) -> None:
    sarif = json.loads(json.dumps(to_sarif(_report(tmp_path))))
    run = sarif["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert rules["warm-replicas"]["defaultConfiguration"] == {"level": "error"}
    assert "KEDA" in rules["warm-replicas"]["help"]["text"]
    waived, advisory = run["results"]
    assert waived["suppressions"][0]["kind"] == "external"
    assert waived["level"] == "error" and advisory["level"] == "warning"
    assert run["tool"]["driver"]["rules"][advisory["ruleIndex"]]["id"] == "latency-signal"
    assert advisory["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 3,
        "startColumn": 21,
    }


def test_a_waiver_that_does_not_apply_is_not_shown_as_waiving(tmp_path: Path) -> None:
    blueprint = tmp_path / "bp.yaml"
    blueprint.write_text("models:\n  chat:\n    replicas: {min: 1, max: 2}\n")
    refused = WaiverInfo(
        "warm-replicas",
        "models.chat",
        None,
        "little traffic at night",
        "2026-12-30",
        False,
        Location(str(blueprint), 9, 7),
        refused="a blueprint may waive advisory rules only",
    )
    result = Result(
        "warm-replicas",
        "mandatory",
        "violation",
        "prod",
        "models.chat",
        ("models", "chat", "replicas", "min"),
        "keeps 1 warm replica",
        Location(str(blueprint), 3, 21),
    ).with_waiver(refused)
    text = render(CheckReport([result], [(str(blueprint), "prod")]), "text")
    assert text.splitlines()[1:5] == [
        f"  {blueprint}:3:21: mandatory warm-replicas: models.chat: keeps 1 warm replica "
        "(waiver does not apply: a blueprint may waive advisory rules only)",
        "    3 |     replicas: {min: 1, max: 2}",
        "      |                     ^",
        f"    not waived by the waiver ({blueprint}:9:7)",
    ]
    assert "waived until" not in text
