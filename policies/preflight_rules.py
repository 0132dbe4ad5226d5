"""What the capacity preflight rules share: the findings of one rule from the judged rows
(`Stack.preflight`), one per source and message."""

from __future__ import annotations

from collections.abc import Iterator

from inferplane.blueprint.capacity.preflight import problems_of
from inferplane.policies.framework import Finding
from inferplane.policies.stack import Stack

SOURCES = (
    "Online only: the cloud's answers that the stack's capacity preflight got during "
    "`pulumi preview` (`inferplane.components.capacity_preflight`), judged against the "
    "blueprint and published in the inferplane-preflight ConfigMap. Offline `check` does "
    "not ask the cloud and reports the preflight as not checked; handed recorded answers, "
    "it runs the same preflight on them."
)


def findings(stack: Stack, rule: str) -> Iterator[Finding]:
    seen: set[tuple[str, tuple[object, ...], str]] = set()
    for pool, _zone, problem in problems_of(stack.preflight or {}):
        if problem.get("rule") != rule:
            continue
        path = tuple(problem.get("path") or ())
        message = str(problem.get("message") or "")
        target = f"gpu_pools.{pool}"
        key = (target, path, message)
        if key in seen:
            continue
        seen.add(key)
        yield Finding(target, path, message)


EXAMPLE_INVOKES = """\
- token: aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings
  args: {filters: [{name: instance-type, values: [g6.2xlarge]}]}
  answer: {id: us-east-1, locations: [us-east-1a, us-east-1b]}
- token: aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings
  args: {filters: [{name: instance-type, values: [g6.4xlarge]}]}
  answer: {id: us-east-1, locations: [us-east-1a]}
- token: aws:ec2/getInstanceType:getInstanceType
  args: {instanceType: g6.2xlarge}
  answer: {id: g6.2xlarge, defaultVcpus: 8}
- token: aws:ec2/getInstanceType:getInstanceType
  args: {instanceType: g6.4xlarge}
  answer: {id: g6.4xlarge, defaultVcpus: 16}
- token: aws:servicequotas/getServiceQuota:getServiceQuota
  args: {quotaName: Running On-Demand G and VT instances}
  answer: {id: L-DB2E81BA, value: 192}
- token: aws:servicequotas/getServiceQuota:getServiceQuota
  args: {quotaName: All G and VT Spot Instance Requests}
  answer: {id: L-3819A6DF, value: 128}
- token: aws:ec2/getCapacityBlockReservation:getCapacityBlockReservation
  args: {id: cr-0fedcba9876543210}
  answer:
    id: cr-0fedcba9876543210
    availabilityZone: us-east-1a
    instanceCount: 2
    startDate: "2026-05-20T11:30:00Z"
    endDate: "2026-06-03T11:30:00Z"
    state: active
- token: aws:ec2/getSpotPrice:getSpotPrice
  answer: {id: spot, spotPrice: "0.3101"}
- token: gcp:compute/getMachineTypes:getMachineTypes
  args: {filter: 'name = "g2-standard-8"'}
  answer: {id: g2-standard-8, machineTypes: [{name: g2-standard-8}]}
- token: gcp:compute/getMachineTypes:getMachineTypes
  args: {filter: 'name = "g2-standard-4"'}
  answer: {id: g2-standard-4, machineTypes: []}
- token: gcp:compute/getReservation:getReservation
  args: {name: l4-reserved}
  answer:
    id: l4-reserved
    name: l4-reserved
    zone: us-central1-a
    status: READY
    specificReservations: [{count: 3, inUseCount: 1, assuredCount: 3}]
"""
"""Recorded answers of the preflight's invokes for the rules' examples and fixtures: g6.2xlarge
offered in us-east-1a and us-east-1b, g6.4xlarge in us-east-1a only, 128 vCPUs of on-demand
and of spot G quota, and Capacity Block cr-0fedcba9876543210 in us-east-1a until 3 June 2026
11:30 UTC; on GCP, g2-standard-8 in every zone, g2-standard-4 in none, and reservation
l4-reserved of 3 machines in us-central1-a."""


__all__ = ["EXAMPLE_INVOKES", "SOURCES", "findings"]
