"""What `inferplane check` finds across blueprints that share clusters and namespaces.

Checked together (the pull-request workflow checks every blueprint in one run), resolved
environments of different blueprints are compared:

- two on one cluster (same cloud, project, location and ``cluster.existing``, or the same
  kubeconfig ``context``) that both install an add-on: the second Helm release of the same
  chart fights the first over its fixed release name, namespace and cluster-scoped objects;
- an `existing` add-on whose namespace is a blueprint's namespace: the stack creates that
  namespace (default-deny) for the blueprint and places objects of its own beside the
  add-on, so one blueprint would write into another's namespace;
- two that route the same ``Host`` through the KEDA HTTP add-on's interceptor (a model's
  ``replicas.wake.hosts``, or the in-cluster names of another blueprint's wake load
  balancer): the interceptor sends a name's requests to the oldest route only
  (kedacore/http-add-on v0.15.0 ``pkg/routing/tablememory.go``), so one blueprint could
  take another's traffic;
- an `existing` HTTP add-on whose ``drain_s`` is longer than the drain of the one another
  checked blueprint installs there (`long_requests.interceptor_drain_s`): the models that
  rely on it would be cut when an interceptor stops.

(An `existing` Prometheus' ``query_url`` must name a Service in the namespace it runs in,
which validation checks alone, so it never names a Service in a blueprint's namespace.)

The later environment (in the order the files were given) is blamed, at the value that
says so, or at its ``cluster.existing``/``context`` when the add-on is installed by default.
"""

from __future__ import annotations

from collections.abc import Sequence

from inferplane.blueprint import long_requests, naming, wake
from inferplane.blueprint.addons import ADDON_KEYS, AWS_ONLY, NEVER_INSTALLED, OPT_IN
from inferplane.blueprint.errors import Diagnostic, YamlPath
from inferplane.blueprint.model import Environment, Model

NAMESPACED = ("gpu_operator", "keda", "keda_http_add_on", "prometheus")


def cluster_key(env: Environment) -> tuple[str | None, ...] | None:
    """Which cluster `env` deploys to, when another blueprint can share it (None: a cluster
    it creates, which is its own)."""
    if env.cluster.context:
        return ("kubernetes", None, None, env.cluster.context)
    if not env.cluster.existing:
        return None
    return (env.cloud, env.project, env.cluster.location, env.cluster.existing)


def installs(env: Environment) -> list[str]:
    """The add-ons `env`'s stack installs (`components.stack_args`: each one not `existing`;
    the AWS-only ones on AWS; the HTTP add-on when a model wakes on its own traffic; an
    `OPT_IN` one where the environment names it)."""
    addons = env.cluster.addons
    found = []
    for key in ADDON_KEYS:
        if getattr(addons, key).existing or key in NEVER_INSTALLED:
            continue
        if key in OPT_IN and not getattr(addons, key).enabled:
            continue  # not named by the environment: not used
        if key == "cluster_autoscaler" and addons.karpenter.existing:
            continue  # the cluster's Karpenter scales the GPU nodes
        if key in AWS_ONLY and env.cloud != "aws":
            continue
        if key == "keda_http_add_on" and not any(
            wake.wakes_on_traffic(m.server, m.expose, m.replicas.min, llm_aware=m.routing.llm_aware)
            for m in env.models.values()
        ):
            continue
        found.append(key)
    return found


def _cluster_path(env: Environment) -> YamlPath:
    key = "context" if env.cluster.context else "existing"
    return ("environments", env.name, "cluster", key)


def _addon_path(env: Environment, key: str, *rest: str) -> YamlPath:
    return ("environments", env.name, "cluster", "addons", key, *rest)


def _where(env: Environment) -> str:
    return f"blueprint {env.blueprint!r} environment {env.name!r} of {env.file}"


def _twice_installed(environments: Sequence[Environment]) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    first: dict[tuple[tuple[str | None, ...], str], Environment] = {}
    for env in environments:
        key = cluster_key(env)
        if key is None:
            continue
        defaulted: dict[str, Environment] = {}
        for addon in installs(env):
            found = first.setdefault((key, addon), env)
            if found is env or found.blueprint == env.blueprint:
                continue  # one blueprint's environments on one cluster: validate refuses
            if env.source.has(_addon_path(env, addon)):
                out.append(_installed_twice(env, _addon_path(env, addon), {addon: found}, key))
            else:
                defaulted[addon] = found
        if defaulted:  # installed by default: one diagnostic at the cluster
            out.append(_installed_twice(env, _cluster_path(env), defaulted, key))
    return out


def _installed_twice(
    env: Environment,
    path: YamlPath,
    addons: dict[str, Environment],
    key: tuple[str | None, ...],
) -> Diagnostic:
    """`addons`: each add-on installed twice -> the environment that installed it first."""
    names = ", ".join(f"`{a}`" for a in addons)
    by_owner: dict[str, list[str]] = {}
    for addon, other in addons.items():
        by_owner.setdefault(_where(other), []).append(f"`{addon}`")
    if len(by_owner) == 1:  # "it" or "them": the add-ons just named
        others = f"{next(iter(by_owner))} installs {'it' if len(addons) == 1 else 'them'} there too"
    else:
        others = ", and ".join(
            f"{where} installs {', '.join(found)} there" for where, found in by_owner.items()
        )
    owners = list(dict.fromkeys(repr(other.blueprint) for other in addons.values()))
    return Diagnostic(
        env.locate(path),
        path,
        f"blueprint {env.blueprint!r} environment {env.name!r} installs {names} on cluster "
        f"{key[-1]!r}, and {others}: a cluster runs one copy of each add-on",
        f"set {'each' if len(addons) > 1 else 'it'} to `{{mode: existing, ...}}` under "
        f"environments.{env.name}.cluster.addons, with the coordinates of "
        + (
            f"the one blueprint {owners[0]} installs"
            if len(owners) == 1
            else f"the copies blueprints {' and '.join(owners)} install"
        ),
    )


