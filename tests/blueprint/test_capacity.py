"""The capacity planner: schema and semantic errors of `traffic`/`profile`, the roofline
against published measurements, its monotonicity, and the bundled LLM blueprint's plan."""

from __future__ import annotations

import dataclasses
import math
import os
import re
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inferplane.blueprint import defaults
from inferplane.blueprint.capacity import gpus, planner, prices, profile, roofline
from inferplane.blueprint.checks.semantic import check
from inferplane.blueprint.errors import BlueprintError
from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.loading.schema import validate_document
from inferplane.blueprint.model import Signal
from inferplane.blueprint.resolution.resolve import capacity_diagnostics, load_blueprint, resolve

ROOT = Path(__file__).resolve().parents[2]
LLM_BLUEPRINT = ROOT / "blueprints" / "llm-serving.yaml"

BASE = """\
apiVersion: inferplane/v1
kind: Blueprint
name: demo
environments:
  stg:
    cloud: aws
    region: us-east-1
    zones: [us-east-1a, us-east-1b]
    model_store: s3://models-use1/
    cluster: {create: true}
gpu_pools:
  l4:
    gpu: nvidia-l4
    nodes: {min: 2, max: 4}
models:
  chat:
    server: vllm
    source: hf://meta-llama/Llama-3.1-8B-Instruct@0e9e39f249a16976918f6564b8830bc894c89659
    pool: l4
    vllm: {max_model_len: 8192, quantization: fp8, kv_cache_dtype: fp8}
    replicas: {min: 2, max: 8}
    slo: {p95_ms: 4000, ttft_p95_ms: 500, itl_p95_ms: 60}
    traffic: {peak_rps: 4, input_tokens: 1200, output_tokens: 70, shared_prefix: 0.5}
    secrets: {hf_token: {from_env: HF_TOKEN}}
  ranker:
    server: triton
    source: ranker/model.onnx
    pool: l4
    tensorrt: {}
    batching: {max_batch_size: 16, max_queue_delay_us: 1000}
    replicas: {min: 2, max: 4}
    slo: {p95_ms: 15}
    traffic: {peak_rps: 3000}
    profile:
      points:
        - {batch_size: 1, p95_ms: 2.0}
        - {batch_size: 8, p95_ms: 4.6}
        - {batch_size: 16, p95_ms: 7.9}
"""


def edit(old: str, new: str, text: str = BASE) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def problems(text: str) -> list[str]:
    """Schema, then semantic, then capacity diagnostics, as `load_blueprint` runs them."""
    doc = load_text(text, "bp.yaml")
    found = validate_document(doc) or check(doc)
    if found:
        return [d.format() for d in found]
    return [d.format() for d in capacity_diagnostics(doc)]


def test_base_plans_cleanly() -> None:
    assert problems(BASE) == []


def test_shared_prefix_above_one_is_located() -> None:
    text = edit("shared_prefix: 0.5}", "shared_prefix: 1.5}")
    assert problems(text) == [
        "bp.yaml:23:82: error: models.chat.traffic.shared_prefix: a share of 1.5 is more than "
        "the whole prompt; give the share of the prompt that repeats, between 0 and 1 (e.g. 0.4)"
    ]


def test_llm_traffic_needs_token_counts() -> None:
    text = edit(", input_tokens: 1200, output_tokens: 70, shared_prefix: 0.5", "")
    assert problems(text) == [
        "bp.yaml:23:14: error: models.chat.traffic: an LLM's traffic needs `input_tokens` and "
        "`output_tokens` per request; add the average prompt and output lengths, e.g. "
        "input_tokens: 1500, output_tokens: 300"
    ]


def test_request_longer_than_max_model_len() -> None:
    text = edit("input_tokens: 1200", "input_tokens: 8150")
    assert problems(text) == [
        "bp.yaml:23:42: error: models.chat.traffic.input_tokens: a request of 8150 + 70 tokens "
        "is longer than vllm.max_model_len (8192); raise vllm.max_model_len to 8220 or more, "
        "or state the traffic's real lengths"
    ]


