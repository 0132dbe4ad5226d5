"""karpenter-security-groups: the GPU nodes an existing Karpenter launches join only the
security groups the platform allows, never ones a blueprint picks.

A term of ``securityGroupSelectorTerms`` selects groups; "the terms are ORed", and within a
term "if multiple fields are used for selection, the requirements are ANDed"; a tag value
``*`` "selects all values for a given tag key" (Karpenter v1.14.1
``pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml``). So a blueprint's term is allowed
when it is an allowed term, or a ``tags`` term that has every tag of an allowed ``tags`` term
with its value (or any value, where the allowed value is ``*``): its extra tags only narrow
what the allowed term selects. An ``id`` or ``name`` term must be listed as it is.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from inferplane.blueprint.addons import DISCOVERY_TAG, discovery_terms
from inferplane.policies.framework import ConfigKey, Finding, Rule, RuleConfig
from inferplane.policies.scoping import KEY_DESCRIPTION, KEY_PATTERN, granted
from inferplane.policies.stack import Stack

NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
CONFIG_KEY = "allowed_security_group_terms"
ANY_VALUE = "*"

TERM_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "minProperties": 1,
    "maxProperties": 1,
    "properties": {
        "tags": {
            "type": "object",
            "minProperties": 1,
            "propertyNames": {"minLength": 1},
            "additionalProperties": {"type": "string", "minLength": 1},
        },
        "id": {"type": "string", "pattern": "^sg-[0-9a-z]+$"},
        "name": {"type": "string", "minLength": 1},
    },
}


def _with_cluster(term: Mapping[str, Any], cluster: str) -> dict[str, Any]:
    """`term` with ``{cluster}`` replaced by the attached cluster's name in its values."""
    out: dict[str, Any] = {}
    for key, value in term.items():
        if isinstance(value, Mapping):
            out[key] = {k: str(v).replace("{cluster}", cluster) for k, v in value.items()}
        else:
            out[key] = str(value).replace("{cluster}", cluster)
    return out


def covered(term: Mapping[str, Any], allowed: Mapping[str, Any]) -> bool:
    """Whether every group `term` selects is one `allowed` selects (module docstring)."""
    if "tags" in term and "tags" in allowed:
        tags = term["tags"]
        return all(
            key in tags and (value == ANY_VALUE or tags[key] == value)
            for key, value in allowed["tags"].items()
        )
    return dict(term) == dict(allowed)


def show(term: Mapping[str, Any]) -> str:
    """``tags karpenter.sh/discovery=shared-eks``, ``id sg-0123``, ``name eks-nodes``."""
    if "tags" in term:
        return "tags " + ", ".join(f"{k}={v}" for k, v in term["tags"].items())
    return "; ".join(f"{k} {v}" for k, v in term.items())


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    env = stack.env
    if env is None:  # online the blueprint's cluster name is not known; judged offline
        return
    karpenter = env.cluster.addons.karpenter
    if not karpenter.existing:
        return
    cluster = env.cluster.existing or ""
    allowed = [
        _with_cluster(t, cluster) for t in granted(config[CONFIG_KEY], env.blueprint, env.name)
    ]
    terms = karpenter.security_group_terms or discovery_terms(cluster)
    classes = stack.of_type(NODE_CLASS)
    listed = "; ".join(show(t) for t in allowed) or "none"
    field = ("environments", env.name, "cluster", "addons", "karpenter", "security_group_selector")
    for i, term in enumerate(terms):
        if any(covered(term, a) for a in allowed):
            continue
        yield Finding(
            f"environments.{env.name}",
            (*field, i),
            f"security_group_selector[{i}] ({show(term)}) selects security groups the platform "
            f"does not allow for this blueprint ({listed}): every GPU node Karpenter launches "
            "for it would join them, and their rules would admit traffic to and from those "
            "nodes; drop security_group_selector (the default selects the groups tagged "
            f"{DISCOVERY_TAG}: {cluster}), or ask the platform team to add the term to "
            f"karpenter-security-groups.{CONFIG_KEY} in its policy config",
            classes[0].ref if classes else None,
        )


RULE = Rule(
    id="karpenter-security-groups",
    title="Karpenter's GPU nodes join only security groups the platform allows",
    level="mandatory",
    scope="stack",
    check=check,
    rationale=(
        "With an existing Karpenter the blueprint writes the EC2NodeClass, and its "
        "`securityGroupSelectorTerms` attach every group a term selects to each GPU node it "
        "launches (https://karpenter.sh/docs/concepts/nodeclasses/). A group's rules are the "
        "nodes' firewall: a pull request that selects another group by tags, id or name "
        "could open the GPU nodes, and every pod on them, to the networks that group admits, "
        "or let them reach what only that group may reach (a database's, another team's "
        "nodes'). Which groups nodes join is the platform's decision."
    ),
    remediation=(
        "Drop security_group_selector: the nodes then get the groups tagged "
        "karpenter.sh/discovery: <cluster>, as Karpenter's getting-started guide and "
        "terraform-aws-eks's Karpenter example tag the cluster's node security group. Or "
        "have the platform team list the terms under allowed_security_group_terms."
    ),
    links=("https://karpenter.sh/docs/concepts/nodeclasses/",),
    config=(
        ConfigKey(
            CONFIG_KEY,
            {"*": [{"tags": {DISCOVERY_TAG: "{cluster}"}}]},
            {
                "type": "object",
                "propertyNames": {"pattern": KEY_PATTERN},
                "additionalProperties": {"type": "array", "items": TERM_SCHEMA},
            },
            "Security group selector terms (each one of `tags`, `id` or `name`, as the "
            f"blueprint writes them) an EC2NodeClass may use, {KEY_DESCRIPTION}; "
            "`{cluster}` stands for the attached cluster's name. A blueprint's `tags` term "
            "with more tags than an allowed one only narrows it and is allowed; a tag value "
            "`*` here allows any value of that key. The default allows the groups tagged "
            "karpenter.sh/discovery: <cluster> only, what a blueprint without "
            "security_group_selector gets.",
        ),
    ),
    offline_only=True,
    sources=(
        "The blueprint's karpenter add-on (security_group_selector, cluster.existing), "
        "offline only: online the cluster's name is not known."
    ),
    passing_example="""\
environments:
  staging:
    cluster:
      create: null
      kubernetes_version: null
      existing: shared-eks
      addons:
        karpenter:
          mode: existing
          node_role: KarpenterNodeRole-shared-eks
          ami_alias: al2023@v20260714
          security_group_selector:
            - tags: {karpenter.sh/discovery: shared-eks, team: ml}
        cluster_autoscaler: null
    overrides: {load_balancer: {allowed_cidrs: [10.0.0.0/16]}}
""",
    failing_example="""\
environments:
  staging:
    cluster:
      create: null
      kubernetes_version: null
      existing: shared-eks
      addons:
        karpenter:
          mode: existing
          node_role: KarpenterNodeRole-shared-eks
          ami_alias: al2023@v20260714
          security_group_selector:
            - tags: {karpenter.sh/discovery: shared-eks}
            - id: sg-0a1b2c3d4e5f60718
        cluster_autoscaler: null
    overrides: {load_balancer: {allowed_cidrs: [10.0.0.0/16]}}
""",
)
