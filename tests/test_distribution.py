"""The distribution as a user installs it: one wheel, one import root, every data file inside.

The wheel is built from this checkout and installed (without dependencies, which this
environment already has) into a folder of its own that comes first on the path; the commands
then run from another directory, on a blueprint copied there, so nothing can be read from the
source tree by accident.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLUEPRINT = ROOT / "blueprints" / "support-assistant.yaml"
# One build, on one worker.
pytestmark = pytest.mark.xdist_group("distribution")


def copy_sources(target: Path) -> None:
    """The checkout's files as git sees them (tracked, or new and not ignored), copied to
    `target`: `pip wheel` writes build/ and *.egg-info where it builds, so it builds there,
    never beside `./dev lint`'s build/tree or another build, and reads no ignored folder."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        timeout=120,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if not source.is_file():
            continue  # deleted in the working tree, or a link to a folder or to nothing
        # A link to a file is copied as the file it names, as setuptools packs it.
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target / name)


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding exactly what `pip install .` puts in site-packages."""
    dist = tmp_path_factory.mktemp("dist")
    sources = tmp_path_factory.mktemp("sources") / "inferplane"
    copy_sources(sources)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(sources)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-4000:]
    [wheel] = dist.glob("inferplane-*.whl")
    site = tmp_path_factory.mktemp("site")
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    return site


def _run(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # The installed copy first on the path; the checkout is not (cwd is elsewhere). The
    # environment is a user's: HOME, PATH and LANG only.
    env = {k: os.environ[k] for k in ("HOME", "PATH") if k in os.environ}
    env.update({"LANG": "C.UTF-8", "PYTHONPATH": str(site), "HF_TOKEN": "test-token"})
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_wheel_installs_one_import_root_with_its_data(installed: Path) -> None:
    tops = sorted(p.name for p in installed.iterdir())
    assert tops == ["inferplane", "inferplane-0.1.0.dist-info"]
    for data in (
        "inferplane/blueprint/loading/blueprint.schema.json",
        "inferplane/policies/config.schema.json",
        "inferplane/policies/default-config.yaml",
        "inferplane/policies/PulumiPolicy.yaml",
        "inferplane/py.typed",
        # what the checks know of the pinned serving releases
        "inferplane/facts/triton/25.08/model_config.txt",
        "inferplane/facts/triton/26.02/model_config.txt",
        "inferplane/facts/triton/26.02/metrics.txt",
        "inferplane/facts/vllm/v0.33.0/serve_flags.txt",
        "inferplane/facts/tensorrtllm_backend/25.08/parameters.txt",
        "inferplane/facts/tensorrtllm_backend/25.08/tensors.txt",
        # the programs the build, staging and compile Jobs mount from their ConfigMaps
        "inferplane/components/serving/store/jobs/onnx_shapes.py",
        "inferplane/components/serving/store/jobs/hub_download.py",
        "inferplane/components/serving/store/jobs/trtllm_engine.py",
        "inferplane/components/serving/store/jobs/compile_cache.py",
        "inferplane/components/serving/store/jobs/pip_stage.py",
        # the CRDs the stack creates for the llm-d router
        "inferplane/components/serving/routing/crds/inference.networking.k8s.io_inferencepools.yaml",
        "inferplane/components/serving/routing/crds/llm-d.ai_inferenceobjectives.yaml",
    ):
        assert (installed / data).is_file(), data
    top_level = (installed / "inferplane-0.1.0.dist-info" / "top_level.txt").read_text()
    assert top_level.split() == ["inferplane"]


def test_generic_top_level_names_do_not_import(installed: Path, tmp_path: Path) -> None:
    probe = (
        "import importlib.util, inferplane, inferplane.components, inferplane.policies\n"
        "print(inferplane.__file__)\n"
        "print(importlib.util.find_spec('components'), importlib.util.find_spec('policies'))\n"
    )
    run = _run(installed, tmp_path, "-c", probe)
    assert run.returncode == 0, run.stderr
    where, specs = run.stdout.splitlines()
    assert where.startswith(str(installed))
    assert specs == "None None"


def test_validate_plan_and_check_run_from_the_installed_copy(
    installed: Path, tmp_path: Path
) -> None:
    shutil.copy(BLUEPRINT, tmp_path / "app.yaml")
    run = _run(installed, tmp_path, "-m", "inferplane", "validate", "app.yaml")
    assert run.returncode == 0, run.stderr
    # The two advisories: the chat model's GPU memory fit (its source names no known model)
    # and its Hub token, which nothing reads (no hf:// source).
    assert run.stderr.startswith(
        "app.yaml:97:13: warning: models.chat.source: GPU memory fit not checked"
    )
    assert "app.yaml:114:17: warning: models.chat.secrets.hf_token: nothing uses" in run.stderr
    assert run.stderr.count("\n") == 2
    assert run.stdout == "app.yaml: valid (3 environments: staging, prod, local)\n"

    run = _run(installed, tmp_path, "-m", "inferplane", "plan", "app.yaml", "--env", "prod")
    assert run.returncode == 0, run.stderr
    assert "inferplane:stack:InferenceStack" in run.stdout

    run = _run(installed, tmp_path, "-m", "inferplane", "check", "app.yaml", "--format", "json")
    assert run.returncode in (0, 1), run.stderr
    assert '"results"' in run.stdout
