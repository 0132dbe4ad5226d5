"""Policy config: each rule's level and thresholds, one file for both runners.

The file has the shape of a CrossGuard policy-pack config, so the same file serves
``inferplane check --policy-config FILE`` and ``pulumi preview --policy-pack policies
--policy-pack-config FILE`` (JSON is YAML, so either spelling works offline)::

    all: advisory                       # optional: every rule's level
    warm-replicas: mandatory            # a level alone
    batching-window:                    # or a level and thresholds
      enforcementLevel: mandatory
      max_queue_delay_us: 5000

The file is the platform team's (CODEOWNERS; the pull-request workflow reads it from the base
branch), so it also holds what a blueprint may not decide for itself: ``mandatory_waivers``,
the only waivers of mandatory rules (a blueprint may waive advisory rules only), each naming
its blueprint::

    mandatory_waivers:
      - {blueprint: search, rule: warm-replicas, target: models.ranker,
         environments: [staging], reason: "No customer traffic in staging yet.",
         expires: 2027-01-31}

Levels: ``mandatory`` (fails the check), ``advisory`` (reported), ``disabled``. A rule's own
level wins over ``all``. Unknown rules and keys are refused with their location: a typo in a
threshold must not silently keep the default. `policies/config.schema.json` is this format's
JSON Schema, generated from the rules (``python -m inferplane.policies.rule_docs``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import jsonschema

from inferplane.blueprint.errors import BlueprintError, Diagnostic, Location, YamlPath
from inferplane.policies.framework import LEVELS, Rule
from inferplane.policies.rules import all_rules

SCHEMA_ID = "https://inferplane.dev/schema/policy-config.schema.json"
WAIVER_MAX_DAYS = 90
"""Default of ``waivers.max_days``: how far ahead a blueprint waiver may expire."""
WAIVERS_KEY = "waivers"
MANDATORY_WAIVERS_KEY = "mandatory_waivers"
"""The platform's waivers of mandatory rules (not ``waivers``, whose ``max_days`` limits the
blueprints' own)."""


@dataclass(frozen=True)
class PolicyConfig:
    """Levels and thresholds per rule id; anything unset takes the rule's default."""

    levels: Mapping[str, str] = field(default_factory=dict)
    values: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    all_level: str | None = None
    file: str | None = None
    waiver_max_days: int = WAIVER_MAX_DAYS
    mandatory_waivers: tuple[Mapping[str, Any], ...] = ()
    """The platform's waivers of mandatory rules, as written (`waivers.platform_waivers`)."""
    mandatory_waiver_locations: tuple[Location, ...] = ()
    """Where each of `mandatory_waivers` is in the config file."""
    key_locations: Mapping[YamlPath, Location] = field(default_factory=dict)
    """Where each key of the per-blueprint grant lists (`GRANT_LISTS`) is in the file."""

    @classmethod
    def default(cls) -> PolicyConfig:
        return cls()

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], file: str | None = None) -> PolicyConfig:
        """From a validated config mapping (file contents or CrossGuard's config)."""
        levels: dict[str, str] = {}
        values: dict[str, dict[str, Any]] = {}
        all_level = None
        max_days = WAIVER_MAX_DAYS
        platform: tuple[Mapping[str, Any], ...] = ()
        for key, value in data.items():
            if key == "all":
                all_level = str(value)
            elif key == MANDATORY_WAIVERS_KEY:
                platform = tuple(value or ())
            elif key == WAIVERS_KEY and isinstance(value, Mapping):
                max_days = int(value.get("max_days", WAIVER_MAX_DAYS))
            elif isinstance(value, str):
                levels[key] = value
            elif isinstance(value, Mapping):
                if "enforcementLevel" in value:
                    levels[key] = str(value["enforcementLevel"])
                values[key] = {k: v for k, v in value.items() if k != "enforcementLevel"}
        return cls(
            levels=levels,
            values=values,
            all_level=all_level,
            file=file,
            waiver_max_days=max_days,
            mandatory_waivers=platform,
            mandatory_waiver_locations=tuple(
                Location(file or "<policy config>", 1, 1) for _ in platform
            ),
        )

    def locate_mandatory_waiver(self, path: YamlPath) -> Location | None:
        """The config location of ``mandatory_waivers[i]`` (path of a platform waiver)."""
        i = path[1] if len(path) == 2 and path[0] == MANDATORY_WAIVERS_KEY else None
        if isinstance(i, int) and 0 <= i < len(self.mandatory_waiver_locations):
            return self.mandatory_waiver_locations[i]
        return None

    def level(self, rule: Rule) -> str:
        return self.levels.get(rule.id) or self.all_level or rule.level

    def values_for(self, rule: Rule) -> dict[str, Any]:
        return {**rule.defaults(), **self.values.get(rule.id, {})}


def _level_schema() -> dict[str, Any]:
    return {"type": "string", "enum": list(LEVELS)}


