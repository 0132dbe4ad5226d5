"""The cloud components used on their own, with args written by hand (no blueprint):
what each needs on GCP is checked with a clear message, and a component used without a
parent carries no aliases."""

from __future__ import annotations

import re
from collections.abc import Callable

import pulumi
import pulumi_kubernetes as k8s
import pytest

from inferplane.app.offline import Recording, run_callable
from inferplane.app.offline_mocks import CloudFacts
from inferplane.blueprint.catalog import gpu
from inferplane.components import (
    Cluster,
    ClusterArgs,
    GkeCluster,
    GkeClusterArgs,
    GpuNodePool,
    GpuNodePoolArgs,
    ModelStoreAccess,
    ModelStoreAccessArgs,
    Ownership,
)

OWNER = Ownership(blueprint="shop", environment="dev", owner="team@example.com")
GCP = CloudFacts(cloud="gcp", region="us-central1", zones=("us-central1-a",), project="p-1")


def run_gcp(program: Callable[[], object]) -> Recording:
    return run_callable(
        program, stack="dev", facts=GCP, config={"inferplane:offline": "true"}, project="shop"
    )


def test_cluster_on_gcp_needs_project_and_location() -> None:
    def program() -> None:
        Cluster(
            "c",
            ClusterArgs(
                cloud="gcp", cluster_name="c", owner=OWNER, region="us-central1", zones=("a",)
            ),
        )

    with pytest.raises(ValueError, match=r"^Cluster on GCP needs project and gke_location$"):
        run_gcp(program)


def test_gpu_node_pool_on_gcp_needs_location_and_project() -> None:
    def program() -> None:
        GpuNodePool(
            "p",
            GpuNodePoolArgs(
                cloud="gcp",
                cluster_name="c",
                owner=OWNER,
                pool_name="l4",
                gpu=gpu("nvidia-l4"),
                instance_type="g2-standard-8",
                zones=("us-central1-a",),
            ),
        )

    message = r"^GpuNodePool on GCP needs cluster_location and project$"
    with pytest.raises(ValueError, match=message):
        run_gcp(program)


def test_model_store_access_on_gcp_needs_workload_pool_and_project() -> None:
    def program() -> None:
        ModelStoreAccess(
            "s",
            ModelStoreAccessArgs(
                cloud="gcp",
                owner=OWNER,
                namespace="shop",
                provider=k8s.Provider("k8s", kubeconfig="{}"),
                store_bucket="models",
                store_prefix="",
                read_locations=(("models", ""),),
                workload_pool="p-1.svc.id.goog",
            ),
        )

    message = re.escape("ModelStoreAccess on GCP needs workload_pool and project")
    with pytest.raises(ValueError, match=f"^{message}$"):
        run_gcp(program)


def test_a_gke_cluster_without_parent_has_no_aliases_and_uses_its_args() -> None:
    def program() -> None:
        GkeCluster(
            "shop",
            GkeClusterArgs(
                cluster_name="shop-dev",
                owner=OWNER,
                project="p-1",
                region="us-central1",
                location="us-central1",
                zones=("us-central1-a",),
            ),
            opts=pulumi.ResourceOptions(),
        )

    rec = run_gcp(program)
    (component,) = rec.of_type("inferplane:cluster:GkeCluster")
    children = [r for r in rec if r.parent == component.urn]
    assert children
    # No former parent to alias (the SDK's own type aliases of a resource may remain).
    assert [a for r in children for a in r.aliases if a["spec"].get("parentUrn")] == []
    (cluster,) = rec.of_type("gcp:container/cluster:Cluster")
    assert cluster.inputs["name"] == "shop-dev"
    assert cluster.inputs["minMasterVersion"] == "1.33.3-gke.1392000"
    assert cluster.inputs["nodeLocations"] == ["us-central1-a"]
    assert cluster.inputs["resourceLabels"] == {
        "inferplane-blueprint": "shop",
        "inferplane-environment": "dev",
        "managed-by": "inferplane",
        "owner": "team_example_com",
    }
    (account,) = rec.of_type("gcp:serviceaccount/account:Account")
    assert account.inputs["accountId"] == "shop-dev-nodes"