def test_triton_traffic_without_profile() -> None:
    text = BASE.split("    profile:\n")[0]
    assert problems(text) == [
        "bp.yaml:33:14: error: models.ranker.traffic: a Triton model's capacity comes from its "
        "measured latency per batch size, and the model gives none; add `profile: {points: "
        "[{batch_size: 1, p95_ms: 2.1}, ...]}` (e.g. from perf_analyzer) or `profile: {file: "
        "profiles/<model>.csv}`"
    ]


def test_profile_file_with_a_bad_row(tmp_path: Path) -> None:
    (tmp_path / "ranker.csv").write_text("batch_size,p95_ms\n1,2.0\n8,fast\n")
    text = BASE.split("    profile:\n")[0] + "    profile: {file: ranker.csv}\n"
    bp = tmp_path / "bp.yaml"
    bp.write_text(text)
    with pytest.raises(BlueprintError) as err:
        load_blueprint(bp)
    assert [d.format() for d in err.value.diagnostics] == [
        f"{bp}:34:21: error: models.ranker.profile.file: ranker.csv: line 3: expected "
        "`<batch size>,<p95 ms>`; write one `<batch size>,<p95 ms>` row per measured batch "
        "size under the header"
    ]


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            "1,inf\n",
            "line 2: expected a batch size from 1 to 4096 and a p95 above 0 and at most 600000 ms",
        ),
        ("1,2\n1,3\n", "line 3: batch size 1 is measured twice"),
        (
            "99999999999,1\n",
            "line 2: expected a batch size from 1 to 4096 and a p95 above 0 and at most 600000 ms",
        ),
        ("1_0,1\n", "line 2: expected `<batch size>,<p95 ms>`"),
    ],
)
def test_profile_file_rows_keep_the_inline_ranges(rows: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        profile.read_csv("batch_size,p95_ms\n" + rows)


def test_profile_file_stays_in_the_blueprint_directory(tmp_path: Path) -> None:
    outside = tmp_path / "other.csv"
    outside.write_text("batch_size,p95_ms\n1,2.0\n")
    (tmp_path / "bp").mkdir()
    os.mkfifo(tmp_path / "bp" / "pipe.csv")
    with pytest.raises(ValueError, match="outside the blueprint's directory"):
        profile.read_file(tmp_path / "bp", "../other.csv")
    with pytest.raises(ValueError, match="not a regular file"):
        profile.read_file(tmp_path / "bp", "pipe.csv")
    (tmp_path / "bp" / "loop1.csv").symlink_to("loop2.csv")
    (tmp_path / "bp" / "loop2.csv").symlink_to("loop1.csv")
    with pytest.raises(profile.FileRefused, match=r"loop1\.csv is a loop of symbolic links"):
        profile.read_file(tmp_path / "bp", "loop1.csv")
    (tmp_path / "bp" / "big.csv").write_text("batch_size,p95_ms\n" + "1,1\n" * 20000)
    with pytest.raises(ValueError, match="over 65536"):
        profile.read_file(tmp_path / "bp", "big.csv")


def test_profile_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "ranker.csv").write_text("batch_size,p95_ms\n1,2.0\n8,4.6\n16,7.9\n")
    text = BASE.split("    profile:\n")[0] + "    profile: {file: ranker.csv}\n"
    (tmp_path / "bp.yaml").write_text(text)
    doc, _ = load_blueprint(tmp_path / "bp.yaml")
    assert resolve(doc, "stg").models["ranker"].profile == ((1, 2.0), (8, 4.6), (16, 7.9))


def test_a_profile_above_max_batch_size_names_the_batches_not_the_slo() -> None:
    """Triton never forms a batch above batching.max_batch_size, so a profile of larger
    ones gives the plan nothing to size: the profile is at fault, not slo.p95_ms."""
    text = edit("max_batch_size: 16,", "max_batch_size: 4,")
    text = edit("{batch_size: 1, p95_ms: 2.0}", "{batch_size: 32, p95_ms: 12.0}", text)
    assert problems(text) == [
        "bp.yaml:36:9: error: models.ranker.profile.points: the profile measures batch sizes "
        "8, 16, 32, none at or below batching.max_batch_size (4): there is no batch the model "
        "runs to size its capacity from; measure batch sizes up to 4 (e.g. perf_analyzer at "
        "concurrency 1 to 4), or raise batching.max_batch_size to 8 if the model takes such "
        "batches"
    ]


