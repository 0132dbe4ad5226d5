"""The rules as a CrossGuard policy pack: ``pulumi preview --policy-pack policies``.

Every rule becomes one CrossGuard policy with the same id, description, level and config
schema. Rules that judge one resource alone are resource validations; rules that need the
whole stack (zones, capacity, one model's several objects) are stack validations. Both call
the very function `inferplane check` calls offline; only the input differs (CrossGuard's
resources instead of a mocked run's, and no blueprint).

Configure with ``--policy-pack-config FILE``: the same file format as
``inferplane check --policy-config`` (`config`). Online there is no blueprint, so a
result names its blueprint target and field in the message instead of a file line. Waivers
apply online when the stack publishes them (key ``waivers`` of the environment ConfigMap);
otherwise a waived rule must be lowered or disabled in the policy config.

`pulumi_policy.PolicyPack` starts a server and never returns, so this module only builds the
policy list; `policies/__main__.py` serves it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError

from inferplane.blueprint import naming
from inferplane.blueprint.derived.facts import FactsError
from inferplane.blueprint.errors import printable
from inferplane.policies import waivers
from inferplane.policies.engine import Result, results_of
from inferplane.policies.framework import Rule
from inferplane.policies.resources import Resource
from inferplane.policies.rules import all_rules
from inferplane.policies.stack import Stack

PACK_NAME = "inferplane"
PACK_DESCRIPTION = (
    "inferplane's rules for low-latency GPU inference: warm replicas per zone, same-zone "
    "placement, one model per GPU, and advisories on batching, precision, autoscaling "
    "signals, SLOs, public endpoints, capacity, TensorRT engines and image pins."
)


def plain(value: Any) -> Any:
    """CrossGuard's property proxies as plain data; values unknown during preview are
    dropped, so rules treat them as unset and skip what they cannot judge."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key in value:
            try:
                out[str(key)] = plain(value[key])
            except UnknownValueError:
                continue
        return out
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        items: list[Any] = []
        for i in range(len(value)):
            try:
                items.append(plain(value[i]))
            except UnknownValueError:
                continue
        return items
    return value


def resource_of(resource_type: str, name: str, urn: str, props: Any) -> Resource:
    return Resource(type=resource_type, name=name, urn=urn, props=plain(props))


def rule_config(rule: Rule, config: Mapping[str, Any] | None) -> dict[str, Any]:
    """The rule's thresholds from CrossGuard's config (defaults filled in)."""
    given = {k: v for k, v in (config or {}).items() if k != "enforcementLevel"}
    return {**rule.defaults(), **given}


def message(result: Result) -> str:
    """One violation as CrossGuard prints it: target, what is wrong, the blueprint field."""
    text = (
        f"{result.target}: {result.message} [blueprint field: {'.'.join(map(str, result.field))}]"
    )
    if result.environment:
        text = f"[{result.environment}] {text}"
    return printable(text)  # the Pulumi CLI prints it to a terminal


def report(
    rule: Rule, stack: Stack, config: Mapping[str, Any] | None, report_violation: ReportViolation
) -> list[Result]:
    """Run `rule` on `stack` and report each unwaived result; returns every result."""
    findings = rule.run(stack, rule_config(rule, config))
    results = results_of(rule, findings, stack, rule.level)
    published = stack.facts.waivers if stack.facts else ()
    if published:
        results = waivers.apply(results, published, waivers.today())
    for result in results:
        if result.status == "violation":
            report_violation(message(result), result.resource.urn if result.resource else None)
    return results


def report_stack(
    rule: Rule,
    resources: list[Resource],
    config: Mapping[str, Any] | None,
    report_violation: ReportViolation,
) -> list[Result]:
    """`report` on a stack of `resources`; facts the pack cannot read are a violation
    (a rule judging placement without them would pass what it should refuse)."""
    try:
        stack = Stack.of(resources)
    except FactsError as exc:
        report_violation(f"{naming.ENVIRONMENT_CONFIGMAP} ConfigMap: {exc}", None)
        return []
    return report(rule, stack, config, report_violation)


def stack_validator(rule: Rule) -> Callable[[StackValidationArgs, ReportViolation], None]:
    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        resources = [resource_of(r.resource_type, r.name, r.urn, r.props) for r in args.resources]
        report_stack(rule, resources, args.get_config(), report_violation)

    return validate


def resource_validator(rule: Rule) -> Callable[[ResourceValidationArgs, ReportViolation], None]:
    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        resource = resource_of(args.resource_type, args.name, args.urn, args.props)
        report_stack(rule, [resource], args.get_config(), report_violation)

    return validate


def _level(rule: Rule) -> EnforcementLevel:
    return EnforcementLevel.MANDATORY if rule.level == "mandatory" else EnforcementLevel.ADVISORY


def _schema(rule: Rule) -> PolicyConfigSchema | None:
    if not rule.config:
        return None
    return PolicyConfigSchema(
        properties={
            k.name: {**k.schema, "default": k.default, "description": k.description}
            for k in rule.config
        }
    )


def policy_of(rule: Rule) -> Policy:
    common: dict[str, Any] = {
        "name": rule.id,
        "description": rule.title,
        "enforcement_level": _level(rule),
        "config_schema": _schema(rule),
        "remediation_steps": rule.remediation,
        "url": rule.links[0] if rule.links else None,
        "tags": list(rule.tags) or None,
    }
    if rule.scope == "resource":
        return ResourceValidationPolicy(validate=resource_validator(rule), **common)
    return StackValidationPolicy(validate=stack_validator(rule), **common)


def policies(rules: Iterable[Rule] | None = None) -> list[Policy]:
    """One CrossGuard policy per rule."""
    return [policy_of(r) for r in (rules if rules is not None else all_rules())]
