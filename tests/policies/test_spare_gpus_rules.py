"""Spare-GPU placeholders in the rules: counted at nodes.min (warm-replicas) and nodes.max
(capacity-headroom), room for a surge pod, and never taken for a model. Exact messages;
the fixtures (``fixtures/*/…spare-gpus…``) cover targets and lines."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from policy_fixtures import FIXTURES, materialise

from inferplane.app.check import check_files
from inferplane.policies.resources import Resource
from inferplane.policies.stack import is_spare_gpu_placeholder

TODAY = dt.date(2026, 6, 1)


def messages(tmp_path: Path, changes: dict[str, object], rule: str) -> dict[str, list[str]]:
    path = tmp_path / "bp.yaml"
    path.write_text(materialise((FIXTURES / "golden.yaml").read_text(), changes))
    out: dict[str, list[str]] = {}
    for r in check_files([str(path)], today=TODAY).results:
        if r.status == "violation" and r.rule == rule:
            out.setdefault(r.environment, []).append(r.message)
    return out


def test_the_minimum_must_hold_the_spare_gpus_too(tmp_path: Path) -> None:
    # The golden pool keeps one spare GPU per zone at nodes.min 3: one node less is short.
    found = messages(tmp_path, {"gpu_pools.l4.nodes.min": 2}, "warm-replicas")
    assert found["staging"] == [
        "in zone us-east-1a, nodes.min 2 (2 GPUs) cannot hold the 3 GPUs of the warm "
        "replicas placed there and its spare GPUs (chat 1, ranker 1, spare_gpus 1); raise "
        "nodes.min to 3",
        "in zone us-east-1b, nodes.min 2 (2 GPUs) cannot hold the 3 GPUs of the warm "
        "replicas placed there and its spare GPUs (chat 1, ranker 1, spare_gpus 1); raise "
        "nodes.min to 3",
    ]


def test_the_maximum_must_hold_the_spare_gpus_too(tmp_path: Path) -> None:
    found = messages(tmp_path, {"gpu_pools.l4.spare_gpus": 3}, "capacity-headroom")
    assert found["prod"] == [
        "at max replicas the models on pool l4 need 14 GPUs (chat 4x1, ranker 4x1, "
        "spare_gpus 6) but its nodes.max across zones gives 12; raise nodes.max or lower "
        "replicas.max or spare_gpus"
    ]


def test_placeholders_are_room_for_a_surge_pod(tmp_path: Path) -> None:
    # Exactly full at max (10 GPUs: 8 for the models, 2 placeholders): chat, at one warm
    # replica, rolls out by surging a pod, which preempts a placeholder for its GPU.
    changes = {
        "gpu_pools.l4.nodes.max": 5,
        "gpu_pools.l4.spare_gpus": 1,
        "models.chat.replicas.min": 1,
    }
    assert messages(tmp_path, changes, "capacity-headroom") == {}
    # Without them the pool is full at max, so chat replaces its only replica in place.
    without = {**changes, "gpu_pools.l4.spare_gpus": 0, "gpu_pools.l4.nodes.max": 4}
    assert messages(tmp_path, without, "capacity-headroom")["prod"] == [
        "chat rolls out by replacing its only warm replica in place (maxSurge 0), so every "
        "update interrupts it; keep at least 2 replicas or leave a spare GPU for a surge pod"
    ]


def _deployment(labels: dict[str, str], image: str) -> Resource:
    container = {"name": "c", "image": image, "resources": {"limits": {"nvidia.com/gpu": "1"}}}
    return Resource(
        type="kubernetes:apps/v1:Deployment",
        name="d",
        urn="urn:d",
        props={"spec": {"template": {"metadata": {"labels": labels},
                                     "spec": {"containers": [container]}}}},
    )  # fmt: skip


def test_only_a_pause_pod_without_a_model_passes_for_a_placeholder() -> None:
    role = {"inferplane.dev/role": "spare-gpu"}
    assert is_spare_gpu_placeholder(_deployment(role, "registry.k8s.io/pause:3.10"))
    # A model server labelled as a placeholder is still a model server.
    assert not is_spare_gpu_placeholder(_deployment(role, "vllm/vllm-openai:v0.10.2"))
    model = {**role, "inferplane.dev/model": "chat"}
    assert not is_spare_gpu_placeholder(_deployment(model, "registry.k8s.io/pause:3.10"))
    assert not is_spare_gpu_placeholder(_deployment({}, "registry.k8s.io/pause:3.10"))
