"""public-endpoint is mandatory: an external load balancer fails `check` unless a waiver
(with a reason and an expiry) names it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from policy_fixtures import FIXTURES

from inferplane.app.check import check_files
from inferplane.policies.rules import rule

TODAY = dt.date(2026, 6, 1)
WAIVER = """
policies:
  waivers:
    - rule: public-endpoint
      target: load_balancer
      reason: A public demo endpoint behind an authenticating gateway (ticket SEC-12).
      expires: 2026-08-01
"""


PLATFORM_WAIVER = """\
mandatory_waivers:
  - blueprint: golden
    rule: public-endpoint
    target: load_balancer
    reason: A public demo endpoint behind an authenticating gateway (ticket SEC-12).
    expires: "2026-08-01"
"""


def _external(tmp_path: Path, extra: str = "") -> Path:
    text = (FIXTURES / "golden.yaml").read_text()
    assert "  scheme: internal\n" in text
    path = tmp_path / "bp.yaml"
    path.write_text(text.replace("  scheme: internal\n", "  scheme: external\n") + extra)
    return path


def test_rule_is_mandatory() -> None:
    assert rule("public-endpoint").level == "mandatory"


def test_external_scheme_fails_the_check(tmp_path: Path) -> None:
    report = check_files([str(_external(tmp_path))], today=TODAY)
    found = [r for r in report.results if r.rule == "public-endpoint"]
    assert {(r.environment, r.status, r.level) for r in found} == {
        ("staging", "violation", "mandatory"),
        ("prod", "violation", "mandatory"),
    }


def test_only_a_platform_waiver_with_reason_and_expiry_waives_it(tmp_path: Path) -> None:
    report = check_files([str(_external(tmp_path, WAIVER))], today=TODAY)
    found = [r for r in report.results if r.rule == "public-endpoint"]
    assert found and {r.status for r in found} == {"violation"}  # the blueprint's own
    config = tmp_path / "policy.yaml"
    config.write_text(PLATFORM_WAIVER)
    report = check_files([str(_external(tmp_path))], config_file=str(config), today=TODAY)
    found = [r for r in report.results if r.rule == "public-endpoint"]
    assert found and {r.status for r in found} == {"waived"}
