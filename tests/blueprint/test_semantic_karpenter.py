# ruff: noqa: E501  (exact diagnostics read best unwrapped)
"""`cluster.addons.karpenter`: the cluster's Karpenter launches the GPU nodes. What
validation accepts, and every refusal with its exact diagnostic."""

from __future__ import annotations

import pytest
from test_blueprint_addons import AWS, eks, errors, gke
from test_semantic import edit

from inferplane.blueprint.addons import KarpenterAddon, resolve_addons
from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.resolution.resolve import resolve

KARPENTER = "        karpenter: {mode: existing, node_role: KarpenterNodeRole-shared-eks, ami_alias: al2023@v20260714}\n"


def test_an_attached_eks_cluster_s_karpenter_is_accepted_and_resolved() -> None:
    assert errors(eks(KARPENTER)) == []
    raw = {
        "karpenter": {
            "mode": "existing",
            "node_role": "KarpenterNodeRole-shared-eks",
            "ami_alias": "al2023@v20260714",
        }
    }
    assert resolve_addons(raw).karpenter == KarpenterAddon(
        node_role="KarpenterNodeRole-shared-eks", ami_alias="al2023@v20260714", existing=True
    )
    assert resolve_addons(None).karpenter.existing is False


def test_the_nodes_security_groups_default_to_karpenter_s_discovery_tag() -> None:
    text = eks(KARPENTER)
    env = resolve(load_text(text, "bp.yaml"), "stg")
    assert env.cluster.addons.karpenter.security_group_terms == (
        {"tags": {"karpenter.sh/discovery": "shared-eks"}},
    )
    chosen = KARPENTER.replace(
        "}", ", security_group_selector: [{id: sg-0123456789abcdef0}, {name: shared-eks-node}]}"
    )
    env = resolve(load_text(eks(chosen), "bp.yaml"), "stg")
    assert errors(eks(chosen)) == []
    assert env.cluster.addons.karpenter.security_group_terms == (
        {"id": "sg-0123456789abcdef0"},
        {"name": "shared-eks-node"},
    )


