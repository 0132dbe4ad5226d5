"""realtime-rollout: where the environment runs Argo Rollouts, a realtime model rolls out."""

from __future__ import annotations

from collections.abc import Iterator

from inferplane.policies.framework import Finding, Rule, RuleConfig
from inferplane.policies.stack import Stack


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    """Each realtime model without a rollout in an environment with the Argo Rollouts
    controller (installed or existing)."""
    env = stack.env
    if env is None:  # online the blueprint's models and add-ons are not known
        return
    if not env.cluster.addons.argo_rollouts.enabled:
        return
    for model in env.models.values():
        if not model.realtime or model.rollout is not None:
            continue
        yield Finding(
            f"models.{model.name}",
            ("models", model.name),
            f"environment {env.name} runs Argo Rollouts, but realtime model {model.name} has "
            "no rollout: a change of its image, engine release, weights or flags rolls "
            "through every zone at the same time at `pulumi up` (each Deployment's own "
            "rolling update), with nothing to stop a version that misses its SLO; add "
            f"`rollout: {{}}` to models.{model.name} (a canary of 10, 50 and 100% of the "
            "replicas, zone by zone, judged against its SLO; over several zones it then runs "
            "one Deployment per zone, so its replicas must split evenly and keep one per "
            "zone), or waive this rule for it",
        )


RULE = Rule(
    id="realtime-rollout",
    title="A realtime model rolls out where Argo Rollouts runs",
    level="advisory",
    scope="stack",
    check=check,
    rationale=(
        "Without a rollout, one `pulumi up` replaces the pods of every zone of a model as "
        "soon as its pod template changes: a new checkpoint, an engine upgrade that renames "
        "options or metrics, a changed flag. For a realtime model, a version that is slower "
        "or fails is then everyone's problem until someone notices and reverts. A rollout "
        "takes the change zone by zone in canary steps and rolls it back when the new pods "
        "miss the SLO. Where the environment runs the Argo Rollouts controller, the only "
        "thing missing is the model's `rollout`."
    ),
    remediation=(
        "Add `rollout: {}` to the model (or steps, a step duration and a guard of its own), "
        "or waive the rule for it; the platform may make the rule mandatory."
    ),
    offline_only=True,
    sources=(
        "The blueprint's environments.<e>.cluster.addons.argo_rollouts and each model's "
        "latency_class and rollout. Offline only: online the blueprint is not known."
    ),
    passing_example="""\
environments:
  staging: {cluster: {addons: {argo_rollouts: {}}}}
  prod: {cluster: {addons: {argo_rollouts: {}}}}
models:
  chat: {rollout: {}}
  ranker: {rollout: {}}   # both realtime models roll out
""",
    failing_example="""\
environments:
  staging: {cluster: {addons: {argo_rollouts: {}}}}
  prod: {cluster: {addons: {argo_rollouts: {}}}}
models:
  chat: {rollout: {}}   # ranker, realtime too, has none
""",
)
