"""Which models of an environment a rehearsal can run, and why the others are not rehearsed.

The stand-ins speak vLLM's OpenAI API and export its metrics; nothing yet stands in for
Triton, for the llm-aware router (its queue, TTL and picker, and the metrics its triggers
read), or for the wake path of a model at zero (a request held until a replica serves). A
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
    if model.routing.mode == "llm_aware":
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


def split(env: Any) -> tuple[list[str], dict[str, str]]:
    """The names of the models of env (a resolved `Environment`) a rehearsal runs, and the
    others with the reason each is not rehearsed."""
    runs: list[str] = []
    skipped: dict[str, str] = {}
    for name, model in sorted(env.models.items()):
        why = why_not(model)
        if why is None:
            runs.append(name)
        else:
            skipped[name] = why
    return runs, skipped