def test_a_profile_file_without_batch_one_on_a_model_without_batching(tmp_path: Path) -> None:
    (tmp_path / "ranker.csv").write_text("batch_size,p95_ms\n8,4.6\n16,7.9\n")
    text = BASE.split("    profile:\n")[0] + "    profile: {file: ranker.csv}\n"
    text = edit("    batching: {max_batch_size: 16, max_queue_delay_us: 1000}\n", "", text)
    bp = tmp_path / "bp.yaml"
    bp.write_text(text)
    with pytest.raises(BlueprintError) as err:
        load_blueprint(bp)
    assert [d.format() for d in err.value.diagnostics] == [
        f"{bp}:33:21: error: models.ranker.profile.file: the profile measures batch sizes "
        "8, 16, none at or below 1, the batch of a model without `batching`: there is no batch "
        "the model runs to size its capacity from; measure batch size 1, or add `batching: "
        "{max_batch_size: 8}` if the model takes batches"
    ]


def test_batching_window_uses_up_the_latency_budget() -> None:
    text = edit("max_queue_delay_us: 1000", "max_queue_delay_us: 15000")
    assert problems(text) == [
        "bp.yaml:30:56: error: models.ranker.batching.max_queue_delay_us: the batching window "
        "(15 ms) uses up the latency budget (slo.p95_ms 15 ms): no time is left to compute the "
        "batch; shorten the window (a realtime model keeps it at 10 ms or less) or relax the SLO"
    ]


def replicas_max(text: str) -> list[str]:
    return [p for p in problems(text) if "replicas.max:" in p]


def test_peak_beyond_replicas_max_names_the_number_needed() -> None:
    text = edit("traffic: {peak_rps: 4,", "traffic: {peak_rps: 60,")
    assert replicas_max(text) == [
        "bp.yaml:21:29: error: models.chat.replicas.max: replicas.max 8 cannot carry the peak "
        "of 60 requests/s within the SLO under any estimate of the ±30% roofline band: even "
        "at its optimistic end (7.10 requests/s a replica) the peak needs 10 replicas (5 per "
        "zone x 2 zones), and 16 at the central estimate (3.81 requests/s each); raise "
        "replicas.max to 16 (and the pool's nodes.max to hold them), lower traffic.peak_rps, "
        "or serve on faster GPUs"
    ]


def test_a_peak_that_only_the_optimistic_end_carries_is_an_error_beyond_it() -> None:
    # At 80 ms TTFT no batch meets the SLO at the central estimate: the replicas the
    # optimistic end needs are the only count there is, and there are more than max.
    text = edit("ttft_p95_ms: 500", "ttft_p95_ms: 80")
    assert replicas_max(text) == [
        "bp.yaml:21:29: error: models.chat.replicas.max: replicas.max 8 cannot carry the peak "
        "of 4 requests/s within the SLO under any estimate of the ±30% roofline band: even at "
        "its optimistic end (0.49 requests/s a replica) the peak needs 10 replicas (5 per zone "
        "x 2 zones), and at the central estimate no batch meets the SLO; relax the SLO or "
        "serve on faster GPUs: only the optimistic end of the band meets it"
    ]
    within = edit("ttft_p95_ms: 500", "ttft_p95_ms: 100")
    assert replicas_max(within) == [
        "bp.yaml:21:29: warning: models.chat.replicas.max: at the central estimate of the "
        "±30% roofline band no batch meets the SLO, nor at its pessimistic end: replicas.max "
        "8 carries the peak of 4 requests/s only if the optimistic end holds (2 replicas); "
        "measure one replica at 6.08 requests/s (scripts/measure/measure_capacity.py runs vLLM's "
        "own benchmark) before relying on the estimate, or leave more room in replicas.max"
    ]


