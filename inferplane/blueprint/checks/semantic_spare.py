"""Semantic checks of `gpu_pools.<pool>.spare_gpus`: GPUs held free per zone by placeholder
pods (`inferplane.components.serving.scaling.spare_gpus`) that a new serving replica preempts.

Whether the pool's nodes hold them (at nodes.min beside the warm replicas, at nodes.max
beside every model at its maximum) is the `warm-replicas` and `capacity-headroom` rules'
concern: they count the placeholders' GPUs from the generated objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from inferplane.blueprint import defaults

if TYPE_CHECKING:
    from inferplane.blueprint.checks.semantic_env import EnvView
    from inferplane.blueprint.errors import YamlPath


def check_spare_gpus(env: EnvView) -> None:
    """Spare GPUs only on a pool some model uses, and in whole replicas of its largest model
    (one preempted placeholder must free room for any replica on the pool).

    The numbers may come from an environment's overrides (its own ``spare_gpus``, a model's
    ``gpus`` or ``pool``): the error then points at that override and names the environment.
    """
    models = env.data.get("models") or {}
    for name, pool in (env.data.get("gpu_pools") or {}).items():
        spare = pool.get("spare_gpus", defaults.POOL_SPARE_GPUS)
        if not spare:
            continue
        where = ("gpu_pools", name, "spare_gpus")
        sizes = {m: spec.get("gpus", defaults.MODEL_GPUS) for m, spec in models.items()}
        users = {m: n for m, n in sizes.items() if models[m].get("pool") == name}
        if not users:
            # A model the blueprint places on the pool that this environment moves away.
            base = env.doc.data.get("models") or {}
            moved = [("models", m, "pool") for m in models if base.get(m, {}).get("pool") == name]
            blame, scope = _blame(env, where, moved)
            env.error(
                blame,
                f"{scope}pool {name!r} keeps {spare} spare GPUs per zone, but no model runs "
                "on it: they would hold GPU nodes for nothing",
                "remove spare_gpus, or place a model on the pool (models.<m>.pool)",
            )
            continue
        largest, units = max(users.items(), key=lambda item: (item[1], item[0]))
        if spare % units:
            inputs = [("models", largest, "gpus"), ("models", largest, "pool")]
            blame, scope = _blame(env, where, inputs)
            env.error(
                blame,
                f"{scope}{spare} spare GPUs per zone is not a whole number of replicas of "
                f"{largest} ({units} GPUs each), the largest model on pool {name!r}: a "
                "preempted placeholder must free room for any replica",
                f"use a multiple of {units}, e.g. spare_gpus: {units * max(1, spare // units)}",
            )


def _blame(env: EnvView, where: YamlPath, inputs: Sequence[YamlPath]) -> tuple[YamlPath, str]:
    """Where to point and how to scope the message: the pool's ``spare_gpus`` when this
    environment's overrides set none of the numbers; else the first override that did
    (``spare_gpus`` itself first), with "in environment <env>, " since the other
    environments may be fine."""
    for path in (where, *inputs):
        if path in env.origins:
            return path, f"in environment {env.name!r}, "
    return where, ""
