"""`inferplane check` as a user and CI run it: a subprocess, its exit code and reports."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import inprocess
import pytest
import yaml

from inferplane.app.check import check_files
from inferplane.policies.rules import rule

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "blueprints" / "support-assistant.yaml"
sys.path.insert(0, str(ROOT / "tests" / "policies"))

from bundled_check import BUNDLED, BUNDLED_CHECK, BundledCheck  # noqa: E402
from policy_fixtures import Fixture, fixtures, write  # noqa: E402

TODAY = "2026-06-01"

# Most of these check the reference blueprint, or it changed in one place: an environment
# planned before in the session is not planned again (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("plans_by_environment")


def check(
    *args: str, env: dict[str, str] | None = None, timeout: int = 300
) -> subprocess.CompletedProcess[str]:
    del timeout  # in this process: the test runner's own timeout applies
    return inprocess.run(
        "check",
        *args,
        cwd=ROOT,
        env={"HF_TOKEN": "hf_e2e_check", "INFERPLANE_TODAY": TODAY, **(env or {})},
    )


WAIVED_STAGING = """\
mandatory_waivers:
  - blueprint: support-assistant
    rule: warm-replicas
    target: models.chat
    environments: [staging]
    reason: Staging has no customer traffic; a cold start there is acceptable.
    expires: {expires}
deploy-placement:
  allowed_placements:
    support-assistant/staging: [{{cloud: aws, region: us-east-1}}]
    support-assistant/prod:
      - {{cloud: gcp, project: acme-ml-prod, region: us-central1, cluster: prod-gke}}
"""
BLUEPRINT_WAIVER = """
policies:
  waivers:
    - rule: warm-replicas
      target: models.chat
      environments: [staging]
      reason: Staging has no customer traffic; a cold start there is acceptable.
      expires: 2026-08-30
"""


def cold_staging(directory: Path, extra: str = "") -> Path:
    """The reference, with staging's chat at min 0 (a warm-replicas violation)."""
    text = REFERENCE.read_text()
    old = "replicas: {min: 1, max: 2}   # min 0 (cold starts) would need a waiver: see below"
    assert old in text
    path = directory / "support-assistant.yaml"
    path.write_text(text.replace(old, "replicas: {min: 0, max: 2}") + extra)
    return path


def with_staging_waiver(directory: Path, expires: str = "2026-08-30") -> tuple[Path, Path]:
    """The cold-staging reference and a platform policy config whose mandatory_waivers
    allow it (the shipped example carries no waiver: a dated one would fail within months;
    a blueprint may not waive a mandatory rule itself)."""
    config = directory / "policy.yaml"
    config.write_text(WAIVED_STAGING.format(expires=expires))
    return cold_staging(directory), config


def test_a_blueprint_cannot_waive_a_mandatory_rule(tmp_path: Path) -> None:
    path = cold_staging(tmp_path, BLUEPRINT_WAIVER)
    proc = check(str(path), "--env", "staging")
    assert proc.returncode == 1
    assert "mandatory warm-replicas: models.chat: keeps 0 warm replicas" in proc.stdout
    assert (
        "(waiver does not apply: a blueprint may waive advisory rules only; a waiver of "
        "mandatory rule warm-replicas is kept in the platform's policy config "
        "(mandatory_waivers), which the platform team owns)"
    ) in proc.stdout


def test_reference_blueprint_passes_without_waivers() -> None:
    """It does not date. The command itself runs it in the check of every bundled
    blueprint (`test_the_bundled_blueprints_pass_the_shipped_platform_config`); here the
    same function judges it on later days, in this process."""
    reference = str(REFERENCE)
    for today in ("2026-06-01", "2027-06-01", "2030-01-01"):
        report = check_files(
            [reference],
            config_file=str(ROOT / "policies" / "platform-config.yaml"),
            today=dt.date.fromisoformat(today),
        )
        assert report.passed, (today, [r for r in report.results if r.blocking], report.invalid)


