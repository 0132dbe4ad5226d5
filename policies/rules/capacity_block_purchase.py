"""capacity-block-purchase: the stack buys an EC2 Capacity Block only for the pools the
platform allows to, never because a blueprint says `buy: true`."""

from __future__ import annotations

from collections.abc import Iterator
from fnmatch import fnmatchcase

from inferplane.blueprint import naming
from inferplane.policies.framework import ConfigKey, Finding, Rule, RuleConfig
from inferplane.policies.resources import _dict
from inferplane.policies.scoping import KEY_DESCRIPTION, KEY_PATTERN, granted
from inferplane.policies.stack import Stack

BOUGHT_BLOCK = "aws:ec2/capacityBlockReservation:CapacityBlockReservation"
"""pulumi-aws 7.51.1 ``ec2.CapacityBlockReservation``: creating it buys the block."""


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    env = stack.env
    blueprint, environment = (env.blueprint, env.name) if env is not None else (None, None)
    patterns = [str(p) for p in granted(config["allowed_pools"], blueprint, environment)]
    for block in stack.of_type(BOUGHT_BLOCK):
        pool = str(_dict(block.props.get("tags")).get(naming.POOL_LABEL) or "")
        if pool and any(fnmatchcase(pool, p) for p in patterns):
            continue
        yield Finding(
            f"gpu_pools.{pool}" if pool else block.name,
            ("gpu_pools", pool, "capacity") if pool else (),
            f"pool {pool or '?'} buys an EC2 Capacity Block (`buy: true`): it is paid in full "
            "at once and cannot be cancelled, and the platform's policy config does not allow "
            "this pool to buy one; buy the block outside the stack and name it with `id` and "
            "`ends`, or ask the platform team to list the pool under "
            "capacity-block-purchase.allowed_pools",
            block.ref,
        )


RULE = Rule(
    id="capacity-block-purchase",
    title="Capacity Blocks are bought only where the platform allows it",
    level="mandatory",
    scope="stack",
    check=check,
    rationale=(
        "An EC2 Capacity Block for ML is paid up front when it is bought and cannot be "
        "cancelled (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-capacity-blocks.html); "
        "with `offering: auto` and `buy: true` the stack buys one on `pulumi up`, so one line "
        "of a blueprint could commit days of eight-GPU machines. Spending of that kind is the "
        "platform's decision, written in its policy config."
    ),
    remediation=(
        "Buy the block outside the stack and list it with `capacity_block: {id, ends}`, or "
        "have the platform team add the pool (an fnmatch pattern of pool names) under "
        "capacity-block-purchase.allowed_pools for the blueprint."
    ),
    links=("https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-capacity-blocks.html",),
    config=(
        ConfigKey(
            "allowed_pools",
            {},
            {
                "type": "object",
                "propertyNames": {"pattern": KEY_PATTERN},
                "additionalProperties": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1},
                },
            },
            f"fnmatch patterns of the pools that may buy Capacity Blocks, {KEY_DESCRIPTION}. "
            "The default allows none.",
        ),
    ),
    sources=(
        "Resources only: the Capacity Block reservations the stack creates and their pool "
        "tag. Offline and online alike (online only the `*` entries apply: the blueprint's "
        "name is not known there)."
    ),
    passing_example="""\
environments:
  staging:
    overrides:
      gpu_pools:
        l4:
          capacity:
            - capacity_block: {id: cr-0fedcba9876543210, ends: "2026-12-20T11:30:00Z"}
              zone: us-east-1a
            - on_demand
""",
    failing_example="""\
environments:
  staging:
    overrides:
      gpu_pools:
        l4:
          capacity:
            - capacity_block: {offering: auto, hours: 48, buy: true}
              zone: us-east-1a
            - on_demand
""",
)
