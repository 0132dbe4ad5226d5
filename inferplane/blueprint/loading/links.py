"""A blueprint is read where its path says, never through a link out of its folder.

The pull-request check judges the files in the repository's blueprint folders, and a stack
deploys the file its ``inferplane:blueprint`` names. A symbolic link in a blueprint folder
(``blueprints/team -> ../e2e/team``) would make the stack deploy a file from somewhere the
check never looked, so a path that passes through a link whose target leaves the folder
holding the link is refused, by every command that loads a blueprint and by the stack
program.
"""

from __future__ import annotations

import os
from pathlib import Path

from inferplane.blueprint.loading.raw_text import file_error


def _inspected(path: Path) -> tuple[Path, tuple[str, ...]]:
    """Where to start and the components of `path` to inspect from there: those the path
    names below the working directory (the folder a relative path starts in, or the part of
    an absolute one under it), else below the root."""
    if not path.is_absolute():
        return Path(), path.parts
    cwd = Path(os.getcwd())  # physical: no link in it
    if path.parts[: len(cwd.parts)] == cwd.parts:
        return cwd, path.parts[len(cwd.parts) :]
    return Path(path.anchor), path.parts[1:]


def _inside(target: str, folder: str) -> bool:
    return target == folder or target.startswith(folder.rstrip(os.sep) + os.sep)


def escaping_link(path: str | Path) -> tuple[str, str, str] | None:
    """The first symbolic link among the components of `path` whose target (fully resolved)
    lies outside the folder that holds the link: (link, target, folder); None when there is
    none. ``..`` and ``.`` are steps, not links; a link within its own folder is allowed."""
    here, parts = _inspected(Path(path))
    for part in parts:
        here = here / part
        if part in (".", "..") or not here.is_symlink():
            continue
        folder = os.path.realpath(here.parent)
        target = os.path.realpath(here)
        if not _inside(target, folder):
            return str(here), target, folder
    return None


def refuse_escaping_link(path: str | Path, file: str) -> None:
    """`BlueprintError` at `file` when `path` passes through a link leaving its folder."""
    found = escaping_link(path)
    if found is None:
        return
    link, target, folder = found
    raise file_error(
        file,
        1,
        1,
        f"cannot read the blueprint through {link}: it is a symbolic link to {target}, "
        f"outside the folder {folder} that holds it, so the checks of that folder never "
        "see what it deploys",
        "keep the blueprint itself in its folder (a file, not a link), and name it by a "
        "path without the link",
    )


__all__ = ["escaping_link", "refuse_escaping_link"]