def _blueprint_namespaces(environments: Sequence[Environment]) -> dict[str, str]:
    return {naming.namespace(env.blueprint): env.blueprint for env in environments}


def _namespaces_taken(environments: Sequence[Environment]) -> list[Diagnostic]:
    owners = _blueprint_namespaces(environments)
    out: list[Diagnostic] = []
    for env in environments:
        addons = env.cluster.addons
        for key in NAMESPACED:
            addon = getattr(addons, key)
            owner = owners.get(addon.namespace)
            if not addon.existing or owner is None or owner == env.blueprint:
                continue  # its own namespace: validate refuses it
            path = _addon_path(env, key, "namespace")
            out.append(
                Diagnostic(
                    env.locate(path),
                    path,
                    f"namespace {addon.namespace!r} is the namespace of blueprint {owner!r}, "
                    "which its stack creates (default-deny) for its serving objects; the "
                    "add-on cannot run there, and this blueprint would place objects in it",
                    "give the namespace the add-on really runs in; a blueprint's namespace "
                    "holds that blueprint's objects only",
                )
            )
    return out


def _on_traffic(env: Environment) -> list[Model]:
    return [
        m
        for m in env.models.values()
        if wake.wakes_on_traffic(m.server, m.expose, m.replicas.min, llm_aware=m.routing.llm_aware)
    ]


def _hosts_taken(environments: Sequence[Environment]) -> list[Diagnostic]:
    """The in-cluster names of wake load balancers belong to their blueprints; a name a
    model lists in ``replicas.wake.hosts`` belongs to the first that lists it."""
    owners: dict[tuple[tuple[str | None, ...], str], tuple[Environment, Model]] = {}
    listed: list[tuple[tuple[str | None, ...], Environment, Model, int]] = []
    for env in environments:
        key = cluster_key(env)
        if key is None:
            continue
        namespace = env.cluster.addons.keda_http_add_on.namespace
        for model in _on_traffic(env):
            for host in naming.wake_lb_hosts(env.blueprint, env.name, model.name, namespace):
                owners.setdefault((key, host), (env, model))
            listed += [(key, env, model, i) for i in range(len(model.wake_hosts))]
    out: list[Diagnostic] = []
    for key, env, model, i in listed:
        host = model.wake_hosts[i]
        owner, owner_model = owners.setdefault((key, host), (env, model))
        if owner.blueprint == env.blueprint:
            continue  # one blueprint's own names: validate judges them
        path: YamlPath = ("models", model.name, "replicas", "wake", "hosts", i)
        out.append(
            Diagnostic(
                env.locate(path),
                path,
                f"{host!r} is routed by the KEDA HTTP add-on on cluster {key[-1]!r} to model "
                f"{owner_model.name!r} of {_where(owner)}; the interceptor sends a name's "
                "requests to one model only",
                "give this model names of its own DNS zone; a name reaches one model on a cluster",
            )
        )
    return out


def _drains(environments: Sequence[Environment]) -> list[Diagnostic]:
    installed: dict[tuple[str | None, ...], tuple[Environment, int]] = {}
    for env in environments:
        key = cluster_key(env)
        if key is not None and "keda_http_add_on" in installs(env):
            drain = long_requests.interceptor_drain_s(m.max_request_s for m in _on_traffic(env))
            installed.setdefault(key, (env, drain))
    out: list[Diagnostic] = []
    for env in environments:
        key = cluster_key(env)
        http = env.cluster.addons.keda_http_add_on
        if key not in installed or not http.existing or not _on_traffic(env):
            continue
        owner, drain = installed[key]
        declared = http.drain_s or long_requests.CHART_DRAIN_S
        if owner.blueprint == env.blueprint or declared <= drain:
            continue
        # The default (the chart's 30 s) is below any installed drain: `drain_s` is given.
        path = _addon_path(env, "keda_http_add_on", "drain_s")
        out.append(
            Diagnostic(
                env.locate(path),
                path,
                f"drain_s says the existing KEDA HTTP add-on drains for {declared} s, and "
                f"{_where(owner)} installs it on cluster {key[-1]!r} with a drain of "
                f"{drain} s (its longest request through the interceptor)",
                f"give `drain_s: {drain}` and keep max_request_s of the models that wake on "
                f"traffic at most {drain} s, or raise max_request_s of a model of blueprint "
                f"{owner.blueprint!r} that wakes on traffic so its drain grows",
            )
        )
    return out


def shared_cluster_problems(environments: Sequence[Environment]) -> list[Diagnostic]:
    """Every problem of the module docstring among `environments` (of every blueprint
    checked together, in the order given)."""
    return [
        *_twice_installed(environments),
        *_namespaces_taken(environments),
        *_hosts_taken(environments),
        *_drains(environments),
    ]


__all__ = ["cluster_key", "installs", "shared_cluster_problems"]