def test_the_warning_says_which_end_of_the_band_is_short() -> None:
    measure = (
        "measure one replica at {} requests/s (scripts/measure/measure_capacity.py runs vLLM's own "
        "benchmark) before relying on the estimate, or leave more room in replicas.max"
    )
    central = edit("traffic: {peak_rps: 4,", "traffic: {peak_rps: 28,")
    central = edit("ttft_p95_ms: 500", "ttft_p95_ms: 120", central)
    assert replicas_max(central) == [
        "bp.yaml:21:29: warning: models.chat.replicas.max: the peak of 28 requests/s needs 10 "
        "replicas at the central estimate of the ±30% roofline band (3.46 requests/s each) "
        "and at its pessimistic end no batch meets the SLO: replicas.max 8 carries it only if "
        "the optimistic end holds (4 replicas); " + measure.format("3.46")
    ]
    pessimistic = edit("traffic: {peak_rps: 4,", "traffic: {peak_rps: 10,")
    assert replicas_max(pessimistic) == [
        "bp.yaml:21:29: warning: models.chat.replicas.max: the peak of 10 requests/s needs 4 "
        "replicas at the central estimate of the ±30% roofline band (3.81 requests/s each), "
        "within replicas.max 8, but up to 20 at its pessimistic end; " + measure.format("3.81")
    ]


def test_pool_nodes_max_refuses_the_sum_of_its_models() -> None:
    text = edit("replicas: {min: 2, max: 8}", "replicas: {min: 2, max: 40}")
    text = edit("traffic: {peak_rps: 4,", "traffic: {peak_rps: 60,", text)
    found = [p for p in problems(text) if ": error: " in p]
    assert [p.split(": at their peak")[0] for p in found] == [
        "bp.yaml:14:26: error: gpu_pools.l4.nodes.max"
    ]
    assert "nodes.max is 4; raise nodes.max to " in found[0]


def test_budget_exceeded_is_an_advisory() -> None:
    text = edit(
        "    slo: {p95_ms: 15}\n", "    slo: {p95_ms: 15}\n    budget: {usd_per_month: 100}\n"
    )
    (found,) = problems(text)
    assert found.startswith("bp.yaml:33:29: warning: models.ranker.budget.usd_per_month: ")
    assert "over the budget of $100" in found


def test_budget_without_a_price_or_traffic_says_so() -> None:
    text = edit(
        "    slo: {p95_ms: 15}\n", "    slo: {p95_ms: 15}\n    budget: {usd_per_month: 100}\n"
    )
    unpriced = text.replace("us-east-1", "eu-west-1")
    found = [p for p in problems(unpriced) if "budget" in p]
    assert len(found) == 1 and found[0].startswith(
        "bp.yaml:33:29: warning: models.ranker.budget.usd_per_month: the budget is not "
        "compared: no price for "
    )
    bare = edit("    traffic: {peak_rps: 3000}\n", "", text)
    assert [p for p in problems(bare) if "budget" in p] == [
        "bp.yaml:33:13: error: models.ranker.budget: the budget is compared with the cost of the "
        "capacity estimate, which needs the model's traffic; add `traffic` (peak_rps, and the "
        "tokens per request of an LLM), or remove budget"
    ]


def test_derived_autoscaling_targets_act_before_the_slo() -> None:
    env = resolve(load_text(BASE, "bp.yaml"), "stg")
    plan = planner.plan_env(env).plans["chat"]
    # The batch the plan sized to meet the SLO; vLLM admits up to max_num_seqs (256 by
    # default) into it, so nothing waits in between.
    assert plan.batch == 15
    assert env.models["chat"].autoscaling.signals == (
        Signal("concurrency", 13.0),
        Signal("ttft_p95_ms", 400.0),
    )
    assert plan.target_basis == (
        "concurrency 13: requests running plus waiting per replica; the plan's batch of 15 "
        "meets the SLO, and the HPA acts above 14.3 (the target plus its 10% tolerance), not "
        "past 15; the waiting count alone stays 0 until the running batch reaches "
        "vllm.max_num_seqs (the engine's default)",
        "ttft_p95_ms 400: 80% of slo.ttft_p95_ms 500; the HPA acts above 440 ms, before the "
        "SLO, on the p95 of the last 30 s (the alert judges the SLO itself over 2 m)",
    )


