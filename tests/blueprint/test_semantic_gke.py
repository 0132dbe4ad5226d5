"""What GKE refuses, or accepts and never runs: cluster names over its limit, MIG pools."""

from __future__ import annotations

from test_semantic import diagnostics, edit

from inferplane.blueprint import naming
from inferplane.blueprint.checks.semantic_gke import GKE_CLUSTER_NAME_MAX

CREATED = edit("    cluster: {existing: prod-gke}\n", "    cluster: {create: true}\n")


def test_a_created_cluster_name_over_gke_s_limit_is_refused_at_create() -> None:
    # The longest names the schema allows: blueprint 24 + '-' + environment 16 = 41.
    text = edit("name: demo\n", f"name: {'a' * 24}\n", CREATED)
    text = text.replace("  prod:\n", f"  {'e' * 16}:\n", 1)
    assert diagnostics(text) == [
        f"bp.yaml:18:23: error: environments.{'e' * 16}.cluster.create: the cluster this "
        f"environment creates is named '{'a' * 24}-{'e' * 16}' (blueprint and environment "
        "names), 41 characters; GKE cluster names have at most 40 (https://cloud.google.com/"
        "kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters#Cluster, name); "
        "shorten the blueprint or "
        "environment name by 1 or more characters"
    ]


def test_a_created_cluster_name_of_exactly_forty_characters_passes() -> None:
    text = edit("name: demo\n", f"name: {'a' * 23}\n", CREATED)
    text = text.replace("  prod:\n", f"  {'e' * 16}:\n", 1)
    assert len(naming.stack_name("a" * 23, "e" * 16)) == GKE_CLUSTER_NAME_MAX
    assert diagnostics(text) == []


def test_an_aws_cluster_name_is_not_held_to_gke_s_limit() -> None:
    # EKS cluster names may have 100 characters: staging on AWS with a 41-character name.
    text = edit("name: demo\n", f"name: {'a' * 24}\n")
    text = text.replace("  stg:\n", f"  {'e' * 16}:\n", 1)
    assert diagnostics(text) == []


def test_an_existing_cluster_name_gke_cannot_have_is_refused() -> None:
    long_name = "p" * 41
    text = edit("{existing: prod-gke}", f"{{existing: {long_name}}}")
    assert diagnostics(text) == [
        f"bp.yaml:18:25: error: environments.prod.cluster.existing: '{long_name}' cannot "
        "name a GKE cluster: GKE cluster names have at most 40 characters, lowercase letters, "
        "digits and '-', starting with a letter and ending with a letter or digit (https://"
        "cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters"
        "#Cluster, name); write the "
        "name `gcloud container clusters list` shows"
    ]
    upper = edit("{existing: prod-gke}", "{existing: Prod_GKE}")
    assert diagnostics(upper) == [
        "bp.yaml:18:25: error: environments.prod.cluster.existing: 'Prod_GKE' cannot name a "
        "GKE cluster: GKE cluster names have at most 40 characters, lowercase letters, digits "
        "and '-', starting with a letter and ending with a letter or digit (https://cloud.google."
        "com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters#Cluster, "
        "name); write the name "
        "`gcloud container clusters list` shows"
    ]


MIG = edit(
    "    gpu: nvidia-l4\n",
    "    gpu: nvidia-h100-80gb\n    gpus_per_node: 8\n    sharing: mig\n    mig_profile: 3g.40gb\n",
)


def test_mig_on_gke_is_refused_at_the_pool_s_sharing() -> None:
    assert diagnostics(MIG) == [
        "bp.yaml:23:14: error: gpu_pools.l4.sharing: pool 'l4' partitions its GPUs with MIG "
        "on GKE (environment prod), where it would never scale: GKE's autoscaler builds new "
        "nodes from the machine's accelerators and knows nvidia.com/gpu only, not "
        "nvidia.com/mig-3g.40gb (kubernetes/autoscaler cluster-autoscaler/cloudprovider/gce/"
        "templates.go (BuildCapacity, commit 00fcc0d7a1ac1629eaaba570a779a0e479fc6e09)); use "
        "`sharing: exclusive` for this pool on GKE (MIG may stay in the overrides of aws "
        "environments, whose autoscaler reads the slices from node-group tags)"
    ]


def test_mig_set_in_an_aws_environment_s_overrides_only_passes() -> None:
    text = edit("    gpu: nvidia-l4\n", "    gpu: nvidia-h100-80gb\n    gpus_per_node: 8\n")
    text = edit(
        "    cluster: {create: true}\n",
        "    cluster: {create: true}\n    overrides:\n      gpu_pools:\n"
        "        l4: {sharing: mig, mig_profile: 3g.40gb}\n",
        text,
    )
    assert diagnostics(text) == []


def test_mig_set_in_a_gcp_environment_s_overrides_is_refused_there() -> None:
    text = edit("    gpu: nvidia-l4\n", "    gpu: nvidia-h100-80gb\n    gpus_per_node: 8\n")
    text = edit(
        "    cluster: {existing: prod-gke}\n",
        "    cluster: {existing: prod-gke}\n    overrides:\n      gpu_pools:\n"
        "        l4: {sharing: mig, mig_profile: 3g.40gb}\n",
        text,
    )
    (only,) = diagnostics(text)
    assert only.startswith(
        "bp.yaml:21:23: error: environments.prod.overrides.gpu_pools.l4.sharing: pool 'l4' "
        "partitions its GPUs with MIG on GKE (environment prod)"
    )
