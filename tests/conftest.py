"""Fixtures every test directory shares: the reference blueprint, its environments, and
running Pulumi programs offline (`inferplane.app.offline`) to assert on what they register.

    def test_x(reference_env, run_mocked):
        rec = run_mocked(reference_env("staging"))          # the whole stack program
        deployment = rec.named("chat", "kubernetes:apps/v1:Deployment")

    def test_y(run_mocked, reference_env):
        rec = run_mocked(lambda: MyComponent("x", args), env=reference_env("prod"))

    def test_z(reference_recording):
        rec = reference_recording("prod")                   # cached for the whole session

    def test_w(offline_plan):
        rec = offline_plan(ROOT / "blueprints" / "llm-serving.yaml", "prod")  # cached too

A cached plan is computed once per session (per worker under pytest-xdist) and each call
returns a deep copy of it, so a test that edits what it got changes nothing for the others.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import os
import pickle
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from inferplane.app.offline import Recording, run_callable, run_program
from inferplane.app.offline_mocks import CloudFacts
from inferplane.blueprint.model import Environment, Waiver

# The package is imported as installed (`pip install -e .`), never from the checkout's
# folders: `components` and `policies` exist only as `inferplane.components` and
# `inferplane.policies`.
ROOT = Path(__file__).resolve().parents[1]

REFERENCE_BLUEPRINT = ROOT / "blueprints" / "support-assistant.yaml"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep each `xdist_group` on one worker under ``--dist loadgroup``.

    pytest-xdist 3.8.0 groups a test by appending ``@<group>`` to ``item._nodeid``
    (``xdist/remote.py``, `pytest_collection_modifyitems`), an attribute pytest 9 no longer
    reads: ``Node.nodeid`` is ``str(self._id)`` (``_pytest/nodes.py``). Without this, the
    scheduler saw no group, spread a group's tests over the workers, and each worker built
    the group's shared fixture again. Runs after xdist's hook, the same way, on the field
    pytest reads; a no-op without ``--dist loadgroup`` or once xdist sets it itself."""
    if not getattr(config.option, "loadgroup", False):
        return
    from _pytest.nodeid import coerce_node_id

    for item in items:
        names = sorted(
            {
                str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                for mark in item.iter_markers("xdist_group")
            }
        )
        suffix = "@" + "_".join(names)
        if names and not item.nodeid.endswith(suffix):
            item._id = coerce_node_id(item.nodeid + suffix)  # type: ignore[attr-defined]


_ENVS: dict[str, Environment] = {}
# (sha256 of the blueprint file, environment, stack config) -> the stack program's Recording.
_PLANS: dict[tuple[str, str, tuple[tuple[str, str], ...]], Recording] = {}


@pytest.fixture(scope="session")
def reference_blueprint() -> Path:
    """blueprints/support-assistant.yaml: staging (AWS, new cluster, one zone) and prod
    (GCP, existing cluster prod-gke, two zones; pool h100 in us-central1-a only)."""
    return REFERENCE_BLUEPRINT


def _reference_env(name: str) -> Environment:
    if name not in _ENVS:
        from inferplane.blueprint.resolution.resolve import resolve_file

        _ENVS[name] = resolve_file(REFERENCE_BLUEPRINT, name)
    return _ENVS[name]


@pytest.fixture(scope="session")
def reference_env() -> Callable[[str], Environment]:
    """`reference_env("staging")` -> the resolved Environment (immutable, so shared)."""
    return _reference_env


RunMocked = Callable[..., Recording]


STAGING_WAIVER = Waiver(
    "warm-replicas",
    "models.chat",
    ("staging",),
    "Staging has no customer traffic; a cold start there is acceptable.",
    "2027-03-31",
    ("policies", "waivers", 0),
)


@pytest.fixture(scope="session")
def waived_env() -> Callable[[str], Environment]:
    """`waived_env("prod")`: a reference environment carrying one waiver that names staging
    only (the shipped reference carries none: a fixed expiry would lapse)."""
    return lambda name: dataclasses.replace(_reference_env(name), waivers=(STAGING_WAIVER,))


@pytest.fixture
def run_mocked() -> RunMocked:
    """Run a program offline and return its Recording (iterable of RecordedResource).

    - `run_mocked(env)`: the stack program (`inferplane.app.program.deploy(env)`);
    - `run_mocked(fn, env=None, config=None)`: any zero-argument program function; mocks
      answer with `env`'s facts (cloud, region, zones, project), or AWS us-east-1a.
    """

    def run(
        target: Environment | Callable[[], object],
        env: Environment | None = None,
        config: dict[str, str] | None = None,
    ) -> Recording:
        if isinstance(target, Environment):
            return run_program(target, config=config)
        facts = (
            CloudFacts(cloud=env.cloud, region=env.region, zones=env.zones, project=env.project)
            if env is not None
            else CloudFacts(cloud="aws", region="us-east-1", zones=("us-east-1a",))
        )
        return run_callable(
            target,
            stack=env.name if env is not None else "test",
            facts=facts,
            config={"inferplane:offline": "true", **(config or {})},
        )

    return run