def test_derived_ttft_target_acts_by_the_slo_once_it_is_a_histogram_boundary() -> None:
    # vLLM v0.33.0 replicas export the SLO itself as a TTFT bucket boundary
    # (`vllm_buckets`): an estimated p95 above 300 ms proves the true one is, so 80% of it
    # (acting at 264 ms) is the target.
    text = edit("ttft_p95_ms: 500", "ttft_p95_ms: 300")
    env = resolve(load_text(text, "bp.yaml"), "stg")
    assert env.models["chat"].autoscaling.target_of("ttft_p95_ms") == 240.0
    basis = planner.plan_env(env).plans["chat"].target_basis[1]
    assert basis.startswith("ttft_p95_ms 240: 80% of slo.ttft_p95_ms 300; the HPA acts above 264")


def test_on_fixed_buckets_the_derived_ttft_target_acts_by_the_boundary_below_the_slo() -> None:
    # v0.10.2 has fixed bounds: 80% of 300 ms acts at 264 ms, inside its (250, 500] ms bucket,
    # where an estimated p95 may stay below 264 while the true one is past 300: act at 250.
    text = edit("ttft_p95_ms: 500", "ttft_p95_ms: 300")
    text = text.replace("\nenvironments:", "\nversions: {vllm: v0.10.2}\nenvironments:", 1)
    env = resolve(load_text(text, "bp.yaml"), "stg")
    assert env.models["chat"].autoscaling.target_of("ttft_p95_ms") == 227.0
    assert planner.plan_env(env).plans["chat"].target_basis[1] == (
        "ttft_p95_ms 227: the HPA must act by the histogram's 250 ms bucket boundary at or "
        "below slo.ttft_p95_ms 300; the HPA acts above 249.7 ms, before the SLO, on the p95 "
        "of the last 30 s (the alert judges the SLO itself over 2 m)"
    )


def test_triton_derived_queue_allows_for_the_hpa_tolerance() -> None:
    env = resolve(load_text(BASE, "bp.yaml"), "stg")
    plan = planner.plan_env(env).plans["ranker"]
    slack_s = (15 - 7.9 - 1) / 1000
    assert math.floor(plan.rps[1] * slack_s) == 12  # acted on only at 13.2: past the SLO
    assert plan.targets == (Signal("queue_depth", 11.0),)
    assert plan.target_basis == (
        "queue_depth 11: what a replica drains at 2025.32 requests/s within the SLO's slack "
        "of 6 ms (Little's law), over 1.1 (the HPA's tolerance)",
    )


def test_explicit_queue_target_above_the_derived_one_is_an_advisory() -> None:
    text = edit(
        "    slo: {p95_ms: 15}\n",
        "    slo: {p95_ms: 15}\n    autoscaling: {metric: queue_depth, target: 500}\n",
    )
    assert problems(text) == [
        "bp.yaml:33:48: warning: models.ranker.autoscaling.target: a queue of 500 per replica "
        "waits longer than the SLO allows before the HPA acts: at 2025.32 requests/s a "
        "replica drains 11 within it, and the HPA acts only 10% above its target; set the "
        "target to 11, or remove `autoscaling` to use the derived targets"
    ]


def test_llm_queue_target_that_waits_for_the_batch_limit_is_an_advisory() -> None:
    text = edit(
        "    vllm: {max_model_len: 8192, quantization: fp8, kv_cache_dtype: fp8}\n",
        "    vllm: {max_model_len: 8192, quantization: fp8, kv_cache_dtype: fp8, "
        "max_num_seqs: 48}\n    autoscaling: {metric: queue_depth, target: 1}\n",
    )
    assert problems(text) == [
        "bp.yaml:21:48: warning: models.chat.autoscaling.target: queue_depth counts only the "
        "requests beyond vllm.max_num_seqs (48): below it every request runs in the batch and "
        "none waits, past the planned batch of 15 that meets the SLO; scale on concurrency "
        "(requests running plus waiting) with target 13, or remove `autoscaling` to use the "
        "derived targets"
    ]


def test_explicit_concurrency_target_past_the_planned_batch_is_an_advisory() -> None:
    text = edit(
        "    slo: {p95_ms: 4000, ttft_p95_ms: 500, itl_p95_ms: 60}\n",
        "    slo: {p95_ms: 4000, ttft_p95_ms: 500, itl_p95_ms: 60}\n"
        "    autoscaling:\n"
        "      - {metric: concurrency, target: 20}\n"
        "      - {metric: ttft_p95_ms, target: 400}\n",
    )
    assert problems(text) == [
        "bp.yaml:24:39: warning: models.chat.autoscaling[0].target: a concurrency of 20 per "
        "replica is acted on only above 22, past the planned batch of 15 that meets the SLO; "
        "set the target to 13, or remove `autoscaling` to use the derived targets"
    ]


