"""capacity-quota: the region's vCPU quota holds every pool's ``nodes.max`` plus surge."""

from __future__ import annotations

from collections.abc import Iterator

from inferplane.policies.framework import Finding, Rule, RuleConfig
from inferplane.policies.preflight_rules import EXAMPLE_INVOKES, SOURCES, findings
from inferplane.policies.stack import Stack


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    yield from findings(stack, "capacity-quota")


RULE = Rule(
    id="capacity-quota",
    title="The vCPU quota covers nodes.max plus the update surge",
    level="mandatory",
    scope="stack",
    check=check,
    rationale=(
        "EC2 counts GPU instances against a regional vCPU quota per family and market "
        "(on-demand, spot). A pool whose nodes.max needs more than the quota scales out "
        "only part way, at the moment the traffic needs it, and a node group update, which "
        "launches up to two extra nodes per zone, stalls the same way."
    ),
    remediation=(
        "Ask AWS to raise the quota the message names (Service Quotas, service ec2), or "
        "lower the pools' `nodes.max`."
    ),
    sources=SOURCES,
    passing_example="""\
environments:
  staging:
    overrides:
      gpu_pools:
        l4:
          capacity: [on_demand]
          nodes: {max: 6}
""",
    failing_example="""\
environments:
  staging:
    overrides:
      gpu_pools:
        l4:
          capacity: [on_demand]
          nodes: {max: 7}
""",
    example_invokes=EXAMPLE_INVOKES,
)
