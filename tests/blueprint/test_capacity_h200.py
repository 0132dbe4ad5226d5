"""The roofline against real hardware: every row of the H200 kernel-floor table
(``scripts/calibration/h200``: each model's real shapes with random weights, all layers in
one CUDA graph) is the floor under any engine, so the estimate is never faster than it, and
every row lies inside the estimate's band. `roofline.LAYER_TIME_S` and the H200's kernel
bandwidth are fitted on ``results-sizes.json`` alone; ``results-llama-3.1-8b.json`` (another
run, another model) is held out of the fit and tests it."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from inferplane.blueprint import llm_catalog
from inferplane.blueprint.capacity import gpus, planner, roofline
from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.resolution.resolve import resolve

ROOT = Path(__file__).resolve().parents[2]
H200 = ROOT / "scripts" / "calibration" / "h200"
REPOS = {
    "llama-3.2-1b": "meta-llama/Llama-3.2-1B",
    "qwen2.5-7b": "Qwen/Qwen2.5-7B",
    "llama-3.1-8b": "meta-llama/Llama-3.1-8B",
    "llama-3.1-70b": "meta-llama/Llama-3.1-70B",
}


def _shapes() -> dict[str, tuple[int, ...]]:
    """hidden, intermediate, layers measured, heads, kv heads, head dim, vocab, layers real:
    as the scripts built each model."""
    tree = ast.parse((H200 / "h200_sizes.py").read_text())
    sizes = next(
        n.value
        for n in tree.body
        if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "SHAPES"
    )
    out = {k.split(" (")[0]: v for k, v in ast.literal_eval(sizes).items()}
    calibrate = (H200 / "h200_calibrate.py").read_text()
    line = next(x for x in calibrate.splitlines() if x.startswith("H, I, L, NH, NKV, HD, V ="))
    h, i, layers, nh, nkv, hd, v = ast.literal_eval(line.split("=", 1)[1].strip())
    out["llama-3.1-8b"] = (h, i, layers, nh, nkv, hd, v, layers)
    return out


SHAPES = _shapes()


def _parameters(model: str) -> float:
    """The planner's own figure where its table has the model; else what the script built
    (every layer's matrices and the LM head)."""
    facts = llm_catalog.lookup(REPOS[model]) if model in REPOS else None
    if facts is not None:
        return facts.parameters
    h, i, _, nh, nkv, hd, v, layers = SHAPES[model]
    return layers * (h * (nh + 2 * nkv) * hd + nh * hd * h + 3 * h * i) + v * h


def _rows(name: str) -> list[tuple[str, str, int, int, float]]:
    """(model, decode|prefill, batch or prompt tokens, context, measured ms)."""
    data = json.loads((H200 / name).read_text())
    out = []
    if isinstance(data, dict):  # results-llama-3.1-8b.json
        for r in data["figures"]:
            if r["kind"] == "decode":
                out.append(("llama-3.1-8b", "decode", r["batch"], r["context"], r["step_ms"]))
            elif r["kind"] == "prefill":
                out.append(("llama-3.1-8b", "prefill", r["tokens"], 0, r["ms"]))
        return out
    for r in data:
        model = r["model"].split(" (")[0]
        if "batch" in r:
            out.append((model, "decode", r["batch"], r["context"], r["step_ms_scaled_to_real"]))
        else:
            out.append((model, "prefill", r["prefill_tokens"], 0, r["ms_scaled_to_real"]))
    return out


FIT = _rows("results-sizes.json")
HELD_OUT = _rows("results-llama-3.1-8b.json")


def _estimate_ms(row: tuple[str, str, int, int, float]) -> float:
    model, kind, n, context, _ = row
    _, _, _, _, nkv, hd, _, layers = SHAPES[model]
    peak = gpus.PEAKS["nvidia-h200"]
    load = roofline.LlmLoad(
        parameters=_parameters(model),
        weight_bytes=2,
        kv_bytes_per_token=layers * 2 * nkv * hd * 2,
        kv_room_bytes=1e12,
        gpus=1,
        flops=peak.bf16_tflops * 1e12,
        bandwidth=peak.bandwidth_gb_s * 1e9,
        # A decode row holds `context` tokens per sequence: input + output / 2.
        input_tokens=n if kind == "prefill" else context - 1,
        output_tokens=2,
        layers=layers,
        kernel=gpus.KERNEL_FLOORS["nvidia-h200"],
    )
    point = roofline.at_batch(load, n if kind == "decode" else 1)
    return point.step_ms if kind == "decode" else point.prefill_ms


def _ids(rows: list[tuple[str, str, int, int, float]]) -> list[str]:
    return [f"{m}-{k}-{n}-{c}" for m, k, n, c, _ in rows]


@pytest.mark.parametrize("row", FIT + HELD_OUT, ids=_ids(FIT + HELD_OUT))
def test_the_estimate_is_never_faster_than_the_h200_and_holds_it_in_its_band(
    row: tuple[str, str, int, int, float],
) -> None:
    measured = row[4]
    estimate = _estimate_ms(row)
    floor = gpus.KERNEL_FLOORS["nvidia-h200"]
    assert estimate >= measured  # no engine beats the kernels
    # The band's optimistic end runs every rate 1 + fast_band faster: the row is inside it.
    assert estimate / (1 + floor.fast_band) <= measured


def test_the_held_out_run_was_not_needed_to_fit() -> None:
    """The per-layer time is the smallest that leaves no fitted row faster: a microsecond
    less and two are (qwen2.5-1.5b's 1,024-token prefill, llama-3.1-70b at batch 128)."""
    less = roofline.LAYER_TIME_S - 1e-6
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(roofline, "LAYER_TIME_S", less)
        faster = [r[:3] for r in FIT if _estimate_ms(r) < r[4]]
    assert faster == [("qwen2.5-1.5b", "prefill", 1024), ("llama-3.1-70b", "decode", 128)]


def test_short_prompts_read_the_weights_once() -> None:
    # llama-3.1-8b, 128 tokens: 3.5 ms of FLOPs at 60% of the peak, 6.65 ms measured.
    row = next(r for r in HELD_OUT if r[1:3] == ("prefill", 128))
    without = roofline.LlmLoad(
        parameters=8.03e9,
        weight_bytes=2,
        kv_bytes_per_token=1,
        kv_room_bytes=1e12,
        gpus=1,
        flops=989e12,
        bandwidth=4800e9,
        input_tokens=128,
        output_tokens=2,
    )
    assert roofline.at_batch(without, 1).prefill_ms == pytest.approx(
        8.03e9 * 2 / (4800e9 * roofline.DECODE_BANDWIDTH_EFFICIENCY) * 1e3
    )
    assert _estimate_ms(row) >= row[4]


def test_small_models_keep_a_per_layer_floor_on_every_gpu() -> None:
    # llama-3.2-1b on an L4 (no calibration): 16 layers never step in under 16 x 49 us.
    load = roofline.LlmLoad(
        parameters=1.24e9,
        weight_bytes=1,
        kv_bytes_per_token=1,
        kv_room_bytes=1e12,
        gpus=1,
        flops=1e18,
        bandwidth=1e15,
        input_tokens=100,
        output_tokens=2,
        layers=16,
    )
    assert roofline.at_batch(load, 1).step_ms == pytest.approx(16 * 0.049)


H200_PLAN = """\
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
  g:
    gpu: nvidia-h200
    gpus_per_node: 8
    nodes: {min: 1, max: 2}
models:
  chat:
    server: vllm
    source: hf://meta-llama/Llama-3.1-8B-Instruct@0e9e39f249a16976918f6564b8830bc894c89659
    pool: g
    vllm: {max_model_len: 8192}
    replicas: {min: 1, max: 8}
    slo: {p95_ms: 20000, ttft_p95_ms: 2000, itl_p95_ms: 100}
    traffic: {peak_rps: 4, input_tokens: 1200, output_tokens: 200}
    secrets: {hf_token: {from_env: HF_TOKEN}}
"""


def test_the_plan_says_which_gpu_is_calibrated() -> None:
    plan = planner.plan_env(resolve(load_text(H200_PLAN, "bp.yaml"), "stg")).plans["chat"]
    if plan.source == "roofline":
        assert plan.band_text == "-30%/+43%"
        assert plan.calibration.startswith("never faster than the kernel floor measured on")
    text = H200_PLAN.replace("gpu: nvidia-h200", "gpu: nvidia-h100-80gb")
    plan = planner.plan_env(resolve(load_text(text, "bp.yaml"), "stg")).plans["chat"]
    if plan.source == "roofline":
        assert plan.band_text == "±30%"
        assert plan.calibration.startswith("no kernel floor is measured on nvidia-h100-80gb")
