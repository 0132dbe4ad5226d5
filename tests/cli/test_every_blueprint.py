"""Every example blueprint in blueprints/ plans offline in each of its environments, passes
`inferplane check`, and every Triton config its plan writes passes the facts of the Triton
release that runs it and parses as Triton's ModelConfig (the parse needs the Triton checker
environment: `needs_tools`, run by `./dev test-tools`)."""

from __future__ import annotations

import io
import os
import subprocess
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
import yaml
from bundled_check import BUNDLED_CHECK, BundledCheck

from inferplane.app.cli import main
from inferplane.blueprint.loading.loader import load
from inferplane.blueprint.resolution.resolve import resolve_file
from inferplane.blueprint.upstream.triton_facts import config_problems

ROOT = Path(__file__).resolve().parents[2]
BLUEPRINTS = sorted((ROOT / "blueprints").glob("*.yaml"))
CASES = [(p, env) for p in BLUEPRINTS for env in load(p).data["environments"]]
# The cases whose plan writes Triton configs: a blueprint with a model served by Triton.
TRITON_CASES = [
    (p, env)
    for p, env in CASES
    if any(m.get("server") == "triton" for m in load(p).data["models"].values())
]
CHECKER = ROOT / "scripts" / "dev" / "triton-config-check"


def triton_python() -> Path | None:
    python = Path(os.environ.get("TRITON_VENV", ROOT / ".venv-triton")) / "bin" / "python"
    return python if python.exists() else None


Plan = tuple[subprocess.CompletedProcess[str], Path]


@pytest.fixture(scope="session")
def planned(
    tmp_path_factory: pytest.TempPathFactory,
    plan_sharing: Callable[[pytest.MonkeyPatch], None],
) -> Callable[[Path, str], Plan]:
    """`planned(path, env)`: `inferplane plan`'s result and --out folder, once a session.

    The command runs by its entry point (`inferplane.app.cli.main`) in this process, which
    has the program's modules loaded already: a fresh interpreter pays about two seconds of
    imports a plan. test_plan_cli.py runs the installed command in a subprocess. An
    environment the session has planned already (the bundled check's) is not planned
    again (`plan_sharing`)."""
    plans: dict[tuple[Path, str], Plan] = {}

    def get(path: Path, env: str) -> Plan:
        if (path, env) not in plans:
            out = tmp_path_factory.mktemp(f"{path.stem}-{env}") / "plan"
            args = ["plan", str(path), "--env", env, "--out", str(out)]
            stdout, stderr = io.StringIO(), io.StringIO()
            with pytest.MonkeyPatch.context() as patch:
                patch.chdir(ROOT)
                plan_sharing(patch)
                patch.setenv("HF_TOKEN", "hf_e2e_every_blueprint")
                patch.setenv("INFERPLANE_TODAY", "2026-06-01")
                with redirect_stdout(stdout), redirect_stderr(stderr):
                    code = main(args)
            result = subprocess.CompletedProcess(args, code, stdout.getvalue(), stderr.getvalue())
            plans[(path, env)] = (result, out)
        return plans[(path, env)]

    return get


def _seconds(duration: str) -> float:
    """A Prometheus duration of one unit (``5s``, ``1m``), as the monitors here write them."""
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    unit = next(u for u in ("ms", "s", "m", "h") if duration.endswith(u))
    return float(duration.removesuffix(unit)) * units[unit]


def monitors_the_operator_drops(out: Path) -> list[str]:
    """The ServiceMonitor and PodMonitor endpoints of a plan whose ``scrapeTimeout`` exceeds
    their ``interval``: prometheus-operator v0.85.0 refuses such a monitor whole
    (``pkg/prometheus/resource_selector.go``, `validateScrapeIntervalAndTimeout`), so its
    targets are never scraped."""
    found = []
    for manifest in sorted((out / "manifests").glob("*monitor-*.yaml")):
        for doc in yaml.safe_load_all(manifest.read_text()):
            if not doc or doc.get("kind") not in ("ServiceMonitor", "PodMonitor"):
                continue
            spec = doc["spec"]
            for endpoint in spec.get("endpoints") or spec.get("podMetricsEndpoints") or ():
                interval, timeout = endpoint.get("interval"), endpoint.get("scrapeTimeout")
                if interval and timeout and _seconds(timeout) > _seconds(interval):
                    found.append(f"{manifest.name}: scrapeTimeout {timeout} > interval {interval}")
    return found


def triton_configs(out: Path) -> list[Path]:
    return sorted((out / "triton").glob("*/*.pbtxt")) if (out / "triton").exists() else []


def test_the_llm_example_is_covered() -> None:
    assert ROOT / "blueprints" / "llm-serving.yaml" in BLUEPRINTS


@pytest.mark.parametrize(("path", "env"), CASES, ids=[f"{p.stem}-{e}" for p, e in CASES])
def test_blueprint_plans_and_its_triton_configs_pass_the_facts(
    path: Path, env: str, planned: Callable[[Path, str], Plan]
) -> None:
    result, out = planned(path, env)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    configs = triton_configs(out)
    assert bool(configs) == ((path, env) in TRITON_CASES)
    assert monitors_the_operator_drops(out) == []
    # The facts of the release each model runs (its own image's, else versions.triton).
    resolved = resolve_file(path, env)
    for config in configs:
        model = resolved.models.get(config.parent.name)
        release = (model.triton_release if model else None) or resolved.versions.triton
        assert config_problems(config.read_text(), release) == [], config


@pytest.mark.needs_tools
@pytest.mark.parametrize(
    ("path", "env"), TRITON_CASES, ids=[f"{p.stem}-{e}" for p, e in TRITON_CASES]
)
def test_blueprint_triton_configs_parse(
    path: Path, env: str, planned: Callable[[Path, str], Plan]
) -> None:
    """Triton's own ModelConfig parser (the Triton checker environment) reads every config."""
    result, out = planned(path, env)
    assert result.returncode == 0, result.stderr
    configs = triton_configs(out)
    assert configs != []
    python = triton_python()
    if python is None:
        if os.environ.get("CI") == "true":
            pytest.fail("the Triton config checker is required under CI (.ci/run sets it up)")
        pytest.skip(
            "Triton config checker environment missing: run scripts/dev/setup-triton-venv.sh"
        )
    parsed = subprocess.run(
        [str(python), str(CHECKER), *map(str, configs)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert parsed.returncode == 0, parsed.stderr


@BUNDLED_CHECK
@pytest.mark.parametrize("path", BLUEPRINTS, ids=lambda p: p.stem)
def test_blueprint_passes_check(path: Path, bundled_check: BundledCheck) -> None:
    """With the platform's policy config, as the pull-request workflow checks it (the
    default places no aws or gcp environment): every environment is checked, and none has a
    mandatory violation or an invalid input. Read from the one check of every bundled
    blueprint together (bundled_check.py)."""
    proc, report = bundled_check
    file = str(path.relative_to(ROOT))
    assert report, proc.stdout + proc.stderr
    checked = {
        e["environment"] for e in report["summary"]["environments"] if e["blueprint"] == file
    }
    assert checked == set(load(path).data["environments"])
    assert [d for d in report["diagnostics"] if (d["location"] or {}).get("file") == file] == []
    blocking = [
        r
        for r in report["results"]
        if (r["location"] or {}).get("file") == file
        and r["level"] == "mandatory"
        and r["status"] == "violation"
    ]
    assert blocking == [], blocking
