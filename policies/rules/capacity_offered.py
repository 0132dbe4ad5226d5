"""capacity-offered: EC2 offers the pool's instance type in every zone its sources serve."""

from __future__ import annotations

from collections.abc import Iterator

from inferplane.policies.framework import Finding, Rule, RuleConfig
from inferplane.policies.preflight_rules import EXAMPLE_INVOKES, SOURCES, findings
from inferplane.policies.stack import Stack


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    yield from findings(stack, "capacity-offered")


RULE = Rule(
    id="capacity-offered",
    title="The instance type is offered in each zone of the pool",
    level="mandatory",
    scope="stack",
    check=check,
    rationale=(
        "Not every zone of a region offers every GPU instance type. A node group in a zone "
        "without the type never launches a node: the autoscaler keeps failing and the "
        "zone's replicas stay pending, which a pull request cannot see without asking EC2."
    ),
    remediation=(
        "Move the pool (the environment's `zones`) to zones that offer the type, or pick an "
        "instance type offered in the zones (`gpu_pools.<p>.instance_type`)."
    ),
    sources=SOURCES,
    passing_example="""\
environments:
  staging:
    overrides:
      gpu_pools:
        l4:
          instance_type: g6.2xlarge
          capacity: [on_demand]
""",
    failing_example="""\
environments:
  staging:
    overrides:
      gpu_pools:
        l4:
          instance_type: g6.4xlarge
          capacity: [on_demand]
""",
    example_invokes=EXAMPLE_INVOKES,
)
