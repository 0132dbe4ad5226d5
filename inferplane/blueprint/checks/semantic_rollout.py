"""Semantic checks of `models.<m>.rollout`: steps that grow to the whole zone, the Argo
Rollouts add-on that carries them out, and guard bounds the model's server can measure.
Schema validation has checked each value's type and range already.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inferplane.blueprint.checks import semantic_routing
from inferplane.blueprint.checks.semantic_env import EnvView
from inferplane.blueprint.model import guarded_latencies

_SERIES = {
    "ttft_p95_ms": "time to first token (vLLM, or TensorRT-LLM with streaming)",
    "itl_p95_ms": "inter-token latency (vLLM)",
}


def check_rollouts(env: EnvView) -> None:
    """Every model of the environment with a ``rollout``."""
    addons = (env.spec.get("cluster") or {}).get("addons") or {}
    for name, model in (env.data.get("models") or {}).items():
        rollout = model.get("rollout")
        if rollout is None:
            continue
        where = ("models", name, "rollout")
        if "argo_rollouts" not in addons:
            env.error(
                where,
                f"model {name!r} rolls out in canary steps, but environment {env.name!r} "
                "has no Argo Rollouts controller to take them",
                f"add `argo_rollouts: {{}}` under environments.{env.name}.cluster.addons "
                "(or `mode: existing` with its namespace where the cluster runs one), or "
                "remove the model's rollout",
            )
        if ((model.get("replicas") or {}).get("wake") or {}).get("hosts"):
            env.error(
                where,
                f"model {name!r} rolls out through an Argo Rollout, which holds the model's "
                "Deployment at zero replicas, but it also wakes on traffic "
                "(replicas.wake.hosts), whose HTTP add-on scales that Deployment: a woken "
                "replica would be scaled straight back to zero",
                "remove the model's rollout, or its replicas.wake.hosts (keep one warm "
                "replica, replicas.min: 1)",
            )
        zones = semantic_routing.pool_zones(env, model)
        if not semantic_routing.llm_aware(model) and zones > 1:
            # An llm-aware model's split is checked with its routing.
            semantic_routing.check_zone_split(
                env, ("models", name), model, "a model that rolls out zone by zone"
            )
        if zones > 1:
            minimum = semantic_routing.replica_bounds(env, model)[0]
            if minimum == 0:
                replicas = model.get("replicas") or {}
                env.error(
                    ("models", name, "replicas", "min") if "min" in replicas else where,
                    f"model {name!r} rolls out zone by zone, and each zone's canary waits "
                    "until the zone before serves the new version; at replicas.min 0 a zone "
                    "may have no replica to serve it, and the next zone's rollout would "
                    "abort (nor can one HTTP add-on wake a model of one Deployment per "
                    "zone)",
                    f"keep a replica per zone (replicas.min: {zones} or a multiple of it), or "
                    "remove the model's rollout",
                )
        _check_steps(env, name, rollout.get("steps"))
        _check_guard(env, name, model, rollout.get("guard") or {})


def _check_steps(env: EnvView, name: str, steps: list[int] | None) -> None:
    if not steps:
        return
    path = ("models", name, "rollout", "steps")
    for i in range(1, len(steps)):
        if steps[i] <= steps[i - 1]:
            env.error(
                (*path, i),
                f"step {i + 1} of model {name!r}'s rollout ({steps[i]}%) does not grow on "
                f"the step before it ({steps[i - 1]}%)",
                "list the canary's shares in increasing order, e.g. [10, 50, 100]",
            )
            return
    if steps[-1] != 100:
        env.error(
            (*path, len(steps) - 1),
            f"model {name!r}'s rollout ends at {steps[-1]}% of the replicas: the new "
            "version would never replace the old one",
            f"end the steps at 100, e.g. [{', '.join(str(s) for s in steps)}, 100]",
        )


def _check_guard(
    env: EnvView, name: str, model: Mapping[str, Any], guard: Mapping[str, Any]
) -> None:
    measured = guarded_latencies(model)
    for key, what in _SERIES.items():
        if key in guard and key not in measured:
            env.error(
                ("models", name, "rollout", "guard", key),
                f"model {name!r} ({model['server']}) exports no {what}: the guard cannot "
                "measure its new pods against this bound",
                "remove it (p95_ms and error_ratio are measured on every server)",
            )
