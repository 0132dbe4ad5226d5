"""`traffic.items_per_request`: a Triton request of several batch items (a reranker's
passages per query) is planned as that many rows of the profile's batches, and the derived
queue target counts requests, not rows."""

from __future__ import annotations

import pytest
from test_capacity import BASE, edit, problems

from inferplane.blueprint.capacity import planner, profile
from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.model import Signal
from inferplane.blueprint.resolution.resolve import resolve

# cross-encoder/ms-marco-MiniLM-L6-v2 scores 1800 docs (query-passage pairs) per second:
# "Docs / Sec" 1800, "Runtime was computed on a V100 GPU"
# (https://huggingface.co/cross-encoder/ms-marco-MiniLM-L6-v2, the same table at
# https://sbert.net/docs/pretrained-models/ce-msmarco.html). A profile at that rate: batches
# of 64 and 128 pairs take 64/1800 s and 128/1800 s.
DOCS_PER_S = 1800.0
RERANKER = """\
  reranker:
    server: triton
    source: ranker/model.onnx
    pool: l4
    tensorrt: {}
    batching: {max_batch_size: 128, max_queue_delay_us: 2000}
    replicas: {min: 2, max: 8}
    slo: {p95_ms: 120}
    traffic: {peak_rps: 100, items_per_request: 64}
    profile:
      points:
        - {batch_size: 64, p95_ms: 35.56}
        - {batch_size: 128, p95_ms: 71.11}
"""
TEXT = BASE + RERANKER


def _at(text: str, needle: str) -> str:
    """``line:col`` of the first `needle` in `text` (1-based), found rather than typed."""
    before = text[: text.index(needle)]
    return f"{before.count(chr(10)) + 1}:{len(before) - before.rfind(chr(10))}"


def _plan(text: str = TEXT):  # type: ignore[no-untyped-def]
    return planner.plan_env(resolve(load_text(text, "bp.yaml"), "stg")).plans["reranker"]


def test_the_profile_of_the_cited_rate_is_valid() -> None:
    assert problems(TEXT) == []


def test_a_reranker_of_64_passages_plans_the_published_rate_over_64() -> None:
    plan = _plan()
    # 1800 pairs/s is 28.1 queries of 64 passages per second: the central estimate is the
    # cited figure, and the band (the profile's ±10%) brackets it.
    assert plan.rps[1] == pytest.approx(DOCS_PER_S / 64, rel=0.01)
    assert plan.rps[0] < DOCS_PER_S / 64 < plan.rps[2]
    assert plan.batch == 128
    assert "2 requests of 64 items" in plan.latency
    # 100 queries/s over two zones at 28.1 each: 2 replicas per zone, 4 in all.
    assert (plan.per_zone, plan.replicas) == (2, 4)


def test_without_items_per_request_the_plan_is_64_times_larger() -> None:
    plan = _plan(edit(", items_per_request: 64}", "}", TEXT))
    assert plan.rps[1] == pytest.approx(DOCS_PER_S, rel=0.01)


def test_the_derived_queue_target_counts_requests_not_items() -> None:
    plan = _plan()
    # The slack of 120 - 71.11 - 2 ms drains 28.1 x 0.0469 = 1.3 requests: target 1.
    assert plan.targets == (Signal("queue_depth", 1.0),)
    assert "28.13 requests/s" in plan.target_basis[0]


def test_a_batch_smaller_than_one_request_holds_none() -> None:
    got = profile.estimate([(32, 10.0), (64, 20.0)], 100, 0, 64, items=64)
    assert (got.batch, got.requests) == (64, 1)
    assert got.rps == pytest.approx(50)
    assert profile.estimate([(32, 10.0)], 100, 0, 64, items=64).batch == 0


def test_a_request_larger_than_max_batch_size_is_refused_at_its_line() -> None:
    text = edit("items_per_request: 64}", "items_per_request: 200}", TEXT)
    assert problems(text) == [
        f"bp.yaml:{_at(text, '200}')}: error: models.reranker.traffic.items_per_request: "
        "a request of 200 items is larger than batching.max_batch_size (128): Triton "
        'refuses it ("inference request batch-size must be <= 128"); raise '
        "batching.max_batch_size to 200 or more, "
        "or send at most 128 items per request"
    ]


def test_items_per_request_without_batching_is_refused() -> None:
    text = edit("    batching: {max_batch_size: 128, max_queue_delay_us: 2000}\n", "", TEXT)
    text = edit("{batch_size: 64, p95_ms: 35.56}", "{batch_size: 1, p95_ms: 35.56}", text)
    text = edit("        - {batch_size: 128, p95_ms: 71.11}\n", "", text)
    (only,) = problems(text)
    assert "models.reranker.traffic.items_per_request: a request of 64 items needs a batch " in only
    assert "add `batching: {max_batch_size: 64}`" in only


def test_a_profile_without_a_batch_holding_one_request_is_refused() -> None:
    text = edit("items_per_request: 64}", "items_per_request: 100}", TEXT)
    text = edit("        - {batch_size: 128, p95_ms: 71.11}\n", "", text)
    (only,) = problems(text)
    assert only.startswith(
        f"bp.yaml:{_at(text, '- {batch_size: 64, p95_ms: 35.56}')}: error: "
        "models.reranker.profile.points: the profile measures batch sizes "
        "64, none from 100 (one request of traffic.items_per_request 100 items) to "
        "batching.max_batch_size (128)"
    )


def test_an_llm_refuses_items_per_request() -> None:
    text = edit("shared_prefix: 0.5}", "shared_prefix: 0.5, items_per_request: 4}", TEXT)
    (only,) = problems(text)
    assert "models.chat.traffic.items_per_request: `items_per_request` counts the batch " in only


def test_items_per_request_below_one_is_a_schema_error() -> None:
    (only,) = problems(edit("items_per_request: 64}", "items_per_request: 0}", TEXT))
    assert "models.reranker.traffic.items_per_request" in only
