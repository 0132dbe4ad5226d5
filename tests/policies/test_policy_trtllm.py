"""The TensorRT-LLM golden blueprint (the base of the TensorRT-LLM policy fixtures) passes
every rule, and the engine rule's messages for TensorRT-LLM engines read as they should."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from policy_fixtures import FIXTURES, fixtures, placements_config, write

from inferplane.app.check import check_files

TODAY = dt.date(2026, 6, 1)


def _messages(path: Path, rule: str | None = None, config: Path | None = None) -> list[str]:
    report = check_files([str(path)], config_file=str(config) if config else None, today=TODAY)
    return [
        r.message
        for r in report.results
        if r.status == "violation" and (rule is None or r.rule == rule)
    ]


def test_golden_llm_is_clean(tmp_path: Path) -> None:
    config = placements_config(tmp_path)
    assert _messages(FIXTURES / "golden-llm.yaml", config=config) == []


def test_engine_rule_messages_for_tensorrt_llm(tmp_path: Path) -> None:
    cases = {
        f.name: f
        for f in fixtures()
        if f.rule == "engine-matches-runtime" and f.base == "golden-llm.yaml"
    }
    # A pinned NGC image of another release gets its engine built in that release's image.
    other = write(cases["pass-trtllm-ngc-image-of-another-release"], tmp_path)
    assert _messages(other, "engine-matches-runtime") == []
    plain = write(cases["fail-trtllm-engine-on-an-image-without-the-backend"], tmp_path)
    [message] = _messages(plain, "engine-matches-runtime")
    assert message.endswith(
        " builds a TensorRT-LLM engine but Triton runs nvcr.io/nvidia/tritonserver:25.08-py3, "
        "which has no TensorRT-LLM backend; serve it with the <release>-trtllm-python-py3 "
        "image of the same release"
    ), message
