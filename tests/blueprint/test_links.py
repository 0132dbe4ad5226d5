"""A blueprint is read where its path says: a path through a symbolic link whose target
leaves the folder holding the link is refused by every command, and by the stack program,
before anything is read."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from inferplane.blueprint.errors import BlueprintError
from inferplane.blueprint.resolution.resolve import load_blueprint

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "blueprints" / "chat-minimal.yaml"


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository whose blueprints/team links to ../e2e/team, outside blueprints/."""
    (tmp_path / "e2e" / "team").mkdir(parents=True)
    (tmp_path / "blueprints" / "own").mkdir(parents=True)
    shutil.copy(EXAMPLE, tmp_path / "e2e" / "team" / "x.yaml")
    shutil.copy(EXAMPLE, tmp_path / "blueprints" / "chat.yaml")
    (tmp_path / "blueprints" / "team").symlink_to(Path("..") / "e2e" / "team")
    (tmp_path / "blueprints" / "alias.yaml").symlink_to("chat.yaml")
    (tmp_path / "blueprints" / "own" / "up.yaml").symlink_to(Path("..") / "chat.yaml")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _refused(path: str) -> list[str]:
    with pytest.raises(BlueprintError) as refused:
        load_blueprint(path)
    return [d.format() for d in refused.value.diagnostics]


def test_a_folder_linked_from_outside_is_refused(tree: Path) -> None:
    real = tree.resolve()
    assert _refused("blueprints/team/x.yaml") == [
        "blueprints/team/x.yaml:1:1: error: <document>: cannot read the blueprint through "
        f"blueprints/team: it is a symbolic link to {real}/e2e/team, outside the folder "
        f"{real}/blueprints that holds it, so the checks of that folder never see what it "
        "deploys; keep the blueprint itself in its folder (a file, not a link), and name it "
        "by a path without the link"
    ]


def test_an_absolute_path_under_the_working_directory_is_refused_alike(tree: Path) -> None:
    path = str(tree.resolve() / "blueprints" / "team" / "x.yaml")
    [message] = _refused(path)
    assert message.startswith(
        f"{path}:1:1: error: <document>: cannot read the blueprint through "
        f"{tree.resolve()}/blueprints/team: "
    )


def test_a_link_out_of_a_subfolder_is_refused(tree: Path) -> None:
    [message] = _refused("blueprints/own/up.yaml")
    assert "through blueprints/own/up.yaml: it is a symbolic link to " in message
    assert f"outside the folder {tree.resolve()}/blueprints/own that holds it" in message


def test_links_within_their_folder_and_steps_up_are_read(tree: Path) -> None:
    assert load_blueprint("blueprints/alias.yaml")[1] == load_blueprint(EXAMPLE)[1]
    (tree / "stacks").mkdir()
    assert load_blueprint("stacks/../blueprints/chat.yaml")[1] == load_blueprint(EXAMPLE)[1]


def test_the_cli_refuses_it_with_exit_2(tree: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "inferplane", "validate", "blueprints/team/x.yaml"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(
        "blueprints/team/x.yaml:1:1: error: <document>: cannot read the blueprint through "
        "blueprints/team:"
    )
    assert "Traceback" not in done.stderr
