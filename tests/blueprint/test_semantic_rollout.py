"""`models.<m>.rollout`: schema bounds, the semantic checks (steps, add-on, guard) with
exact located diagnostics, and the rollout the model resolves to."""

from __future__ import annotations

from test_semantic import diagnostics, schema_errors
from test_semantic import edit as edit_base

from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.model import Rollout, RolloutGuard
from inferplane.blueprint.resolution.resolve import resolve

BASE = """\
apiVersion: inferplane/v1
kind: Blueprint
name: demo
environments:
  prod:
    cloud: aws
    region: us-east-1
    zones: [us-east-1a, us-east-1b]
    model_store: s3://models-use1/
    cluster:
      create: true
      addons:
        argo_rollouts: {}
gpu_pools:
  l4:
    gpu: nvidia-l4
    nodes: {min: 2, max: 4}
models:
  chat:
    server: vllm
    source: llama/
    pool: l4
    replicas: {min: 2, max: 4}
    slo: {ttft_p95_ms: 800, itl_p95_ms: 60, p95_ms: 20000}
    rollout:
      steps: [10, 50, 100]
      step_s: 600
  embed:
    server: triton
    source: embed/model.onnx
    pool: l4
    replicas: {min: 2, max: 2}
    slo: {p95_ms: 50}
"""


def edit(old: str, new: str, text: str = BASE) -> str:
    return edit_base(old, new, text)


def rollout_of(text: str, model: str) -> Rollout | None:
    return resolve(load_text(text, "bp.yaml"), "prod").models[model].rollout


def test_base_is_valid_and_the_guard_defaults_to_the_slo() -> None:
    assert schema_errors(BASE) == []
    assert diagnostics(BASE) == []
    assert rollout_of(BASE, "chat") == Rollout(
        steps=(10, 50, 100),
        step_s=600,
        guard=RolloutGuard(p95_ms=20000, ttft_p95_ms=800, itl_p95_ms=60, error_ratio=0.01),
    )
    assert rollout_of(BASE, "embed") is None


def test_an_empty_rollout_takes_the_defaults_and_the_bounds_triton_measures() -> None:
    text = edit(
        "    slo: {p95_ms: 50}\n",
        "    slo: {p95_ms: 50}\n    rollout: {}\n",
    )
    assert schema_errors(text) == []
    assert diagnostics(text) == []
    assert rollout_of(text, "embed") == Rollout(
        steps=(10, 50, 100), step_s=300, guard=RolloutGuard(p95_ms=50, error_ratio=0.01)
    )


def test_a_written_bound_replaces_the_slo_one_and_keeps_the_others() -> None:
    text = edit("      step_s: 600\n", "      step_s: 600\n      guard: {ttft_p95_ms: 500}\n")
    assert diagnostics(text) == []
    guard = rollout_of(text, "chat").guard  # type: ignore[union-attr]
    assert (guard.ttft_p95_ms, guard.itl_p95_ms, guard.p95_ms) == (500, 60, 20000)


def test_steps_that_do_not_grow_are_refused_at_the_step() -> None:
    text = edit("steps: [10, 50, 100]", "steps: [50, 10, 100]")
    assert diagnostics(text) == [
        "bp.yaml:26:19: error: models.chat.rollout.steps[1]: step 2 of model 'chat''s "
        "rollout (10%) does not grow on the step before it (50%); list the canary's shares "
        "in increasing order, e.g. [10, 50, 100]"
    ]


def test_steps_that_stop_short_of_100_are_refused_at_the_last() -> None:
    text = edit("steps: [10, 50, 100]", "steps: [10, 50]")
    assert diagnostics(text) == [
        "bp.yaml:26:19: error: models.chat.rollout.steps[1]: model 'chat''s rollout ends "
        "at 50% of the replicas: the new version would never replace the old one; end the "
        "steps at 100, e.g. [10, 50, 100]"
    ]


def test_a_rollout_without_the_add_on_names_the_fix() -> None:
    text = edit("      addons:\n        argo_rollouts: {}\n", "")
    assert diagnostics(text) == [
        "bp.yaml:24:7: error: models.chat.rollout: model 'chat' rolls out in canary steps, "
        "but environment 'prod' has no Argo Rollouts controller to take them; add "
        "`argo_rollouts: {}` under environments.prod.cluster.addons (or `mode: "
        "existing` with its namespace where the cluster runs one), or remove the model's "
        "rollout"
    ]


