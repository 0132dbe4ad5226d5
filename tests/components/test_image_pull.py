"""The ``lazy_image_pull`` lever's node objects: GKE node pools with image streaming (and the
nodes' service account's extra role) for a blueprint that lists the lever; EKS managed node
groups through a launch template with nodeadm's FastImagePull and a faster root volume, and
Karpenter's EC2NodeClass likewise, as the stack builds them for a pool that pulls lazily;
and the same objects without the lever."""

from __future__ import annotations

import base64
import dataclasses
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cloud_fixtures import attached, cloud_recording, with_pool
from serving.crd_schema import errors
from test_capacity_sources import BLOCK, RESERVATION
from test_karpenter import NODE_CLASS, body, on_karpenter

from inferplane.app.offline import Recording
from inferplane.blueprint import naming
from inferplane.blueprint.derived import lazy_pull
from inferplane.blueprint.model import Environment, GpuPool
from inferplane.blueprint.resolution.resolve import resolve_file
from inferplane.components import image_pull

ROOT = Path(__file__).resolve().parents[2]
EKS_GROUP = "aws:eks/nodeGroup:NodeGroup"
GKE_POOL = "gcp:container/nodePool:NodePool"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
IAM_MEMBER = "gcp:projects/iAMMember:IAMMember"
NODE_CONFIG = (
    "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n"
    "  featureGates:\n    FastImagePull: true\n"
)


