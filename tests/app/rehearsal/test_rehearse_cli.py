"""`inferplane rehearse`: what it refuses before running anything, and how it judges a
harness report (a synthetic one here; tests/e2e/test_rehearse_run.py runs the harness)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from inferplane.app import rehearse
from inferplane.app.cli import main
from inferplane.app.rehearsal import scope, traffic
from inferplane.blueprint.resolution.resolve import load_blueprint, resolve

ROOT = Path(__file__).resolve().parents[3]
CHAT = ROOT / "blueprints" / "chat-minimal.yaml"
SHORT = ROOT / "e2e" / "traffic" / "short-spike.yaml"


def test_an_environment_not_on_kubernetes_cannot_be_rehearsed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["rehearse", str(CHAT), "--env", "prod", "--traffic", "spike-5x"]) == 2
    assert "environment prod is `cloud: aws`" in capsys.readouterr().err


def test_a_profile_relative_to_a_peak_the_model_lacks_is_a_located_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["rehearse", str(CHAT), "--env", "local", "--traffic", "spike-5x"]) == 2
    err = capsys.readouterr().err
    assert f"{CHAT}:51:5: error: models.chat.traffic: traffic profile spike-5x gives" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("fault", "says"),
    [
        ("kill-replica", "expected KIND@SECONDS with KIND one of kill-replica"),
        ("lose-zone@10", "expected KIND@SECONDS with KIND one of kill-replica"),
        ("kill-replica@soon", "'soon' is not a number of seconds"),
        ("kill-replica@900", "900 s is outside the profile, which lasts 150 s"),
    ],
)
def test_a_fault_that_is_not_kind_at_seconds_inside_the_profile_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], fault: str, says: str
) -> None:
    args = ["rehearse", str(CHAT), "--env", "local", "--traffic", str(SHORT), "--fault", fault]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err


def test_out_of_range_factors_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["rehearse", str(CHAT), "--env", "local", "--traffic", str(SHORT), "--slower", "0.5"]
    assert main(args) == 2
    assert "--slower is from 1 to 10" in capsys.readouterr().err


def test_an_invalid_policy_config_is_a_located_error_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "policy.yaml"
    config.write_text("scale-out-budget:\n  max_total_s: -5\n")
    args = ["rehearse", str(CHAT), "--env", "local", "--traffic", str(SHORT)]
    assert main([*args, "--policy-config", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"{config}:2:" in err and "scale-out-budget.max_total_s" in err
    assert "Traceback" not in err


def test_the_harness_resolves_with_the_policy_config_it_is_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    sys.path.insert(0, str(ROOT / "e2e"))
    try:
        import rehearse_run
    finally:
        sys.path.remove(str(ROOT / "e2e"))
    seen: dict[str, object] = {}

    def fake_run(argv: list[str], missing: object, body: object, prefix: str) -> int:
        seen["argv"] = argv
        return 0

    def fake_rehearse(state: object, report: object, opts: dict[str, object]) -> None:
        seen["opts"] = dict(opts)

    monkeypatch.setattr(rehearse_run, "run", fake_run)
    assert rehearse_run.main([str(CHAT), "local", str(SHORT), "--policy-config", "p.yaml"]) == 0
    monkeypatch.setattr(rehearse_run, "rehearse", fake_rehearse)
    monkeypatch.setattr(rehearse_run, "run", lambda argv, m, body, p: body(None, {}) or 0)
    assert rehearse_run.main([str(CHAT), "local", str(SHORT), "--policy-config", "p.yaml"]) == 0
    opts = seen["opts"]
    assert isinstance(opts, dict)
    assert (opts["blueprint"], opts["env"], opts["profile"]) == (str(CHAT), "local", str(SHORT))
    assert opts["policy_config"] == "p.yaml"


def test_a_harness_report_becomes_timelines_and_verdicts() -> None:
    doc, _ = load_blueprint(CHAT)
    env = resolve(doc, "local")
    plans = rehearse.plans_for(env, traffic.load(SHORT), doc)
    assert plans["chat"].lengths_from == "profile"
    samples = [
        {
            "t": t,
            "offered_rps": plans["chat"].rps_by_zone(t),
            "queue": 0.0,
            "running": 3.0,
            "desired": 2,
            "ready": 2,
            "pending_pods": 0,
            "latency_ms": {"ttft_p95": 150.0, "e2e_p95": 2500.0 if 40 <= t <= 120 else 900.0},
            "alerts_firing": [],
        }
        for t in range(0, 151, 5)
    ]
    client = {"ttft_p95_ms": 180.0, "itl_p95_ms": 60.0, "e2e_p95_ms": 2600.0, "served": 900}
    harness = {"samples": {"chat": samples}, "client": {"chat": client}}
    rows, verdicts = rehearse.judge(env, plans, harness)
    assert len(rows["chat"]) == 31
    (v,) = verdicts
    assert not v.held
    # The sender's figures ride along with the SLO lines they are read against.
    assert v.client is not None and v.client.over_slo == ("p95_ms",)
    e2e = v.slo[1]
    assert (e2e.field, e2e.breached_s, e2e.worst_ms) == ("p95_ms", 85.0, 2500.0)
    # The model has no traffic: no capacity plan, no planned count.
    assert v.replicas_at_peak["planned"] is None
    # Nothing waited, but the p95 over the SLO is an overload; the replicas stayed at 2.
    assert v.scale_out["note"] == "overloaded from 40 s and no new replica became ready"
    args = argparse.Namespace(slower=1.3, time_scale=10.0, fault=["kill-replica@60"])
    notes = rehearse.notes(args, plans)
    assert any("every rate divided by 1.3 (--slower)" in n for n in notes)
    assert any(n.startswith("Faults: kill-replica@60. A killed replica") for n in notes)
    assert any("shortened 10-fold (--time-scale)" in n for n in notes)
    assert any("STAND-IN" in n for n in notes)


def test_models_the_stand_ins_cannot_stand_in_for_are_named_with_the_reason() -> None:
    doc, _ = load_blueprint(ROOT / "blueprints" / "llm-serving.yaml")
    runs, skipped = scope.split(resolve(doc, "local"))
    assert runs == ["chat-8b"]
    assert set(skipped) == {"chat-70b", "toxicity"}
    assert all(why.startswith("server triton: ") for why in skipped.values())
    doc, _ = load_blueprint(ROOT / "blueprints" / "llm-routing.yaml")
    assert scope.split(resolve(doc, "local"))[1]["chat"].startswith("llm-aware routing: ")
    doc, _ = load_blueprint(ROOT / "blueprints" / "shared-eks-chat.yaml")
    runs, skipped = scope.split(resolve(doc, "local"))
    assert runs == ["chat"]
    assert skipped["drafts"].startswith("replicas.min 0: ")


def test_an_environment_with_nothing_to_rehearse_says_so_per_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blueprint = ROOT / "blueprints" / "whisper-triton.yaml"
    args = ["rehearse", str(blueprint), "--env", "local", "--traffic", str(SHORT)]
    assert main([*args, "--out", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert "speech: not rehearsed: server triton: " in out
    assert "no model a rehearsal can run yet" in err
    assert "Traceback" not in err
    (speech,) = json.loads((tmp_path / "verdict.json").read_text())["models"]
    assert speech["model"] == "speech" and speech["held"] is None
    assert speech["verdict"].startswith("not rehearsed: server triton: ")


def test_a_model_the_capacity_planner_cannot_time_is_not_rehearsed_rather_than_waited_for() -> None:
    # support-assistant's chat has no known architecture: a stand-in would have no latency.
    doc, _ = load_blueprint(ROOT / "blueprints" / "support-assistant.yaml")
    runs, skipped = scope.split(resolve(doc, "local"))
    assert runs == []
    assert skipped["chat"].startswith("no latency model: the capacity planner has no model of chat")
