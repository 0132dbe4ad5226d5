"""canary-headroom: the controller's canary arithmetic, ported from Argo Rollouts v1.10.1, and
the rule read from the resources alone (online) as offline."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from policy_fixtures import FIXTURES, materialise

from inferplane.app.check import stack_of
from inferplane.blueprint.resolution.resolve import resolve_file
from inferplane.policies.resources import DEPLOYMENT, ROLLOUT, Resource
from inferplane.policies.rules import canary_headroom, capacity_headroom
from inferplane.policies.stack import Stack

# (replicas, weight, maxSurge, canary, stable): every row of
# TestApproximateWeightedNewStableReplicaCounts (v1.10.1 utils/replicaset/canary_test.go),
# all of them at maxWeight 100.
UPSTREAM = [
    (0, 0, 0, 0, 0),
    (0, 50, 0, 0, 0),
    (0, 100, 0, 0, 0),
    (0, 0, 1, 0, 0),
    (0, 50, 1, 0, 0),
    (0, 100, 1, 0, 0),
    (1, 0, 0, 0, 1),
    (1, 1, 0, 0, 1),
    (1, 49, 0, 0, 1),
    (1, 50, 0, 1, 0),
    (1, 99, 0, 1, 0),
    (1, 100, 0, 1, 0),
    (1, 0, 1, 0, 1),
    (1, 1, 1, 1, 1),
    (1, 49, 1, 1, 1),
    (1, 50, 1, 1, 1),
    (1, 99, 1, 1, 1),
    (1, 100, 1, 1, 0),
    (2, 0, 0, 0, 2),
    (2, 1, 0, 1, 1),
    (2, 50, 0, 1, 1),
    (2, 99, 0, 1, 1),
    (2, 100, 0, 2, 0),
    (2, 0, 1, 0, 2),
    (2, 1, 1, 1, 2),
    (2, 50, 1, 1, 1),
    (2, 99, 1, 2, 1),
    (2, 100, 1, 2, 0),
    (3, 10, 0, 1, 2),
    (3, 25, 0, 1, 2),
    (3, 33, 0, 1, 2),
    (3, 34, 0, 1, 2),
    (3, 49, 0, 1, 2),
    (3, 50, 0, 2, 1),
    (3, 10, 1, 1, 3),
    (3, 25, 1, 1, 3),
    (3, 33, 1, 1, 2),
    (3, 34, 1, 1, 2),
    (3, 49, 1, 2, 2),
    (3, 50, 1, 2, 2),
    (10, 0, 1, 0, 10),
    (10, 1, 0, 1, 9),
    (10, 14, 0, 1, 9),
    (10, 15, 0, 2, 8),
    (10, 16, 0, 2, 8),
    (10, 99, 0, 9, 1),
    (10, 100, 1, 10, 0),
    (10, 0, 1, 0, 10),
    (10, 1, 1, 1, 10),
    (10, 18, 1, 2, 9),
    (10, 19, 1, 2, 9),
    (10, 20, 1, 2, 8),
    (10, 23, 1, 2, 8),
    (10, 24, 1, 3, 8),
    (10, 25, 1, 3, 8),
    (10, 99, 1, 10, 1),
    (10, 100, 1, 10, 0),
]


@pytest.mark.parametrize(("replicas", "weight", "surge", "canary", "stable"), UPSTREAM)
def test_the_step_counts_are_upstream_s(
    replicas: int, weight: int, surge: int, canary: int, stable: int
) -> None:
    assert canary_headroom.canary_counts(replicas, weight, surge) == (canary, stable)


def test_fifty_percent_of_four_is_two_and_two() -> None:
    """What the rehearsal saw under the real controller (docs/rollouts.md)."""
    assert canary_headroom.canary_counts(4, 50, canary_headroom.fenceposts({}, 4)[0]) == (2, 2)


def test_the_fenceposts_round_as_the_controller_does() -> None:
    # The default "25" is a percentage: surge rounds up, unavailable down.
    assert canary_headroom.fenceposts({}, 2) == (1, 0)
    assert canary_headroom.fenceposts({}, 4) == (1, 1)
    assert canary_headroom.fenceposts({}, 5) == (2, 1)
    assert canary_headroom.fenceposts({"maxSurge": "50%", "maxUnavailable": 0}, 3) == (2, 0)
    assert canary_headroom.fenceposts({"maxSurge": 2, "maxUnavailable": 1}, 8) == (2, 1)
    # Both 0: maxUnavailable becomes 1 (resolveFenceposts).
    assert canary_headroom.fenceposts({"maxSurge": 0, "maxUnavailable": "10%"}, 4) == (0, 1)
    assert canary_headroom.fenceposts({"maxSurge": "many"}, 4) is None
    # strconv.Atoi's syntax: a sign is read, a digit of another script is not a number.
    assert canary_headroom.fenceposts({"maxSurge": "+50%"}, 4) == (2, 1)
    assert canary_headroom.fenceposts({"maxSurge": "\u00b2"}, 4) is None
    assert canary_headroom.fenceposts({"maxSurge": "\u0663%"}, 4) is None


def test_the_steps_end_at_full_weight() -> None:
    """Once the steps are done, or without setWeight steps at all, the controller takes the
    canary to full weight (GetCurrentSetWeight: no current step, MaxTrafficWeight)."""

    def rollout(steps: list[dict[str, Any]] | None) -> Resource:
        canary: dict[str, Any] = {} if steps is None else {"steps": steps}
        return Resource(
            type=ROLLOUT,
            name="chat",
            urn="urn:pulumi:test::p::kubernetes:argoproj.io/v1alpha1:Rollout::chat",
            props={"metadata": {"name": "chat"}, "spec": {"strategy": {"canary": canary}}},
        )

    assert canary_headroom.weights(rollout([{"setWeight": 10}, {"setWeight": 50}])) == [
        10,
        50,
        100,
    ]
    assert canary_headroom.weights(rollout([{"setWeight": 25}, {"setWeight": 100}])) == [25, 100]
    assert canary_headroom.weights(rollout([{"pause": {"duration": "1m"}}])) == [100]
    assert canary_headroom.weights(rollout(None)) == [100]


def test_the_peak_is_the_stable_pods_before_plus_the_step_s_canary_within_the_surge() -> None:
    # 2 replicas, maxSurge 1: the first step already adds the one pod the surge allows.
    assert canary_headroom.peak_extra(2, [10, 50, 100], 1) == (1, 10, 2, 1)
    # 8 replicas, maxSurge 2: 10% is 1 canary pod beside 8 (9 of 8 + 1 is closer to 10%);
    # 50% wants 4 beside those 8, and the cap of 10 leaves 2 extra.
    assert canary_headroom.peak_extra(8, [10, 50, 100], 2) == (2, 50, 8, 4)
    # No surge: nothing beyond the replicas, ever.
    assert canary_headroom.peak_extra(4, [25, 50, 100], 0)[0] == 0


def _stack(tmp_path: Path, changes: dict[str, Any], env: str = "staging") -> Stack:
    path = tmp_path / "blueprint.yaml"
    path.write_text(materialise((FIXTURES / "golden-canary.yaml").read_text(), changes))
    return stack_of(resolve_file(path, env))


def _with_spec(r: Resource, change: Any) -> Resource:
    props = dict(r.props)
    props["spec"] = change(dict(r.props["spec"]))
    return dataclasses.replace(r, props=props)


def _findings(stack: Stack) -> list[tuple[str, str]]:
    rule = canary_headroom.RULE
    return sorted((f.target, f.message) for f in rule.run(stack, rule.defaults()))


def test_the_rule_reads_the_resources_alone(tmp_path: Path) -> None:
    """Online (CrossGuard: no blueprint) the rule finds what it finds offline."""
    offline = _stack(tmp_path, {"gpu_pools.l4.nodes.max": 4})
    found = _findings(offline)
    assert [t for t, _ in found] == ["models.chat"] * 2 + ["models.ranker"] * 2
    assert "in zone us-east-1a" in found[0][1]
    assert "leaving 0" in found[0][1]
    assert "raise gpu_pools.l4.nodes.max by 1 (to 5 per zone)" in found[0][1]
    assert _findings(Stack.of(offline.resources, None)) == found


def test_the_rollout_s_own_surge_is_read(tmp_path: Path) -> None:
    """A Rollout that sets maxSurge 0 adds no pod: nothing to report."""
    stack = _stack(tmp_path, {"gpu_pools.l4.nodes.max": 4})

    def no_surge(spec: dict[str, Any]) -> dict[str, Any]:
        strategy = dict(spec["strategy"])
        strategy["canary"] = {**strategy["canary"], "maxSurge": 0, "maxUnavailable": 1}
        return {**spec, "strategy": strategy}

    changed = [_with_spec(r, no_surge) if r.type == ROLLOUT else r for r in stack.resources]
    assert _findings(Stack.of(changed, stack.env)) == []


def test_capacity_headroom_leaves_a_rollout_model_s_surge_to_canary_headroom(
    tmp_path: Path,
) -> None:
    """The Deployment's rolling update never runs under a Rollout: capacity-headroom judges
    it only for a model without one."""
    stack = _stack(tmp_path, {"gpu_pools.l4.nodes.max": 4})

    def surge(spec: dict[str, Any]) -> dict[str, Any]:
        rolling = {"maxSurge": 1, "maxUnavailable": 0}
        return {**spec, "strategy": {"type": "RollingUpdate", "rollingUpdate": rolling}}

    surging = [
        _with_spec(r, surge) if r.type == DEPLOYMENT and r.model else r for r in stack.resources
    ]
    rule = capacity_headroom.RULE
    assert rule.run(Stack.of(surging, stack.env), rule.defaults()) == []
    without_rollouts = [r for r in surging if r.type != ROLLOUT]
    assert rule.run(Stack.of(without_rollouts, stack.env), rule.defaults()) != []
