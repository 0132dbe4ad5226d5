"""What a rule is, and how every rule is found.

A rule is data plus one function. Each module in `policies/` that defines ``RULE = Rule(...)``
is a rule; defining it registers it (`all_rules()` discovers the modules). The function
takes a `Stack` (resources + environment facts, and offline the resolved `Environment`) and
the rule's effective config, and yields `Finding`s: which blueprint target is wrong, which
field caused it, a message, and the resource it was seen on. The runners (offline
`inferplane check`, online the CrossGuard pack) add the level, the environment, the
location and waivers.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
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
    passing_example: str = ""
    """A blueprint excerpt that complies. The test suite merges it into the golden compliant
    blueprint (tests/policies/fixtures/golden.yaml) as a JSON merge patch (RFC 7386:
    mappings merge, `null` removes a key, anything else replaces) and checks the rule passes."""
    failing_example: str = ""
    """The same excerpt changed in one place so that the rule fires (checked the same way)."""
    tags: tuple[str, ...] = field(default=())

    def defaults(self) -> dict[str, Any]:
        return {k.name: k.default for k in self.config}

    def run(self, stack: Stack, config: RuleConfig | None = None) -> list[Finding]:
        """The rule's findings on `stack` with `config` over the defaults."""
        effective = {**self.defaults(), **(config or {})}
        return list(self.check(stack, effective))


@cache
def all_rules() -> tuple[Rule, ...]:
    """Every rule of the pack, sorted by id: each module of `inferplane.policies.rules`, one
    rule per file, defines ``RULE``; a module there without one is a mistake."""
    from inferplane.policies import rules

    found: dict[str, Rule] = {}
    for info in pkgutil.iter_modules(rules.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{rules.__name__}.{info.name}")
        rule = getattr(module, "RULE", None)
        if not isinstance(rule, Rule):
            raise RuntimeError(f"{module.__name__} defines no RULE")
        if rule.id in found:
            raise RuntimeError(f"two rules named {rule.id!r}")
        found[rule.id] = rule
    return tuple(found[k] for k in sorted(found))


def rule(rule_id: str) -> Rule:
    """The rule named `rule_id`; KeyError (with the known ids) when there is none."""
    for r in all_rules():
        if r.id == rule_id:
            return r
    raise KeyError(rule_id)


def rule_ids() -> tuple[str, ...]:
    return tuple(r.id for r in all_rules())
