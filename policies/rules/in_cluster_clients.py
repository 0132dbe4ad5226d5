"""in-cluster-clients: only namespaces the platform grants may call a blueprint's models."""

from __future__ import annotations

from collections.abc import Iterator

from inferplane.policies.framework import ConfigKey, Finding, Rule, RuleConfig
from inferplane.policies.scoping import KEY_DESCRIPTION, KEY_PATTERN, granted
from inferplane.policies.stack import Stack

ALLOWED_KEY = "in-cluster-clients.allowed_client_namespaces"


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    """Each of ``load_balancer.client_namespaces`` must be granted to this environment of
    this blueprint; the blueprint may list fewer than the platform grants, never others."""
    env = stack.env
    if env is None:  # online the blueprint's list is not known; judged offline
        return
    allowed = [
        str(ns) for ns in granted(config["allowed_client_namespaces"], env.blueprint, env.name)
    ]
    shown = ", ".join(allowed) or "none"
    for i, namespace in enumerate(env.load_balancer.client_namespaces):
        if namespace in allowed:
            continue
        yield Finding(
            "load_balancer",
            ("load_balancer", "client_namespaces", i),
            f"namespace {namespace!r} is not one the platform lets call blueprint "
            f"{env.blueprint!r} in environment {env.name!r} (granted: {shown}); remove it, "
            f"or ask the platform team to add it to {ALLOWED_KEY} in its policy config",
        )


RULE = Rule(
    id="in-cluster-clients",
    title="Only namespaces the platform grants may call the models",
    level="mandatory",
    scope="resource",
    check=check,
    rationale=(
        "`load_balancer.client_namespaces` admits every pod of each namespace listed to the "
        "models' serving ports and their routers, on every dataplane (Cilium never matches "
        "pods by address, so namespaces are how in-cluster callers are admitted there). "
        "Which namespaces may call a model, and so read what it answers, is the platform's "
        "decision: a pull request that lists a namespace of another team would open the "
        "model to it. The blueprint may narrow the platform's list, never widen it."
    ),
    remediation=(
        "List only namespaces the platform grants to the blueprint under "
        "`allowed_client_namespaces`, or ask the platform team to grant the namespace."
    ),
    config=(
        ConfigKey(
            "allowed_client_namespaces",
            {"*": []},
            {
                "type": "object",
                "propertyNames": {"pattern": KEY_PATTERN},
                "additionalProperties": {
                    "type": "array",
                    "items": {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"},
                },
            },
            "Namespaces whose pods may call a blueprint's models (its "
            f"`load_balancer.client_namespaces`), {KEY_DESCRIPTION}. A namespace granted to "
            "none is refused; the default grants none.",
        ),
    ),
    links=(
        "https://kubernetes.io/docs/concepts/services-networking/network-policies/#behavior-of-to-and-from-selectors",
        "https://docs.cilium.io/en/stable/security/policy/language/#ip-cidr-based",
    ),
    offline_only=True,
    sources=(
        "The blueprint's load_balancer.client_namespaces against allowed_client_namespaces. "
        "Offline only: online the blueprint is not known."
    ),
    passing_example="""\
load_balancer:
  allowed_cidrs: [10.0.0.0/8]   # callers outside the cluster, by address
  # no client_namespaces: a namespace is listed only once the platform grants it, e.g.
  # in-cluster-clients: {allowed_client_namespaces: {golden: [chat-web]}}
""",
    failing_example="""\
load_balancer:
  allowed_cidrs: [10.0.0.0/8]
  client_namespaces: [billing]   # granted to no blueprint
""",
)