def test_the_default_config_places_no_cloud_environment() -> None:
    """Where an aws or gcp environment deploys is the platform's to list: without a policy
    config the reference's staging and prod fail, each naming the entry to add; local (a
    kubeconfig context) is held to its stack's kubernetes:context by the stack program."""
    proc = check(str(REFERENCE.relative_to(ROOT)), "--format", "json")
    assert proc.returncode == 1, proc.stderr
    failing = [
        (r["rule"], r["environment"], r["location"]["line"], r["message"])
        for r in json.loads(proc.stdout)["results"]
        if r["status"] == "violation" and r["level"] == "mandatory"
    ]
    assert failing == [
        (
            "deploy-placement",
            "prod",
            41,
            "the platform lists no placement for blueprint support-assistant environment "
            "prod, which would deploy to gcp project acme-ml-prod, region us-central1, "
            "location us-central1, cluster prod-gke: where an environment deploys (and whose "
            "grants follow it there) is the platform's decision; the platform team adds "
            '`"support-assistant/prod": [{cloud: gcp, project: acme-ml-prod, region: '
            "us-central1, location: us-central1, cluster: prod-gke}]` under "
            "deploy-placement.allowed_placements in its policy config",
        ),
        (
            "deploy-placement",
            "staging",
            22,
            "the platform lists no placement for blueprint support-assistant environment "
            "staging, which would deploy to aws region us-east-1, a cluster it creates: where "
            "an environment deploys (and whose grants follow it there) is the platform's "
            'decision; the platform team adds `"support-assistant/staging": [{cloud: aws, '
            "region: us-east-1}]` under deploy-placement.allowed_placements in its policy "
            "config",
        ),
    ]


def test_a_waived_mandatory_rule_is_reported_and_summarised(tmp_path: Path) -> None:
    path, config = with_staging_waiver(tmp_path)
    proc = check(str(path), "--format", "json", "--policy-config", str(config))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["version"] == 1 and report["summary"]["passed"] is True
    assert report["summary"]["mandatory"] == 0
    waived = [r for r in report["results"] if r["status"] == "waived"]
    assert [(r["rule"], r["environment"], r["target"]) for r in waived] == [
        ("warm-replicas", "staging", "models.chat")
    ]
    [result] = waived
    assert result["level"] == "mandatory"
    assert result["location"] == {"file": str(path), "line": 32, "column": 27}
    assert result["waiver"]["reason"].startswith("Staging has no customer traffic")
    assert result["waiver"]["expires"] == "2026-08-30" and result["waiver"]["expired"] is False
    assert {e["environment"] for e in report["summary"]["environments"]} == {
        "staging",
        "prod",
        "local",
    }
    line = 2
    assert report["summary"]["mandatory_waivers"] == [
        {
            "rule": "warm-replicas",
            "target": "models.chat",
            "environments": ["staging"],
            "expires": "2026-08-30",
            "reason": "Staging has no customer traffic; a cold start there is acceptable.",
            "location": f"{config}:{line}:5",
        }
    ]
    text = check(str(path), "--policy-config", str(config)).stdout
    assert text.endswith(
        "  waived mandatory rule warm-replicas on models.chat in staging until 2026-08-30 "
        f"({config}:{line}:5): Staging has no customer traffic; a cold start there is "
        "acceptable.\n"
    )


def test_a_waiver_expiring_too_far_ahead_fails_the_check(tmp_path: Path) -> None:
    path, config = with_staging_waiver(tmp_path, expires="2026-08-31")  # TODAY + 91 days
    proc = check(str(path), "--env", "staging", "--policy-config", str(config))
    assert proc.returncode == 1
    assert "mandatory warm-replicas: models.chat: keeps 0 warm replicas" in proc.stdout
    assert (
        "(waiver does not apply: it expires 2026-08-31, more than 90 days after 2026-06-01; "
        "set expires to 2026-08-30 or earlier)"
    ) in proc.stdout
    config.write_text("waivers: {max_days: 120}\n" + config.read_text())
    assert check(str(path), "--policy-config", str(config)).returncode == 0