def _load(env, name: str) -> roofline.LlmLoad:  # type: ignore[no-untyped-def]
    from inferplane.blueprint.capacity.load import llm_load

    model = env.models[name]
    got, _ = llm_load(model, env.pool_of(model))
    assert got is not None
    return got


# --- calibration against published measurements --------------------------------------------
def _llama8b(gpu: str, **kw: float) -> roofline.LlmLoad:
    peak = gpus.PEAKS[gpu]
    return roofline.LlmLoad(
        parameters=8.03e9,
        weight_bytes=2,
        kv_bytes_per_token=32 * 8 * 128 * 2 * 2,
        kv_room_bytes=20e9,
        gpus=1,
        flops=peak.bf16_tflops * 1e12,
        bandwidth=peak.bandwidth_gb_s * 1e9,
        input_tokens=int(kw.get("input_tokens", 1024)),
        output_tokens=int(kw.get("output_tokens", 128)),
    )


def test_decode_on_a100_matches_a_published_sweep() -> None:
    # vLLM 0.23.0, Llama-3.1-8B-Instruct BF16 on one A100 40GB, 1024 in / 128 out: "decode
    # at one request per time runs at about 75 tokens/sec"
    # (https://johnmusgrave.com/p/vllm-throughput-latency-sweep-on). Tolerance 10%.
    step = roofline.at_batch(_llama8b("nvidia-a100-40gb"), 1).step_ms
    assert 1000 / step == pytest.approx(75, rel=0.10)


def test_decode_on_h100_matches_a_published_sweep() -> None:
    # vLLM 0.21.0, Llama-3.1-8B-Instruct fp16 on one H100 80GB HBM3, concurrency 1:
    # tpot_p50_ms 6.48 (https://yobitelcomm.github.io/bench/recipes/concurrency-sweep/).
    step = roofline.at_batch(_llama8b("nvidia-h100-80gb"), 1).step_ms
    assert step == pytest.approx(6.48, rel=0.10)


def test_batching_gain_to_eight_on_a100_is_within_the_band() -> None:
    # Same sweep: "Batching buys throughput almost for free up to a concurrency of 8, a 6.6x
    # gain". The roofline's gain from 1 to 8 sequences must lie within ±30% of it.
    load = _llama8b("nvidia-a100-40gb")
    gain = roofline.at_batch(load, 8).rps / roofline.at_batch(load, 1).rps
    assert gain == pytest.approx(6.6, rel=roofline.BAND)


# --- properties ------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(
    peak=st.floats(min_value=0.1, max_value=500),
    more=st.floats(min_value=1.0, max_value=10),
    rps=st.floats(min_value=0.01, max_value=100),
    zones=st.integers(min_value=1, max_value=4),
)
def test_more_traffic_never_needs_fewer_replicas(
    peak: float, more: float, rps: float, zones: int
) -> None:
    assert planner._needed(peak * more, rps, zones)[1] >= planner._needed(peak, rps, zones)[1]


@settings(max_examples=60, deadline=None)
@given(
    ttft=st.integers(min_value=50, max_value=5000),
    tighter=st.integers(min_value=1, max_value=4000),
    input_tokens=st.integers(min_value=16, max_value=6000),
    gpu=st.sampled_from(sorted(gpus.PEAKS)),
)
def test_tighter_ttft_never_allows_a_larger_batch(
    ttft: int, tighter: int, input_tokens: int, gpu: str
) -> None:
    load = dataclasses.replace(_llama8b(gpu), input_tokens=input_tokens, ttft_ms=ttft)
    strict = dataclasses.replace(load, ttft_ms=max(1, ttft - tighter))
    loose_est, strict_est = roofline.estimate(load), roofline.estimate(strict)
    loose_batch = loose_est.point.batch if loose_est.point else 0
    strict_batch = strict_est.point.batch if strict_est.point else 0
    assert strict_batch <= loose_batch


