"""What a rule is, and how every rule is found.

A rule is data plus one function. Each module in `policies/rules/` that defines ``RULE = Rule(...)``
is a rule; defining it registers it (`rules.all_rules()` discovers the modules). The function
takes a `Stack` (resources + environment facts, and offline the resolved `Environment`) and
the rule's effective config, and yields `Finding`s: which blueprint target is wrong, which
field caused it, a message, and the resource it was seen on. The runners (offline
`inferplane check`, online the CrossGuard pack) add the level, the environment, the
location and waivers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from inferplane.blueprint.errors import YamlPath, format_path
from inferplane.policies.resources import ResourceRef
from inferplane.policies.stack import Stack

Level = Literal["mandatory", "advisory"]
LEVELS: tuple[str, ...] = ("mandatory", "advisory", "disabled")
"""Levels a policy config may give a rule; `disabled` turns it off."""
Scope = Literal["stack", "resource"]


@dataclass(frozen=True)
class ConfigKey:
    """One threshold of a rule: its name, default, JSON Schema and meaning."""

    name: str
    default: Any
    schema: Mapping[str, Any]
    description: str


@dataclass(frozen=True)
class Finding:
    """What a rule function reports: a blueprint target and the field that caused it."""

    target: str
    """YAML path of the blueprint object at fault, e.g. ``models.chat``."""
    field: YamlPath
    """The value that caused it, e.g. ``("models", "chat", "replicas", "min")``."""
    message: str
    resource: ResourceRef | None = None

    @property
    def field_path(self) -> str:
        return format_path(self.field)


RuleConfig = Mapping[str, Any]
Check = Callable[[Stack, RuleConfig], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    """A policy rule: identity, documentation, thresholds and its one check function."""

    id: str
    title: str
    level: Level
    """Default level: mandatory rules fail the check, advisory ones are reported."""
    scope: Scope
    """`stack`: needs several resources (CrossGuard stack validation); `resource`: judges
    each resource alone (CrossGuard resource validation)."""
    rationale: str
    remediation: str
    check: Check
    links: tuple[str, ...] = ()
    config: tuple[ConfigKey, ...] = ()
    sources: str = ""
    """What the rule reads, offline and online (how it degrades without the blueprint)."""
    offline_only: bool = False
    """The rule judges what only the blueprint says (traffic, store grants, secret sources):
    `inferplane check` runs it; online, where CrossGuard has no blueprint, it finds nothing.
    The end-to-end run compares the two over the other rules."""
    passing_example: str = ""
    """A blueprint excerpt that complies. The test suite merges it into the golden compliant
    blueprint (tests/policies/fixtures/golden.yaml) as a JSON merge patch (RFC 7386:
    mappings merge, `null` removes a key, anything else replaces) and checks the rule passes."""
    failing_example: str = ""
    """The same excerpt changed in one place so that the rule fires (checked the same way)."""
    example_config: str = ""
    """The platform's policy config (YAML) both examples are checked with, for a rule whose
    default judges them otherwise; empty: the defaults."""
    example_invokes: str = ""
    """Recorded provider answers (YAML, `inferplane.app.offline_mocks.recorded_answer`) the
    examples are checked with: a rule that judges the cloud's answers (the capacity
    preflight) has nothing to judge without them."""
    tags: tuple[str, ...] = field(default=())

    def defaults(self) -> dict[str, Any]:
        return {k.name: k.default for k in self.config}

    def run(self, stack: Stack, config: RuleConfig | None = None) -> list[Finding]:
        """The rule's findings on `stack` with `config` over the defaults."""
        effective = {**self.defaults(), **(config or {})}
        return list(self.check(stack, effective))
