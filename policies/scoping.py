"""Lists in the platform's policy config that are granted per blueprint.

A blueprint chooses its own environment names, so a list keyed by environment alone would
let a pull request rename (or add) an environment ``prod`` to take prod's grants. The keys
of such a list therefore name the platform's own subjects:

- ``"*"``: every environment of every blueprint;
- ``<blueprint>``: every environment of that blueprint;
- ``<blueprint>/<environment>``: one environment of that blueprint.

Blueprint names are unique in a repository (`inferplane check` refuses two blueprints with
one name), and which blueprint a file is stays a CODEOWNERS matter of that file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_NAME = "[a-z]([-a-z0-9]*[a-z0-9])?"
KEY_PATTERN = f"^[*]$|^{_NAME}$|^{_NAME}/{_NAME}$"
"""The JSON Schema pattern of a key of a per-blueprint list."""

KEY_DESCRIPTION = (
    "keyed by `*` (every blueprint), a blueprint name (every environment of it) or "
    "`<blueprint>/<environment>` (never by an environment name alone: a blueprint chooses "
    "its own environment names)"
)


def granted(lists: Mapping[str, Any], blueprint: str | None, environment: str | None) -> list[Any]:
    """The entries `lists` grants to `environment` of `blueprint`: those under ``*``, under
    the blueprint's name and under ``<blueprint>/<environment>``, in that order, without
    repeats."""
    keys = ["*"]
    if blueprint:
        keys.append(blueprint)
        if environment:
            keys.append(f"{blueprint}/{environment}")
    found: list[Any] = []
    for key in keys:
        for item in lists.get(key) or ():
            if item not in found:
                found.append(item)
    return found


__all__ = ["KEY_DESCRIPTION", "KEY_PATTERN", "granted"]