def schema() -> dict[str, Any]:
    """The JSON Schema of a policy config file, from the rules' config keys."""
    properties: dict[str, Any] = {
        "all": {**_level_schema(), "description": "Level of every rule without its own level."},
        WAIVERS_KEY: {
            "description": "Limits on the blueprints' waivers.",
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "max_days": {
                    "description": "How many days after the day of the check a waiver may "
                    "expire; a waiver that expires later does not waive.",
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 365,
                    "default": WAIVER_MAX_DAYS,
                }
            },
        },
        MANDATORY_WAIVERS_KEY: {
            "description": "The only waivers of mandatory rules (a blueprint may waive advisory "
            "rules only): one rule, one target of one blueprint, a reason and an expiry, "
            "limited by waivers.max_days like a blueprint's.",
            "type": "array",
            "maxItems": 500,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["blueprint", "rule", "target", "reason", "expires"],
                "properties": {
                    "blueprint": {"type": "string", "pattern": "^[a-z]([-a-z0-9]*[a-z0-9])?$"},
                    "rule": {"type": "string", "pattern": "^[a-z][-a-z0-9]*$"},
                    "target": {
                        "type": "string",
                        "pattern": r"^(models|gpu_pools)\.[A-Za-z0-9_-]+$|^load_balancer$",
                    },
                    "environments": {
                        "type": "array",
                        "minItems": 1,
                        "items": {"type": "string", "pattern": "^[a-z]([-a-z0-9]*[a-z0-9])?$"},
                    },
                    "reason": {"type": "string", "minLength": 20, "maxLength": 500},
                    "expires": {
                        "type": "string",
                        "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
                    },
                },
            },
        },
    }
    for rule in all_rules():
        keys: dict[str, Any] = {
            "enforcementLevel": {
                **_level_schema(),
                "description": f"Level of {rule.id}; default {rule.level}.",
            }
        }
        for key in rule.config:
            keys[key.name] = {**key.schema, "default": key.default, "description": key.description}
        properties[rule.id] = {
            "description": rule.title,
            "oneOf": [
                _level_schema(),
                {"type": "object", "additionalProperties": False, "properties": keys},
            ],
        }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "inferplane policy config",
        "description": "Levels and thresholds of inferplane's policy rules; the same file "
        "configures `inferplane check` and the CrossGuard pack.",
        "type": "object",
        "additionalProperties": False,
        "properties": properties,
    }


def default_document() -> dict[str, Any]:
    """Every rule at its default level with its default thresholds."""
    doc: dict[str, Any] = {}
    for rule in all_rules():
        entry: dict[str, Any] = {"enforcementLevel": rule.level}
        entry.update(rule.defaults())
        doc[rule.id] = entry
    return doc


def _diagnostics(data: Any, source: Any, file: str) -> list[Diagnostic]:
    validator = jsonschema.Draft202012Validator(schema())
    out: list[Diagnostic] = []
    known = ", ".join(["all", *(r.id for r in all_rules()), WAIVERS_KEY, MANDATORY_WAIVERS_KEY])
    for error in validator.iter_errors(data):
        errors = [error]
        if error.context:  # oneOf (level or mapping): report the branch the value meant
            branch = 1 if isinstance(error.instance, Mapping) else 0
            errors = [e for e in error.context if e.relative_schema_path[0] == branch] or [error]
        for err in errors:
            path: YamlPath = tuple(err.absolute_path)
            loc = source.value(path) if source is not None else Location(file, 1, 1)
            message, hint = err.message, "see policies/config.schema.json"
            if err.validator == "additionalProperties" and not path:
                hint = f"use one of: {known}"
            elif err.validator == "additionalProperties" and path[0] == WAIVERS_KEY:
                hint = "use: max_days"
            elif path and path[0] == MANDATORY_WAIVERS_KEY:
                hint = "write {blueprint, rule, target, environments, reason, expires: YYYY-MM-DD}"
            elif err.validator == "additionalProperties":
                rule_keys = [k.name for k in _rule_or_none(str(path[0]))] if path else []
                hint = "use one of: " + ", ".join(["enforcementLevel", *rule_keys])
            elif err.validator == "enum" and list(err.validator_value) == list(LEVELS):
                hint = "use one of: " + ", ".join(LEVELS)
            out.append(Diagnostic(loc, path, message, hint))
    return out


def _rule_or_none(rule_id: str) -> tuple[Any, ...]:
    for rule in all_rules():
        if rule.id == rule_id:
            return rule.config
    return ()


def validate(data: Any, file: str = "<policy config>", source: Any = None) -> None:
    """Raise BlueprintError (located when `source` is given) if `data` is not a valid config."""
    problems = _diagnostics(data, source, file)
    if problems:
        raise BlueprintError(problems)


GRANT_LISTS: tuple[tuple[str, str], ...] = (
    ("model-store-reads", "allowed_model_stores"),
    ("model-store-reads", "allowed_store_endpoints"),
    ("in-cluster-clients", "allowed_client_namespaces"),
    ("trusted-registries", "ecr_accounts"),
    ("karpenter-node-role", "allowed_node_roles"),
    ("karpenter-security-groups", "allowed_security_group_terms"),
    ("deploy-placement", "allowed_placements"),
)
"""(rule, config key) of the lists keyed by blueprint (`policies.scoping`)."""


def load(path: str | Path) -> PolicyConfig:
    """Read and validate a policy config file (YAML or JSON)."""
    from inferplane.blueprint.loading import loader

    doc = loader.load(path)
    validate(doc.data, str(path), doc.source)
    config = PolicyConfig.from_mapping(doc.data, file=str(path))
    locations = tuple(
        doc.source.value((MANDATORY_WAIVERS_KEY, i)) for i in range(len(config.mandatory_waivers))
    )
    keys: dict[YamlPath, Location] = {}
    for rule_id, key in GRANT_LISTS:
        listed = config.values.get(rule_id, {}).get(key) or {}
        for name in listed:
            keys[(rule_id, key, name)] = doc.source.key((rule_id, key, name))
    return replace(config, mandatory_waiver_locations=locations, key_locations=keys)
