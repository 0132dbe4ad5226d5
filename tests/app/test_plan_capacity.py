"""The capacity block's batch line: the planned batch, the cap it is within (its value and
the blueprint field that sets it) and what stops it growing, in the blueprint's field names."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from inferplane.app import plan_capacity
from inferplane.blueprint.capacity import planner
from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.model import Environment
from inferplane.blueprint.resolution.resolve import load_blueprint, resolve

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def prod() -> tuple[Environment, planner.EnvPlan]:
    doc, _ = load_blueprint(ROOT / "blueprints" / "llm-serving.yaml")
    env = resolve(doc, "prod")
    return env, planner.plan_env(env)


def _batch_lines(lines: list[str]) -> list[str]:
    return [line.strip() for line in lines if line.strip().startswith("batch ")]


def test_the_batch_line_names_the_cap_and_what_limits_the_batch(
    prod: tuple[Environment, planner.EnvPlan],
) -> None:
    env, plans = prod
    assert _batch_lines(plan_capacity.render(env, plans)) == [
        "batch 64 (max 64, tensorrt_llm.max_batch_size; limited by "
        "tensorrt_llm.max_batch_size): TTFT 64 ms, ITL 17.7 ms, request 7144 ms",
        "batch 15 (max 24, vllm.max_num_seqs; limited by slo.p95_ms): TTFT 122 ms, "
        "ITL 55.3 ms, request 3938 ms",
        "batch 16 (max 16, batching.max_batch_size; limited by batching.max_batch_size): "
        "p95 7.9 ms + window 1 ms",
    ]
    assert plan_capacity.as_json(env, plans.plans["chat-8b"])["batch"] == {
        "size": 15,
        "setting": "vllm.max_num_seqs",
        "max": 24,
        "limited_by": "slo.p95_ms",
    }


def test_an_unset_cap_says_the_engine_default_applies(
    prod: tuple[Environment, planner.EnvPlan],
) -> None:
    env, plans = prod
    unset = dataclasses.replace(plans.plans["chat-8b"], batch_max=None)
    only = planner.EnvPlan(plans={"chat-8b": unset})
    assert _batch_lines(plan_capacity.render(env, only)) == [
        "batch 15 (max: the engine's default, vllm.max_num_seqs unset; limited by slo.p95_ms): "
        "TTFT 122 ms, ITL 55.3 ms, request 3938 ms"
    ]


def test_the_plan_never_blames_the_slo_for_a_profile_above_max_batch_size() -> None:
    """Validation refuses such a profile at the profile (`semantic_capacity`); the plan of a
    model resolved without it skips the model and says why."""
    text = (ROOT / "blueprints" / "llm-serving.yaml").read_text(encoding="utf-8")
    for old, new in [
        ("batching: {max_batch_size: 16,", "batching: {max_batch_size: 4,"),
        ("        - {batch_size: 1, p95_ms: 2.0}\n", ""),
        ("        - {batch_size: 4, p95_ms: 3.1}\n", ""),
    ]:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    env = resolve(load_text(text, "bp.yaml"), "prod")
    assert planner.plan_env(env).skipped["toxicity"] == (
        "no measured batch size at or below batching.max_batch_size (4)"
    )
