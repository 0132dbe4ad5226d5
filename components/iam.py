"""IAM documents shared by the AWS parts: IRSA trust policies and policy JSON.

Documents are built as plain data and serialised here, so tests and policies can parse
exactly what AWS receives.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
import pulumi_aws as aws

VERSION = "2012-10-17"
STS_AUDIENCE = "sts.amazonaws.com"


def document(statements: Sequence[Mapping[str, Any]]) -> str:
    """An IAM policy document as JSON."""
    return json.dumps({"Version": VERSION, "Statement": list(statements)}, indent=2)


def service_trust(*services: str) -> str:
    """A trust policy that lets AWS services (``eks.amazonaws.com``...) assume a role."""
    return document(
        [
            {
                "Effect": "Allow",
                "Principal": {"Service": list(services) if len(services) > 1 else services[0]},
                "Action": "sts:AssumeRole",
            }
        ]
    )


def irsa_trust(
    oidc_provider_arn: pulumi.Input[str],
    oidc_issuer: pulumi.Input[str],
    namespace: pulumi.Input[str],
    service_account: str,
) -> pulumi.Output[str]:
    """A trust policy for IAM Roles for Service Accounts: only the Kubernetes
    ServiceAccount `namespace/service_account`, only with the STS audience.

    `oidc_issuer` is the issuer host and path without ``https://`` (IAM condition keys
    are written that way)."""

    def render(args: list[str]) -> str:
        arn, issuer, ns = args
        issuer = issuer.removeprefix("https://")
        return document(
            [
                {
                    "Effect": "Allow",
                    "Principal": {"Federated": arn},
                    "Action": "sts:AssumeRoleWithWebIdentity",
                    "Condition": {
                        "StringEquals": {
                            f"{issuer}:sub": f"system:serviceaccount:{ns}:{service_account}",
                            f"{issuer}:aud": STS_AUDIENCE,
                        }
                    },
                }
            ]
        )

    return pulumi.Output.all(oidc_provider_arn, oidc_issuer, namespace).apply(render)


def irsa_role(
    name: str,
    *,
    oidc_provider_arn: pulumi.Input[str],
    oidc_issuer: pulumi.Input[str],
    namespace: pulumi.Input[str],
    service_account: str,
    policy: pulumi.Input[str] | None,
    managed_policy_arns: Sequence[str] = (),
    tags: Mapping[str, str],
    parent: pulumi.Resource,
    description: str,
    aliases: Sequence[pulumi.Input[str | pulumi.Alias]] = (),
) -> tuple[aws.iam.Role, pulumi.Output[str]]:
    """An IRSA role with its inline policy (`name`-policy) and managed policy attachments;
    returns the role and its ARN, which resolves only once the policies are in place (so a
    workload annotated with it never starts without its permissions). `aliases`: the
    resources' former parents (none: they never moved)."""
    opts = pulumi.ResourceOptions(parent=parent, aliases=list(aliases))
    role = aws.iam.Role(
        name,
        description=description,
        assume_role_policy=irsa_trust(oidc_provider_arn, oidc_issuer, namespace, service_account),
        tags=dict(tags),
        opts=opts,
    )
    grants: list[pulumi.CustomResource] = []
    if policy is not None:
        grants.append(
            aws.iam.RolePolicy(f"{name}-policy", role=role.name, policy=policy, opts=opts)
        )
    for arn in managed_policy_arns:
        short = arn.rsplit("/", 1)[-1]
        grants.append(
            aws.iam.RolePolicyAttachment(
                f"{name}-{short}", role=role.name, policy_arn=arn, opts=opts
            )
        )
    return role, after(role.arn, *grants)


def after(value: pulumi.Output[str], *resources: pulumi.CustomResource) -> pulumi.Output[str]:
    """`value`, resolving only once `resources` exist."""
    return pulumi.Output.all(value, *[r.id for r in resources]).apply(lambda a: str(a[0]))
