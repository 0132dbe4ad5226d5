"""scripts/dev/rehearse_all.py: which profile each bundled blueprint gets, what it says of a
blueprint with nothing to rehearse (without starting anything), and how a verdict becomes
its one summary line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "dev"))

import rehearse_all  # noqa: E402

from inferplane.blueprint.resolution.resolve import load_blueprint, resolve  # noqa: E402


def _env(name: str) -> object:
    doc, _ = load_blueprint(ROOT / "blueprints" / f"{name}.yaml")
    return resolve(doc, "local")


def test_spike_5x_where_the_rehearsed_models_state_their_traffic_else_the_short_profile() -> None:
    assert rehearse_all.profile_for(_env("llm-serving")) == "spike-5x"
    assert rehearse_all.profile_for(_env("chat-minimal")) == str(rehearse_all.SHORT)


def test_a_blueprint_with_nothing_to_rehearse_is_one_line_and_no_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blueprints = [str(ROOT / "blueprints" / f"{n}.yaml") for n in ("whisper-triton", "llm-routing")]
    assert rehearse_all.main(["--out", str(tmp_path), *blueprints]) == 0
    out = capsys.readouterr().out
    assert "whisper-triton: speech not rehearsed (server triton); nothing ran" in out
    assert "llm-routing: chat not rehearsed (llm-aware routing); nothing ran" in out
    assert list(tmp_path.iterdir()) == []


def test_a_verdict_becomes_one_line_and_an_earlier_run_is_reused(tmp_path: Path) -> None:
    verdict = {
        "wall_s": 1234.5,
        "time_scale": 10.0,
        "models": [
            {
                "model": "chat-8b",
                "held": False,
                "verdict": "breached",
                "scale_out": {"seconds": 45.0, "budget_s": 470.0},
            },
            {"model": "toxicity", "held": None, "verdict": "not rehearsed: server triton: x"},
        ],
    }
    (tmp_path / "verdict.json").write_text(json.dumps(verdict))
    (tmp_path / "harness.json").write_text(json.dumps({"profile": {"name": "spike-5x"}}))
    got = rehearse_all.earlier(tmp_path, "spike-5x", 10.0)
    assert got is not None and got["exit"] == 1
    assert rehearse_all.earlier(tmp_path, "spike-5x", 1.0) is None
    assert rehearse_all.summary("llm-serving", "spike-5x", got) == (
        "llm-serving [spike-5x, exit 1]: chat-8b breached, scale-out 45 s against a budget of "
        "470 s; toxicity not rehearsed (server triton); wall 1234 s (earlier run)"
    )
