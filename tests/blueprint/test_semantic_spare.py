"""Semantic checks of `gpu_pools.<pool>.spare_gpus`: refused on a pool no model uses, and
in other than whole replicas of the pool's largest model. Exact diagnostics."""

from __future__ import annotations

from test_semantic import diagnostics
from test_semantic import edit as edit_base

BASE = """\
apiVersion: inferplane/v1
kind: Blueprint
name: demo
environments:
  stg:
    cloud: aws
    region: us-east-1
    zones: [us-east-1a]
    model_store: s3://models-use1/
    cluster: {create: true}
gpu_pools:
  l4:
    gpu: nvidia-l4
    gpus_per_node: 4
    nodes: {min: 2, max: 4}
    spare_gpus: 2
  idle:
    gpu: nvidia-l4
    nodes: {min: 0, max: 1}
models:
  chat:
    server: vllm
    source: llama/
    pool: l4
    gpus: 2
    replicas: {min: 1, max: 4}
  embed:
    server: triton
    source: embed/model.onnx
    pool: l4
    replicas: {min: 1, max: 2}
"""


def edit(old: str, new: str, text: str = BASE) -> str:
    return edit_base(old, new, text)


def test_base_is_valid() -> None:
    assert diagnostics(BASE) == []


def test_spare_gpus_on_a_pool_no_model_uses_are_refused() -> None:
    text = edit("    nodes: {min: 0, max: 1}\n", "    nodes: {min: 0, max: 1}\n    spare_gpus: 1\n")
    assert diagnostics(text) == [
        "bp.yaml:20:17: error: gpu_pools.idle.spare_gpus: pool 'idle' keeps 1 spare GPUs per "
        "zone, but no model runs on it: they would hold GPU nodes for nothing; remove "
        "spare_gpus, or place a model on the pool (models.<m>.pool)"
    ]


def test_spare_gpus_must_be_whole_replicas_of_the_largest_model() -> None:
    text = edit("    spare_gpus: 2\n", "    spare_gpus: 3\n")
    assert diagnostics(text) == [
        "bp.yaml:16:17: error: gpu_pools.l4.spare_gpus: 3 spare GPUs per zone is not a whole "
        "number of replicas of chat (2 GPUs each), the largest model on pool 'l4': a "
        "preempted placeholder must free room for any replica; use a multiple of 2, e.g. "
        "spare_gpus: 2"
    ]


def test_an_override_is_blamed_at_the_override() -> None:
    text = edit(
        "    cluster: {create: true}\n",
        "    cluster: {create: true}\n    overrides:\n      gpu_pools:\n        l4:\n"
        "          spare_gpus: 1\n",
    )
    assert diagnostics(text) == [
        "bp.yaml:14:23: error: environments.stg.overrides.gpu_pools.l4.spare_gpus: in "
        "environment 'stg', 1 spare GPUs per zone is not a whole number of replicas of chat "
        "(2 GPUs each), the largest model on pool 'l4': a preempted placeholder must free "
        "room for any replica; use a multiple of 2, e.g. spare_gpus: 2"
    ]


PROD = """\
  prod:
    cloud: aws
    region: us-east-1
    zones: [us-east-1b]
    model_store: s3://models-use1/
    cluster: {create: true}
    overrides:
      models:
        chat:
          gpus: 4
"""


def test_a_model_override_is_blamed_at_the_override_with_its_environment() -> None:
    # stg keeps the blueprint's numbers (2 spare GPUs, chat on 2 GPUs) and is fine; prod's
    # 4-GPU chat makes the same spare_gpus wrong there alone.
    text = edit("gpu_pools:\n", PROD + "gpu_pools:\n")
    assert diagnostics(text) == [
        "bp.yaml:20:17: error: environments.prod.overrides.models.chat.gpus: in environment "
        "'prod', 2 spare GPUs per zone is not a whole number of replicas of chat (4 GPUs "
        "each), the largest model on pool 'l4': a preempted placeholder must free room for "
        "any replica; use a multiple of 4, e.g. spare_gpus: 4"
    ]


def test_a_model_moved_off_the_pool_is_blamed_at_the_override() -> None:
    moved = PROD.replace("          gpus: 4\n", "          pool: idle\n          gpus: 1\n")
    moved += "        embed:\n          pool: idle\n"
    text = edit("gpu_pools:\n", moved + "gpu_pools:\n")
    assert diagnostics(text) == [
        "bp.yaml:20:17: error: environments.prod.overrides.models.chat.pool: in environment "
        "'prod', pool 'l4' keeps 2 spare GPUs per zone, but no model runs on it: they would "
        "hold GPU nodes for nothing; remove spare_gpus, or place a model on the pool "
        "(models.<m>.pool)"
    ]