def test_expired_waiver_fails_the_check_and_says_so(tmp_path: Path) -> None:
    path, config = with_staging_waiver(tmp_path)
    proc = check(
        str(path),
        "--env",
        "staging",
        "--policy-config",
        str(config),
        env={"INFERPLANE_TODAY": "2026-08-31"},
    )
    assert proc.returncode == 1
    assert "mandatory warm-replicas: models.chat: keeps 0 warm replicas" in proc.stdout
    assert "(waiver expired 2026-08-30)" in proc.stdout
    assert "32 |           replicas: {min: 0, max: 2}" in proc.stdout  # the line, quoted


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        (
            {"INFERPLANE_JOBS": "two"},
            "inferplane check: error: INFERPLANE_JOBS='two' is not a number of processes from 1 "
            "to 256; set it to a whole number such as 2, or unset it\n",
        ),
        (
            {"INFERPLANE_JOBS": "0"},
            "inferplane check: error: INFERPLANE_JOBS='0' is not a number of processes from 1 "
            "to 256; set it to a whole number such as 2, or unset it\n",
        ),
        (
            {"INFERPLANE_TODAY": "2026-13-01"},
            "inferplane check: error: INFERPLANE_TODAY='2026-13-01' is not a date YYYY-MM-DD; "
            "unset it\n",
        ),
    ],
    ids=["jobs-word", "jobs-zero", "today"],
)
def test_unusable_environment_variables_exit_2(env: dict[str, str], expected: str) -> None:
    proc = check(str(REFERENCE), env=env)
    assert (proc.returncode, proc.stderr) == (2, expected)


@pytest.mark.parametrize("name", ["missing/report.sarif", "file/report.sarif", "x" * 300])
def test_unwritable_output_exits_2(tmp_path: Path, name: str) -> None:
    (tmp_path / "file").write_text("")
    out = tmp_path / name
    proc = check(str(REFERENCE), "--env", "prod", "--output", str(out))
    assert proc.returncode == 2, proc.stderr
    reason = {
        "missing/report.sarif": "No such file or directory",
        "file/report.sarif": "Not a directory",
    }.get(name, "File name too long")
    assert proc.stderr == f"inferplane check: error: --output {out}: {reason}\n"


def _first_failing() -> list[Fixture]:
    """Each rule's first failing fixture that fails with the default config (the run below
    passes none), else its first."""
    chosen: dict[str, Fixture] = {}
    for fixture in fixtures():
        found = chosen.get(fixture.rule)
        if not fixture.passing and (
            found is None or (found.config is not None and fixture.config is None)
        ):
            chosen[fixture.rule] = fixture
    return list(chosen.values())


FAILING = _first_failing()


# The tests that read `failing_run` share one worker: it is one check of twenty blueprints.
FAILING_RUN = pytest.mark.xdist_group("check-cli-failing-run")


@pytest.fixture(scope="session")
def failing_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[int, dict[str, Any], dict[str, Path]]:
    """One `inferplane check` over every rule's failing fixture (several blueprints at once)."""
    directory = tmp_path_factory.mktemp("failing")
    paths = {f.id: write(f, directory) for f in FAILING}
    # Checked together, blueprints may not share a name, nor install the same add-ons on
    # one attached cluster: each fixture gets its own name and cluster.
    for i, path in enumerate(paths.values()):
        text = re.sub(r"(?m)^name: .*$", f"name: fixture-{i}", path.read_text(), count=1)
        # `existing: x` in block style, `"existing": "x"` in the flow style some fixtures use.
        existing = r'(\bexisting"?: "?)([\w.-]+)'
        path.write_text(re.sub(existing, rf"\g<1>\g<2>-{i}", text))
    # The preflight's fixtures are checked with their rules' recorded answers (one set, which
    # every such rule shares); the other rules do not read them.
    recorded = {rule(f.rule).example_invokes for f in FAILING if f.invokes == "example"}
    assert len(recorded) <= 1 and all(f.invokes in ((), "example") for f in FAILING)
    extra: list[str] = []
    if recorded:
        invokes = directory / "invokes.yaml"
        invokes.write_text(recorded.pop())
        extra = ["--invokes", str(invokes)]
    # Twenty blueprints: a few minutes on a busy machine (the suite's other worker included).
    proc = check(*map(str, paths.values()), "--format", "json", *extra, timeout=900)
    assert "Traceback" not in proc.stderr
    return proc.returncode, json.loads(proc.stdout), paths


