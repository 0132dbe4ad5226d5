"""IAM of the EKS add-ons: the load balancer controller and the cluster autoscaler may
act only on their own cluster's resources."""

from __future__ import annotations

import json
from typing import Any

from cloud_fixtures import cloud_recording, parsed

from inferplane.blueprint.model import Environment
from inferplane.components import addon_iam


def parsed_doc(text: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def as_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else value


def test_load_balancer_controller_policy_is_scoped_to_the_cluster() -> None:
    doc = parsed_doc(addon_iam.aws_load_balancer_controller_policy("c1"))
    actions = {a for s in doc["Statement"] for a in as_list(s["Action"])}
    assert not {a for a in actions if a.split(":")[0] in {"waf-regional", "wafv2", "shield"}}
    owned = {"StringEquals": {"aws:ResourceTag/elbv2.k8s.aws/cluster": "c1"}}
    must_be_owned = {
        "elasticloadbalancing:DeleteLoadBalancer",
        "elasticloadbalancing:DeleteTargetGroup",
        "elasticloadbalancing:ModifyLoadBalancerAttributes",
        "elasticloadbalancing:ModifyTargetGroup",
        "elasticloadbalancing:ModifyTargetGroupAttributes",
        "elasticloadbalancing:SetSecurityGroups",
        "elasticloadbalancing:SetSubnets",
        "ec2:DeleteSecurityGroup",
    }
    for statement in doc["Statement"]:
        if must_be_owned & set(as_list(statement["Action"])):
            assert statement["Condition"] == owned, statement["Action"]
    granted = {a for s in doc["Statement"] if s.get("Condition") == owned for a in s["Action"]}
    assert must_be_owned <= granted
    creates = next(
        s for s in doc["Statement"] if "elasticloadbalancing:CreateLoadBalancer" in s["Action"]
    )
    assert creates["Condition"] == {"StringEquals": {"aws:RequestTag/elbv2.k8s.aws/cluster": "c1"}}


def test_cluster_autoscaler_may_only_change_this_clusters_groups() -> None:
    doc = parsed_doc(addon_iam.cluster_autoscaler_policy("c1"))
    mutate = next(s for s in doc["Statement"] if "autoscaling:SetDesiredCapacity" in s["Action"])
    assert set(mutate["Action"]) == {
        "autoscaling:SetDesiredCapacity",
        "autoscaling:TerminateInstanceInAutoScalingGroup",
    }
    assert mutate["Condition"] == {
        "StringEquals": {
            "aws:ResourceTag/k8s.io/cluster-autoscaler/c1": "owned",
            "aws:ResourceTag/k8s.io/cluster-autoscaler/enabled": "true",
        }
    }
    others = [s for s in doc["Statement"] if s is not mutate]
    assert all(a.split(":")[1].startswith(("Describe", "Get")) for s in others for a in s["Action"])


def test_recorded_controller_policies_match_the_documents(staging: Environment) -> None:
    rec = cloud_recording(staging)
    policies = {r.name: parsed(r) for r in rec.of_type("aws:iam/rolePolicy:RolePolicy")}
    cluster = "support-assistant-staging"
    assert policies[f"{cluster}-aws-load-balancer-controller-policy"] == parsed_doc(
        addon_iam.aws_load_balancer_controller_policy(cluster)
    )
    assert policies[f"{cluster}-cluster-autoscaler-policy"] == parsed_doc(
        addon_iam.cluster_autoscaler_policy(cluster)
    )
