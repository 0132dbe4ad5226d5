"""reservation-zone: a Capacity Block named by id is in the zone its source serves."""

from __future__ import annotations

from collections.abc import Iterator

from inferplane.policies.framework import Finding, Rule, RuleConfig
from inferplane.policies.preflight_rules import EXAMPLE_INVOKES, SOURCES, findings
from inferplane.policies.stack import Stack


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    yield from findings(stack, "reservation-zone")


RULE = Rule(
    id="reservation-zone",
    title="A reserved source is in the zone it serves",
    level="mandatory",
    scope="stack",
    check=check,
    rationale=(
        "Reserved capacity lives in one zone. A node group in another zone cannot launch "
        "into it, so the prepaid GPUs sit idle while the zone falls through to on-demand "
        "or spot, which for large GPUs are rarely there."
    ),
    remediation=(
        "Set the source's `zone:` to the zone the reservation is in, or list one bought "
        "in the zone the pool runs in."
    ),
    sources=SOURCES
    + " Judged for Capacity Blocks by id; an On-Demand Capacity Reservation is reported as "
    "not checked (pulumi-aws 7.51.1 has no data source for one).",
    passing_example="""\
environments:
  staging:
    overrides:
      gpu_pools:
        l4:
          capacity:
            - capacity_block: {id: cr-0fedcba9876543210, ends: "2026-06-03T11:30:00Z"}
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
            - capacity_block: {id: cr-0fedcba9876543210, ends: "2026-06-03T11:30:00Z"}
              zone: us-east-1b
            - on_demand
""",
    example_config="""\
capacity-reservations:
  allowed_reservations: {golden: [cr-0fedcba9876543210]}
""",
    example_invokes=EXAMPLE_INVOKES,
)
