"""capacity-block-window: a Capacity Block named by id lasts through the next window of each
schedule of the models on its pool."""

from __future__ import annotations

from collections.abc import Iterator

from inferplane.policies.framework import Finding, Rule, RuleConfig
from inferplane.policies.preflight_rules import EXAMPLE_INVOKES, SOURCES, findings
from inferplane.policies.stack import Stack


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    yield from findings(stack, "capacity-block-window")


RULE = Rule(
    id="capacity-block-window",
    title="A Capacity Block covers the schedule windows it is bought for",
    level="mandatory",
    scope="stack",
    check=check,
    rationale=(
        "A Capacity Block launches nothing after its end date, and EC2 terminates its "
        "instances as it ends. A model whose `replicas.schedule` window opens or is still "
        "open after that finds its reserved GPUs gone and falls through to on-demand or "
        "spot, which for large GPUs are rarely there."
    ),
    remediation=(
        "Extend the block or buy one that runs past the window (Capacity Blocks can be "
        "extended), or let the next source of the pool carry the window and accept the "
        "risk by waiving this rule."
    ),
    sources=SOURCES
    + " The next window of each schedule is taken from the later of now and the block's "
    "start.",
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
models:
  chat:
    replicas:
      min: 1
      max: 4
      schedule:
        - {schedule: "0 8 * * *", duration: 2h, min: 2}
""",
    failing_example="""\
environments:
  staging:
    overrides:
      gpu_pools:
        l4:
          capacity:
            - capacity_block: {id: cr-0fedcba9876543210, ends: "2026-06-03T11:30:00Z"}
              zone: us-east-1a
            - on_demand
models:
  chat:
    replicas:
      min: 1
      max: 4
      schedule:
        - {schedule: "0 8 * * 0", duration: 2h, min: 2}
""",
    example_config="""\
capacity-reservations:
  allowed_reservations: {golden: [cr-0fedcba9876543210]}
""",
    example_invokes=EXAMPLE_INVOKES,
)
