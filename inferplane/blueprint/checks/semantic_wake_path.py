"""Semantic checks of the path a request takes to a model: whether every hop lets its
longest request through, and the DNS names a model at zero is reached by.

- A model whose longest silence (`long_requests.silent_s`) an AWS NLB cannot keep open is
  refused at its ``startup_timeout_s`` or ``max_request_s``.
- An ``existing`` KEDA HTTP add-on drains for ``drain_s`` (default the chart's 30 s); a
  model that wakes on its own traffic and takes longer is refused there.
- ``replicas.wake.hosts``: the interceptor routes by ``Host`` (exact names first, then
  ``*.``-wildcards, then a catch-all ``*``; equal names go to the oldest route:
  kedacore/http-add-on v0.15.0 ``pkg/routing/tablememory.go`` ``Route`` and ``remember``).
  The schema admits plain DNS names only (no ``*``, no IP address); here a name is refused
  when it is an in-cluster Service name (it would take over a Service's traffic), when the
  model does not serve HTTP only, or when another model of the blueprint lists it too.
  Names shared with another blueprint on the same cluster are found by `inferplane check`
  across blueprints (`inferplane.app.shared_clusters`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from inferplane.blueprint import defaults, long_requests, wake
from inferplane.blueprint.addons import is_existing, resolve_addons
from inferplane.blueprint.checks import semantic_routing
from inferplane.blueprint.errors import YamlPath

if TYPE_CHECKING:
    from inferplane.blueprint.checks.semantic_env import EnvView


def _protocol(model: Mapping[str, Any]) -> str:
    server = model["server"]
    return str((model.get("expose") or {}).get("protocol", defaults.EXPOSE_BY_SERVER[server]))


def traffic_models(env: EnvView) -> Iterator[tuple[str, Mapping[str, Any], bool]]:
    """(name, model, wakes on its own traffic in this environment) of every model."""
    for name, model in (env.data.get("models") or {}).items():
        low = semantic_routing.replica_bounds(env, model)[0]
        yield (
            name,
            model,
            wake.wakes_on_traffic(
                model["server"],
                _protocol(model),
                low,
                llm_aware=semantic_routing.llm_aware(model),
            ),
        )


def check_wake_path(env: EnvView) -> None:
    _check_path_limits(env)
    _check_existing_drain(env)
    _check_hosts(env)


def _check_path_limits(env: EnvView) -> None:
    for name, model, on_traffic in traffic_models(env):
        longest = model.get("max_request_s", defaults.MAX_REQUEST_S)
        startup = model.get("startup_timeout_s", defaults.STARTUP_TIMEOUT_S)
        found = long_requests.path_limit_problem(env.spec["cloud"], longest, startup, on_traffic)
        if found is None:
            continue
        blamed = "startup_timeout_s" if on_traffic and "startup_timeout_s" in model else None
        if blamed is None:
            blamed = "max_request_s" if "max_request_s" in model else "startup_timeout_s"
        env.error(("models", name, blamed), *found)


def _addon_path(env: EnvView, *rest: str) -> YamlPath:
    return ("environments", env.name, "cluster", "addons", "keda_http_add_on", *rest)


def _check_existing_drain(env: EnvView) -> None:
    raw = (env.spec.get("cluster") or {}).get("addons") or {}
    if not is_existing(raw.get("keda_http_add_on")):
        return
    drain = resolve_addons(raw).keda_http_add_on.drain_s or long_requests.CHART_DRAIN_S
    longest = max(
        (
            (model.get("max_request_s", defaults.MAX_REQUEST_S), name)
            for name, model, on_traffic in traffic_models(env)
            if on_traffic
        ),
        default=None,
    )
    if longest is None or longest[0] <= drain:
        return
    given = "drain_s" in raw["keda_http_add_on"]
    env.error(
        _addon_path(env, "drain_s" if given else "mode"),
        f"the existing KEDA HTTP add-on's interceptor drains requests in flight for {drain} s"
        + ("" if given else " (`drain_s` not given: the chart's default)")
        + f" when it stops, and model {longest[1]!r}, which wakes on its own HTTP traffic "
        f"through it, allows requests of up to {longest[0]} s (max_request_s): a stopping "
        "interceptor would cut them",
        f"raise the add-on's `interceptor.drainTimeout` to at least {longest[0]}s and say so "
        f"with `drain_s: {longest[0]}`, or lower the model's max_request_s to {drain}",
    )


def _check_hosts(env: EnvView) -> None:
    raw = (env.spec.get("cluster") or {}).get("addons") or {}
    add_on_namespace = resolve_addons(raw).keda_http_add_on.namespace
    routed: dict[str, str] = {}
    for name, model, _ in traffic_models(env):
        hosts = ((model.get("replicas") or {}).get("wake") or {}).get("hosts") or []
        path: YamlPath = ("models", name, "replicas", "wake", "hosts")
        if hosts and not wake.serves_only_http(model["server"], _protocol(model)):
            env.error(
                path,
                f"the KEDA HTTP add-on routes HTTP only, and this model serves "
                f"{_protocol(model)}: it never wakes on its own traffic",
                "remove `hosts`, or serve HTTP only (expose.protocol: http)",
            )
            continue
        for i, host in enumerate(hosts):
            in_cluster = host.endswith(wake.IN_CLUSTER_SUFFIXES) or host.endswith(
                f".{add_on_namespace}"
            )
            if in_cluster:
                env.error(
                    (*path, i),
                    f"{host!r} is an in-cluster Service name: the interceptor would send "
                    "that Service's requests to this model",
                    "list only names of your own DNS zone; the load balancer's in-cluster "
                    "names are routed already",
                )
            elif host in routed:
                env.error(
                    (*path, i),
                    f"{host!r} is listed by model {routed[host]!r} too, and the interceptor "
                    "sends a name's requests to one model only",
                    "give each model names of its own",
                )
            else:
                routed[host] = name


__all__ = ["check_wake_path", "traffic_models"]