@FAILING_RUN
def test_failing_fixtures_fail_the_check(
    failing_run: tuple[int, dict[str, Any], dict[str, Path]],
) -> None:
    code, report, paths = failing_run
    assert code == 1
    checked = {(e["blueprint"], e["environment"]) for e in report["summary"]["environments"]}
    # Every environment of each fixture's blueprint: the golden one's, and any it adds.
    assert checked == {
        (str(p), str(env))
        for p in paths.values()
        for env in yaml.safe_load(p.read_text(encoding="utf-8"))["environments"]
    }


@FAILING_RUN
@pytest.mark.parametrize("fixture", FAILING, ids=lambda f: f.id)
def test_failing_fixture_reports_the_right_line(
    fixture: Fixture, failing_run: tuple[int, dict[str, Any], dict[str, Path]]
) -> None:
    _, report, paths = failing_run
    path = str(paths[fixture.id])
    got = {
        (r["environment"], r["target"], r["location"]["line"])
        for r in report["results"]
        if r["rule"] == fixture.rule
        and r["status"] == "violation"
        and r["location"]["file"] == path
    }
    assert got == {(e["environment"], e["target"], e["line"]) for e in fixture.expect}
    level = rule(fixture.rule).level
    assert {r["level"] for r in report["results"] if r["rule"] == fixture.rule} == {level}


def test_invalid_blueprint_exits_2_with_located_diagnostics(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(REFERENCE.read_text().replace("gpus_per_node: 8", "gpus_per_node: 3"))
    proc = check(str(bad))
    assert proc.returncode == 2
    assert proc.stdout == (
        "inferplane check: 0 mandatory violations, 0 advisory, 0 waived in 0 environments "
        "of 0 blueprints, 1 invalid file: failed\n"
    )
    assert f"{bad}:" in proc.stderr and "error: gpu_pools.h100.gpus_per_node" in proc.stderr


def test_usage_errors_exit_2() -> None:
    proc = check(str(REFERENCE), "--env", "qa")
    assert proc.returncode == 2
    assert "no environment named 'qa'" in proc.stderr and "prod, staging" in proc.stderr
    assert check(str(REFERENCE), "--format", "xml").returncode == 2


def test_bad_policy_config_exits_2_located(tmp_path: Path) -> None:
    config = tmp_path / "policy.yaml"
    config.write_text("warm-replicas:\n  enforcementLevel: fatal\n")
    proc = check(str(REFERENCE), "--policy-config", str(config))
    assert proc.returncode == 2
    assert (
        f"{config}:2:21: error: warm-replicas.enforcementLevel: 'fatal' is not one of"
        in proc.stderr
    )


def test_policy_config_can_make_an_advisory_fail(tmp_path: Path) -> None:
    config = tmp_path / "policy.json"
    config.write_text('{"latency-signal": "mandatory"}\n')
    proc = check(str(REFERENCE), "--policy-config", str(config), "--format", "github")
    assert proc.returncode == 1
    assert "::error file=blueprints/support-assistant.yaml,line=145,col=27," in proc.stdout


def test_sarif_output_file(tmp_path: Path) -> None:
    out = tmp_path / "check.sarif"
    path, config = with_staging_waiver(tmp_path)
    proc = check(
        str(path), "--format", "sarif", "--output", str(out), "--policy-config", str(config)
    )
    assert proc.returncode == 0 and proc.stdout == ""
    sarif = json.loads(out.read_text())
    assert sarif["version"] == "2.1.0"
    run = sarif["runs"][0]
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} >= {"warm-replicas", "unused-waiver"}
    [waived] = [r for r in run["results"] if "suppressions" in r]
    assert waived["ruleId"] == "warm-replicas"
    region = waived["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 32, "startColumn": 27}
    [listed] = run["properties"]["mandatoryWaivers"]
    assert (listed["rule"], listed["target"], listed["environments"]) == (
        "warm-replicas",
        "models.chat",
        ["staging"],
    )


def test_internal_error_exits_3_in_one_line() -> None:
    code = (
        "import sys, inferplane.app.check as c\n"
        "def boom(env): raise RuntimeError('mock monitor went away')\n"
        "c.stack_of = boom\n"
        f"sys.exit(c.main([{str(REFERENCE)!r}]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=300,
    )
    assert proc.returncode == 3
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith(
        "inferplane: internal error: RuntimeError: mock monitor went away"
    )
    debug = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=300,
        env={**os.environ, "INFERPLANE_DEBUG": "1"},
    )
    assert debug.returncode == 3 and "Traceback" in debug.stderr


