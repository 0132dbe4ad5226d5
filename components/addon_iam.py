"""IAM policies of the EKS add-ons, scoped to one cluster.

The AWS Load Balancer Controller policy follows the controller's published policy, with
two narrowings: every statement that acts on an existing load balancer, target group or
security group requires the controller's ownership tag *with this cluster's name* (not
merely present), and the ALB-only integrations (WAF, Shield, Cognito) are left out because
the stack creates Services of type LoadBalancer (NLBs) only.

The Cluster Autoscaler may resize or terminate instances only in Auto Scaling groups
tagged as this cluster's (EKS tags managed node groups' ASGs that way).
"""

from __future__ import annotations

from typing import Any

from inferplane.components.iam import document

LBC_TAG = "elbv2.k8s.aws/cluster"
_ELB = "arn:aws:elasticloadbalancing:*:*"
_SG = "arn:aws:ec2:*:*:security-group/*"

_LBC_DESCRIBE = (
    "ec2:DescribeAccountAttributes",
    "ec2:DescribeAddresses",
    "ec2:DescribeAvailabilityZones",
    "ec2:DescribeInternetGateways",
    "ec2:DescribeVpcs",
    "ec2:DescribeVpcPeeringConnections",
    "ec2:DescribeSubnets",
    "ec2:DescribeSecurityGroups",
    "ec2:DescribeInstances",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeTags",
    "ec2:DescribeRouteTables",
    "ec2:DescribeIpamPools",
    "ec2:GetCoipPoolUsage",
    "ec2:DescribeCoipPools",
    "ec2:GetSecurityGroupsForVpc",
    "elasticloadbalancing:DescribeLoadBalancers",
    "elasticloadbalancing:DescribeLoadBalancerAttributes",
    "elasticloadbalancing:DescribeListeners",
    "elasticloadbalancing:DescribeListenerCertificates",
    "elasticloadbalancing:DescribeListenerAttributes",
    "elasticloadbalancing:DescribeSSLPolicies",
    "elasticloadbalancing:DescribeRules",
    "elasticloadbalancing:DescribeTargetGroups",
    "elasticloadbalancing:DescribeTargetGroupAttributes",
    "elasticloadbalancing:DescribeTargetHealth",
    "elasticloadbalancing:DescribeTags",
    "elasticloadbalancing:DescribeTrustStores",
    "elasticloadbalancing:DescribeCapacityReservation",
    "acm:ListCertificates",
    "acm:DescribeCertificate",
)

_LBC_MODIFY_OWNED = (
    "elasticloadbalancing:ModifyLoadBalancerAttributes",
    "elasticloadbalancing:SetIpAddressType",
    "elasticloadbalancing:SetSecurityGroups",
    "elasticloadbalancing:SetSubnets",
    "elasticloadbalancing:DeleteLoadBalancer",
    "elasticloadbalancing:ModifyTargetGroup",
    "elasticloadbalancing:ModifyTargetGroupAttributes",
    "elasticloadbalancing:DeleteTargetGroup",
    "elasticloadbalancing:ModifyListenerAttributes",
    "elasticloadbalancing:ModifyCapacityReservation",
    "elasticloadbalancing:ModifyIpPools",
)