# --- tables ----------------------------------------------------------------------------------
def test_price_rows_are_dated_and_sourced() -> None:
    compiled = date.fromisoformat(prices.TABLE_DATE)
    for (instance, region), row in prices.PRICES.items():
        assert row.usd_per_hour > 0, instance
        assert row.source.startswith("https://raw.githubusercontent.com/"), instance
        assert date.fromisoformat(row.read_on) <= compiled, instance
        assert region.count("-") >= 1
        # a row read on the compilation day has a source that states no date: it says so
        if row.basis.startswith("derived: "):
            # N1 with T4s: a machine type row plus a T4 row, each with its own list
            assert instance.startswith("n1-standard-"), instance
            assert row.source == f"{prices.CYCLENERD_GCP_2026} + {prices.SKYPILOT_GCP}"
            assert " x T4 $" in row.basis and "read on 2026-12-05" in row.basis
        elif row.source.startswith("https://raw.githubusercontent.com/skypilot-org/"):
            assert row.basis == f"listed; the catalog states no date, read on {row.read_on}"
        else:
            assert row.basis == "listed", instance


def test_price_rows_carry_the_figure_and_date_of_their_source() -> None:
    # the bundled blueprint's node: Cyclenerd's pricing.yml, generated Thu Mar  6 2025
    assert prices.price("g2-standard-8", "us-central1") == prices.Price(
        0.853624271, prices.CYCLENERD_GCP, "2025-03-06"
    )
    # data-receipts' hyperscalers.json, "retrieved": "2026-11-09", after the June 2025 P5 cut
    assert prices.price("p5.48xlarge", "us-east-1") == prices.Price(
        55.04, prices.DATA_RECEIPTS, "2026-11-09"
    )
    assert prices.price("g6.2xlarge", "us-east-1") == prices.Price(
        0.9776,
        prices.SKYPILOT_AWS,
        "2026-12-01",
        "listed; the catalog states no date, read on 2026-12-01",
    )
    # no source read for a size the catalog does not use: no price rather than a guess
    assert prices.price("g2-standard-4", "us-central1") is None


def test_every_catalog_gpu_has_cited_peaks() -> None:
    from inferplane.blueprint.catalog import GPUS

    assert set(gpus.PEAKS) == set(GPUS)
    for row in gpus.PEAKS.values():
        assert row.source.startswith("https://www.nvidia.com/")
        assert row.fp8_tflops is None or row.fp8_tflops == pytest.approx(
            2 * row.bf16_tflops, rel=0.02
        )


def test_profile_csv_header_is_required() -> None:
    with pytest.raises(ValueError, match="line 1: the header must be `batch_size,p95_ms`"):
        profile.read_csv("batch,latency\n1,2\n")


# --- the bundled LLM blueprint ----------------------------------------------------------------
def test_bundled_llm_blueprint_plans_every_model() -> None:
    doc, _ = load_blueprint(LLM_BLUEPRINT)
    plans = planner.plan_env(resolve(doc, "prod")).plans
    assert sorted(plans) == ["chat-70b", "chat-8b", "toxicity"]
    assert all(p.cost is not None for p in plans.values())
    assert plans["toxicity"].source == "profile"
    assert plans["chat-8b"].source == "roofline"


def test_bundled_llm_blueprint_at_five_times_its_traffic_fails_at_replicas_max(
    tmp_path: Path,
) -> None:
    text = LLM_BLUEPRINT.read_text()
    assert "      peak_rps: 8\n" in text
    bp = tmp_path / "llm-serving.yaml"
    bp.write_text(text.replace("      peak_rps: 8\n", "      peak_rps: 40\n"))
    with pytest.raises(BlueprintError) as err:
        load_blueprint(bp)
    found = [d.format() for d in err.value.diagnostics]
    # prod serves one zone, local two: each environment needs its own number
    assert [f.split("; ")[0].split(": even ")[1] for f in found] == [
        "at its optimistic end (6.55 requests/s a replica) the peak needs 7 replicas (7 per "
        "zone x 1 zone), and 11 at the central estimate (3.81 requests/s each)",
        "at its optimistic end (6.55 requests/s a replica) the peak needs 8 replicas (4 per "
        "zone x 2 zones), and 12 at the central estimate (3.81 requests/s each)",
    ]
    assert found[0].startswith(
        f"{bp}:119:29: error: models.chat-8b.replicas.max: replicas.max 6 cannot carry the "
        "peak of 40 requests/s within the SLO under any estimate of the ±30% roofline band"
    )


