"""The capacity block of `inferplane plan` and the derived autoscaling targets, as a user
sees them: in the printed plan, in the ScaledObject manifest and in `inferplane diff`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import inprocess
import pytest

ROOT = Path(__file__).resolve().parents[2]
LLM = ROOT / "blueprints" / "llm-serving.yaml"
SCALED = "kubernetes:keda.sh/v1alpha1:ScaledObject"


def inferplane(*args: str) -> subprocess.CompletedProcess[str]:
    return inprocess.run(*args, cwd=ROOT)


# Every test here reads the plans of one module fixture: one worker makes them once.
pytestmark = pytest.mark.xdist_group("plan-capacity-cli")


@pytest.fixture(scope="session")
def plans(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """The bundled LLM blueprint's prod plan, and the plan with chat-8b's prompts shorter
    (so the planned batch, and with it the concurrency target, changes), and the first
    plan's output."""
    tmp = tmp_path_factory.mktemp("capacity")
    text = LLM.read_text(encoding="utf-8")
    edited = text.replace("      input_tokens: 1200\n", "      input_tokens: 300\n", 1)
    assert edited != text
    (tmp / "edited.yaml").write_text(edited, encoding="utf-8")
    old, new = tmp / "old", tmp / "new"
    first = inferplane("plan", str(LLM), "--env", "prod", "--out", str(old))
    assert first.returncode == 0, first.stderr
    second = inferplane("plan", str(tmp / "edited.yaml"), "--env", "prod", "--out", str(new))
    assert second.returncode == 0, second.stderr
    return old, new, first.stdout


def _scaled_object(plan_dir: Path, model: str) -> dict:  # type: ignore[type-arg]
    doc = json.loads((plan_dir / "plan.json").read_text())
    return next(
        r
        for r in doc["resources"]
        if r["type"] == SCALED and r["name"] == f"llm-serving-prod-{model}-autoscaling-scaledobject"
    )


def test_plan_prints_a_capacity_block_with_cost(plans: tuple[Path, Path, str]) -> None:
    stdout = plans[2]
    assert "Capacity at peak traffic (prices of 2026-12-05, on-demand):" in stdout
    lines = [line.strip() for line in stdout.splitlines()]
    chat = next(line for line in lines if line.startswith("capacity chat-8b: "))
    assert chat.startswith("capacity chat-8b: 8 requests/s at peak; one replica carries 3.81 ")
    at = lines.index("autoscaling (derived): concurrency 13, ttft_p95_ms 400")
    assert lines[at + 1 : at + 3] == [
        "concurrency 13: requests running plus waiting per replica; the plan's batch of 15 "
        "meets the SLO, and the HPA acts above 14.3 (the target plus its 10% tolerance), not "
        "past 15; the waiting count alone stays 0 until the running batch reaches "
        "vllm.max_num_seqs 24",
        "ttft_p95_ms 400: 80% of slo.ttft_p95_ms 500; the HPA acts above 440 ms, before the "
        "SLO, on the p95 of the last 30 s (the alert judges the SLO itself over 2 m)",
    ]
    # Whole nodes: pool l4 keeps 3 (two warm replicas and the spare GPU), 4 at the peak;
    # and a third of the one e2-standard-4 system node ($0.134/h / 3 = $0.0447/h).
    chat_cost = "cost: $2.61/h at the floor, $3.46/h at peak, $2,525/month "
    index, cost = next((i, line) for i, line in enumerate(lines) if line.startswith(chat_cost))
    assert lines[index + 1] == (
        "counts whole nodes of pool l4: 3 x g2-standard-8 per zone x 1 zone at the floor, 4 "
        "at peak (nodes.min, spare_gpus included); with 1/3 of 1 x e2-standard-4 system "
        "nodes at $0.134/h (https://raw.githubusercontent.com/Cyclenerd/google-cloud-pricing-"
        "cost-calculator/0166a59ebba7c36f2cc8c931d9f258dcebc44776/pricing.yml, 2025-03-06); "
        "not counted: the control plane, disks and traffic; missing: no price for the model's "
        "load balancer in us-central1: the built-in table has no row for it; the platform "
        "adds one in its policy config under prices (instance_type: load-balancer, region: "
        "us-central1, usd_per_hour, source, read_on)"
    )
    assert cost.endswith(
        "g2-standard-8 in us-central1 $0.85/h (listed, https://raw.githubusercontent.com/"
        "Cyclenerd/google-cloud-pricing-cost-calculator/0166a59ebba7c36f2cc8c931d9f258dcebc44776"
        "/pricing.yml, dated 2025-03-06)"
    )


