"""The Pulumi project in stacks/: each `Pulumi.<env>.yaml` runs `__main__.py` under mocks,
reading its config as Pulumi would, and builds the environment it names."""

from __future__ import annotations

import json
import runpy
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

from inferplane.app.offline import Recording, facts_of, run_callable
from inferplane.app.program import main
from inferplane.blueprint import naming
from inferplane.blueprint.resolution.resolve import load_blueprint, resolve_file

ROOT = Path(__file__).resolve().parents[2]
STACKS = ROOT / "stacks"
STACK_FILES = sorted(STACKS.glob("Pulumi.*.yaml"))
HF_TOKEN = "hf_stack_test_0b7e51c2"  # models.chat.secrets.hf_token reads it (from_env)


def stack_config(path: Path) -> dict[str, str]:
    """A stack file's config as the Pulumi CLI hands it to a program: strings, structured
    values as JSON."""
    config = yaml.safe_load(path.read_text())["config"]
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}


def run_stack(stack: str, config: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Recording:
    """Run stacks/__main__.py as `pulumi up -s <stack>` would: from the project directory."""
    blueprint = STACKS / config["inferplane:blueprint"]
    env = resolve_file(blueprint, config.get("inferplane:environment", stack))
    monkeypatch.chdir(STACKS)
    monkeypatch.setenv("HF_TOKEN", HF_TOKEN)
    return run_callable(
        lambda: runpy.run_path(str(STACKS / "__main__.py"), run_name="__main__"),
        stack=stack,
        facts=facts_of(env),
        config=config,
    )


def test_every_environment_has_a_stack_file_and_back() -> None:
    stacks = {p.name.split(".")[1] for p in STACK_FILES}
    blueprints = {stack_config(p)["inferplane:blueprint"] for p in STACK_FILES}
    environments: set[str] = set()
    for blueprint in blueprints:
        environments |= set(load_blueprint(STACKS / blueprint)[1])
    assert stacks == environments == {"staging", "prod", "local"}


def test_project_file_and_entry_point() -> None:
    project = yaml.safe_load((STACKS / "Pulumi.yaml").read_text())
    assert project["name"] == "inferplane"
    assert project["runtime"] == {
        "name": "python",
        "options": {"toolchain": "pip", "virtualenv": "../.venv"},
    }
    assert (STACKS / "__main__.py").read_text().strip().splitlines() == [
        "from inferplane.app.program import main",
        "",
        "main()",
    ]


@pytest.mark.parametrize("stack_file", STACK_FILES, ids=lambda p: p.name)
def test_stack_runs_under_mocks_and_matches_its_blueprint(
    stack_file: Path, monkeypatch: pytest.MonkeyPatch, reference_recording: Any
) -> None:
    stack = stack_file.name.split(".")[1]
    config = stack_config(stack_file)
    env = resolve_file(STACKS / config["inferplane:blueprint"], stack)
    # The provider config in the stack file agrees with the blueprint (the components pin
    # their providers to the blueprint anyway; this keeps `pulumi config` truthful).
    if env.cloud == "aws":
        assert config["aws:region"] == env.region
    elif env.cloud == "gcp":
        assert (config["gcp:project"], config["gcp:region"]) == (env.project, env.region)
    else:
        assert config["kubernetes:context"] == env.cluster.context

    rec = run_stack(stack, config, monkeypatch)
    roots = rec.children(None)
    assert [(r.type, r.name) for r in roots] == [
        ("inferplane:stack:InferenceStack", f"{env.blueprint}-{stack}")
    ]
    # the same program `inferplane plan` runs: the same resources
    offline = reference_recording(stack)
    assert sorted((r.type, r.name) for r in rec) == sorted((r.type, r.name) for r in offline)
    assert rec.outputs["environment"] == stack and rec.outputs["namespace"] == env.blueprint
    assert set(rec.outputs["model_endpoints"]) == set(env.models)
    # gRPC models get a headless Service for client-side balancing (blueprints/README.md,
    # expose.protocol)
    grpc = [m for m, x in env.models.items() if x.server == "triton" and x.expose != "http"]
    ns = naming.namespace(env.blueprint)
    assert rec.outputs["grpc_endpoints"] == {
        m: f"dns:///{m}-grpc.{ns}.svc.cluster.local:8001" for m in grpc
    }
    # Unlike offline runs, a stack reads the real token; it stays a secret all the way, and
    # in no Secret at all: chat reads the store, and only a staging Job keeps a Hub token.
    assert not [r for r in rec if r.get("metadata", "name") == "chat-secrets"]
    dump = json.dumps([[r.type, r.name, r.inputs] for r in rec] + [rec.outputs], default=str)
    assert HF_TOKEN not in dump


def test_environment_config_overrides_the_stack_name(monkeypatch: pytest.MonkeyPatch) -> None:
    config = stack_config(STACKS / "Pulumi.prod.yaml") | {"inferplane:environment": "prod"}
    rec = run_stack("prod-canary", config, monkeypatch)
    assert rec.outputs["environment"] == "prod"
    assert rec.stack == "prod-canary"


def _run_main_catching(
    config: dict[str, str],
    stack: str,
    facts_env: str,
    blueprint: Path = STACKS / "../blueprints/support-assistant.yaml",
) -> tuple[Recording, list[pulumi.RunError]]:
    caught: list[pulumi.RunError] = []

    def program() -> None:
        try:
            main(STACKS)
        except pulumi.RunError as exc:
            caught.append(exc)

    env = resolve_file(blueprint, facts_env)
    return run_callable(program, stack=stack, facts=facts_of(env), config=config), caught


def test_invalid_blueprint_registers_nothing(tmp_path: Path) -> None:
    reference = (STACKS / "../blueprints/support-assistant.yaml").read_text()
    bad = tmp_path / "bad.yaml"
    # broken in the *prod* environment; the staging stack must refuse too
    broken = reference.replace("h100: {zones: [us-central1-a]}", "h100: {zones: [us-east1-a]}")
    assert broken != reference
    bad.write_text(broken)
    rec, caught = _run_main_catching({"inferplane:blueprint": str(bad)}, "staging", "staging")
    assert len(rec) == 0
    assert len(caught) == 1
    message = str(caught[0])
    assert message.startswith("the blueprint is invalid; nothing was deployed:\n")
    assert f"{bad}:" in message and "environments.prod.overrides.gpu_pools.h100.zones" in message


def test_missing_secret_variable_registers_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_TOKEN", raising=False)
    config = {"inferplane:blueprint": "../blueprints/support-assistant.yaml"}
    rec, caught = _run_main_catching(config, "prod", "prod")
    assert len(rec) == 0
    assert "environment variable HF_TOKEN is not set" in str(caught[0])
    assert "models.chat.secrets.hf_token.from_env" in str(caught[0])


def test_unknown_environment_and_missing_blueprint_register_nothing(tmp_path: Path) -> None:
    blueprint = "../blueprints/support-assistant.yaml"
    rec, caught = _run_main_catching({"inferplane:blueprint": blueprint}, "qa", "staging")
    assert len(rec) == 0
    assert "no environment named 'qa'" in str(caught[0])
    assert "inferplane:environment" in str(caught[0])

    missing = str(tmp_path / "nope.yaml")
    rec, caught = _run_main_catching({"inferplane:blueprint": missing}, "staging", "staging")
    assert len(rec) == 0 and "nope.yaml" in str(caught[0])


def test_a_local_router_chart_without_its_dependency_registers_nothing(tmp_path: Path) -> None:
    blueprint = STACKS / "../blueprints/llm-routing.yaml"
    config = {
        "inferplane:blueprint": str(blueprint),
        "inferplane:routerChart": str(tmp_path),
        "aws:region": "eu-west-1",
    }
    rec, caught = _run_main_catching(config, "prod", "prod", blueprint)
    assert len(rec) == 0
    assert str(caught[0]) == (
        f"inferplane:routerChart: {tmp_path} has no llm-d-router-standalone/Chart.yaml; "
        "point it at the folder holding the pinned chart source (llm-d-router-standalone "
        "beside routerlib); nothing was deployed"
    )


def _moved(tmp_path: Path, old: str, new: str) -> Path:
    """support-assistant.yaml with one placement value changed, as a pull request would."""
    text = (STACKS / "../blueprints/support-assistant.yaml").read_text()
    assert text.count(old) == 1
    path = tmp_path / "support-assistant.yaml"
    path.write_text(text.replace(old, new))
    return path


def _line(path: Path, text: str) -> int:
    [line] = [i for i, x in enumerate(path.read_text().splitlines(), 1) if text in x]
    return line


def test_a_blueprint_moved_to_another_project_registers_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stack's gcp:project is the platform's; the blueprint's `project` becomes the
    provider's and would override it, so the two must agree."""
    monkeypatch.setenv("HF_TOKEN", HF_TOKEN)
    bad = _moved(tmp_path, "project: acme-ml-prod ", "project: acme-finance ")
    config = stack_config(STACKS / "Pulumi.prod.yaml") | {"inferplane:blueprint": str(bad)}
    rec, caught = _run_main_catching(config, "prod", "prod")
    assert len(rec) == 0
    line = _line(bad, "project: acme-finance")
    assert str(caught[0]) == (
        "the blueprint does not deploy where stack 'prod' does; nothing was deployed:\n"
        f"{bad}:{line}:14: error: environments.prod.project: project 'acme-finance' is not "
        "stack 'prod''s gcp:project 'acme-ml-prod': the blueprint's placement would override "
        "the stack's provider config; deploy environment 'prod' where its stack does "
        "(acme-ml-prod), or have the stack's owners change gcp:project in Pulumi.prod.yaml"
    )


def test_a_local_environment_pointed_at_another_context_registers_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_TOKEN", HF_TOKEN)
    bad = _moved(tmp_path, "context: inferplane-local", "context: prod-admin")
    config = stack_config(STACKS / "Pulumi.local.yaml") | {"inferplane:blueprint": str(bad)}
    rec, caught = _run_main_catching(config, "local", "local")
    assert len(rec) == 0
    line = _line(bad, "context: prod-admin")
    assert str(caught[0]).splitlines()[1] == (
        f"{bad}:{line}:16: error: environments.local.cluster.context: context 'prod-admin' is "
        "not stack 'local''s kubernetes:context 'inferplane-local': the blueprint's placement "
        "would override the stack's provider config; deploy environment 'local' where its "
        "stack does (inferplane-local), or have the stack's owners change kubernetes:context "
        "in Pulumi.local.yaml"
    )


def test_a_stack_without_its_region_registers_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without aws:region in the stack, the blueprint alone would say where staging goes."""
    monkeypatch.setenv("HF_TOKEN", HF_TOKEN)
    config = stack_config(STACKS / "Pulumi.staging.yaml")
    del config["aws:region"]
    rec, caught = _run_main_catching(config, "staging", "staging")
    assert len(rec) == 0
    blueprint = STACKS / "../blueprints/support-assistant.yaml"
    line = _line(blueprint, "region: us-east-1")
    assert str(caught[0]).splitlines()[1:] == [
        f"{blueprint}:{line}:13: error: environments.staging.region: stack 'staging' sets no "
        "aws:region, so where environment 'staging' deploys (region 'us-east-1') would be the "
        "blueprint's choice alone; set it in the stack's config (`pulumi config set "
        "aws:region us-east-1` in stacks/, Pulumi.staging.yaml): the stack's config says "
        "where it deploys"
    ]


@pytest.mark.parametrize(("max_total_s", "placeholders"), [(None, True), (1200, False)])
def test_the_stacks_policy_config_is_what_levers_auto_chooses_against(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, max_total_s: int | None, placeholders: bool
) -> None:
    """`inferplane:policyConfig` gives `pulumi up` the bound `inferplane plan --policy-config`
    gives the plan: under the default 120 s, auto keeps a spare GPU per zone (placeholder
    pods); under a platform bound of 1,200 s the free levers meet it and none is kept."""
    text = (ROOT / "blueprints" / "chat-minimal.yaml").read_text()
    marker = "    slo: {p95_ms: 2000, ttft_p95_ms: 400}\n"
    blueprint = tmp_path / "chat-minimal.yaml"
    blueprint.write_text(text.replace(marker, marker + "    scale_out: {levers: auto}\n"))
    (tmp_path / "schema").symlink_to(ROOT / "blueprints" / "schema")
    monkeypatch.setenv("HF_TOKEN", HF_TOKEN)
    config = {"inferplane:blueprint": str(blueprint), "aws:region": "eu-west-1"}
    if max_total_s is not None:
        policy = tmp_path / "policy.yaml"
        policy.write_text(f"scale-out-budget:\n  max_total_s: {max_total_s}\n")
        config["inferplane:policyConfig"] = str(policy)
    rec, caught = _run_main_catching(config, "prod", "prod", blueprint)
    assert caught == []
    priority_classes = [r for r in rec if r.type.endswith(":PriorityClass")]
    assert bool(priority_classes) is placeholders


def test_an_invalid_stack_policy_config_registers_nothing(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("scale-out-budget:\n  max_total_s: 0\n")
    config = stack_config(STACKS / "Pulumi.prod.yaml") | {"inferplane:policyConfig": str(policy)}
    rec, caught = _run_main_catching(config, "prod", "prod")
    assert len(rec) == 0
    message = str(caught[0])
    assert message.startswith("the policy config is invalid; nothing was deployed:\n")
    assert f"{policy}:2:" in message and "scale-out-budget.max_total_s" in message

    config["inferplane:policyConfig"] = str(tmp_path / "missing.yaml")
    rec, caught = _run_main_catching(config, "prod", "prod")
    assert len(rec) == 0 and "missing.yaml" in str(caught[0])