def test_a_bound_the_server_cannot_measure_is_refused() -> None:
    text = edit(
        "    slo: {p95_ms: 50}\n",
        "    slo: {p95_ms: 50}\n    rollout:\n      guard: {ttft_p95_ms: 100}\n",
    )
    assert diagnostics(text) == [
        "bp.yaml:35:28: error: models.embed.rollout.guard.ttft_p95_ms: model 'embed' "
        "(triton) exports no time to first token (vLLM, or TensorRT-LLM with streaming): "
        "the guard cannot measure its new pods against this bound; remove it (p95_ms and "
        "error_ratio are measured on every server)"
    ]


def test_schema_bounds_step_s_and_the_shares() -> None:
    assert any(
        "models.chat.rollout.step_s" in e for e in schema_errors(edit("step_s: 600", "step_s: 10"))
    )
    assert any(
        "models.chat.rollout.steps[2]" in e
        for e in schema_errors(edit("steps: [10, 50, 100]", "steps: [10, 50, 101]"))
    )
    assert any(
        "models.chat.rollout.guard.error_ratio" in e
        for e in schema_errors(
            edit("step_s: 600\n", "step_s: 600\n      guard: {error_ratio: 0.6}\n")
        )
    )


def test_a_model_that_wakes_on_traffic_cannot_roll_out_through_argo() -> None:
    # The HTTP add-on would scale the Deployment that the Rollout holds at zero.
    text = edit(
        "    replicas: {min: 2, max: 4}\n    slo: {ttft",
        "    replicas: {min: 0, max: 4, wake: {hosts: [chat.example.internal]}}\n    slo: {ttft",
    )
    found = [d for d in diagnostics(text) if "wakes on traffic" in d]
    assert len(found) == 1, diagnostics(text)
    assert "models.chat.rollout: model 'chat' rolls out through an Argo Rollout" in found[0]
    assert "remove the model's rollout, or its replicas.wake.hosts" in found[0]


def test_a_rollout_over_several_zones_splits_the_replicas_evenly() -> None:
    # One Deployment and Rollout per zone: 3 replicas do not split over 2 zones.
    text = edit(
        "    replicas: {min: 2, max: 4}\n    slo: {ttft",
        "    replicas: {min: 3, max: 4}\n    slo: {ttft",
    )
    assert diagnostics(text) == [
        "bp.yaml:23:21: error: models.chat.replicas.min: replicas.min 3 does not split evenly "
        "over the pool's 2 zones: a model that rolls out zone by zone runs one Deployment per "
        "zone; give replicas.min as a multiple of 2"
    ]
    # In one zone there is nothing to split.
    one = edit("zones: [us-east-1a, us-east-1b]", "zones: [us-east-1a]", text)
    assert diagnostics(one) == []


def test_a_rollout_over_several_zones_keeps_a_replica_in_each_zone() -> None:
    text = edit(
        "    replicas: {min: 2, max: 4}\n    slo: {ttft",
        "    replicas: {min: 0, max: 4}\n    slo: {ttft",
    )
    found = [d for d in diagnostics(text) if "zone by zone" in d]
    assert found == [
        "bp.yaml:23:21: error: models.chat.replicas.min: model 'chat' rolls out zone by zone, "
        "and each zone's canary waits until the zone before serves the new version; at "
        "replicas.min 0 a zone may have no replica to serve it, and the next zone's rollout "
        "would abort (nor can one HTTP add-on wake a model of one Deployment per zone); keep "
        "a replica per zone (replicas.min: 2 or a multiple of it), or remove the model's "
        "rollout"
    ], diagnostics(text)


def test_a_triton_rollout_over_several_zones_at_zero_is_refused_too() -> None:
    # Triton states its protocol under expose: the refusal does not depend on it.
    text = edit(
        "    replicas: {min: 2, max: 2}\n    slo: {p95_ms: 50}\n",
        "    replicas: {min: 0, max: 2}\n    slo: {p95_ms: 50}\n    expose: {protocol: http}\n"
        "    rollout: {}\n",
    )
    found = [d for d in diagnostics(text) if "zone by zone" in d]
    assert len(found) == 1 and "models.embed.replicas.min" in found[0], diagnostics(text)
