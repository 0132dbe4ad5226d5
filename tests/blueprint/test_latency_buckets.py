"""The histogram bounds a vLLM model's replicas export: the release's defaults (facts read from
its wheel) with each SLO line added, so the p95 its alerts and triggers read is exact there."""

from __future__ import annotations

import dataclasses
import itertools
import math
from pathlib import Path

import pytest

from inferplane.blueprint.model import Model
from inferplane.blueprint.model_scaling import Autoscaling, Slo
from inferplane.blueprint.resolution.resolve import load_blueprint, resolve
from inferplane.blueprint.upstream import vllm_buckets

ROOT = Path(__file__).resolve().parents[2]
PINNED = "v0.33.0"


@pytest.fixture(scope="module")
def chat() -> Model:
    doc, _ = load_blueprint(ROOT / "blueprints" / "chat-minimal.yaml")
    return resolve(doc, "local").models["chat"]


def with_slo(model: Model, **slo: int | None) -> Model:
    return dataclasses.replace(model, slo=Slo(**{"p95_ms": None, "ttft_p95_ms": None, **slo}))


def test_the_facts_are_the_releases_bucket_families() -> None:
    facts = vllm_buckets.buckets(PINNED)
    assert facts is not None
    # vllm/v1/metrics/buckets.py: TIME_TO_FIRST_TOKEN_BUCKETS jumps from 0.25 s to 0.5 s.
    ttft = facts.bounds_of("vllm:time_to_first_token_seconds")
    assert ttft[ttft.index(0.25) + 1] == 0.5 and len(ttft) == 22
    assert facts.histograms["vllm:e2e_request_latency_seconds"] == "request_latency"
    assert facts.histograms["vllm:inter_token_latency_seconds"] == "inter_token_latency"
    for bounds in facts.families.values():
        assert all(0 < a < b and math.isfinite(b) for a, b in itertools.pairwise(bounds))
    # v0.10.2 writes its bounds inline and has no --custom-histogram-buckets.
    assert vllm_buckets.buckets("v0.10.2") is None


def test_an_slo_line_between_two_bounds_becomes_a_bound(chat: Model) -> None:
    model = with_slo(chat, p95_ms=2000, ttft_p95_ms=400, itl_p95_ms=60)
    got = vllm_buckets.custom(model, PINNED)
    facts = vllm_buckets.buckets(PINNED)
    assert facts is not None
    # 2 s is a default request-latency bound: that family keeps its defaults.
    assert set(got) == {"time_to_first_token", "inter_token_latency"}
    assert got["time_to_first_token"] == tuple(
        sorted((*facts.families["time_to_first_token"], 0.4))
    )
    assert 0.06 in got["inter_token_latency"]
    assert len(got["inter_token_latency"]) == len(facts.families["inter_token_latency"]) + 1
    # What vLLM's ObservabilityConfig accepts: strictly increasing, finite, above 0.
    for bounds in got.values():
        assert all(0 < a < b for a, b in itertools.pairwise(bounds))


def test_no_line_off_the_defaults_no_other_release_no_other_server(chat: Model) -> None:
    on_bounds = with_slo(chat, p95_ms=2000, ttft_p95_ms=500)
    assert vllm_buckets.custom(on_bounds, PINNED) == {}
    assert vllm_buckets.custom(dataclasses.replace(chat, slo=None), PINNED) == {}
    assert vllm_buckets.custom(chat, "v0.10.2") == {}
    assert vllm_buckets.custom(dataclasses.replace(chat, server="triton"), PINNED) == {}


def test_autoscaling_targets_are_not_lines(chat: Model) -> None:
    # A target is tuned, or follows from traffic, far more often than an SLO changes; a
    # changed bound restarts every replica.
    model = dataclasses.replace(
        with_slo(chat, p95_ms=2000, ttft_p95_ms=500),
        autoscaling=Autoscaling.single("ttft_p95_ms", 300, 600),
    )
    assert vllm_buckets.custom(model, PINNED) == {}


def test_exported_names_each_histogram_with_its_familys_bounds(chat: Model) -> None:
    custom = vllm_buckets.custom(with_slo(chat, ttft_p95_ms=400), PINNED)
    every = vllm_buckets.exported(PINNED, custom)
    assert 0.4 in every["vllm:time_to_first_token_seconds"]
    assert 0.4 not in every["vllm:e2e_request_latency_seconds"]
    assert vllm_buckets.exported("v0.10.2", {}) == {}
