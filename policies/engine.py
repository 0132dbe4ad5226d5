"""Run rules on a stack and turn findings into results (level, environment, location).

Both runners use this: `inferplane check` on the resources a mocked run registered, and
the CrossGuard pack on the resources Pulumi hands it. Waivers are applied afterwards
(`inferplane.policies.waivers`), so that a waived result is still a result.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from inferplane.blueprint.errors import Location, YamlPath
from inferplane.policies.config import PolicyConfig
from inferplane.policies.framework import Finding, Level, Rule
from inferplane.policies.resources import ResourceRef
from inferplane.policies.rules import all_rules
from inferplane.policies.stack import Stack

Status = Literal["violation", "waived"]


@dataclass(frozen=True)
class WaiverInfo:
    """The waiver that matched a result (or would have, had it not expired)."""

    rule: str
    target: str
    environments: tuple[str, ...] | None
    reason: str
    expires: str
    expired: bool
    location: Location | None
    refused: str | None = None
    """Why a waiver that is not expired still does not waive (its expiry is too far ahead)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "target": self.target,
            "environments": list(self.environments) if self.environments else None,
            "reason": self.reason,
            "expires": self.expires,
            "expired": self.expired,
            "refused": self.refused,
            "location": _location_dict(self.location),
        }


@dataclass(frozen=True)
class Result:
    """One rule outcome about one blueprint target in one environment."""

    rule: str
    level: Level
    status: Status
    environment: str
    target: str
    field: YamlPath
    message: str
    location: Location | None
    resource: ResourceRef | None = None
    waiver: WaiverInfo | None = None

    @property
    def blocking(self) -> bool:
        """A mandatory violation: it fails the check (exit 1) and blocks a deployment."""
        return self.level == "mandatory" and self.status == "violation"

    def with_waiver(self, waiver: WaiverInfo) -> Result:
        if waiver.expired:
            message = f"{self.message} (waiver expired {waiver.expires})"
            return replace(self, message=message, waiver=waiver)
        if waiver.refused:
            message = f"{self.message} (waiver does not apply: {waiver.refused})"
            return replace(self, message=message, waiver=waiver)
        return replace(self, status="waived", waiver=waiver)

    def sort_key(self) -> tuple[Any, ...]:
        loc = self.location or Location("", 0, 0)
        return (loc.file, self.environment, loc.line, loc.column, self.rule, self.target)


def _location_dict(loc: Location | None) -> dict[str, Any] | None:
    if loc is None:
        return None
    return {"file": loc.file, "line": loc.line, "column": loc.column}


def locate(stack: Stack, field: YamlPath) -> Location | None:
    return stack.env.locate(field) if stack.env is not None and field else None


def results_of(rule: Rule, findings: Iterable[Finding], stack: Stack, level: Level) -> list[Result]:
    """Findings of one rule as results, deduplicated (two resources may show one fault)."""
    seen: set[tuple[str, YamlPath, str]] = set()
    out: list[Result] = []
    for f in findings:
        key = (f.target, f.field, f.message)
        if key in seen:
            continue
        seen.add(key)
        out.append(
            Result(
                rule=rule.id,
                level=level,
                status="violation",
                environment=stack.environment,
                target=f.target,
                field=f.field,
                message=f.message,
                location=locate(stack, f.field),
                resource=f.resource,
            )
        )
    return out


def evaluate(
    stack: Stack, config: PolicyConfig | None = None, rules: Sequence[Rule] | None = None
) -> list[Result]:
    """Every enabled rule on `stack`: violations, sorted by location (no waivers applied)."""
    config = config or PolicyConfig.default()
    out: list[Result] = []
    for rule in rules if rules is not None else all_rules():
        level = config.level(rule)
        if level not in ("mandatory", "advisory"):
            continue
        findings = rule.run(stack, config.values_for(rule))
        out.extend(
            results_of(rule, findings, stack, "mandatory" if level == "mandatory" else "advisory")
        )
    return sorted(out, key=Result.sort_key)