def _offline_plan(blueprint: Path, env: str, config: Mapping[str, str] | None = None) -> Recording:
    # Keyed by the file's content, not its path: a test may write another blueprint there.
    digest = hashlib.sha256(blueprint.read_bytes()).hexdigest()
    key = (digest, env, tuple(sorted((config or {}).items())))
    if key not in _PLANS:
        if blueprint == REFERENCE_BLUEPRINT:
            resolved = _reference_env(env)
        else:
            from inferplane.blueprint.resolution.resolve import resolve_file

            resolved = resolve_file(blueprint, env)
        _PLANS[key] = run_program(resolved, config=config)
    return copy.deepcopy(_PLANS[key])


@pytest.fixture(scope="session")
def offline_plan() -> Callable[..., Recording]:
    """`offline_plan(path, "prod", config=None)`: the stack program's Recording of a
    blueprint's environment (`config` added to its stack config), as `inferplane plan` makes
    it; planned once per session, a deep copy on each call."""
    return _offline_plan


@pytest.fixture(scope="session")
def reference_recording() -> Callable[[str], Recording]:
    """`reference_recording("prod")`: the stack program's Recording for a reference
    environment (`offline_plan` of the reference blueprint)."""
    return lambda name: _offline_plan(REFERENCE_BLUEPRINT, name)


def _environment_key(env: Environment) -> str:
    """What the stack program reads of `env`: every field but the file it came from (the
    program never reads the path, nor the source map, which `repr` leaves out)."""
    return hashlib.sha256(repr(dataclasses.replace(env, file="")).encode()).hexdigest()


@pytest.fixture(scope="session")
def plan_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of this session's plans by environment (`plans_by_environment`), which
    its workers share (pytest-xdist gives each worker a base folder of its own under one
    folder of the session)."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    store = shared / "environment-plans"
    store.mkdir(exist_ok=True)
    return store


def sharing_plans(store: Path, patch: pytest.MonkeyPatch) -> None:
    """From now until `patch` is undone, the stack program of an environment with the same
    content as one planned before in this session (on any worker) is not run again:
    `run_program(env)` answers a copy of that plan, from `store`. Only the plain stack
    program (no other program, no added config) is shared, and only a plan that
    succeeded. A plan's resources come in the order the program's tasks registered them,
    which differs from one run to the next anyway."""
    from inferplane.app import offline

    real = offline.run_program

    def run_program(
        env: Environment,
        *,
        program: Callable[[Environment], object] | None = None,
        config: Mapping[str, str] | None = None,
        invokes: Sequence[Mapping[str, Any]] = (),
    ) -> Recording:
        if program is not None or config or invokes:
            return real(env, program=program, config=config, invokes=invokes)
        return _stored(store, "stack", env, lambda: real(env))

    patch.setattr(offline, "run_program", run_program)


def _stored(store: Path, program: str, env: Environment, run: Callable[[], Recording]) -> Recording:
    """`run()`'s Recording of `program` for an environment of `env`'s content: from `store`
    when a worker has put it there this session, else run and put there."""
    stored = store / f"{program}-{_environment_key(env)}.pickle"
    if stored.exists():
        loaded: Recording = pickle.loads(stored.read_bytes())
        return loaded
    recording = run()
    partial = stored.with_name(f"{stored.name}.{os.getpid()}")
    partial.write_bytes(pickle.dumps(recording))
    partial.replace(stored)  # whole or not at all, for the other worker
    return recording


@pytest.fixture(scope="session")
def stored_plan(
    plan_store: Path,
) -> Callable[[str, Environment, Callable[[], Recording]], Recording]:
    """`stored_plan(program, env, run)`: `run()`'s Recording of the program named `program`
    (a name of the test's choosing) for `env`, run once a session for an environment of that
    content, whichever worker asks first; each call gets a copy of its own."""
    return lambda program, env, run: _stored(plan_store, program, env, run)


@pytest.fixture(scope="session")
def plan_sharing(plan_store: Path) -> Callable[[pytest.MonkeyPatch], None]:
    """`plan_sharing(patch)`: `sharing_plans` until `patch` is undone, for a session
    fixture (`plans_by_environment` is a test's)."""
    return lambda patch: sharing_plans(plan_store, patch)


@pytest.fixture
def plans_by_environment(plan_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While the test runs, an environment planned before in this session is not planned
    again (`sharing_plans`): for the many checks of one golden blueprint changed in one
    place, whose other environments are the golden ones, and the bundled blueprints, which
    several tests check or plan whole."""
    sharing_plans(plan_store, monkeypatch)


@pytest.fixture
def tensorrt_11_release() -> str:
    """The first supported NGC release whose images ship TensorRT 11 (26.07: 11.1), which
    builds strongly typed networks only."""
    from inferplane.blueprint import catalog

    assert catalog.tensorrt_major("26.07") == 11
    return "26.07"
