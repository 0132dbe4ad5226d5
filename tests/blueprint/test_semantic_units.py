"""Numbers in the wrong unit (`inferplane.blueprint.checks.semantic_units`). Exact diagnostics."""

from __future__ import annotations

from test_capacity import BASE, edit

from inferplane.blueprint.checks.semantic import check
from inferplane.blueprint.loading.loader import load_text


def errors(text: str) -> list[str]:
    return [d.format() for d in check(load_text(text, "bp.yaml"))]


def test_base_is_valid() -> None:
    assert errors(BASE) == []


def test_a_profile_in_seconds_is_refused_with_the_throughput_it_claims() -> None:
    text = edit("{batch_size: 8, p95_ms: 4.6}", "{batch_size: 8, p95_ms: 0.015}")
    text = edit("{batch_size: 16, p95_ms: 7.9}", "{batch_size: 16, p95_ms: 0.03}", text)
    text = edit("{batch_size: 1, p95_ms: 2.0}", "{batch_size: 1, p95_ms: 0.004}", text)
    assert errors(text) == [
        "bp.yaml:36:35: error: models.ranker.profile.points[0].p95_ms: batch 1 in 0.004 ms is "
        "250,000 requests/s on one nvidia-l4, beyond any GPU: a Triton request takes at least "
        "0.1 ms (copies over PCIe, a kernel launch, the server's scheduling); write "
        "milliseconds: p95_ms: 4 if you measured 0.004 s",
        "bp.yaml:37:35: error: models.ranker.profile.points[1].p95_ms: batch 8 in 0.015 ms is "
        "533,333 requests/s on one nvidia-l4, beyond any GPU: a Triton request takes at least "
        "0.1 ms (copies over PCIe, a kernel launch, the server's scheduling); write "
        "milliseconds: p95_ms: 15 if you measured 0.015 s",
        "bp.yaml:38:36: error: models.ranker.profile.points[2].p95_ms: batch 16 in 0.03 ms is "
        "533,333 requests/s on one nvidia-l4, beyond any GPU: a Triton request takes at least "
        "0.1 ms (copies over PCIe, a kernel launch, the server's scheduling); write "
        "milliseconds: p95_ms: 30 if you measured 0.03 s",
    ]


def test_a_larger_batch_that_is_faster_is_refused() -> None:
    text = edit("{batch_size: 16, p95_ms: 7.9}", "{batch_size: 16, p95_ms: 3.1}")
    assert errors(text) == [
        "bp.yaml:38:36: error: models.ranker.profile.points[2].p95_ms: batch 16 (3.1 ms) is "
        "faster than batch 8 (4.6 ms) by more than the measurement's 10%: a larger batch does "
        "more work; measure both again (perf_analyzer, same concurrency and inputs) and check "
        "the columns are batch size and p95 in ms"
    ]
    within = edit("{batch_size: 16, p95_ms: 7.9}", "{batch_size: 16, p95_ms: 4.3}")
    assert errors(within) == []


def test_a_batching_window_in_milliseconds_is_refused_with_its_likely_intent() -> None:
    text = edit("max_queue_delay_us: 1000}", "max_queue_delay_us: 2}")
    assert errors(text) == [
        "bp.yaml:30:56: error: models.ranker.batching.max_queue_delay_us: a batching window of "
        "2 µs forms no batch: requests do not arrive within microseconds of each other; write "
        "microseconds: 2000 if you meant 2 ms, or 0 for no window"
    ]


def test_a_ttft_target_in_seconds_is_refused() -> None:
    text = edit(
        "    replicas: {min: 2, max: 8}\n",
        "    replicas: {min: 2, max: 8}\n    autoscaling: {metric: ttft_p95_ms, target: 0.5}\n",
    )
    assert errors(text) == [
        "bp.yaml:22:48: error: models.chat.autoscaling.target: ttft_p95_ms 0.5 is 500 µs: no "
        "request is served that fast, so the model stays at replicas.max; write milliseconds: "
        "target: 500 if you meant 0.5 s"
    ]


def test_a_gpu_utilisation_target_as_a_fraction_is_refused() -> None:
    text = edit(
        "    replicas: {min: 2, max: 4}\n",
        "    replicas: {min: 2, max: 4}\n"
        "    autoscaling: [{metric: queue_depth, target: 4}, {metric: gpu_utilization, "
        "target: 0.7}]\n",
    )
    assert errors(text) == [
        "bp.yaml:32:87: error: models.ranker.autoscaling[1].target: gpu_utilization 0.7 is 0.7 "
        "percent, not a fraction: every replica is above it whenever the GPU works, so the "
        "model stays at replicas.max; write the percent: target: 70"
    ]
