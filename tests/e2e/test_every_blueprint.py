"""Every example blueprint in blueprints/ plans offline in each of its environments, passes
`inferplane check`, and every Triton config its plan writes passes the facts of the Triton
release that runs it and parses as Triton's ModelConfig."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from inferplane.blueprint.loader import load
from inferplane.blueprint.resolve import resolve_file
from inferplane.blueprint.triton_facts import config_problems

ROOT = Path(__file__).resolve().parents[2]
BLUEPRINTS = sorted((ROOT / "blueprints").glob("*.yaml"))
CASES = [(p, env) for p in BLUEPRINTS for env in load(p).data["environments"]]
CHECKER = ROOT / "scripts" / "triton-config-check"


def inferplane(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "inferplane", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "HF_TOKEN": "hf_e2e_every_blueprint", "INFERPLANE_TODAY": "2026-06-01"},
    )


def triton_python() -> Path | None:
    python = Path(os.environ.get("TRITON_VENV", ROOT / ".venv-triton")) / "bin" / "python"
    return python if python.exists() else None


def test_the_llm_example_is_covered() -> None:
    assert ROOT / "blueprints" / "llm-serving.yaml" in BLUEPRINTS


@pytest.mark.parametrize(("path", "env"), CASES, ids=[f"{p.stem}-{e}" for p, e in CASES])
def test_blueprint_plans_and_its_triton_configs_parse(path: Path, env: str, tmp_path: Path) -> None:
    out = tmp_path / "plan"
    result = inferplane("plan", str(path), "--env", env, "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    configs = sorted((out / "triton").glob("*/*.pbtxt")) if (out / "triton").exists() else []
    if not configs:
        return
    # The facts of the release each model runs (its own image's, else versions.triton).
    resolved = resolve_file(path, env)
    for config in configs:
        model = resolved.models.get(config.parent.name)
        release = (model.triton_release if model else None) or resolved.versions.triton
        assert config_problems(config.read_text(), release) == [], config
    python = triton_python()
    if python is None:
        if os.environ.get("CI") == "true":
            pytest.fail("the Triton config checker is required under CI (.ci/run sets it up)")
        pytest.skip("Triton config checker environment missing: run scripts/setup-triton-venv.sh")
    parsed = subprocess.run(
        [str(python), str(CHECKER), *map(str, configs)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert parsed.returncode == 0, parsed.stderr


@pytest.mark.parametrize("path", BLUEPRINTS, ids=lambda p: p.stem)
def test_blueprint_passes_check(path: Path) -> None:
    """With the platform's policy config, as the pull-request workflow checks it (the
    default places no aws or gcp environment)."""
    result = inferplane("check", "--policy-config", "policies/platform-config.yaml", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
