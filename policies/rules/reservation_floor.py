"""reservation-floor: a reservation holds at least the zone's ``nodes.min`` machines."""

from __future__ import annotations

from collections.abc import Iterator

from inferplane.policies.framework import Finding, Rule, RuleConfig
from inferplane.policies.preflight_rules import EXAMPLE_INVOKES, SOURCES, findings
from inferplane.policies.stack import Stack


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    yield from findings(stack, "reservation-floor")


RULE = Rule(
    id="reservation-floor",
    title="A reservation covers the pool's floor",
    level="mandatory",
    scope="stack",
    check=check,
    rationale=(
        "The floor of a pool (`nodes.min` per zone) is what keeps warm replicas and spare "
        "GPUs up, and a reservation is what makes large GPUs arrive when asked. A "
        "reservation smaller than the floor leaves the rest of the floor to on-demand or "
        "spot capacity, which for these GPUs is rarely there."
    ),
    remediation=(
        "Reserve at least `nodes.min` machines in the zone, or lower `nodes.min` to what "
        "the reservation holds."
    ),
    sources=SOURCES
    + (
        " Judged for GCP specific reservations (`count`); an AWS On-Demand Capacity "
        "Reservation is reported as not checked (pulumi-aws 7.51.1 has no data source for one)."
    ),
    passing_example="""\
environments:
  prod:
    overrides:
      gpu_pools:
        l4:
          capacity:
            - {reservation: l4-reserved, zone: us-central1-a}
            - on_demand
          nodes: {min: 3, max: 6}
""",
    failing_example="""\
environments:
  prod:
    overrides:
      gpu_pools:
        l4:
          capacity:
            - {reservation: l4-reserved, zone: us-central1-a}
            - on_demand
          nodes: {min: 4, max: 6}
""",
    example_invokes=EXAMPLE_INVOKES,
)
