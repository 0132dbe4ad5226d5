"""`inferplane rehearse` for real (`needs_tools`) on a blueprint as a new user writes it
(tests/e2e/fixtures/new-user-chat.yaml): a chat model whose traffic is 25 requests/s at
peak, on two replicas. `validate` lets it through with a warning, since the optimistic end
of the L4 band carries the peak on two; the plan's central estimate needs four.

Under the same profile (e2e/traffic/short-ramp.yaml, relative to the peak) and
``--time-scale 10``:

- as written (``replicas.max`` 2, below the plan's 4) it breaches, and the verdict says the
  plan's count is above ``replicas.max`` (exit 1);
- with enough replicas (the plan's 4 warm, up to its pessimistic 6) it holds (exit 0);
- the same at ``--slower 1.3``, the slow end of the band, shows what that end would do: the
  stand-ins' rates divided by 1.3 (said in the report), higher latency, and at least as many
  replicas at the peak.

Each rehearsal takes about 4 min 20 s on a 2-core machine.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import ci_gate
import pytest

ROOT = Path(__file__).resolve().parents[2]
BLUEPRINT = ROOT / "tests" / "e2e" / "fixtures" / "new-user-chat.yaml"
PROFILE = ROOT / "e2e" / "traffic" / "short-ramp.yaml"
AS_WRITTEN = "    replicas: {min: 2, max: 2}\n"
ENOUGH = "    replicas: {min: 4, max: 6}\n"
sys.path.insert(0, str(ROOT / "e2e"))

import rehearse_hpa  # noqa: E402

MISSING = rehearse_hpa.not_built()
pytestmark = [
    pytest.mark.needs_tools,
    pytest.mark.skipif(
        # Until the tools are built; .ci/run builds them, then runs these tests again.
        bool(MISSING),
        reason=f"tools the rehearsal needs are not built: {', '.join(MISSING)}",
    ),
]


def rehearse(blueprint: Path, out: Path, *extra: str) -> tuple[int, str, dict[str, Any]]:
    res = ci_gate.rehearse(blueprint, PROFILE, out, *extra)
    assert res.returncode in (0, 1), res.stdout + res.stderr[-3000:]
    (chat,) = json.loads((out / "verdict.json").read_text())["models"]
    return res.returncode, res.stdout, chat


def slo(chat: dict[str, Any], field: str) -> dict[str, Any]:
    return next(s for s in chat["slo"] if s["field"] == field)


@pytest.fixture(scope="module")
def enough(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, str, dict[str, Any]]:
    """The blueprint with the plan's replicas, and its rehearsal at the central estimate."""
    text = BLUEPRINT.read_text()
    assert text.count(AS_WRITTEN) == 1
    tmp = tmp_path_factory.mktemp("enough")
    blueprint = tmp / "new-user-chat.yaml"
    blueprint.write_text(text.replace(AS_WRITTEN, ENOUGH))
    return (blueprint, *rehearse(blueprint, tmp / "out"))


def test_as_written_it_breaches_and_the_verdict_says_replicas_max_is_below_the_plan(
    tmp_path: Path,
) -> None:
    code, stdout, chat = rehearse(BLUEPRINT, tmp_path)
    assert code == 1, stdout
    assert "chat: BREACHED its SLO" in stdout
    # The first SLO to go is time to first token, while the two replicas' batches fill.
    assert not slo(chat, "ttft_p95_ms")["held"]
    peak = chat["replicas_at_peak"]
    assert (peak["ready"], peak["planned"], peak["max"]) == (2, 4, 2) and peak["at_max"]
    assert "the capacity plan says 4, above replicas.max 2" in stdout
    assert "no new replica became ready" in chat["scale_out"]["note"]


def test_with_the_plans_replicas_it_holds(enough: tuple[Path, int, str, dict[str, Any]]) -> None:
    _, code, stdout, chat = enough
    assert code == 0, stdout
    assert "chat: held its SLO" in stdout
    assert all(s["held"] and s["worst_ms"] is not None for s in chat["slo"])
    assert chat["replicas_at_peak"]["ready"] >= 4
    assert "STAND-IN" in stdout and "--slower" not in stdout


def test_at_the_bands_slow_end_the_report_shows_what_that_end_would_do(
    enough: tuple[Path, int, str, dict[str, Any]], tmp_path: Path
) -> None:
    blueprint, _, _, central = enough
    code, stdout, chat = rehearse(blueprint, tmp_path, "--slower", "1.3")
    assert "every rate divided by 1.3 (--slower)" in stdout
    assert json.loads((tmp_path / "verdict.json").read_text())["slower"] == 1.3
    # Slower stand-ins: the latency Prometheus computes is higher, and the real HPA keeps at
    # least as many replicas at the peak.
    assert slo(chat, "ttft_p95_ms")["worst_ms"] > slo(central, "ttft_p95_ms")["worst_ms"]
    assert chat["replicas_at_peak"]["ready"] >= central["replicas_at_peak"]["ready"]
    # The exit code is the verdict's: 1 exactly when an SLO was breached.
    assert code == (0 if all(s["held"] for s in chat["slo"]) else 1)
