"""The rules of the pack, one per module; defining ``RULE`` in a module here registers it.

The registry lives with the rules (not in the framework they import), so the framework
never depends on what it frames: `all_rules()` is the one list every runner uses.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from inferplane.policies.framework import Rule


@cache
def all_rules() -> tuple[Rule, ...]:
    """Every rule of the pack, sorted by id: each module of `inferplane.policies.rules`, one
    rule per file, defines ``RULE``; a module there without one is a mistake."""
    found: dict[str, Rule] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
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
