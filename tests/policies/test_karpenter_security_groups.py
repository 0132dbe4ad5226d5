"""karpenter-security-groups: the default allows the cluster's Karpenter discovery tag (what
a blueprint without a selector gets); the platform's config grants other terms per
blueprint; a tags term with more tags narrows an allowed one."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType

from test_rule_examples import blueprint_with

from inferplane.app.check import check_files
from inferplane.blueprint.model import Environment
from inferplane.policies.rules import rule
from inferplane.policies.rules.karpenter_security_groups import covered
from inferplane.policies.stack import Stack

RULE = rule("karpenter-security-groups")


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


def test_a_group_the_blueprint_picks_is_refused_at_its_term(tmp_path: Path) -> None:
    [(env, line, message)] = _violations(tmp_path, None)
    text = (tmp_path / "golden.yaml").read_text().splitlines()
    assert env == "staging" and "- id: sg-0a1b2c3d4e5f60718" in text[line - 1]
    assert message == (
        "security_group_selector[1] (id sg-0a1b2c3d4e5f60718) selects security groups the "
        "platform does not allow for this blueprint (tags karpenter.sh/discovery=shared-eks): "
        "every GPU node Karpenter launches for it would join them, and their rules would "
        "admit traffic to and from those nodes; drop security_group_selector (the default "
        "selects the groups tagged karpenter.sh/discovery: shared-eks), or ask the platform "
        "team to add the term to karpenter-security-groups.allowed_security_group_terms in "
        "its policy config"
    )


def test_the_platform_grants_a_group_to_one_blueprint_only(tmp_path: Path) -> None:
    grant = (
        "karpenter-security-groups:\n  allowed_security_group_terms:\n"
        "    '*': [{{tags: {{karpenter.sh/discovery: '{{cluster}}'}}}}]\n"
        "    {key}: [{{id: sg-0a1b2c3d4e5f60718}}]\n"
    )
    assert _violations(tmp_path, grant.format(key="golden/staging")) == []
    assert _violations(tmp_path, grant.format(key="golden")) == []
    assert len(_violations(tmp_path, grant.format(key="other-blueprint"))) == 1


def test_a_config_that_allows_nothing_refuses_every_term(tmp_path: Path) -> None:
    nothing = "karpenter-security-groups:\n  allowed_security_group_terms:\n    '*': []\n"
    found = _violations(tmp_path, nothing)
    assert [m.split(": every GPU node")[0] for _, _, m in found] == [
        "security_group_selector[0] (tags karpenter.sh/discovery=shared-eks) selects security "
        "groups the platform does not allow for this blueprint (none)",
        "security_group_selector[1] (id sg-0a1b2c3d4e5f60718) selects security groups the "
        "platform does not allow for this blueprint (none)",
    ]


def test_the_default_selector_is_judged_when_the_blueprint_gives_none(
    reference_env: Callable[[str], Environment],
) -> None:
    env = reference_env("prod")
    karpenter = dataclasses.replace(
        env.cluster.addons.karpenter,
        node_role="KarpenterNodeRole-shared-eks",
        ami_alias="al2023@v20260714",
        existing=True,
    )
    addons = dataclasses.replace(env.cluster.addons, karpenter=karpenter)
    cluster = dataclasses.replace(env.cluster, existing="shared-eks", addons=addons)
    env = dataclasses.replace(env, cluster=cluster)
    assert RULE.run(Stack.of([], env)) == []
    config = {"allowed_security_group_terms": {"*": [{"name": "eks-nodes"}]}}
    [finding] = RULE.run(Stack.of([], env), config)
    assert finding.field == (
        "environments",
        "prod",
        "cluster",
        "addons",
        "karpenter",
        "security_group_selector",
        0,
    )


def test_a_tags_term_covers_only_terms_that_carry_each_of_its_tags() -> None:
    allowed = {"tags": {"karpenter.sh/discovery": "shared-eks"}}
    narrower = MappingProxyType({"tags": MappingProxyType({**allowed["tags"], "team": "ml"})})
    assert covered(narrower, allowed)
    assert not covered({"tags": {"karpenter.sh/discovery": "other-eks"}}, allowed)
    assert not covered({"tags": {"team": "ml"}}, allowed)
    assert not covered({"name": "shared-eks"}, allowed)
    any_value = {"tags": {"karpenter.sh/discovery": "*"}}
    assert covered({"tags": {"karpenter.sh/discovery": "x"}}, any_value)
    assert covered({"id": "sg-01"}, {"id": "sg-01"})
    assert not covered({"id": "sg-02"}, {"id": "sg-01"})
