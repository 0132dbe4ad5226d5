"""Every rule's documented examples (`inferplane explain` prints them) run: each excerpt is
merged into the golden compliant blueprint as a JSON merge patch (RFC 7386) and checked
offline; the passing one must not trigger the rule, the failing one must."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
import yaml
from policy_fixtures import FIXTURES

from inferplane.app.check import check_files
from inferplane.policies.framework import Rule
from inferplane.policies.rules import all_rules

TODAY = dt.date(2026, 6, 1)
RULES = all_rules()


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: a mapping patch merges key by key (`null` removes); anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


class _NoAliases(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def blueprint_with(example: str, directory: Path, name: str) -> Path:
    golden = yaml.safe_load((FIXTURES / "golden.yaml").read_text(encoding="utf-8"))
    merged = merge_patch(golden, yaml.safe_load(example))
    path = directory / f"{name}.yaml"
    path.write_text(yaml.dump(merged, Dumper=_NoAliases, sort_keys=False), encoding="utf-8")
    return path


def _violations(path: Path, rule: Rule) -> list[str]:
    config = None
    if rule.example_config:
        config = path.with_name("platform-config.yaml")
        config.write_text(rule.example_config, encoding="utf-8")
    invokes = yaml.safe_load(rule.example_invokes) if rule.example_invokes else ()
    report = check_files(
        [str(path)], config_file=str(config) if config else None, today=TODAY, invokes=invokes
    )
    assert not report.invalid, [d.format() for d in report.invalid]
    return [
        f"[{r.environment}] {r.target}: {r.message}"
        for r in report.results
        if r.rule == rule.id and r.status == "violation"
    ]


def test_merge_patch_follows_rfc_7386() -> None:
    # The RFC's own example (section 3).
    target = {"title": "Goodbye!", "author": {"givenName": "John", "familyName": "Doe"}}
    patch = {"title": "Hello!", "author": {"familyName": None}, "tags": ["example"]}
    assert merge_patch(target, patch) == {
        "title": "Hello!",
        "author": {"givenName": "John"},
        "tags": ["example"],
    }


def test_every_rule_documents_both_examples() -> None:
    missing = [
        f"{r.id}: {kind}"
        for r in RULES
        for kind in ("passing_example", "failing_example")
        if not getattr(r, kind).strip()
    ]
    assert missing == []


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_passing_example_passes(rule: Rule, tmp_path: Path) -> None:
    path = blueprint_with(rule.passing_example, tmp_path, "passing")
    assert _violations(path, rule) == []


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_failing_example_fails(rule: Rule, tmp_path: Path) -> None:
    path = blueprint_with(rule.failing_example, tmp_path, "failing")
    assert _violations(path, rule) != []


OFFLINE_ONLY = [r for r in RULES if r.offline_only]


def test_the_offline_only_rules_are_the_ones_that_read_the_blueprint() -> None:
    assert {r.id for r in OFFLINE_ONLY} == {
        "capacity-estimate",
        "deploy-placement",
        "in-cluster-clients",
        "karpenter-node-role",
        "karpenter-security-groups",
        "model-store-reads",
        "realtime-rollout",
        "rollout-guard",
        "router-sizing",
        "secret-sources",
    }
    assert all("offline only" in r.sources.lower() for r in OFFLINE_ONLY)


@pytest.mark.parametrize("rule", OFFLINE_ONLY, ids=lambda r: r.id)
def test_an_offline_only_rule_finds_nothing_without_the_blueprint(
    rule: Rule, tmp_path: Path
) -> None:
    """What CrossGuard sees (the resources, no blueprint) gives no finding, so `pulumi
    preview --policy-pack` and `inferplane check` agree on every other rule."""
    from inferplane.app.check import stack_of
    from inferplane.blueprint.resolution.resolve import resolve_file
    from inferplane.policies.config import PolicyConfig
    from inferplane.policies.stack import Stack

    path = blueprint_with(rule.failing_example, tmp_path, rule.id)
    config = PolicyConfig.from_mapping(yaml.safe_load(rule.example_config or "{}") or {})
    settings = config.values_for(rule)
    fired = 0
    for name in yaml.safe_load(path.read_text(encoding="utf-8"))["environments"]:
        offline = stack_of(resolve_file(path, name))
        fired += len(rule.run(offline, settings))
        online = Stack.of(offline.resources, None)
        assert rule.run(online, settings) == [], name
    assert fired, "the failing example must fire offline"


def test_reduced_precision_judges_an_onnx_runtime_model_without_the_blueprint(
    tmp_path: Path,
) -> None:
    """A Triton model on ONNX Runtime says its precision in no flag: online, the rule reads
    the Deployment's annotation, so CrossGuard and `inferplane check` agree."""
    from inferplane.app.check import stack_of
    from inferplane.blueprint.resolution.resolve import resolve_file
    from inferplane.policies.stack import Stack

    [rule] = [r for r in RULES if r.id == "reduced-precision"]
    env = resolve_file(
        Path(__file__).resolve().parents[2] / "blueprints" / "whisper-triton.yaml", "local"
    )
    offline = stack_of(env)
    online = Stack.of(offline.resources, None)
    found = [(f.target, f.field) for f in rule.run(offline, rule.defaults())]
    assert found == [("models.speech", ("models", "speech", "precision"))]
    assert [(f.target, f.field) for f in rule.run(online, rule.defaults())] == found
