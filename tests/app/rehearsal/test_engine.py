"""The stand-in replica's engine: the planner's latencies, continuous batching up to the
cap, a queue beyond it, `--slower`, and vLLM's histograms with the pinned buckets."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from inferplane.app.rehearsal import engine
from inferplane.blueprint.capacity import roofline
from inferplane.blueprint.resolution.resolve import load_blueprint, resolve

ROOT = Path(__file__).resolve().parents[3]
VLLM = Path.home() / ".cache" / "inferplane" / "vllm" / "0.33.0" / "vllm"


def chat_engine(slower: float = 1.0, cap: int | None = None) -> engine.ReplicaEngine:
    doc, _ = load_blueprint(ROOT / "blueprints" / "chat-minimal.yaml")
    env = resolve(doc, "local")
    model = env.models["chat"]
    got = engine.ReplicaEngine.of(
        model, env.pool_of(model), input_tokens=512, output_tokens=64, slower=slower
    )
    if cap is not None:
        got.cap = cap
    return got


def run_until_idle(e: engine.ReplicaEngine, start: float = 0.0) -> list[engine.Finished]:
    done: list[engine.Finished] = []
    now = start
    while (nxt := e.next_event()) is not None:
        now = nxt
        done += e.advance(now)
    return done


def test_one_request_alone_sees_the_planners_latency_at_batch_one() -> None:
    e = chat_engine()
    e.submit(0.0)
    (done,) = run_until_idle(e)
    p = roofline.at_batch(e.load, 1)
    # First token after the prefill and one iteration; 63 more iterations after it.
    assert done.ttft_s == pytest.approx((p.prefill_ms + p.itl_ms) / 1000, rel=1e-9)
    assert done.e2e_s == pytest.approx(p.e2e_ms / 1000, rel=1e-9)
    assert done.tokens == 64


def test_the_cap_is_the_engines_default_on_an_l4_and_the_kv_cache_bounds_it() -> None:
    e = chat_engine()
    # nvidia-l4 has 24 GiB: vLLM's default for small GPUs is 256, and the KV cache a 7B
    # model leaves on it holds fewer sequences of 576 tokens.
    kv = roofline.estimate(e.load).kv_batch
    assert e.cap == min(256, kv)
    assert engine.default_max_num_seqs(24, "nvidia-l4") == 256
    assert engine.default_max_num_seqs(80, "nvidia-a100-80gb") == 256
    assert engine.default_max_num_seqs(80, "nvidia-h100-80gb") == 1024
    assert engine.default_max_num_seqs(180, "nvidia-b200") == 1024


def test_beyond_the_cap_requests_wait_in_a_queue_and_their_ttft_grows() -> None:
    e = chat_engine(cap=4)
    for _ in range(10):
        e.submit(0.0)
    assert e.gauges() == (6, 4)
    done = run_until_idle(e)
    assert len(done) == 10 and e.gauges() == (0, 0)
    ttfts = sorted(d.ttft_s for d in done)
    # The first four start at once; the next four wait for one of them to finish, the
    # last two for two.
    first = min(d.e2e_s for d in done)
    assert max(ttfts[:4]) < first < min(ttfts[4:])
    assert min(ttfts[8:]) > 2 * first
    assert e.histograms[engine.TTFT].count == 10
    assert e.histograms[engine.E2E].count == 10
    assert e.histograms[engine.ITL].count == 10 * 63


def test_a_bigger_batch_is_slower_per_token() -> None:
    alone, busy = chat_engine(), chat_engine()
    alone.submit(0.0)
    for _ in range(32):
        busy.submit(0.0)
    one = run_until_idle(alone)[0]
    many = run_until_idle(busy)[0]
    assert many.e2e_s > one.e2e_s


def test_slower_divides_every_rate() -> None:
    base, slow = chat_engine(), chat_engine(slower=1.3)
    base.submit(0.0)
    slow.submit(0.0)
    a, b = run_until_idle(base)[0], run_until_idle(slow)[0]
    assert b.e2e_s == pytest.approx(a.e2e_s * 1.3, rel=1e-6)
    with pytest.raises(ValueError, match=r"--slower is a factor from 1 to 10, not 0\.5"):
        chat_engine(slower=0.5)


def test_the_exposition_is_vllms_families_labels_and_buckets_marked_stand_in() -> None:
    e = chat_engine()
    e.submit(0.0)
    run_until_idle(e)
    text = e.exposition()
    assert 'inferplane_standin_info{model_name="chat",engine="0",stand_in="true",slower="1"} 1' in (
        text
    )
    assert 'vllm:num_requests_waiting{model_name="chat",engine="0"} 0' in text
    les = re.findall(r'vllm:time_to_first_token_seconds_bucket\{[^}]*le="([^"]+)"\}', text)
    assert les[:3] == ["0.001", "0.005", "0.01"] and les[-1] == "+Inf"
    # The release's bounds with chat-minimal's slo.ttft_p95_ms of 400 ms added, as its pods
    # are told (`targets.histogram_buckets`).
    assert len(les) == len(engine.VLLM_BUCKETS[engine.TTFT]) + 2
    assert les[les.index("0.25") : les.index("0.25") + 3] == ["0.25", "0.4", "0.5"]
    assert 'vllm:e2e_request_latency_seconds_count{model_name="chat",engine="0"} 1' in text


def test_a_histogram_counts_a_value_on_its_bound_in_that_bucket() -> None:
    h = engine.Histogram((0.1, 0.5))
    for v in (0.1, 0.2, 0.5, 9):
        h.observe(v)
    assert h.cumulative() == [("0.1", 1), ("0.5", 3), ("+Inf", 4)]


@pytest.mark.needs_tools
def test_the_buckets_are_the_pinned_releases() -> None:
    if not VLLM.is_dir():
        message = (
            f"the vLLM v0.33.0 wheel is not unpacked at {VLLM}: run scripts/facts/vllm_wheels.py"
        )
        if os.environ.get("CI") == "true":  # CI fetches the wheels first
            pytest.fail(message)
        pytest.skip(message)
    ns: dict[str, object] = {}
    source = (VLLM / "v1" / "metrics" / "buckets.py").read_text()
    exec(compile(source.split("_STATIC_FAMILY_DEFAULTS")[0], "buckets.py", "exec"), ns)
    assert ns["REQUEST_LATENCY_BUCKETS"] == engine.VLLM_BUCKETS[engine.E2E]
    assert ns["TIME_TO_FIRST_TOKEN_BUCKETS"] == engine.VLLM_BUCKETS[engine.TTFT]
    assert ns["INTER_TOKEN_LATENCY_BUCKETS"] == engine.VLLM_BUCKETS[engine.ITL]
