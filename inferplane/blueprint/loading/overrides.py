"""`environments.<env>.overrides`: the blueprint as one environment sees it.

Both the semantic checks (which judge the merged view) and `resolve` (which builds the
model from it) start here, so an override is merged one way only.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from inferplane.blueprint.errors import YamlPath
from inferplane.blueprint.source import Document

OVERRIDABLE = ("models", "gpu_pools", "load_balancer", "observability", "versions")
NAMED_SECTIONS = ("models", "gpu_pools")


def merged(doc: Document, env_name: str) -> tuple[dict[str, Any], dict[YamlPath, YamlPath]]:
    """The blueprint as environment `env_name` sees it, and where each override came from.

    Mappings merge key by key; lists and scalars from an override replace the base value.
    The second result maps every effective path set by an override to its path under
    ``environments.<env>.overrides``.
    """
    data = copy.deepcopy(doc.data)
    origins: dict[YamlPath, YamlPath] = {}
    overrides = doc.data["environments"][env_name].get("overrides") or {}
    base: YamlPath = ("environments", env_name, "overrides")
    for section, value in overrides.items():
        if section not in OVERRIDABLE:
            continue
        if section not in data or not isinstance(data[section], dict):
            data[section] = {}
        if section in NAMED_SECTIONS:
            # Overrides may change models and pools, never add them (semantic.check says so).
            value = {k: v for k, v in value.items() if k in data[section]}
        _merge_into(data[section], value, (section,), (*base, section), origins)
    return data, origins


def _merge_into(
    target: dict[str, Any],
    override: Mapping[str, Any],
    path: YamlPath,
    origin: YamlPath,
    origins: dict[YamlPath, YamlPath],
) -> None:
    origins[path] = origin
    for key, value in override.items():
        sub, sub_origin = (*path, key), (*origin, key)
        if isinstance(value, dict) and isinstance(target.get(key), dict) and not _atomic(sub):
            _merge_into(target[key], value, sub, sub_origin, origins)
        else:
            target[key] = copy.deepcopy(value)
            _record(value, sub, sub_origin, origins)


def _atomic(path: YamlPath) -> bool:
    """Values an override replaces whole: a secret reference names exactly one source, so
    merging `from_pulumi_config` into a `from_env` reference would leave both."""
    return len(path) == 4 and path[0] == "models" and path[2] == "secrets"


def _record(
    value: Any, path: YamlPath, origin: YamlPath, origins: dict[YamlPath, YamlPath]
) -> None:
    origins[path] = origin
    if isinstance(value, dict):
        for k, v in value.items():
            _record(v, (*path, k), (*origin, k), origins)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _record(v, (*path, i), (*origin, i), origins)
