"""scripts/measure/measure_weight_loading.py runs on CPU: every part measured or marked
skipped, the stand-in store serves both the copy and the stream, and only the constants a
CPU run can speak for are printed (in ``.venv-streamer``: scripts/dev/setup-streamer-venv.sh)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "measure" / "measure_weight_loading.py"
pytestmark = pytest.mark.needs_tools


def test_a_cpu_run_measures_the_copy_and_the_stream_and_skips_the_gpu(tmp_path: Path) -> None:
    python = Path(os.environ.get("STREAMER_VENV", ROOT / ".venv-streamer")) / "bin" / "python"
    if not python.exists():
        if os.environ.get("CI") == "true":
            pytest.fail("the streamer environment is required under CI (.ci/run sets it up)")
        pytest.skip("streamer environment missing: run scripts/dev/setup-streamer-venv.sh")
    out = tmp_path / "result.json"
    done = subprocess.run(
        [str(python), str(SCRIPT), "--gib", "0.125", "--out", str(out), "--work", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(out.read_text())
    parts = {r["part"]: r for r in result["parts"]}
    assert list(parts) == [
        "disk_read",
        "page_cache_to_gpu",
        "store_copy",
        "copy_then_load",
        "store_stream",
    ]
    if not result["gpu"]:
        assert parts["page_cache_to_gpu"]["skipped"] == "skipped: no GPU"
        assert parts["copy_then_load"]["skipped"] == "skipped: no GPU"
        assert set(result["constants"]) == {"store_read_mb_per_s"}
    size = parts["disk_read"]["bytes"]
    assert size > 128 << 20
    assert parts["store_copy"]["bytes"] == size
    # The stream carries the tensors only (no header): a few kilobytes less.
    assert 0 < size - parts["store_stream"]["bytes"] < 1 << 16
    assert result["store_requests"] > 4
    assert "constants to replace" in done.stdout
