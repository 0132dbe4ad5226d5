"""Semantic checks of Redis response caches: their Valkey servers must fit the system nodes.

A model with ``response_cache.backend: redis`` gets one Valkey Deployment per zone it runs
in, on the untainted system nodes, requesting `system_nodes.valkey_memory_mib` of
``size_mb``. The model's Deployment waits for them (Triton pings the server at start), so a
Valkey pod no system node can hold stays Pending and the model never rolls out.

Checked for clusters the blueprint creates, whose system machine type inferplane chooses;
an attached cluster's nodes are its operators' and unknown here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from inferplane.blueprint import defaults, system_nodes

if TYPE_CHECKING:
    from inferplane.blueprint.checks.semantic_env import EnvView


def _redis_size_mb(model: Mapping[str, Any]) -> int | None:
    """The ``size_mb`` of a model's Redis cache, None without one (only Triton has a cache)."""
    if model.get("server") != "triton":
        return None
    cache = model.get("response_cache")
    if not isinstance(cache, Mapping) or not cache.get("enabled", True):
        return None
    if cache.get("backend", defaults.RESPONSE_CACHE_BACKEND) != "redis":
        return None
    return int(cache.get("size_mb", defaults.RESPONSE_CACHE_SIZE_MB))


def _zones(env: EnvView, model: Mapping[str, Any]) -> list[str]:
    pool = (env.data.get("gpu_pools") or {}).get(model.get("pool")) or {}
    return list(pool.get("zones") or env.spec["zones"])


def check_redis_cache_memory(env: EnvView) -> None:
    if not (env.spec.get("cluster") or {}).get("create"):
        return
    cloud = env.spec["cloud"]
    allocatable = system_nodes.ALLOCATABLE_MIB[cloud]
    node = system_nodes.SYSTEM_DESCRIPTION[cloud]
    share = int(allocatable * system_nodes.CACHE_SHARE_OF_NODE)
    per_zone: dict[str, list[tuple[str, int]]] = {}
    for name, model in (env.data.get("models") or {}).items():
        size = _redis_size_mb(model)
        if size is None:
            continue
        need = system_nodes.valkey_memory_mib(size)
        if need > allocatable:
            env.error(
                ("models", name, "response_cache", "size_mb"),
                f"in environment {env.name!r} the Valkey server of a {size} MB Redis cache "
                f"requests {need} MiB (1.5 x size_mb + 64), more than the {allocatable} MiB "
                f"one {node} can give, so it would stay Pending and hold back the model's "
                "rollout",
                f"use a size_mb of at most {_largest_size(allocatable)}, or `backend: local`",
            )
            continue
        for zone in _zones(env, model):
            per_zone.setdefault(zone, []).append((name, need))
    blamed: set[str] = set()
    for zone, caches in per_zone.items():
        _check_zone(env, zone, caches, share, node, blamed)


def _check_zone(
    env: EnvView,
    zone: str,
    caches: list[tuple[str, int]],
    share: int,
    node: str,
    blamed: set[str],
) -> None:
    """Blamed at the cache that takes its zone over the share, in the blueprint's order,
    once per model (models in several zones would repeat it for each)."""
    total = 0
    for index, (name, need) in enumerate(caches):
        total += need
        if total > share:
            if name in blamed:
                return
            blamed.add(name)
            names = ", ".join(repr(n) for n, _ in caches[: index + 1])
            whose = f"caches of models {names}" if index else f"cache of model {names}"
            verb = "request" if index else "requests"
            env.error(
                ("models", name, "response_cache", "size_mb"),
                f"in environment {env.name!r} the Redis {whose} in zone {zone!r} {verb} "
                f"{total} MiB, more than the {share} MiB (half of one {node}) a zone keeps "
                "for Redis caches beside the add-ons on its system nodes",
                f"keep the Redis caches of a zone within {share} MiB together (one cache alone: "
                f"size_mb at most {_largest_size(share)}), or give some models `backend: local`",
            )
            return


def _largest_size(allocatable: int) -> int:
    """The largest size_mb whose Valkey request fits `allocatable` MiB."""
    size = int((allocatable - system_nodes.VALKEY_BASE_MIB) / system_nodes.VALKEY_OVERHEAD_FACTOR)
    while system_nodes.valkey_memory_mib(size + 1) <= allocatable:
        size += 1
    while size > 0 and system_nodes.valkey_memory_mib(size) > allocatable:
        size -= 1
    return size


__all__ = ["check_redis_cache_memory"]