def test_explain_prints_rationale_config_and_examples() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "inferplane", "explain", "batching-window"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0
    for heading in ("Why", "How to comply", "Config", "Passes", "Fails"):
        assert f"\n{heading}" in proc.stdout
    assert "max_queue_delay_us: 10000" in proc.stdout
    proc = subprocess.run(
        [sys.executable, "-m", "inferplane", "explain", "warm-replica"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 2 and "did you mean warm-replicas?" in proc.stderr


@BUNDLED_CHECK
def test_the_bundled_blueprints_pass_the_shipped_platform_config(
    bundled_check: BundledCheck,
) -> None:
    """What the pull-request workflow runs: every blueprint, together, with the platform's
    policy config (policies/platform-config.yaml)."""
    assert "e2e/blueprints/new-user.yaml" in BUNDLED
    proc, report = bundled_check
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["summary"]["passed"] is True
    assert {e["blueprint"] for e in report["summary"]["environments"]} == set(BUNDLED)


def test_blueprints_checked_together_may_not_share_a_name_or_a_joined_name(
    tmp_path: Path,
) -> None:
    """`team-x` + `prod-eu` and `team-x-prod` + `eu` would name the same node groups, wake
    load balancer and hosts; two files with one name would share a namespace."""
    text = (ROOT / "blueprints" / "chat-minimal.yaml").read_text()
    name_line = next(line for line in text.splitlines() if line.startswith("name: "))
    env = next(iter(yaml.safe_load(text)["environments"]))
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text(text.replace(name_line, "name: team-x"))
    second.write_text(text.replace(name_line, "name: team-x"))
    proc = check(str(first), str(second))
    assert proc.returncode == 2
    line = text.splitlines().index(name_line) + 1
    assert (
        f"{second}:{line}:7: error: name: blueprint name 'team-x' is also the name of "
        f"{first}: the name keys its namespace, cloud resources and model-store areas; give "
        "one of the blueprints another name"
    ) in proc.stderr
    # team-x + <env>-eu against team-x-<env> + eu.
    renamed = text.replace(f"\n  {env}:", f"\n  {env}-eu:")
    first.write_text(renamed.replace(name_line, "name: team-x"))
    second.write_text(
        text.replace(f"\n  {env}:", "\n  eu:").replace(name_line, f"name: team-x-{env}")
    )
    proc = check(str(first), str(second))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert (
        f"error: environments.eu: blueprint 'team-x-{env}' environment 'eu' names its "
        f"resources 'team-x-{env}-eu', as blueprint 'team-x' environment '{env}-eu' of "
        f"{first} does; rename the environment or the blueprint so that "
        "<blueprint>-<environment> differs"
    ) in proc.stderr
