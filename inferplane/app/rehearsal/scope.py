"""Which models of an environment a rehearsal can run, and why the others are not rehearsed.

The stand-ins speak vLLM's OpenAI API and export its metrics; nothing yet stands in for
Triton, for the llm-aware router (its queue, TTL and picker, and the metrics its triggers
read), or for the wake path of a model at zero (a request held until a replica serves), and
a stand-in has no latency for a model the capacity planner has no model of. A
model that needs one of those is named with the reason, and the others are still rehearsed.
"""

from __future__ import annotations

from typing import Any


def why_not(model: Any) -> str | None:
    """Why model (a resolved `Model`) cannot be rehearsed yet; None when it can."""
    if model.server != "vllm":
        return (
            f"server {model.server}: the stand-ins speak vLLM only (not Triton's inference "
            "API or its nv_* metrics)"
        )
    if model.routing.llm_aware:
        return (
            "llm-aware routing: the router (its queue, TTL and picker) and the metrics its "
            "triggers read are not modelled yet"
        )
    if model.replicas.min == 0:
        return (
            "replicas.min 0: the wake path (a request held until a replica serves) is not "
            "modelled yet"
        )
    return None


def _no_latency_model(env: Any, model: Any) -> str | None:
    """Why the stand-ins have no latency for model: the capacity planner has no model of
    it (`engine.ReplicaEngine.of`, the lengths do not matter here); None when they do."""
    from inferplane.app.rehearsal.engine import ReplicaEngine

    try:
        ReplicaEngine.of(
            model,
            env.pool_of(model),
            input_tokens=256,
            output_tokens=8,
            pinned_vllm=env.versions.vllm,
        )
    except ValueError as err:
        return f"no latency model: {err}"
    return None


def split(env: Any) -> tuple[list[str], dict[str, str]]:
    """The names of the models of env (a resolved `Environment`) a rehearsal runs, and the
    others with the reason each is not rehearsed."""
    runs: list[str] = []
    skipped: dict[str, str] = {}
    for name, model in sorted(env.models.items()):
        why = why_not(model) or _no_latency_model(env, model)
        if why is None:
            runs.append(name)
        else:
            skipped[name] = why
    return runs, skipped