def aws_load_balancer_controller_statements(cluster: str) -> list[dict[str, Any]]:
    owned = {"StringEquals": {f"aws:ResourceTag/{LBC_TAG}": cluster}}
    lb_arns = [
        f"{_ELB}:targetgroup/*/*",
        f"{_ELB}:loadbalancer/net/*/*",
        f"{_ELB}:loadbalancer/app/*/*",
    ]
    return [
        {
            "Effect": "Allow",
            "Action": "iam:CreateServiceLinkedRole",
            "Resource": "*",
            "Condition": {
                "StringEquals": {"iam:AWSServiceName": "elasticloadbalancing.amazonaws.com"}
            },
        },
        {"Effect": "Allow", "Action": list(_LBC_DESCRIBE), "Resource": "*"},
        {
            "Effect": "Allow",
            "Action": ["ec2:CreateSecurityGroup"],
            "Resource": "*",
        },
        {
            "Effect": "Allow",
            "Action": ["ec2:CreateTags"],
            "Resource": _SG,
            "Condition": {
                "StringEquals": {
                    "ec2:CreateAction": "CreateSecurityGroup",
                    f"aws:RequestTag/{LBC_TAG}": cluster,
                }
            },
        },
        {
            # Other tags on its own security groups; never the ownership tag itself.
            "Effect": "Allow",
            "Action": ["ec2:CreateTags", "ec2:DeleteTags"],
            "Resource": _SG,
            "Condition": {
                "Null": {f"aws:RequestTag/{LBC_TAG}": "true"},
                **owned,
            },
        },
        {
            # Node security-group rules for NLB traffic: the nodes' groups are not the
            # controller's own, so these cannot require its tag.
            "Effect": "Allow",
            "Action": ["ec2:AuthorizeSecurityGroupIngress", "ec2:RevokeSecurityGroupIngress"],
            "Resource": "*",
        },
        {
            "Effect": "Allow",
            "Action": ["ec2:DeleteSecurityGroup"],
            "Resource": "*",
            "Condition": owned,
        },
        {
            "Effect": "Allow",
            "Action": [
                "elasticloadbalancing:CreateLoadBalancer",
                "elasticloadbalancing:CreateTargetGroup",
            ],
            "Resource": "*",
            "Condition": {"StringEquals": {f"aws:RequestTag/{LBC_TAG}": cluster}},
        },
        {
            "Effect": "Allow",
            "Action": [
                "elasticloadbalancing:CreateListener",
                "elasticloadbalancing:DeleteListener",
                "elasticloadbalancing:CreateRule",
                "elasticloadbalancing:DeleteRule",
            ],
            "Resource": "*",
        },
        {
            "Effect": "Allow",
            "Action": ["elasticloadbalancing:AddTags", "elasticloadbalancing:RemoveTags"],
            "Resource": lb_arns,
            "Condition": {"Null": {f"aws:RequestTag/{LBC_TAG}": "true"}, **owned},
        },
        {
            "Effect": "Allow",
            "Action": ["elasticloadbalancing:AddTags", "elasticloadbalancing:RemoveTags"],
            "Resource": [
                f"{_ELB}:listener/net/*/*/*",
                f"{_ELB}:listener/app/*/*/*",
                f"{_ELB}:listener-rule/net/*/*/*",
                f"{_ELB}:listener-rule/app/*/*/*",
            ],
        },
        {
            "Effect": "Allow",
            "Action": ["elasticloadbalancing:AddTags"],
            "Resource": lb_arns,
            "Condition": {
                "StringEquals": {
                    "elasticloadbalancing:CreateAction": [
                        "CreateTargetGroup",
                        "CreateLoadBalancer",
                    ],
                    f"aws:RequestTag/{LBC_TAG}": cluster,
                }
            },
        },
        {
            "Effect": "Allow",
            "Action": list(_LBC_MODIFY_OWNED),
            "Resource": "*",
            "Condition": owned,
        },
        {
            "Effect": "Allow",
            "Action": [
                "elasticloadbalancing:RegisterTargets",
                "elasticloadbalancing:DeregisterTargets",
            ],
            "Resource": f"{_ELB}:targetgroup/*/*",
        },
        {
            "Effect": "Allow",
            "Action": [
                "elasticloadbalancing:ModifyListener",
                "elasticloadbalancing:AddListenerCertificates",
                "elasticloadbalancing:RemoveListenerCertificates",
                "elasticloadbalancing:ModifyRule",
                "elasticloadbalancing:SetRulePriorities",
            ],
            "Resource": "*",
        },
    ]


def aws_load_balancer_controller_policy(cluster: str) -> str:
    """The controller's IAM policy for `cluster`, as JSON."""
    return document(aws_load_balancer_controller_statements(cluster))


def cluster_autoscaler_policy(cluster: str) -> str:
    """The Cluster Autoscaler's IAM policy for `cluster`, as JSON: read anything it needs
    to plan, change only this cluster's Auto Scaling groups."""
    return document(
        [
            {
                "Effect": "Allow",
                "Action": [
                    "autoscaling:SetDesiredCapacity",
                    "autoscaling:TerminateInstanceInAutoScalingGroup",
                ],
                "Resource": "*",
                "Condition": {
                    "StringEquals": {
                        f"aws:ResourceTag/k8s.io/cluster-autoscaler/{cluster}": "owned",
                        "aws:ResourceTag/k8s.io/cluster-autoscaler/enabled": "true",
                    }
                },
            },
            {
                "Effect": "Allow",
                "Action": [
                    "autoscaling:DescribeAutoScalingGroups",
                    "autoscaling:DescribeAutoScalingInstances",
                    "autoscaling:DescribeLaunchConfigurations",
                    "autoscaling:DescribeScalingActivities",
                    "autoscaling:DescribeTags",
                    "ec2:DescribeImages",
                    "ec2:DescribeInstanceTypes",
                    "ec2:DescribeLaunchTemplateVersions",
                    "ec2:GetInstanceTypesFromInstanceRequirements",
                    "eks:DescribeNodegroup",
                ],
                "Resource": "*",
            },
        ]
    )
