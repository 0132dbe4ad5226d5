"""The objects and hosts each model claims outside its blueprint's namespace, compared
across the blueprints `inferplane check` runs together.

A blueprint's own objects live in its namespace, named after the blueprint, which no other
blueprint has (`check.cross_blueprint_problems` refuses a second blueprint of one name).
What a model places elsewhere carries ``<blueprint>-<environment>-<model>`` instead, and two
different triples can join to one name: model ``rerank`` of blueprint ``team-x``
environment ``prod`` and model ``prod-rerank`` of blueprint ``team`` environment ``x`` both
get the Service ``team-x-prod-rerank-lb`` beside the KEDA HTTP add-on's interceptor, and the
hosts it routes. The second would take over the first's load balancer and traffic.

`claims` lists, per model, what its program creates outside the blueprint's namespace
(tests hold it to the objects the program registers), and `joined_name_problems` refuses a
model whose claim another blueprint's model made first, at the later model's key. Names are
compared whatever cluster each environment names, as the ``<blueprint>-<environment>`` prefix
is: two kubeconfig contexts may be one cluster, and a joined name is unique by design.
"""

from __future__ import annotations

from collections.abc import Sequence

from inferplane.blueprint import naming, wake
from inferplane.blueprint.errors import Diagnostic, YamlPath
from inferplane.blueprint.model import Environment, Model

Claim = tuple[str, str, str]
"""(kind, namespace, name) of a Kubernetes object, as ``apiVersion Kind``; ``("host", "",
name)`` for a host name the KEDA HTTP add-on routes."""


def _wakes_on_traffic(model: Model) -> bool:
    return wake.wakes_on_traffic(
        model.server, model.expose, model.replicas.min, llm_aware=model.routing.llm_aware
    )


def claims(env: Environment) -> dict[str, list[Claim]]:
    """Model name -> what the model's program creates outside the blueprint's namespace and
    the hosts routed to it by name: the load balancer Service of a model that wakes on its
    own traffic, in the HTTP add-on's namespace, and that Service's in-cluster names
    (`naming.wake_lb_hosts`). A model's own ``replicas.wake.hosts`` are the blueprint's
    choice, compared per cluster (`shared_clusters`)."""
    namespace = env.cluster.addons.keda_http_add_on.namespace
    out: dict[str, list[Claim]] = {}
    for model in env.models.values():
        if not _wakes_on_traffic(model):
            continue
        service = naming.wake_lb_name(env.blueprint, env.name, model.name)
        hosts = naming.wake_lb_hosts(env.blueprint, env.name, model.name, namespace)
        out[model.name] = [("v1 Service", namespace, service), *(("host", "", h) for h in hosts)]
    return out


def _shown(claimed: Sequence[Claim]) -> str:
    """``Service keda/x-lb and hosts x-lb.keda, ...``."""
    objects = [
        f"{kind.rsplit(' ', 1)[-1]} {namespace}/{name}" if namespace else f"{kind} {name}"
        for kind, namespace, name in claimed
        if kind != "host"
    ]
    hosts = [name for kind, _, name in claimed if kind == "host"]
    if hosts:
        objects.append(f"host{'s' if len(hosts) > 1 else ''} {', '.join(hosts)}")
    return " and ".join(objects)


def joined_name_problems(environments: Sequence[Environment]) -> list[Diagnostic]:
    """A model of a later blueprint (in the order given) that claims what a model of an
    earlier one claims, at its key under ``models``: one diagnostic per model, naming what
    the two share."""
    first: dict[Claim, tuple[Environment, str]] = {}
    out: list[Diagnostic] = []
    for env in environments:
        for model, claimed in claims(env).items():
            shared: list[Claim] = []
            owner: tuple[Environment, str] | None = None
            for claim in claimed:
                found = first.setdefault(claim, (env, model))
                if found[0].blueprint != env.blueprint:
                    shared.append(claim)
                    owner = owner or found
            if owner is None:
                continue
            other, other_model = owner
            path: YamlPath = ("models", model)
            out.append(
                Diagnostic(
                    env.source.key(path),
                    path,
                    f"model {model!r} of blueprint {env.blueprint!r} environment "
                    f"{env.name!r} gets {_shown(shared)}, as model "
                    f"{other_model!r} of blueprint {other.blueprint!r} environment "
                    f"{other.name!r} of {other.file} does: <blueprint>-<environment>-<model> "
                    "joins to the same name, and one would take over the other's load "
                    "balancer and traffic",
                    "rename the model, the environment or the blueprint so that "
                    "<blueprint>-<environment>-<model> differs",
                )
            )
    return out


__all__ = ["Claim", "claims", "joined_name_problems"]
