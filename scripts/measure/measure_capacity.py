"""Measure one replica of a vLLM model at its planned rate and compare with the estimate.

On a machine with a GPU of the model's pool and vLLM installed, with the model served on
it by the planned settings (``vllm serve <model dir> --max-num-seqs <planned batch> ...``;
`inferplane plan` prints the batch), run::

    python scripts/measure/measure_capacity.py BLUEPRINT --env ENV --model MODEL \\
        --tokenizer <model dir> [--base-url http://127.0.0.1:8000] [--prompts 200]

It sends the model's traffic shape (``traffic.input_tokens`` / ``output_tokens``, random
prompts) at the rate one replica is planned to carry, with vLLM's own benchmark
(``vllm bench serve``), and prints the measured TTFT and ITL p95 next to the estimate's.
CI never runs it: it needs a GPU and the weights.

The benchmark's JSON result names its percentiles ``p<percentile>_<metric>_ms``
(vllm-project/vllm ``vllm/benchmarks/serve.py``, v0.31.0 line 1402:
``result[f"p{p_word}_{metric_attribute_name}_ms"] = value``) and its completed rate
``request_throughput``; the flags are those of ``vllm bench serve --help``
(https://docs.vllm.ai/en/latest/cli/bench/serve.html).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from inferplane.blueprint.capacity import planner, roofline
from inferplane.blueprint.capacity.load import llm_load
from inferplane.blueprint.resolution.resolve import resolve_file


def bench_command(
    base_url: str,
    tokenizer: str,
    served: str,
    load: roofline.LlmLoad,
    rate: float,
    prompts: int,
    out: Path,
) -> list[str]:
    return [
        "vllm", "bench", "serve",
        "--base-url", base_url,
        "--model", served,
        "--tokenizer", tokenizer,
        "--dataset-name", "random",
        "--random-input-len", str(load.input_tokens),
        "--random-output-len", str(load.output_tokens),
        "--ignore-eos",
        "--request-rate", f"{rate:.3f}",
        "--num-prompts", str(prompts),
        "--percentile-metrics", "ttft,itl,e2el",
        "--metric-percentiles", "95",
        "--save-result",
        "--result-dir", str(out.parent),
        "--result-filename", out.name,
    ]  # fmt: skip


def report(result: dict[str, Any], point: roofline.LlmPoint, rate: float) -> list[str]:
    """Measured against estimated, one line per metric, with the ratio."""
    rows = [
        ("TTFT p95 ms", result.get("p95_ttft_ms"), point.ttft_ms),
        ("ITL p95 ms", result.get("p95_itl_ms"), point.itl_ms),
        ("request p95 ms", result.get("p95_e2el_ms"), point.e2e_ms),
        ("requests/s", result.get("request_throughput"), rate),
    ]
    lines = [f"{'metric':<16}{'measured':>12}{'estimated':>12}{'ratio':>8}"]
    for name, measured, estimated in rows:
        if measured is None:
            lines.append(f"{name:<16}{'-':>12}{estimated:>12.1f}")
            continue
        ratio = measured / estimated if estimated else float("nan")
        lines.append(f"{name:<16}{measured:>12.1f}{estimated:>12.1f}{ratio:>8.2f}")
    band = roofline.BAND
    lines.append(
        f"the estimate's band is ±{band:.0%}: a ratio outside {1 - band:.2f}-"
        f"{1 + band:.2f} means the roofline misjudges this model on this GPU"
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("blueprint")
    parser.add_argument("--env", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--tokenizer", required=True, help="the local model directory")
    parser.add_argument("--base-url", default="http://127.0.0.1:8000")
    parser.add_argument(
        "--served-model-name",
        help="the name the server answers to (default: vLLM's, the model path)",
    )
    parser.add_argument("--prompts", type=int, default=200)
    args = parser.parse_args(argv)
    env = resolve_file(args.blueprint, args.env)
    model = env.models.get(args.model)
    if model is None or model.server != "vllm":
        parser.error(f"{args.model} is not a vLLM model of environment {args.env}")
    load, why = llm_load(model, env.pool_of(model))
    plan = planner.plan_env(env).plans.get(args.model)
    if load is None or plan is None:
        parser.error(f"{args.model} has no capacity estimate: {why or 'no traffic'}")
    point = roofline.at_batch(load, plan.batch)
    rate = plan.rps[1]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        served = args.served_model_name or args.tokenizer
        cmd = bench_command(args.base_url, args.tokenizer, served, load, rate, args.prompts, out)
        print("$ " + " ".join(cmd), flush=True)
        # 200 prompts at a replica's planned rate take minutes; three hours is a hung server
        done = subprocess.run(cmd, check=False, timeout=3 * 3600)
        if done.returncode != 0 or not out.exists():
            print(f"vllm bench serve failed (exit {done.returncode})", file=sys.stderr)
            return 1
        result = json.loads(out.read_text())
    for line in report(result, point, rate):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
