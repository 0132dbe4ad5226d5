"""The histogram bounds a vLLM model's replicas export: the release's (facts read from its
wheel), with each SLO line and the derived TTFT target's act point added where the release
takes ``--custom-histogram-buckets``, so the p95 compared with them is exact there."""

from __future__ import annotations

import dataclasses
import itertools
import math
from pathlib import Path

import pytest

from inferplane.blueprint.capacity import targets
from inferplane.blueprint.model import Model
from inferplane.blueprint.model_scaling import Autoscaling, Slo
from inferplane.blueprint.resolution.resolve import load_blueprint, resolve
from inferplane.blueprint.upstream import vllm_buckets

ROOT = Path(__file__).resolve().parents[2]
PINNED = "v0.33.0"
TTFT = "vllm:time_to_first_token_seconds"


@pytest.fixture(scope="module")
def chat() -> Model:
    doc, _ = load_blueprint(ROOT / "blueprints" / "chat-minimal.yaml")
    return resolve(doc, "local").models["chat"]


def with_slo(model: Model, **slo: int | None) -> Model:
    return dataclasses.replace(model, slo=Slo(**{"p95_ms": None, "ttft_p95_ms": None, **slo}))


def increasing(bounds: tuple[float, ...]) -> bool:
    """What vLLM's ObservabilityConfig accepts: strictly increasing, finite, above 0."""
    return bounds[0] > 0 and all(a < b and math.isfinite(b) for a, b in itertools.pairwise(bounds))


def test_the_facts_are_the_releases_bucket_families_or_its_fixed_bounds() -> None:
    facts = vllm_buckets.buckets(PINNED)
    assert facts is not None and facts.custom_allowed
    # vllm/v1/metrics/buckets.py: TIME_TO_FIRST_TOKEN_BUCKETS jumps from 0.25 s to 0.5 s.
    ttft = facts.families[facts.histograms[TTFT]]
    assert ttft[ttft.index(0.25) + 1] == 0.5 and len(ttft) == 22
    assert facts.histograms["vllm:e2e_request_latency_seconds"] == "request_latency"
    assert facts.histograms["vllm:inter_token_latency_seconds"] == "inter_token_latency"
    assert all(increasing(b) for b in facts.families.values())
    # v0.10.2 writes its bounds inline (vllm/v1/metrics/loggers.py) and has no option to
    # change them: the same TTFT list, fixed.
    old = vllm_buckets.buckets("v0.10.2")
    assert old is not None and not old.custom_allowed and not old.families
    assert old.fixed[TTFT] == ttft


def test_an_slo_line_between_two_bounds_becomes_a_bound(chat: Model) -> None:
    model = with_slo(chat, p95_ms=2000, ttft_p95_ms=400, itl_p95_ms=60)
    got = targets.histogram_buckets(model, PINNED)
    facts = vllm_buckets.buckets(PINNED)
    assert facts is not None
    # 2 s is a default request-latency bound: that family keeps its defaults. chat-minimal
    # sets its own autoscaling, so only the SLO itself is added to the TTFT bounds.
    assert set(got) == {"time_to_first_token", "inter_token_latency"}
    assert got["time_to_first_token"] == tuple(
        sorted((*facts.families["time_to_first_token"], 0.4))
    )
    assert 0.06 in got["inter_token_latency"]
    assert len(got["inter_token_latency"]) == len(facts.families["inter_token_latency"]) + 1
    assert all(increasing(b) for b in got.values())


def test_a_derived_ttft_target_acts_at_a_bound(chat: Model) -> None:
    # No `autoscaling` in the blueprint: the TTFT target is 80% of the SLO (320 ms) and the
    # HPA acts above 352 ms; both 352 and 400 ms are bounds, so neither is interpolated.
    model = dataclasses.replace(with_slo(chat, ttft_p95_ms=400), autoscaling_derived=True)
    assert targets.bucket_lines_ms(model) == {"time_to_first_token": (400.0, 352.0)}
    bounds = targets.histogram_buckets(model, PINNED)["time_to_first_token"]
    assert {0.352, 0.4} <= set(bounds) and increasing(bounds)
    target = targets.ttft(400, tuple(b * 1000 for b in bounds))
    assert target.signal.target == 320.0 and targets.ttft_act_ms(400) == 352.0


def test_a_target_the_blueprint_sets_is_not_a_line(chat: Model) -> None:
    # A target is tuned far more often than an SLO changes; a changed bound restarts every
    # replica.
    model = dataclasses.replace(
        with_slo(chat, p95_ms=2000, ttft_p95_ms=500),
        autoscaling=Autoscaling.single("ttft_p95_ms", 300, 600),
    )
    assert targets.histogram_buckets(model, PINNED) == {}


def test_nothing_off_the_defaults_no_option_no_other_server(chat: Model) -> None:
    on_bounds = with_slo(chat, p95_ms=2000, ttft_p95_ms=500)
    assert targets.histogram_buckets(on_bounds, PINNED) == {}
    assert targets.histogram_buckets(dataclasses.replace(chat, slo=None), PINNED) == {}
    assert targets.histogram_buckets(chat, "v0.10.2") == {}
    assert targets.histogram_buckets(dataclasses.replace(chat, server="triton"), PINNED) == {}


def test_a_model_whose_image_runs_another_release_gets_that_releases_bounds(chat: Model) -> None:
    # The environment pins v0.33.0, the model's own image runs v0.10.2, which has no
    # --custom-histogram-buckets (its argparse would refuse it): no flag, its fixed bounds.
    old = dataclasses.replace(with_slo(chat, ttft_p95_ms=400), image="vllm/vllm-openai:v0.10.2")
    assert old.vllm_release(PINNED) == "v0.10.2"
    assert targets.histogram_buckets(old, PINNED) == {}
    assert 0.4 not in targets.exported_bounds(old, PINNED)[TTFT]
    new = dataclasses.replace(old, image=f"vllm/vllm-openai:{PINNED}")
    assert 0.4 in targets.exported_bounds(new, "v0.10.2")[TTFT]


def test_a_family_the_release_does_not_have_is_said() -> None:
    with pytest.raises(ValueError, match="has no histogram bucket family 'queue'"):
        vllm_buckets.custom(PINNED, {"queue": (1.0,)})


def test_exported_names_each_histogram_with_its_familys_bounds(chat: Model) -> None:
    every = targets.exported_bounds(with_slo(chat, ttft_p95_ms=400), PINNED)
    assert 0.4 in every[TTFT]
    assert 0.4 not in every["vllm:e2e_request_latency_seconds"]
    assert vllm_buckets.exported("v0.10.2", {})[TTFT][8:10] == (0.25, 0.5)
