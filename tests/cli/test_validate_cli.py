"""`inferplane validate`, `schema`, `catalog` as a user runs them: a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "blueprints" / "support-assistant.yaml"


def inferplane(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "inferplane", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_validate_the_bundled_blueprints() -> None:
    started = time.perf_counter()
    result = inferplane("validate", *map(str, sorted((ROOT / "blueprints").glob("*.yaml"))))
    elapsed = time.perf_counter() - started
    assert result.returncode == 0, result.stderr
    assert f"{REFERENCE}: valid (3 environments: staging, prod, local)" in result.stdout
    assert elapsed < 5  # a process start plus a few milliseconds of work


def test_one_environment_is_counted_in_the_singular(tmp_path: Path) -> None:
    text = (ROOT / "blueprints" / "chat-minimal.yaml").read_text()
    one = tmp_path / "one.yaml"
    one.write_text(text[: text.index("  local:\n")] + text[text.index("\ngpu_pools:\n") + 1 :])
    result = inferplane("validate", str(one))
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{one}: valid (1 environment: prod)\n"


def test_invalid_blueprint_exits_2_with_located_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        REFERENCE.read_text().replace("max_queue_delay_us: 2000", "max_queue_delay: 2000")
    )
    result = inferplane("validate", str(bad))
    assert result.returncode == 2
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert f"{bad}:" in result.stderr and "models.ranker.batching" in result.stderr
    assert "max_queue_delay_us" in result.stderr  # did-you-mean


def test_one_bad_file_does_not_hide_the_good_ones(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [")
    result = inferplane("validate", str(REFERENCE), str(bad))
    assert result.returncode == 2
    assert "valid (3 environments" in result.stdout
    errors = [line for line in result.stderr.splitlines() if ": error: " in line]
    assert errors and all(line.startswith(f"{bad}:") for line in errors)


def test_what_could_not_be_checked_is_a_warning_with_exit_0() -> None:
    result = inferplane("validate", str(REFERENCE))
    assert result.returncode == 0
    assert result.stderr == (
        f"{REFERENCE}:97:13: warning: models.chat.source: GPU memory fit not checked: a "
        "model-store source does not say which model it is; add model_info: hf_repo "
        "(org/name, when it is a common open model inferplane knows) or its numbers "
        "(parameters_billions, layers, heads, kv_heads, head_dim)\n"
        f"{REFERENCE}:114:17: warning: models.chat.secrets.hf_token: nothing uses this Hugging "
        "Face token: the model has no hf:// source, draft model or LoRA adapter, and no "
        "serving pod ever gets the token; remove it, or reference the weights as "
        "hf://org/name@<commit SHA>\n"
    )


def test_a_model_that_cannot_fit_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_text(
        REFERENCE.read_text()
        .replace(
            "    source: llama-3.1-8b-instruct/   #",
            "    source: hf://meta-llama/Llama-3.3-70B-Instruct@main   #",
        )
        .replace("    precision: fp8             #", "    precision: bf16            #")
    )
    result = inferplane("validate", str(big))
    assert result.returncode == 2
    assert result.stderr == (
        f"{big}:97:13: error: models.chat.source: "
        "the model (70.55B parameters in bf16) does not fit "
        "in GPU memory: needs 135.4 GiB (weights 131.4 + KV cache 2.5 for 1 × 8192 tokens + "
        "overhead 1.5) but 1 × nvidia-l4 gives 21.6 GiB at gpu_memory_utilization 0.90; use "
        "more GPUs (tensor parallel), a quantization (fp8, int4), or a shorter max_model_len\n"
    )


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    result = inferplane("validate", str(tmp_path / "nope.yaml"))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "nope.yaml" in result.stderr


def test_usage_errors_exit_2() -> None:
    assert inferplane().returncode == 2
    assert inferplane("validate").returncode == 2
    assert inferplane("frobnicate").returncode == 2


def test_help_and_version() -> None:
    result = inferplane("--help")
    assert result.returncode == 0
    for command in ("validate", "plan", "check", "explain", "schema", "catalog"):
        assert command in result.stdout
    version = inferplane("--version")
    assert version.returncode == 0 and version.stdout.startswith("inferplane ")


def test_schema_prints_the_json_schema() -> None:
    result = inferplane("schema")
    assert result.returncode == 0
    assert json.loads(result.stdout)["$id"].endswith("/blueprint/v1.json")


def test_catalog_lists_every_gpu() -> None:
    text = inferplane("catalog")
    assert (
        text.returncode == 0 and "nvidia-h100-80gb" in text.stdout and "p5.48xlarge" in text.stdout
    )
    rows = json.loads(inferplane("catalog", "--format", "json").stdout)
    assert {r["gpu"] for r in rows} >= {"nvidia-t4", "nvidia-b200"}
