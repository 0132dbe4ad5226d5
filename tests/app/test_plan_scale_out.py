"""`inferplane plan` prints each model's scale-out budget and writes it to plan.json."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from inferplane.app import plan

# The reference keeps a spare GPU per zone on l4 (no node, no image pull for its realtime
# models) and none on the batch pool h100.
CHAT_LINE = (
    "  scale-out chat: 158 s (weights 81 s, engine_load 47 s, hpa_reaction 15 s, "
    "readiness 10 s, prometheus_scrape 5 s); levers compile_cache"
)


def _args(blueprint: Path, out: Path, *extra: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    plan.add_arguments(parser)
    return parser.parse_args([str(blueprint), "--env", "prod", "--out", str(out), *extra])


def test_plan_prints_and_writes_every_models_budget(
    reference_blueprint: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "plan"
    assert plan.run(_args(reference_blueprint, out)) == 0
    printed = capsys.readouterr().out.splitlines()
    start = printed.index("Scale-out budget (traffic spike to one more ready replica):")
    block = printed[start + 1 : printed.index("", start)]
    # Under each model's line: its bound and levers, then a row per part in waiting order.
    assert block[1:3] == [
        "    158 s over 120 s (the platform's bound); levers compile_cache (free) "
        "[no scale_out stated]",
        "      prometheus_scrape      5 s  ServiceMonitor scrape interval",
    ]
    assert "      engine_load           47 s  [compile_cache] 16.06 GB at 6.4 GB/s + 44 s " in (
        "\n".join(block)
    )
    assert [line for line in block if line.startswith("  scale-out")] == [
        CHAT_LINE,
        "  scale-out nightly-embed: at least 830 s, weights unknown (node 540 s, "
        "image_pull 250 s, metrics_poll 15 s, engine_load 10 s, readiness 10 s, "
        "prometheus_scrape 5 s)",
        "  scale-out ranker: at least 42 s, weights unknown (hpa_reaction 15 s, "
        "engine_load 10 s, readiness 10 s, prometheus_scrape 5 s, warmup 2 s)",
        "  scale-out toxicity: at least 40 s, weights unknown (hpa_reaction 15 s, "
        "engine_load 10 s, readiness 10 s, prometheus_scrape 5 s)",
    ]
    doc = json.loads((out / "plan.json").read_text())
    assert list(doc) == ["blueprint", "environment", "models", "secrets", "resources"]
    assert list(doc["models"]) == ["chat", "nightly-embed", "ranker", "toxicity"]
    chat = doc["models"]["chat"]["scale_out"]
    assert {k: chat[k] for k in ("total_s", "parts", "dominant")} == {
        "total_s": 158,
        "parts": {
            "prometheus_scrape": 5,
            "hpa_reaction": 15,
            "weights": 81,
            "engine_load": 47,
            "readiness": 10,
        },
        "dominant": "weights",
    }
    assert chat["unknown"] == []
    embed = doc["models"]["nightly-embed"]["scale_out"]
    assert (embed["total_s"], embed["dominant"]) == (830, "node")  # h100 keeps no spare
    assert (embed["parts"]["weights"], embed["unknown"]) == (None, ["weights"])
    assert list(chat["notes"]) == list(chat["parts"])  # every part says where it comes from


def test_the_policy_config_corrects_the_estimates(
    reference_blueprint: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "policy.yaml"
    config.write_text(
        "scale-out-budget:\n  node_provision_s: 100\n  engine_init_s_vllm: 30\n"
        "  vllm_compile_cache_saved_s: 10\n"
    )
    out = tmp_path / "plan"
    assert plan.run(_args(reference_blueprint, out, "--policy-config", str(config))) == 0
    printed = capsys.readouterr().out.splitlines()
    assert (
        "  scale-out chat: 134 s (weights 81 s, engine_load 23 s, hpa_reaction 15 s, "
        "readiness 10 s, prometheus_scrape 5 s); levers compile_cache"
    ) in printed
    assert (
        "  scale-out nightly-embed: at least 390 s, weights unknown (image_pull 250 s, "
        "node 100 s, metrics_poll 15 s, engine_load 10 s, readiness 10 s, "
        "prometheus_scrape 5 s)"
    ) in printed
    chat = json.loads((out / "plan.json").read_text())["models"]["chat"]["scale_out"]
    assert chat["total_s"] == 134  # 16.06 GB / 6.4 GB/s + (30 - 10) s = 22.51 -> 23 s


def test_an_invalid_policy_config_is_a_located_error(
    reference_blueprint: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "policy.yaml"
    config.write_text("scale-out-budget:\n  node_provision_s: -1\n")
    out = tmp_path / "plan"
    assert plan.run(_args(reference_blueprint, out, "--policy-config", str(config))) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"{config}:2:")
    assert "scale-out-budget.node_provision_s" in captured.err
    assert not out.exists()


def _auto_chat(tmp_path: Path) -> Path:
    """chat-minimal with `levers: auto` on its realtime chat model and no spare GPU."""
    root = Path(__file__).resolve().parents[2]
    text = (root / "blueprints" / "chat-minimal.yaml").read_text()
    marker = "    slo: {p95_ms: 2000, ttft_p95_ms: 400}\n"
    assert marker in text
    text = text.replace(marker, marker + "    scale_out: {levers: auto}\n")
    (tmp_path / "schema").symlink_to(root / "blueprints" / "schema")
    path = tmp_path / "chat-minimal.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("max_total_s", "levers", "within"),
    [
        # The rule's default bound: only a spare GPU per zone (a whole node) meets it.
        (None, ["compile_cache", "stream_weights", "standby"], "within 120 s"),
        # A platform that allows 20 minutes: the free levers meet it, no node is bought.
        (1200, ["compile_cache", "stream_weights"], "within 1200 s"),
    ],
)
def test_levers_auto_chooses_against_the_policy_configs_bound(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    max_total_s: int | None,
    levers: list[str],
    within: str,
) -> None:
    blueprint = _auto_chat(tmp_path)
    extra: list[str] = []
    if max_total_s is not None:
        config = tmp_path / "policy.yaml"
        config.write_text(f"scale-out-budget:\n  max_total_s: {max_total_s}\n")
        extra = ["--policy-config", str(config)]
    out = tmp_path / "plan"
    parser = argparse.ArgumentParser()
    plan.add_arguments(parser)
    args = parser.parse_args([str(blueprint), "--env", "prod", "--out", str(out), *extra])
    assert plan.run(args) == 0
    chat = json.loads((out / "plan.json").read_text())["models"]["chat"]["scale_out"]
    assert sorted(set(chat["levers"].values())) == sorted(levers)
    printed = capsys.readouterr().out
    assert f" s {within} (the platform's bound); levers " in printed
    assert "[chosen by levers: auto]" in printed
