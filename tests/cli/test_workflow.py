"""The shipped pull-request workflow, run step by step with hostile file names.

The steps' `run:` scripts are taken from the YAML and run with bash as GitHub runs them
(``bash --noprofile --norc -eo pipefail``), in a git repository whose pull request adds files
named to inject commands. `inferplane` is a stub that records its arguments.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "inferplane-check.yml"

HOSTILE = [
    "blueprints/$(touch pwned-dollar).yaml",
    "blueprints/a;touch pwned-semicolon;.yaml",
    "blueprints/`touch pwned-backtick`.yaml",
    "blueprints/new\nline.yaml",
    "blueprints/with space.yaml",
    "blueprints/sub/nested.yaml",
    "blueprints/-rf.yaml.txt",
]
SAFE = ["blueprints/ok-1.yaml", "blueprints/Other_2.yml"]

# Under CI git is required: the tests run and fail rather than skip without it.
pytestmark = pytest.mark.skipif(
    shutil.which("git") is None and os.environ.get("CI") != "true", reason="needs git"
)


def steps() -> dict[str, dict[str, Any]]:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    return {s.get("name", s.get("uses", "")): s for s in workflow["jobs"]["check"]["steps"]}


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.strip()


def run_step(name: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    script = steps()[name]["run"]
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, str]:
    """A PR checkout (tmp/pr) whose head adds hostile and safe blueprint names; the base sha."""
    pr = tmp_path / "pr"
    (pr / "blueprints").mkdir(parents=True)
    git(pr, "init", "-q")
    (pr / "blueprints" / "base.yaml").write_text("name: base\n")
    git(pr, "add", "-A")
    git(pr, "commit", "-qm", "base")
    base = git(pr, "rev-parse", "HEAD")
    for name in HOSTILE + SAFE:
        path = pr / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("name: x\n")
    git(pr, "add", "-A")
    git(pr, "commit", "-qm", "hostile names")
    return pr, base


def select(pr: Path, tmp: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    listing = tmp / "list.txt"
    output = tmp / "github_output"
    result = run_step(
        "Blueprints to check", pr, {"LIST": str(listing), "GITHUB_OUTPUT": str(output)}
    )
    assert result.returncode == 0, result.stderr
    return result, listing


def nothing_ran(tmp: Path) -> None:
    assert sorted(p.name for p in tmp.rglob("pwned*")) == []


def quoted(name: str) -> str:
    return subprocess.run(
        ["bash", "-c", 'printf %q "$1"', "-", name],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout


# Every *.yaml / *.yml under blueprints/, subfolders included; anything else there fails.
CHECKED = sorted(["blueprints/base.yaml", "blueprints/sub/nested.yaml", *SAFE])
UNCHECKABLE = [n for n in HOSTILE if n not in CHECKED]


def test_no_run_script_interpolates_an_expression() -> None:
    for name, step in steps().items():
        assert "${{" not in step.get("run", ""), name


def test_every_blueprint_is_checked_and_hostile_names_fail_the_job(
    workspace: tuple[Path, str], tmp_path: Path
) -> None:
    pr, _ = workspace
    result, listing = select(pr, tmp_path)
    assert listing.read_text().splitlines() == CHECKED
    for name in UNCHECKABLE:
        assert f"cannot check {quoted(name)}: blueprints/ holds blueprints named " in result.stdout
    output = (tmp_path / "github_output").read_text()
    assert f"count={len(CHECKED)}\n" in output
    assert f"unchecked={len(UNCHECKABLE)}\n" in output
    refuse = run_step("Refuse blueprint files that could not be checked", pr, {"UNCHECKED": "5"})
    assert refuse.returncode == 1 and "could not be checked" in refuse.stderr
    assert (
        "steps.changed.outputs.unchecked != '0'"
        in steps()["Refuse blueprint files that could not be checked"]["if"]
    )
    nothing_ran(tmp_path)


def test_hidden_and_parent_like_names_cannot_be_checked(tmp_path: Path) -> None:
    pr = tmp_path / "pr"
    for name in ("blueprints/.hidden/x.yaml", "blueprints/..yaml.d/x.yaml", "blueprints/ok.yaml"):
        (pr / name).parent.mkdir(parents=True, exist_ok=True)
        (pr / name).write_text("name: x\n")
    result, listing = select(pr, tmp_path)
    assert listing.read_text().splitlines() == ["blueprints/ok.yaml"]
    assert "cannot check blueprints/.hidden/x.yaml:" in result.stdout
    assert "cannot check blueprints/..yaml.d/x.yaml:" in result.stdout
    assert "unchecked=2\n" in (tmp_path / "github_output").read_text()


def test_links_and_other_names_fail_the_job_and_the_platform_s_files_do_not(
    tmp_path: Path,
) -> None:
    """A stack deploys whatever file it names: a folder linked from elsewhere
    (blueprints/team -> ../e2e/team, whose files no check would see), a linked file, and a
    file the name pattern does not take (Other.YAML) are each reported and fail the job;
    the platform's README.md and schema/ are no blueprints."""
    pr = tmp_path / "pr"
    for name in (
        "e2e/team/x.yaml",
        "e2e/elsewhere.yaml",
        "blueprints/ok.yaml",
        "blueprints/Other.YAML",
        "blueprints/notes.txt",
        "blueprints/README.md",
        "blueprints/schema/blueprint.schema.json",
    ):
        (pr / name).parent.mkdir(parents=True, exist_ok=True)
        (pr / name).write_text("name: x\n")
    (pr / "blueprints" / "team").symlink_to(Path("..") / "e2e" / "team")
    (pr / "blueprints" / "linked.yaml").symlink_to(Path("..") / "e2e" / "elsewhere.yaml")
    (pr / "blueprints" / "alias.yaml").symlink_to("ok.yaml")
    result, listing = select(pr, tmp_path)
    assert listing.read_text().splitlines() == ["blueprints/ok.yaml"]
    pattern = (
        "blueprints/ holds blueprints named blueprints/[<folder>/]<letters, digits, . _ ->.yaml "
        "(or .yml), in lower case, and nothing else"
    )
    assert result.stdout.splitlines()[:5] == [
        "cannot check blueprints/Other.YAML: " + pattern,
        "cannot check blueprints/alias.yaml: it is a symbolic link (to ok.yaml); keep the "
        "blueprint itself here",
        "cannot check blueprints/linked.yaml: it is a symbolic link (to "
        "../e2e/elsewhere.yaml); keep the blueprint itself here",
        "cannot check blueprints/notes.txt: " + pattern,
        "cannot check blueprints/team: it is a symbolic link (to ../e2e/team); keep the "
        "blueprint itself here",
    ]
    output = (tmp_path / "github_output").read_text()
    assert "count=1\n" in output and "unchecked=5\n" in output
    assert "e2e/team/x.yaml" not in result.stdout


