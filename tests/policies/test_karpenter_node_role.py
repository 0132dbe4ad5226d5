"""karpenter-node-role: the default allows the cluster's own Karpenter node role; the
platform's config grants others per blueprint."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from test_rule_examples import blueprint_with

from inferplane.app.check import check_files
from inferplane.policies.rules import rule

RULE = rule("karpenter-node-role")


def _violations(tmp_path: Path, config: str | None) -> list[tuple[str, int, str]]:
    path = blueprint_with(RULE.failing_example, tmp_path, "golden")
    config_file = None
    if config is not None:
        config_file = tmp_path / "platform.yaml"
        config_file.write_text(config)
    report = check_files(
        [str(path)],
        ["staging"],
        str(config_file) if config_file else None,
        today=dt.date(2026, 6, 1),
    )
    assert not report.invalid, [d.format() for d in report.invalid]
    return [
        (r.environment, r.location.line if r.location else 0, r.message)
        for r in report.results
        if r.rule == RULE.id and r.status == "violation"
    ]


def test_a_role_the_blueprint_picks_is_refused_at_node_role(tmp_path: Path) -> None:
    [(env, line, message)] = _violations(tmp_path, None)
    text = (tmp_path / "golden.yaml").read_text().splitlines()
    assert env == "staging" and "node_role: OrganizationAccountAccessRole" in text[line - 1]
    assert message == (
        "node_role OrganizationAccountAccessRole is not a node role the platform allows for "
        "this blueprint (KarpenterNodeRole-shared-eks): every GPU node Karpenter launches "
        "for it would hold that role's permissions; use the cluster's Karpenter node role, "
        "or ask the platform team to add it to karpenter-node-role.allowed_node_roles in its "
        "policy config"
    )


def test_the_platform_grants_a_role_to_one_blueprint_only(tmp_path: Path) -> None:
    grant = (
        "karpenter-node-role:\n  allowed_node_roles:\n    {key}: [OrganizationAccountAccessRole]\n"
    )
    assert _violations(tmp_path, grant.format(key="golden/staging")) == []
    assert _violations(tmp_path, grant.format(key="golden")) == []
    assert len(_violations(tmp_path, grant.format(key="other-blueprint"))) == 1