@pytest.fixture
def chosen(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every pool with a model pulls lazily (on EKS the lever is refused before the stack
    runs, so the stack's one switch is set here)."""

    def every_pool(env: Environment, pool: GpuPool) -> bool:
        return any(m.pool == pool.name for m in env.models.values())

    monkeypatch.setattr(lazy_pull, "enabled", every_pool)
    yield


def with_lever(path: Path, before: str, model: str, tmp_path: Path) -> Path:
    """The bundled blueprint at `path` whose environment ending before the line `before`
    lists ``lazy_image_pull`` for `model` in its overrides."""
    text = path.read_text()
    assert text.count(before) == 1
    lever = (
        f"    overrides: {{models: {{{model}: {{scale_out: {{levers: [lazy_image_pull]}}}}}}}}\n"
    )
    text = text.replace(before, lever + before)
    out = tmp_path / path.name
    out.write_text(text)
    shutil.copytree(ROOT / "blueprints" / "schema", tmp_path / "schema")
    return out


def fresh(env: Environment) -> Environment:
    """A copy of `env` that `cloud_recording` has not cached."""
    return dataclasses.replace(env)


def pools_by_pool(rec: Recording) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rec.of_type(GKE_POOL):
        pool = (r.get("nodeConfig", "labels") or {}).get(naming.POOL_LABEL)
        if pool:
            out.setdefault(pool, []).append(r.inputs)
    return out


def node_roles(rec: Recording) -> set[str]:
    return {r.inputs["role"] for r in rec.of_type(IAM_MEMBER) if "-nodes-" in r.name}


# --- GKE ---------------------------------------------------------------------------------------
def llm_serving_prod() -> Environment:
    """GKE: pool l4 serves vLLM only (chat-8b); h100x4 and l4-classify serve Triton (NGC)."""
    return resolve_file(ROOT / "blueprints" / "llm-serving.yaml", "prod")


def test_gke_pools_pull_whole_images_without_the_lever() -> None:
    rec = cloud_recording(llm_serving_prod())
    for inputs in (i for group in pools_by_pool(rec).values() for i in group):
        assert "gcfsConfig" not in inputs["nodeConfig"]
    assert image_pull.GKE_NODE_ROLE not in node_roles(rec)


def test_gke_streams_images_on_the_pool_whose_model_lists_the_lever(tmp_path: Path) -> None:
    path = with_lever(ROOT / "blueprints" / "llm-serving.yaml", "  local:\n", "chat-8b", tmp_path)
    env = resolve_file(path, "prod")
    assert env.models["chat-8b"].scale_out.levers == ("compile_cache", "lazy_image_pull")
    rec = cloud_recording(env)
    by_pool = pools_by_pool(rec)
    assert set(by_pool) == {"l4", "h100x4", "l4-classify"}
    for inputs in by_pool["l4"]:
        assert inputs["nodeConfig"]["gcfsConfig"] == {"enabled": True}
        assert inputs["nodeConfig"]["imageType"] == "COS_CONTAINERD"
    # No model of these lists the lever (and their Triton images from NGC would not stream).
    for pool in ("h100x4", "l4-classify"):
        for inputs in by_pool[pool]:
            assert "gcfsConfig" not in inputs["nodeConfig"]
    assert node_roles(rec) == {
        "roles/container.defaultNodeServiceAccount",
        "roles/artifactregistry.reader",
        "roles/serviceusage.serviceUsageConsumer",
    }


# --- EKS managed node groups --------------------------------------------------------------------
def chat_minimal_prod() -> Environment:
    """EKS: one vLLM model on pool l4."""
    return resolve_file(ROOT / "blueprints" / "chat-minimal.yaml", "prod")


def gpu_groups(rec: Recording) -> dict[str, dict[str, Any]]:
    return {
        r.inputs["nodeGroupName"]: r.inputs
        for r in rec.of_type(EKS_GROUP)
        if naming.POOL_LABEL in (r.inputs.get("labels") or {})
    }


def test_eks_node_groups_have_no_launch_template_without_the_lever() -> None:
    rec = cloud_recording(chat_minimal_prod())
    assert rec.of_type(LAUNCH_TEMPLATE) == []
    for group in gpu_groups(rec).values():
        assert "launchTemplate" not in group
        assert group["diskSize"] == 200


def test_eks_node_groups_pull_in_parallel_through_their_launch_template(chosen: None) -> None:
    rec = cloud_recording(fresh(chat_minimal_prod()))
    templates = rec.of_type(LAUNCH_TEMPLATE)
    groups = gpu_groups(rec)
    assert len(templates) == len(groups) == 2  # one per zone
    lt = templates[0].inputs
    assert all(t.inputs == lt for t in templates)
    assert base64.b64decode(lt["userData"]).decode() == (
        "MIME-Version: 1.0\n"
        'Content-Type: multipart/mixed; boundary="INFERPLANE"\n'
        "\n"
        "--INFERPLANE\n"
        "Content-Type: application/node.eks.aws\n"
        "\n" + NODE_CONFIG + "\n--INFERPLANE--\n"
    )
    assert lt["blockDeviceMappings"] == [
        {
            "deviceName": "/dev/xvda",
            "ebs": {
                "volumeSize": 200,
                "volumeType": "gp3",
                "encrypted": "true",
                "deleteOnTermination": "true",
                "throughput": 1000,
                "iops": 16000,
            },
        }
    ]
    assert "capacityReservationSpecification" not in lt
    assert "instanceMarketOptions" not in lt
    assert "imageId" not in lt  # EKS keeps choosing the AL2023 NVIDIA AMI
    for group in groups.values():
        assert group["amiType"] == "AL2023_x86_64_NVIDIA"
        assert "diskSize" not in group  # the template carries the disk
        assert set(group["launchTemplate"]) == {"id", "version"}


def test_a_reservation_s_template_also_pulls_in_parallel(
    chosen: None, staging: Environment
) -> None:
    env = fresh(with_pool(staging, "l4", capacity_sources=(RESERVATION, BLOCK)))
    rec = cloud_recording(env)
    templates = {
        r.inputs["capacityReservationSpecification"]["capacityReservationTarget"][
            "capacityReservationId"
        ]: r.inputs
        for r in rec.of_type(LAUNCH_TEMPLATE)
        if "capacityReservationSpecification" in r.inputs
    }
    assert set(templates) == {RESERVATION.reservation, BLOCK.reservation}
    for lt in templates.values():
        assert base64.b64decode(lt["userData"]).decode().count("FastImagePull: true") == 1
        assert lt["blockDeviceMappings"][0]["ebs"]["throughput"] == 1000
    assert templates[BLOCK.reservation]["instanceMarketOptions"] == {"marketType": "capacity-block"}


# --- Karpenter ----------------------------------------------------------------------------------
def test_the_node_class_has_no_user_data_without_the_lever(staging: Environment) -> None:
    for r in cloud_recording(on_karpenter(staging)).of_type(NODE_CLASS):
        assert "userData" not in r.inputs["spec"]
        assert "throughput" not in r.inputs["spec"]["blockDeviceMappings"][0]["ebs"]


def test_the_node_class_turns_fast_image_pull_on(chosen: None, staging: Environment) -> None:
    rec = cloud_recording(fresh(on_karpenter(staging)))
    classes = rec.of_type(NODE_CLASS)
    assert classes
    for r in classes:
        spec = r.inputs["spec"]
        assert spec["userData"] == NODE_CONFIG
        assert spec["amiSelectorTerms"] == [{"alias": "al2023@v20260714"}]
        assert spec["blockDeviceMappings"][0]["ebs"] == {
            "volumeSize": "200Gi",
            "volumeType": "gp3",
            "encrypted": True,
            "deleteOnTermination": True,
            "throughput": 1000,
            "iops": 16000,
        }
        assert errors(body(r)) == []


def test_an_attached_eks_cluster_s_node_groups_pull_in_parallel_too(
    chosen: None, staging: Environment
) -> None:
    rec = cloud_recording(fresh(attached(staging, "shared-eks")))
    assert len(rec.of_type(LAUNCH_TEMPLATE)) == len(gpu_groups(rec))
