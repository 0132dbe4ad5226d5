"""Semantic checks of `gpu_pools.<pool>.spare_gpus`: GPUs held free per zone by placeholder
pods (`inferplane.components.serving.spare_gpus`) that a new serving replica preempts.

Whether the pool's nodes hold them (at nodes.min beside the warm replicas, at nodes.max
beside every model at its maximum) is the `warm-replicas` and `capacity-headroom` rules'
concern: they count the placeholders' GPUs from the generated objects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from inferplane.blueprint import defaults

if TYPE_CHECKING:
    from inferplane.blueprint.semantic_env import EnvView


def check_spare_gpus(env: EnvView) -> None:
    """Spare GPUs only on a pool some model uses, and in whole replicas of its largest model
    (one preempted placeholder must free room for any replica on the pool)."""
    models = env.data.get("models") or {}
    for name, pool in (env.data.get("gpu_pools") or {}).items():
        spare = pool.get("spare_gpus", defaults.POOL_SPARE_GPUS)
        if not spare:
            continue
        where = ("gpu_pools", name, "spare_gpus")
        sizes = {m: spec.get("gpus", defaults.MODEL_GPUS) for m, spec in models.items()}
        users = {m: n for m, n in sizes.items() if models[m].get("pool") == name}
        if not users:
            env.error(
                where,
                f"pool {name!r} keeps {spare} spare GPUs per zone, but no model runs on it: "
                "they would hold GPU nodes for nothing",
                "remove spare_gpus, or place a model on the pool (models.<m>.pool)",
            )
            continue
        largest, units = max(users.items(), key=lambda item: (item[1], item[0]))
        if spare % units:
            env.error(
                where,
                f"{spare} spare GPUs per zone is not a whole number of replicas of {largest} "
                f"({units} GPUs each), the largest model on pool {name!r}: a preempted "
                "placeholder must free room for any replica",
                f"use a multiple of {units}, e.g. spare_gpus: {units * max(1, spare // units)}",
            )