def test_a_linked_blueprints_folder_fails_the_job(tmp_path: Path) -> None:
    pr = tmp_path / "pr"
    (pr / "elsewhere").mkdir(parents=True)
    (pr / "elsewhere" / "x.yaml").write_text("name: x\n")
    (pr / "blueprints").symlink_to("elsewhere")
    result, listing = select(pr, tmp_path)
    assert listing.read_text() == ""
    assert result.stdout.splitlines()[0] == (
        "cannot check blueprints: it is a symbolic link; blueprints/ is a folder of files"
    )
    output = (tmp_path / "github_output").read_text()
    assert "count=0\n" in output and "unchecked=1\n" in output


def test_no_path_filter_can_leave_the_required_check_pending() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    on = workflow[True]  # YAML 1.1 reads the key `on` as true
    assert on["pull_request"] is None and "paths" not in (on.get("push") or {})


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        (
            "Check (SARIF for code scanning)",
            ["--policy-config", "CONFIG", "--format", "sarif", "--output", "SARIF"],
        ),
        (
            "Check (annotations on the blueprint lines)",
            ["--policy-config", "CONFIG", "--format", "github"],
        ),
    ],
)
def test_check_steps_pass_the_base_config_and_the_names_as_quoted_arguments(
    workspace: tuple[Path, str], tmp_path: Path, step: str, expected: list[str]
) -> None:
    pr, _ = workspace
    _, listing = select(pr, tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    argv = tmp_path / "argv"
    (bin_dir / "inferplane").write_text(f'#!/bin/sh\nprintf "%s\\0" "$@" > {argv}\n')
    (bin_dir / "inferplane").chmod(0o755)
    sarif = str(tmp_path / "out.sarif")
    config = str(tmp_path / "base" / "policies" / "platform-config.yaml")
    env = {
        "LIST": str(listing),
        "SARIF": sarif,
        "POLICY_CONFIG": config,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
    }
    result = run_step(step, pr, env)
    assert result.returncode == 0, result.stderr
    args = argv.read_text().split("\0")[:-1]
    want = [a.replace("SARIF", sarif).replace("CONFIG", config) for a in expected]
    assert args == ["check", *want, "--", *CHECKED]
    # The config is the base checkout's, never the pull request's.
    assert steps()[step]["env"]["POLICY_CONFIG"] == (
        "${{ github.workspace }}/base/policies/platform-config.yaml"
    )
    nothing_ran(tmp_path)


def test_the_tool_is_installed_from_the_base_checkout() -> None:
    s = steps()
    base = s["Check out the base branch (the trusted tool and rules)"]["with"]
    head = s["Check out the pull request (untrusted, read as data)"]["with"]
    assert base["path"] == "base" and "base.sha" in base["ref"]
    assert head["path"] == "pr" and "head.sha" in head["ref"]
    assert base["persist-credentials"] is False and head["persist-credentials"] is False
    assert s["Install inferplane from the base branch"]["run"].rstrip().endswith("./base")
    for name in ("Check (SARIF for code scanning)", "Check (annotations on the blueprint lines)"):
        assert s[name]["working-directory"] == "pr"  # the PR's files are read, not imported


def test_codeowners_puts_the_judge_under_the_platform_team() -> None:
    owners = {
        line.split()[0]: line.split()[1:]
        for line in (ROOT / ".github" / "CODEOWNERS").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    for path in (
        "/policies/", "/inferplane/", "/components/", "/stacks/", "/.github/", "/dev",
        "/scripts/", "/tests/", "/examples/", "/.pre-commit-hooks.yaml", "/blueprints/schema/",
    ):  # fmt: skip
        assert owners[path] == ["@acme/ml-platform"], path
    assert owners["/pyproject.toml"] == ["@acme/ml-platform"]
    assert owners["/.ci/"] == ["@acme/ml-platform"]


def test_the_threat_model_is_written_down() -> None:
    readme = (ROOT / "policies" / "README.md").read_text()
    assert "\n## Threat model\n" in readme
    assert "installed from a checkout of the **base** commit" in readme
