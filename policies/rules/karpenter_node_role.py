"""karpenter-node-role: the GPU nodes an existing Karpenter launches get a node role the
platform allows, never one a blueprint picks."""

from __future__ import annotations

from collections.abc import Iterator
from fnmatch import fnmatchcase

from inferplane.policies.framework import ConfigKey, Finding, Rule, RuleConfig
from inferplane.policies.scoping import KEY_DESCRIPTION, KEY_PATTERN, granted
from inferplane.policies.stack import Stack

NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    env = stack.env
    if env is None:  # online the blueprint's cluster name is not known; judged offline
        return
    karpenter = env.cluster.addons.karpenter
    if not karpenter.existing:
        return
    cluster = env.cluster.existing or ""
    patterns = [
        str(p).replace("{cluster}", cluster)
        for p in granted(config["allowed_node_roles"], env.blueprint, env.name)
    ]
    if any(fnmatchcase(karpenter.node_role, p) for p in patterns):
        return
    classes = stack.of_type(NODE_CLASS)
    yield Finding(
        f"environments.{env.name}",
        ("environments", env.name, "cluster", "addons", "karpenter", "node_role"),
        f"node_role {karpenter.node_role} is not a node role the platform allows for this "
        f"blueprint ({', '.join(patterns) or 'none'}): every GPU node Karpenter launches "
        "for it would hold that role's permissions; use the cluster's Karpenter node role, "
        "or ask the platform team to add it to karpenter-node-role.allowed_node_roles in "
        "its policy config",
        classes[0].ref if classes else None,
    )


RULE = Rule(
    id="karpenter-node-role",
    title="Karpenter's GPU nodes get a node role the platform allows",
    level="mandatory",
    scope="stack",
    check=check,
    rationale=(
        "With an existing Karpenter the blueprint writes the EC2NodeClass, and its `role` "
        "is the IAM role every GPU node it launches holds (through the instance profile "
        "Karpenter creates for it: https://karpenter.sh/docs/concepts/nodeclasses/). "
        "Karpenter's controller may pass whatever roles its `iam:PassRole` allows, so a "
        "pull request could give GPU nodes, and every pod on them, an administrator's "
        "role. Which role nodes hold is the platform's decision."
    ),
    remediation=(
        "Use the cluster's Karpenter node role (by default one named "
        "KarpenterNodeRole-<cluster>, as Karpenter's getting-started guide creates it), or "
        "have the platform team list the role under allowed_node_roles."
    ),
    links=("https://karpenter.sh/docs/concepts/nodeclasses/",),
    config=(
        ConfigKey(
            "allowed_node_roles",
            {"*": ["KarpenterNodeRole-{cluster}"]},
            {
                "type": "object",
                "propertyNames": {"pattern": KEY_PATTERN},
                "additionalProperties": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1},
                },
            },
            f"fnmatch patterns of the node roles an EC2NodeClass may name, {KEY_DESCRIPTION}; "
            "`{cluster}` stands for the attached cluster's name. The default allows the "
            "role Karpenter's getting-started guide creates for the cluster only.",
        ),
    ),
    offline_only=True,
    sources=(
        "The blueprint's karpenter add-on (node_role, cluster.existing), offline only: "
        "online the cluster's name is not known."
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
          node_role: OrganizationAccountAccessRole
          ami_alias: al2023@v20260714
    overrides: {load_balancer: {allowed_cidrs: [10.0.0.0/16]}}
""",
)
