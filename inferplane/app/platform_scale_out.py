"""What the platform's policy config sets for scale-outs, read the same way by `inferplane
plan`, `inferplane check` and the Pulumi program (stack config ``inferplane:policyConfig``):
``levers: auto`` chooses against it, so a model deploys with the levers the
``scale-out-budget`` rule judges."""

from __future__ import annotations

from pathlib import Path

from inferplane.blueprint.derived.scale_out import Platform
from inferplane.policies.config import PolicyConfig
from inferplane.policies.config import load as load_config

RULE = "scale-out-budget"


def of_config(config: PolicyConfig | None) -> Platform:
    """The ``scale-out-budget`` rule's effective config in `config` (its defaults when None)."""
    from inferplane.policies.rules import rule

    if config is None:
        return Platform()
    return Platform.from_values(config.values_for(rule(RULE)))


def of_file(config_file: str | Path | None) -> Platform:
    """`of_config` of the policy config at `config_file` (BlueprintError, located, when it
    is invalid); the defaults without a file."""
    return of_config(load_config(config_file) if config_file is not None else None)


__all__ = ["RULE", "of_config", "of_file"]
