"""rollout-guard: a model's rollout judges its new pods by bounds no looser than its SLO."""

from __future__ import annotations

from collections.abc import Iterator

from inferplane.policies.framework import Finding, Rule, RuleConfig
from inferplane.policies.stack import Stack

BOUNDS = (
    ("p95_ms", "request p95"),
    ("ttft_p95_ms", "time-to-first-token p95"),
    ("itl_p95_ms", "inter-token p95"),
)


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    """Each bound of a rollout's guard against the same bound of the model's SLO."""
    env = stack.env
    if env is None:  # online the SLO is not known; judged offline
        return
    for model in env.models.values():
        if model.rollout is None or model.slo is None:
            continue
        for key, what in BOUNDS:
            guard, slo = getattr(model.rollout.guard, key), getattr(model.slo, key)
            if guard is None or slo is None or guard <= slo:
                continue
            yield Finding(
                f"models.{model.name}",
                ("models", model.name, "rollout", "guard", key),
                f"the rollout of model {model.name} promotes new pods whose {what} is up to "
                f"{guard} ms, above its SLO of {slo} ms: a version that misses the SLO can "
                f"replace the one that meets it; lower rollout.guard.{key} to {slo} or less, "
                "or remove it (it then defaults to the SLO)",
            )


RULE = Rule(
    id="rollout-guard",
    title="A rollout's guard is no looser than the SLO",
    level="advisory",
    scope="stack",
    check=check,
    rationale=(
        "A model's rollout promotes a new version step by step only while the new pods meet "
        "its guard, and rolls it back when they do not. A guard looser than the SLO lets a "
        "version that misses the SLO through every step, so the first sign of it is the "
        "SLO alert after all replicas run it, which is what the rollout exists to prevent."
    ),
    remediation=(
        "Leave models.<m>.rollout.guard's latency bounds out (they default to the SLO's) or "
        "set them at or below models.<m>.slo."
    ),
    offline_only=True,
    sources=(
        "The blueprint's models.<m>.rollout.guard against models.<m>.slo. Offline only: "
        "online the SLO is not known."
    ),
    passing_example="""\
environments:
  staging: {cluster: {addons: {argo_rollouts: {}}}}
  prod: {cluster: {addons: {argo_rollouts: {}}}}
models:
  chat: {rollout: {guard: {ttft_p95_ms: 250}}}   # slo.ttft_p95_ms: 300
""",
    failing_example="""\
environments:
  staging: {cluster: {addons: {argo_rollouts: {}}}}
  prod: {cluster: {addons: {argo_rollouts: {}}}}
models:
  chat: {rollout: {guard: {ttft_p95_ms: 900}}}   # slo.ttft_p95_ms: 300
""",
)