def test_replicas_follow_the_zone_rule() -> None:
    env = resolve(load_text(BASE, "bp.yaml"), "stg")
    plan = planner.plan_env(env).plans["chat"]
    # 4 requests/s over two zones: each zone needs ceil(2 / rps) replicas of its own
    assert plan.per_zone == math.ceil(2 / plan.rps[1])
    assert plan.replicas == max(2, 2 * plan.per_zone)


# --- aiconfigurator ----------------------------------------------------------------------------
def test_nearest_data_version() -> None:
    from inferplane.blueprint.capacity.aiconfigurator import nearest_version

    assert nearest_version(["0.14.0", "0.24.0"], "v0.10.2") == "0.14.0"
    assert nearest_version(["0.14.0", "0.24.0"], "v0.33.0") == "0.24.0"
    assert nearest_version([], "v0.10.2") is None


# aiconfigurator-core 0.12.0, h100_sxm with its vLLM 0.24.0 data, meta-llama/Meta-Llama-3.1-8B
# (EngineHandle.compile(..., backend_version="0.24.0", tp_size=1)): predict_prefill_latency(1,
# 1024) = 22.1 ms and predict_decode_latency(1, 1024, 128) = 785.3 ms.
AIC_H100_PREFILL_1024_MS = 22.1
AIC_H100_DECODE_STEP_MS = 785.3 / 128


def test_roofline_decode_matches_aiconfigurator_on_h100() -> None:
    step = roofline.at_batch(_llama8b("nvidia-h100-80gb"), 1).step_ms
    assert step == pytest.approx(AIC_H100_DECODE_STEP_MS, rel=0.10)


def test_roofline_prefill_is_within_its_band_of_aiconfigurator_on_h100() -> None:
    prefill = roofline.at_batch(_llama8b("nvidia-h100-80gb"), 1).prefill_ms
    assert prefill == pytest.approx(AIC_H100_PREFILL_1024_MS, rel=roofline.BAND)


@pytest.mark.needs_tools
def test_aiconfigurator_replaces_the_roofline_where_it_has_data() -> None:
    if os.environ.get("CI") != "true":  # CI installs the `capacity` extra (.ci/run)
        pytest.importorskip(
            "aiconfigurator_core", reason="the optional `capacity` extra is not installed"
        )
    text = edit("gpu: nvidia-l4", "gpu: nvidia-h100-80gb")
    text = edit(
        "vllm: {max_model_len: 8192, quantization: fp8, kv_cache_dtype: fp8}",
        "vllm: {max_model_len: 8192}",
        text,
    )
    env = resolve(load_text(text, "bp.yaml"), "stg")
    env_plan = planner.plan_env(env)
    plan = env_plan.plans["chat"]
    assert (plan.source, plan.band) == ("aiconfigurator", 0.15)
    assert [p.message for p in env_plan.problems if p.path == ("models", "chat", "traffic")] == [
        "the estimate comes from aiconfigurator-core 0.12.0 (h100_sxm, vllm 0.24.0 data for "
        f"meta-llama/Meta-Llama-3.1-8B), and the model runs vLLM {defaults.VERSIONS['vllm']}: "
        "kernels and scheduling differ between versions"
    ]


def test_a_profile_file_in_a_symlink_loop_is_a_located_error(tmp_path: Path) -> None:
    (tmp_path / "loop1.csv").symlink_to("loop2.csv")
    (tmp_path / "loop2.csv").symlink_to("loop1.csv")
    text = BASE.split("    profile:\n")[0] + "    profile: {file: loop1.csv}\n"
    bp = tmp_path / "bp.yaml"
    bp.write_text(text)
    with pytest.raises(BlueprintError) as err:
        load_blueprint(bp)
    assert [d.format() for d in err.value.diagnostics] == [
        f"{bp}:34:21: error: models.ranker.profile.file: loop1.csv is a loop of symbolic "
        "links; give a regular CSV file in the blueprint's folder (relative to it)"
    ]