CASES = [
    pytest.param(
        eks(KARPENTER + "        cluster_autoscaler: {mode: existing}\n"),
        [
            "bp.yaml:15:29: error: environments.stg.cluster.addons.cluster_autoscaler: the cluster's Karpenter launches the blueprint's GPU nodes, so there are no node groups for a Cluster Autoscaler to scale; remove `cluster_autoscaler` (with `karpenter`, none is installed or needed)"
        ],
        id="with-a-cluster-autoscaler",
    ),
    pytest.param(
        edit(
            AWS,
            "cluster:\n      create: true\n      addons:\n" + KARPENTER,
        ),
        [
            "bp.yaml:14:27: error: environments.stg.cluster.addons.karpenter.mode: an `existing` add-on needs an attached cluster: a cluster this blueprint creates runs no add-ons before its first deploy; remove `mode: existing` (inferplane installs it), or attach to the cluster with `existing: <cluster name>`"
        ],
        id="on-a-created-cluster",
    ),
    pytest.param(
        gke(KARPENTER),
        [
            "bp.yaml:21:20: error: environments.prod.cluster.addons.karpenter: `karpenter` is an AWS add-on; remove it: GKE scales its node pools itself"
        ],
        id="on-gke",
    ),
    pytest.param(
        eks(KARPENTER.replace("al2023@v20260714", "al2023@latest")),
        [
            'bp.yaml:14:89: error: environments.stg.cluster.addons.karpenter.ami_alias: invalid value "al2023@latest"; write a pinned AL2023 alias such as al2023@v20260714'
        ],
        id="ami-not-pinned",
    ),
    pytest.param(
        eks("        karpenter: {mode: install, node_role: r, ami_alias: al2023@v20260714}\n"),
        [
            'bp.yaml:14:27: error: environments.stg.cluster.addons.karpenter.mode: "install" is not one of existing; choose one of these values'
        ],
        id="install-refused",
    ),
    pytest.param(
        eks(
            KARPENTER.replace(
                "}", ", security_group_selector: [{tags: {karpenter.sh/discovery: '*'}}]}"
            )
        ),
        [
            "bp.yaml:14:165: error: environments.stg.cluster.addons.karpenter.security_group_selector[0].tags.karpenter.sh/discovery: tag value `*` selects every security group that has the key; give the tag's value, such as the cluster's name"
        ],
        id="security-group-tag-wildcard",
    ),
    pytest.param(
        eks(
            KARPENTER.replace(
                "}", ", security_group_selector: [{id: sg-0abc, name: shared-eks-node}]}"
            )
        ),
        [
            "bp.yaml:14:133: error: environments.stg.cluster.addons.karpenter.security_group_selector[0]: a security group term has more than one of `tags`, `id` and `name`; write each as a term of its own: groups that any term selects are all attached"
        ],
        id="security-group-term-of-two-kinds",
    ),
    pytest.param(
        eks(KARPENTER.replace("}", ", security_group_selector: [{id: shared-eks-node}]}")),
        [
            'bp.yaml:14:138: error: environments.stg.cluster.addons.karpenter.security_group_selector[0].id: invalid value "shared-eks-node"; write a security group id such as sg-0123456789abcdef0'
        ],
        id="security-group-id-not-an-id",
    ),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_refused_with_exact_message(text: str, expected: list[str]) -> None:
    assert errors(text) == expected


def test_mig_pools_are_refused_under_karpenter() -> None:
    # MIG set in the attached AWS environment only (GKE refuses MIG on its own).
    text = eks(KARPENTER)
    text = edit("    gpu: nvidia-l4\n", "    gpu: nvidia-h100-80gb\n    gpus_per_node: 8\n", text)
    text = edit(
        KARPENTER,
        KARPENTER
        + "    overrides:\n      gpu_pools:\n        l4: {sharing: mig, mig_profile: 3g.40gb}\n",
        text,
    )
    assert errors(text) == [
        "bp.yaml:17:23: error: environments.stg.overrides.gpu_pools.l4.sharing: pool 'l4' partitions its GPUs with MIG, but Karpenter (environment stg) launches nodes only for resources its instance types offer: whole nvidia.com/gpu, never nvidia.com/mig-3g.40gb (aws/karpenter-provider-aws v1.14.1 pkg/providers/instancetype/types.go (computeCapacity)), so no replica would ever get a node; use `sharing: exclusive` for this pool in this environment, or scale it with the Cluster Autoscaler (remove `karpenter`)"
    ]


def _alias(alias: str, kubernetes: str | None = None) -> str:
    text = eks(KARPENTER.replace("al2023@v20260714", alias))
    if kubernetes is not None:
        text = edit(
            "      existing: shared-eks\n",
            f"      existing: shared-eks\n      kubernetes_version: '{kubernetes}'\n",
            text,
        )
    return text


def test_the_first_alias_of_the_580_driver_for_the_clusters_minor_is_accepted() -> None:
    # 1.33 AMIs carry 580.95.05 from v20251029 on (awslabs/amazon-eks-ami PR #2484).
    assert errors(_alias("al2023@v20251029")) == []
    assert errors(_alias("al2023@v20251108", "1.31")) == []


AMI_CASES = [
    pytest.param(
        _alias("al2023@v20251023"),
        [
            "bp.yaml:14:89: error: environments.stg.cluster.addons.karpenter.ami_alias: al2023@v20251023 gives the GPU nodes of Kubernetes 1.33 the AL2023 NVIDIA AMI of release v20251023, whose NVIDIA driver is 570.195.03: model chat runs vLLM v0.33.0 (CUDA 13.0.1), which needs driver 580 or later; model rank runs Triton 26.02 (CUDA 13.1.1), which needs driver 580 or later; pin a release whose AMI for Kubernetes 1.33 runs them: al2023@v20251029 or later (newest in eks_al2023_nvidia.json: al2023@v20260714)"
        ],
        id="r570-before-the-580-rollout",
    ),
    pytest.param(
        _alias("al2023@v20251029", "1.32"),
        [
            "bp.yaml:15:89: error: environments.stg.cluster.addons.karpenter.ami_alias: al2023@v20251029 gives the GPU nodes of Kubernetes 1.32 the AL2023 NVIDIA AMI of release v20251029, whose NVIDIA driver is 570.195.03: model chat runs vLLM v0.33.0 (CUDA 13.0.1), which needs driver 580 or later; model rank runs Triton 26.02 (CUDA 13.1.1), which needs driver 580 or later; pin a release whose AMI for Kubernetes 1.32 runs them: al2023@v20251108 or later (newest in eks_al2023_nvidia.json: al2023@v20260714)"
        ],
        id="the-rollout-reached-1.32-later",
    ),
    pytest.param(
        _alias("al2023@v20240807"),
        [
            "bp.yaml:14:89: error: environments.stg.cluster.addons.karpenter.ami_alias: al2023@v20240807 names no EKS-optimized AL2023 NVIDIA AMI: the first was release v20240924, so Karpenter finds no AMI for the GPU nodes; pin a release whose AMI for Kubernetes 1.33 runs them: al2023@v20251029 or later (newest in eks_al2023_nvidia.json: al2023@v20260714)"
        ],
        id="before-any-nvidia-ami",
    ),
    pytest.param(
        _alias("al2023@v20251031"),
        [
            "bp.yaml:14:89: error: environments.stg.cluster.addons.karpenter.ami_alias: al2023@v20251031 names no EKS-optimized AL2023 NVIDIA AMI of Kubernetes 1.33 (there is no release v20251031), so Karpenter finds no AMI for the GPU nodes; pin a release whose AMI for Kubernetes 1.33 runs them: al2023@v20251029 or later (newest in eks_al2023_nvidia.json: al2023@v20260714)"
        ],
        id="no-such-release",
    ),
    pytest.param(
        _alias("al2023@v20260714", "1.29"),
        [
            "bp.yaml:15:89: error: environments.stg.cluster.addons.karpenter.ami_alias: al2023@v20260714 names no EKS-optimized AL2023 NVIDIA AMI of Kubernetes 1.29 (release v20260714 was built for Kubernetes 1.30, 1.31, 1.32, 1.33, 1.34, 1.35, 1.36), so Karpenter finds no AMI for the GPU nodes; pin a release whose AMI for Kubernetes 1.29 runs them: al2023@v20251120 or later (newest in eks_al2023_nvidia.json: al2023@v20260318)"
        ],
        id="not-built-for-the-minor",
    ),
]


@pytest.mark.parametrize(("text", "expected"), AMI_CASES)
def test_an_alias_whose_driver_cannot_run_the_models_is_refused(
    text: str, expected: list[str]
) -> None:
    assert errors(text) == expected