def test_plan_json_carries_the_capacity(plans: tuple[Path, Path, str]) -> None:
    doc = json.loads((plans[0] / "plan.json").read_text())
    capacity = doc["models"]["chat-8b"]["capacity"]
    assert capacity["replicas"]["at_peak"] == 3
    assert capacity["autoscaling"] == {
        "derived": True,
        "targets": {"concurrency": 13.0, "ttft_p95_ms": 400.0},
        "basis": {
            "concurrency": capacity["autoscaling"]["basis"]["concurrency"],
            "ttft_p95_ms": capacity["autoscaling"]["basis"]["ttft_p95_ms"],
        },
    }
    assert capacity["autoscaling"]["basis"]["concurrency"].startswith("concurrency 13: ")
    assert capacity["cost"]["price_table_date"] == "2026-12-05"
    assert capacity["cost"]["price_read_on"] == "2025-03-06"


def test_derived_targets_reach_the_scaled_object(plans: tuple[Path, Path, str]) -> None:
    triggers = _scaled_object(plans[0], "chat-8b")["inputs"]["spec"]["triggers"]
    assert [(t["name"], t["metricType"], t["metadata"]["threshold"]) for t in triggers] == [
        ("concurrency", "AverageValue", "13"),
        ("ttft-p95-ms", "Value", "400"),
    ]
    assert triggers[0]["metadata"]["query"] == (
        'sum(vllm:num_requests_running{namespace="llm-serving", model_name="chat-8b"}) + '
        'sum(vllm:num_requests_waiting{namespace="llm-serving", model_name="chat-8b"})'
    )
    assert "[30s]" in triggers[1]["metadata"]["query"]


def test_diff_shows_the_derived_target_change(plans: tuple[Path, Path, str]) -> None:
    old, new, _ = plans
    new_threshold = _scaled_object(new, "chat-8b")["inputs"]["spec"]["triggers"][0]["metadata"][
        "threshold"
    ]
    assert new_threshold != "13"
    run = inferplane("diff", str(old), str(new))
    assert run.returncode == 0, run.stderr
    assert f'inputs.spec.triggers[0].metadata.threshold: "13" → "{new_threshold}"' in run.stdout


def test_check_fails_at_replicas_max_when_the_traffic_is_five_times_higher(
    tmp_path: Path,
) -> None:
    text = LLM.read_text(encoding="utf-8")
    assert "      peak_rps: 8\n" in text
    blueprint = tmp_path / "llm-serving.yaml"
    blueprint.write_text(text.replace("      peak_rps: 8\n", "      peak_rps: 40\n"))
    run = inferplane("check", str(blueprint))
    assert run.returncode == 2, run.stdout + run.stderr
    assert (
        f"{blueprint}:119:29: error: models.chat-8b.replicas.max: replicas.max 6 cannot carry "
        "the peak of 40 requests/s within the SLO under any estimate of the ±30% roofline "
        "band: even at its optimistic end (6.55 requests/s a replica) the peak needs 7 "
        "replicas (7 per zone x 1 zone), and 11 at the central estimate (3.81 requests/s "
        "each); raise replicas.max to 11"
    ) in run.stdout + run.stderr
